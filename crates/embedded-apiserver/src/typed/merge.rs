//! The apply merge of a configuration into the live object, by the value's type.

use serde_json::Value;

use super::{ListKind, Shape, Ty, child, index_items, item_of, shape_of};
use crate::fieldpath::PathElement;

/// The apply merge of `config` into `live`: granular maps merge by key, `map` lists by item
/// key, `set` lists by value, atomic values are replaced. A `null` in the config removes.
pub fn merge(live: &Value, config: &Value, t: Ty) -> Value {
    merge_node(Some(live), config, t, &None).unwrap_or(Value::Null)
}

fn merge_node(
    live: Option<&Value>,
    config: &Value,
    t: Ty,
    forced: &Option<ListKind>,
) -> Option<Value> {
    if config.is_null() {
        return None;
    }
    let Some(live) = live else {
        return Some(config.clone());
    };
    match (shape_of(&t, forced, live), shape_of(&t, forced, config)) {
        (Shape::Map, Shape::Map) => {
            let mut out = live.as_object().cloned().unwrap_or_default();
            for (k, cv) in config.as_object().into_iter().flatten() {
                let (ct, _, cforced) = child(t, k);
                match merge_node(out.get(k), cv, ct, &cforced) {
                    Some(v) => {
                        out.insert(k.clone(), v);
                    }
                    None => {
                        out.remove(k);
                    }
                }
            }
            Some(Value::Object(out))
        }
        (Shape::List(kl), Shape::List(kc)) if kl == kc && !matches!(kc, ListKind::Atomic) => {
            let item_t = item_of(&t, forced);
            Some(Value::Array(merge_list(live, config, &kc, item_t)))
        }
        _ => Some(config.clone()),
    }
}

/// Items of both lists: live-only items keep their place, config items come in config order.
fn merge_list(live: &Value, config: &Value, kind: &ListKind, item_t: Ty) -> Vec<Value> {
    let (lorder, lby) = index_items(kind, Some(live));
    let (corder, cby) = index_items(kind, Some(config));
    let mut out = Vec::new();
    let mut emitted = std::collections::BTreeSet::new();
    let mut ci = 0;
    let emit = |pe: &PathElement,
                out: &mut Vec<Value>,
                emitted: &mut std::collections::BTreeSet<PathElement>| {
        if !emitted.insert(pe.clone()) {
            return;
        }
        let merged = match cby.get(pe) {
            Some(cv) => merge_node(lby.get(pe).copied(), cv, item_t, &None),
            None => lby.get(pe).map(|v| (*v).clone()),
        };
        if let Some(v) = merged {
            out.push(v);
        }
    };
    for pe in &lorder {
        if cby.contains_key(pe) {
            // Emit config items up to and including this shared one.
            while ci < corder.len() {
                let cpe = &corder[ci];
                ci += 1;
                emit(cpe, &mut out, &mut emitted);
                if cpe == pe {
                    break;
                }
            }
        } else {
            emit(pe, &mut out, &mut emitted);
        }
    }
    for cpe in &corder[ci..] {
        emit(cpe, &mut out, &mut emitted);
    }
    out
}

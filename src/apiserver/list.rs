//! LIST responses with `limit`/`continue` (emulator-spec S5).

use base64::Engine as _;
use serde_json::{Value, json};

use super::error::ApiError;
use super::filter::Filter;
use super::http::Query;
use super::meta;
use super::ops::{self, Target};
use super::store::Store;

fn encode_continue(rv: u64, after: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(json!({"rv": rv, "start": after}).to_string())
}

fn decode_continue(token: &str) -> Result<String, ApiError> {
    let bad = || {
        ApiError::bad_request(
            "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
        )
    };
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .map_err(|_| bad())?;
    let v: Value = serde_json::from_slice(&raw).map_err(|_| bad())?;
    v.get("start")
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(bad)
}

/// The `<Kind>List` for a list request.
pub fn list(store: &Store, t: &Target, filter: &Filter, q: &Query) -> Result<Value, ApiError> {
    let limit: usize = match q.get("limit").map(String::as_str) {
        None | Some("") | Some("0") => 0,
        Some(l) => l
            .parse()
            .map_err(|_| ApiError::bad_request(format!("invalid limit: {l}")))?,
    };
    let start_after = match q.get("continue").filter(|c| !c.is_empty()) {
        Some(c) => Some(decode_continue(c)?),
        None => None,
    };
    let mut items: Vec<Value> = ops::list(store, t)
        .into_iter()
        .filter(|o| filter.matches(o))
        .filter(|o| {
            start_after
                .as_deref()
                .is_none_or(|after| sort_key(o).as_str() > after)
        })
        .collect();
    let mut metadata = json!({"resourceVersion": store.rv.to_string()});
    if limit > 0 && items.len() > limit {
        let remaining = items.len() - limit;
        items.truncate(limit);
        if let Some(last) = items.last() {
            metadata["continue"] = json!(encode_continue(store.rv, &sort_key(last)));
            metadata["remainingItemCount"] = json!(remaining);
        }
    }
    let items: Vec<Value> = items
        .into_iter()
        .map(|o| ops::present(&t.rt, &t.version, o))
        .collect();
    Ok(json!({
        "kind": t.rt.list_kind,
        "apiVersion": t.rt.api_version(&t.version),
        "metadata": metadata,
        "items": items,
    }))
}

fn sort_key(o: &Value) -> String {
    format!("{}\u{0}{}", meta::namespace(o), meta::name(o))
}

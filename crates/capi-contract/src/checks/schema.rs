//! Schema walking over one CRD version's `openAPIV3Schema`, and the generic [`FieldCheck`]
//! interpreter (presence + JSON type of fields, per contract).
//!
//! Paths are dotted from the object root (`status.initialization.provisioned`); a segment
//! ending in `[]` steps into the array's `items` (`status.addresses[].type`). A map
//! (`additionalProperties`) accepts any key. A field under `x-kubernetes-preserve-unknown-fields`
//! is **open**: the schema accepts anything there, so it is reported as open, never as present.

use super::{CheckCtx, Finding};
use crate::inventory::SchemaNode;
use crate::model::Evidence;
use crate::suite::{FieldCheck, JsonType, Presence};

/// Result of looking a path up in a schema.
#[derive(Debug, Clone, PartialEq)]
pub enum Lookup<'a> {
    Found(&'a SchemaNode),
    /// An ancestor (named in `at`) preserves unknown fields: anything is accepted below it.
    Open {
        at: String,
    },
    /// The path does not exist; `at` is the first missing segment's full path.
    Missing {
        at: String,
    },
}

/// Walks `path` from the schema root.
pub fn lookup<'a>(root: &'a SchemaNode, path: &str) -> Lookup<'a> {
    let mut node = root;
    // `path[..start]` is the walked part before the current segment (with its trailing dot);
    // the paths reported on a miss are prefixes of `path`, cut only when needed.
    let mut start = 0;
    for raw in path.split('.') {
        let end = start + raw.len();
        let walked = &path[..end];
        let (seg, into_items) = match raw.strip_suffix("[]") {
            Some(s) => (s, true),
            None => (raw, false),
        };
        let next = node.property(seg).or_else(|| node.additional_properties());
        node = match next {
            Some(n) => n,
            None if node.preserve_unknown => {
                return Lookup::Open {
                    at: path[..start.saturating_sub(1)].to_string(),
                };
            }
            None => {
                return Lookup::Missing {
                    at: walked.to_string(),
                };
            }
        };
        if into_items {
            match node.items() {
                Some(items) => node = items,
                None if node.preserve_unknown => {
                    return Lookup::Open {
                        at: walked.to_string(),
                    };
                }
                None => {
                    return Lookup::Missing {
                        at: walked.to_string(),
                    };
                }
            }
        }
        start = end + 1;
    }
    Lookup::Found(node)
}

/// An object node that declares nothing (no properties, no map values, not open): a field kept
/// "only to fulfil the contract", e.g. a managed control plane's `spec.machineTemplate`.
/// A condition path that ends at a placeholder does not hold.
pub fn is_placeholder(node: &SchemaNode) -> bool {
    type_of(node) == "object"
        && node.properties().next().is_none()
        && node.additional_properties().is_none()
        && !node.preserve_unknown
}

/// The node's `type` (empty when untyped).
pub fn type_of(node: &SchemaNode) -> &str {
    node.type_name()
}

/// Human description of a schema node's type: `string`, `array of object`, `map of string`,
/// `int-or-string`, `open` (preserve-unknown without type).
pub fn describe(node: &SchemaNode) -> String {
    if node.int_or_string {
        return "int-or-string".into();
    }
    let t = type_of(node);
    match t {
        "array" => match node.items() {
            Some(items) => format!("array of {}", describe(items)),
            None => "array".into(),
        },
        "object" => match node.additional_properties() {
            Some(ap) => format!("map of {}", describe(ap)),
            None => "object".into(),
        },
        "" if node.preserve_unknown => "open".into(),
        "" => "untyped".into(),
        other => other.into(),
    }
}

/// Whether a schema node has the JSON type a rule asks for.
pub fn type_matches(node: &SchemaNode, want: JsonType) -> bool {
    let int_or_string = node.int_or_string;
    let t = type_of(node);
    let map_values = || node.additional_properties().map_or("", type_of);
    let items = || node.items().map_or("", type_of);
    match want {
        JsonType::IntOrString => int_or_string,
        _ if int_or_string => false,
        JsonType::Boolean => t == "boolean",
        JsonType::String => t == "string",
        JsonType::Integer => t == "integer",
        JsonType::Number => t == "number" || t == "integer",
        JsonType::Object => t == "object",
        JsonType::Array => t == "array",
        JsonType::StringMap => t == "object" && map_values() == "string",
        JsonType::ObjectMap => t == "object" && map_values() == "object",
        JsonType::StringArray => t == "array" && items() == "string",
        JsonType::ObjectArray => t == "array" && items() == "object",
    }
}

/// State of one field in a schema.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldState {
    Ok,
    WrongType { found: String },
    Missing { at: String },
    Open { at: String },
}

pub fn field_state(schema: &SchemaNode, path: &str, want: JsonType) -> FieldState {
    match lookup(schema, path) {
        Lookup::Found(node) if type_matches(node, want) => FieldState::Ok,
        Lookup::Found(node) => FieldState::WrongType {
            found: describe(node),
        },
        Lookup::Missing { at } => FieldState::Missing { at },
        Lookup::Open { at } => FieldState::Open { at },
    }
}

/// Interprets a rule's [`FieldCheck`] against the column's CRD version.
pub fn run_field_check(check: &FieldCheck, ctx: &CheckCtx) -> Finding {
    let Some(contract) = ctx.rule_contract() else {
        return Finding::skip("no contract applies to this column");
    };
    let (_, version, schema) = match ctx.schema() {
        Ok(x) => x,
        Err(f) => return f,
    };
    let object = ctx.crd_object.clone();
    let location = ctx.crd_location.clone();
    let ev = |message: String, path: &str| Evidence {
        message,
        object: object.clone(),
        path: Some(format!(
            "spec.versions[{}].schema.openAPIV3Schema: {path}",
            version.name
        )),
        resource_version: None,
        location: location.clone(),
        source: None,
    };
    if let Some(cond) = &check.condition_path {
        match lookup(schema, cond) {
            Lookup::Found(node) if is_placeholder(node) => {
                return Finding::skip(format!(
                    "condition does not hold: `{cond}` is an empty placeholder object in the {} schema",
                    version.name
                ));
            }
            Lookup::Found(_) => {}
            Lookup::Missing { .. } => {
                return Finding::skip(format!(
                    "condition does not hold: `{cond}` is not in the {} schema",
                    version.name
                ));
            }
            Lookup::Open { at } => {
                return Finding::skip(format!(
                    "condition cannot be evaluated: `{cond}` is open (x-kubernetes-preserve-unknown-fields at `{at}`)"
                ));
            }
        }
    }
    let fields = check.fields_for(contract);
    if fields.is_empty() {
        return Finding::skip(format!("no fields to check under contract {contract}"));
    }
    let mut wrong = Vec::new();
    let mut missing = Vec::new();
    let mut open = Vec::new();
    // Most columns pass: the passing evidence is allocated at its final size (an empty
    // `Vec` of evidence grows to room for four).
    let mut ok = Vec::with_capacity(fields.len());
    for f in &fields {
        match field_state(schema, &f.path, f.json_type) {
            FieldState::Ok => ok.push(ev(format!("`{}` is {}", f.path, f.json_type.as_str()), &f.path)),
            FieldState::WrongType { found } => wrong.push(ev(
                format!(
                    "`{}` has the wrong JSON type: expected {}, found {found} (worse than missing: core errors out reading it)",
                    f.path,
                    f.json_type.as_str()
                ),
                &f.path,
            )),
            FieldState::Missing { at } => missing.push(ev(
                format!("`{}` is missing (no `{at}` in the schema)", f.path),
                &f.path,
            )),
            FieldState::Open { at } => open.push(ev(
                format!(
                    "`{}` is open: `{at}` has x-kubernetes-preserve-unknown-fields, so presence and type cannot be verified",
                    f.path
                ),
                &f.path,
            )),
        }
    }
    if !wrong.is_empty() {
        let reason = wrong[0].message.clone();
        return Finding::fail(reason, wrong);
    }
    match check.presence {
        Presence::Required => {
            if !missing.is_empty() {
                let reason = missing
                    .iter()
                    .map(|e| e.message.clone())
                    .collect::<Vec<_>>()
                    .join("; ");
                return Finding::fail(reason, missing);
            }
            if !open.is_empty() {
                let reason = open[0].message.clone();
                return Finding::skip_with(reason, open);
            }
            Finding::pass(ok)
        }
        Presence::IfPresent => {
            if ok.is_empty() {
                let mut evidence = missing;
                evidence.extend(open);
                return Finding::skip_with(
                    "not implemented (optional feature; none of the fields is in the schema)",
                    evidence,
                );
            }
            Finding::pass(ok)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(v: serde_json::Value) -> SchemaNode {
        SchemaNode::from_value(&v).unwrap()
    }

    fn schema() -> SchemaNode {
        node(json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "replicas": {"type": "integer"},
                "port": {"x-kubernetes-int-or-string": true},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                "addresses": {"type": "array", "items": {"type": "object", "properties": {"type": {"type": "string"}}}},
                "ids": {"type": "array", "items": {"type": "string"}},
                "maybe": {"type": "string", "nullable": true}
            }},
            "status": {"type": "object", "properties": {"ready": {"type": "string"}}}
        }}))
    }

    /// The reported `at` paths are what joining the walked segments gives.
    #[test]
    fn reported_paths_are_the_walked_prefixes() {
        let s = schema();
        let cases = [
            ("nope", Lookup::Missing { at: "nope".into() }),
            (
                "spec.nope.deeper",
                Lookup::Missing {
                    at: "spec.nope".into(),
                },
            ),
            (
                "spec.free.x.y",
                Lookup::Open {
                    at: "spec.free".into(),
                },
            ),
            (
                "spec.free.x",
                Lookup::Open {
                    at: "spec.free".into(),
                },
            ),
            (
                "spec.replicas[].x",
                Lookup::Missing {
                    at: "spec.replicas[]".into(),
                },
            ),
            (
                "spec.free[]",
                Lookup::Open {
                    at: "spec.free[]".into(),
                },
            ),
            (
                "spec.addresses[].nope",
                Lookup::Missing {
                    at: "spec.addresses[].nope".into(),
                },
            ),
        ];
        for (path, want) in cases {
            assert_eq!(lookup(&s, path), want, "{path}");
        }
        let open_root =
            node(json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}));
        assert_eq!(
            lookup(&open_root, "a.b"),
            Lookup::Open { at: String::new() }
        );
    }

    #[test]
    fn walks_properties_items_maps_and_open_fields() {
        let s = schema();
        assert_eq!(
            field_state(&s, "spec.replicas", JsonType::Integer),
            FieldState::Ok
        );
        assert_eq!(
            field_state(&s, "spec.port", JsonType::IntOrString),
            FieldState::Ok
        );
        assert!(matches!(
            field_state(&s, "spec.port", JsonType::String),
            FieldState::WrongType { .. }
        ));
        assert_eq!(
            field_state(&s, "spec.labels", JsonType::StringMap),
            FieldState::Ok
        );
        assert_eq!(
            field_state(&s, "spec.labels.anykey", JsonType::String),
            FieldState::Ok
        );
        assert_eq!(
            field_state(&s, "spec.addresses[].type", JsonType::String),
            FieldState::Ok
        );
        assert_eq!(
            field_state(&s, "spec.addresses", JsonType::ObjectArray),
            FieldState::Ok
        );
        assert_eq!(
            field_state(&s, "spec.ids", JsonType::StringArray),
            FieldState::Ok
        );
        assert_eq!(
            field_state(&s, "spec.maybe", JsonType::String),
            FieldState::Ok
        );
        assert_eq!(
            field_state(&s, "spec.free.x.y", JsonType::Boolean),
            FieldState::Open {
                at: "spec.free".into()
            }
        );
        assert_eq!(
            field_state(&s, "status.initialization.provisioned", JsonType::Boolean),
            FieldState::Missing {
                at: "status.initialization".into()
            }
        );
        assert_eq!(
            field_state(&s, "status.ready", JsonType::Boolean),
            FieldState::WrongType {
                found: "string".into()
            }
        );
    }
}

//! Schema walkers: the static checks' schema lookups and the embedded server's CRD schema
//! pipeline (structural check, prune → default → validate). Input: a field path, a newline,
//! then JSON (`{"s": schema, "o": object}` or one value used as both). Must not panic.
#![no_main]

use capi_contract::checks::schema::{self, Lookup};
use capi_contract::inventory::SchemaNode;
use capi_contract::suite::JsonType;
use embedded_apiserver::schema::{PipelineOptions, process, structural_errors};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

const TYPES: [JsonType; 4] = [
    JsonType::String,
    JsonType::Object,
    JsonType::StringMap,
    JsonType::IntOrString,
];

fuzz_target!(|data: &[u8]| {
    let (path, json) = match data.iter().position(|b| *b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (&b""[..], data),
    };
    let path = String::from_utf8_lossy(path);
    let Ok(v) = serde_json::from_slice::<Value>(json) else {
        return;
    };
    let schema_v = v.get("s").cloned().unwrap_or_else(|| v.clone());
    let object = v.get("o").cloned().unwrap_or_else(|| v.clone());
    // The static checks walk the compact schema (a non-structural one is refused, by name).
    if let Ok(node) = SchemaNode::from_value(&schema_v) {
        walk(&node, &path);
    }
    let _ = structural_errors(&schema_v, "spec.validation.openAPIV3Schema");
    let _ = process(object, &schema_v, &PipelineOptions::default());
});

fn walk(node: &SchemaNode, path: &str) {
    match schema::lookup(node, path) {
        Lookup::Found(node) => {
            let _ = schema::describe(node);
            let _ = schema::is_placeholder(node);
        }
        Lookup::Missing { at } | Lookup::Open { at } => {
            assert!(path.starts_with(&at), "{at} is not a prefix of {path}");
        }
    }
    for t in TYPES {
        let _ = schema::field_state(node, path, t);
    }
}

//! Manifest loader: arbitrary bytes as a YAML and as a JSON file → documents → inventory.
//! Must not panic; every error names its file.
#![no_main]

use capi_contract::inventory::{Document, Inventory, parse_text};
use libfuzzer_sys::fuzz_target;
use std::collections::BTreeMap;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for file in ["fuzz.yaml", "fuzz.json"] {
        let docs = parse_text(file, &text);
        let mut ok: Vec<Document> = Vec::new();
        for d in docs {
            match d {
                Ok(doc) => ok.push(doc),
                Err(e) => assert!(e.to_string().starts_with(file), "{e}"),
            }
        }
        let overrides = BTreeMap::new();
        if let Ok((inv, _problems)) = Inventory::build(ok.clone(), &overrides, true) {
            let _ = inv.crd_count();
        }
        let _ = Inventory::build(ok, &overrides, false);
    }
});

//! The manifest loader (bytes and documents into an inventory) and the schema walker of the
//! static checks.

use crate::generators::*;
use capi_conformance::checks::schema::{self, Lookup};
use capi_conformance::inventory::{Crd, SchemaForm, SchemaNode, parse_text, parse_text_as};
use proptest::prelude::*;
use serde_json::json;

// ---------------------------------------------------------------------------------------------
// Manifest loader
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config())]

    /// Arbitrary bytes (lossily decoded, as the loader only accepts UTF-8) never panic the
    /// YAML or JSON path; every error names the file.
    #[test]
    fn loader_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let text = String::from_utf8_lossy(&bytes);
        for file in ["fuzz.yaml", "fuzz.json"] {
            let docs = parse_text(file, &text);
            assert_names_source(file, &docs);
            build_inventory(docs);
        }
    }

    /// Generated YAML/JSON manifests (CRD-shaped or not, cut with noise) → inventory.
    #[test]
    fn loader_documents_to_inventory(text in manifest_text()) {
        for file in ["fuzz.yaml", "fuzz.json"] {
            let docs = parse_text(file, &text);
            assert_names_source(file, &docs);
            build_inventory(docs);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Schema walker
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config())]

    /// Arbitrary schemas and paths: lookups never panic; a path that exists is found (or open);
    /// a missing path names a prefix of the asked path.
    #[test]
    fn schema_walker_lookups(schema_v in json_schema(), path in schema_path(), t in proptest::sample::select(JSON_TYPES)) {
        // Reading an arbitrary schema never panics; a non-structural one names the node.
        if let Err(e) = SchemaNode::from_value(&schema_v) {
            prop_assert!(e.starts_with("openAPIV3Schema"), "{}", e);
        }
        let schema_v = structural(schema_v);
        let node = match SchemaNode::from_value(&schema_v) {
            Ok(node) => node,
            Err(e) => return Err(TestCaseError::fail(format!("made structural but refused: {e}"))),
        };
        match schema::lookup(&node, &path) {
            Lookup::Found(found) => {
                let _ = schema::describe(found);
                let _ = schema::is_placeholder(found);
            }
            Lookup::Missing { at } | Lookup::Open { at } => {
                prop_assert!(path.starts_with(&at), "{at} is not a prefix of {path}");
            }
        }
        let _ = schema::field_state(&node, &path, t);
        let _ = schema::describe(&node);
        let mut paths = Vec::new();
        existing_paths(&schema_v, None, &mut paths);
        for p in paths {
            let found = schema::lookup(&node, &p);
            prop_assert!(!matches!(found, Lookup::Missing { .. }), "{p} exists but was reported missing");
        }
        // The CRD reader walks the same schema (structural check).
        let crd = json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "foos.example.com"},
            "spec": {"group": "example.com", "names": {"kind": "Foo", "plural": "foos"},
                     "scope": "Namespaced",
                     "versions": [{"name": "v1", "served": true, "storage": true,
                                   "schema": {"openAPIV3Schema": schema_v}}]},
        });
        if let Err(e) = Crd::from_document(&doc(crd.clone())) {
            prop_assert!(e.to_string().starts_with("fuzz.yaml"), "{}", e);
        }
        // `lint` reads CRD schemas straight from the YAML text into their compact form: the
        // CRD it gets (or the error, word for word) is the one read from the whole document.
        let text = serde_saphyr::to_string(&crd).unwrap();
        let read = |form| {
            parse_text_as("fuzz.yaml", &text, form)
                .into_iter()
                .map(|d| d.and_then(Crd::from_owned_document))
                .collect::<Vec<_>>()
        };
        prop_assert_eq!(read(SchemaForm::Compact), read(SchemaForm::Whole), "{}", text);
    }
}

//! `structural_errors`: what kube-apiserver reports for a CRD's `openAPIV3Schema`, on our
//! fixtures and on the corpus.

use super::*;

const PREFIX: &str = "spec.versions[0].schema.openAPIV3Schema";

#[test]
fn widget_schema_is_structural() {
    assert_eq!(structural_errors(&widget_schema(), PREFIX), vec![]);
}

#[test]
fn check_10_property_without_type_is_required() {
    let schema = json!({"type": "object", "properties": {"spec": {"properties": {"a": {"type": "string"}}}}});
    let errs = structural_errors(&schema, PREFIX);
    assert_eq!(
        fr(&errs),
        vec![pair(
            "spec.versions[0].schema.openAPIV3Schema.properties[spec].type",
            reason::REQUIRED
        )]
    );
    assert_eq!(
        errs[0].error_string(),
        "spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields"
    );
}

#[test]
fn type_exemptions_for_int_or_string_and_preserve_unknown() {
    let schema = json!({"type": "object", "properties": {
        "a": {"x-kubernetes-int-or-string": true},
        "b": {"x-kubernetes-preserve-unknown-fields": true},
        "c": {"type": "array", "items": {}},
        "d": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]}
    }});
    assert_eq!(
        fr(&structural_errors(&schema, "s")),
        vec![pair("s.properties[c].items.type", reason::REQUIRED)]
    );
}

#[test]
fn forbidden_keywords() {
    let schema = json!({"type": "object", "properties": {
        "r": {"$ref": "#/definitions/x"},
        "m": {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "string"}},
        "u": {"type": "array", "uniqueItems": true, "items": {"type": "string"}},
        "n": {"type": "null"},
        "t": {"type": "strin"},
        "p": {"type": "object", "x-kubernetes-preserve-unknown-fields": false}
    }});
    let got = fr(&structural_errors(&schema, "s"));
    for want in [
        pair("s.properties[r].$ref", reason::FORBIDDEN),
        pair("s.properties[m].additionalProperties", reason::FORBIDDEN),
        pair("s.properties[u].uniqueItems", reason::FORBIDDEN),
        pair("s.properties[n].type", reason::FORBIDDEN),
        pair("s.properties[n].type", reason::NOT_SUPPORTED),
        pair("s.properties[t].type", reason::NOT_SUPPORTED),
        pair(
            "s.properties[p].x-kubernetes-preserve-unknown-fields",
            reason::INVALID,
        ),
        pair("s.properties[r].type", reason::REQUIRED),
    ] {
        assert!(got.contains(&want), "missing {want:?} in {got:?}");
    }
}

#[test]
fn root_rules() {
    let errs = structural_errors(
        &json!({"type": "string", "additionalProperties": {"type": "string"}}),
        "s",
    );
    let got = fr(&errs);
    assert!(got.contains(&pair("s.type", reason::INVALID)), "{got:?}");
    assert!(
        got.contains(&pair("s.additionalProperties", reason::FORBIDDEN)),
        "{got:?}"
    );
    let no_type = structural_errors(&json!({"properties": {}}), "s");
    assert_eq!(fr(&no_type), vec![pair("s.type", reason::REQUIRED)]);
}

#[test]
fn root_metadata_only_name_and_generate_name() {
    let ok = json!({"type": "object", "properties": {"metadata": {"type": "object",
        "properties": {"name": {"type": "string", "maxLength": 20}}}}});
    assert_eq!(structural_errors(&ok, "s"), vec![]);
    let bad = json!({"type": "object", "properties": {"metadata": {"type": "object",
        "properties": {"labels": {"type": "object"}}}}});
    assert_eq!(
        fr(&structural_errors(&bad, "s")),
        vec![pair("s.properties[metadata]", reason::FORBIDDEN)]
    );
    let default_meta =
        json!({"type": "object", "properties": {"metadata": {"type": "object", "default": {}}}});
    assert_eq!(
        fr(&structural_errors(&default_meta, "s")),
        vec![pair("s.properties[metadata].default", reason::FORBIDDEN)]
    );
}

#[test]
fn junctors_must_be_structural_and_complete() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"a": {"type": "string"}},
        "anyOf": [{"required": ["a"]}, {"type": "object", "properties": {"b": {"minLength": 1}}}]}}});
    let got = fr(&structural_errors(&schema, "s"));
    assert_eq!(
        got,
        vec![
            pair("s.properties[spec].anyOf[1].type", reason::FORBIDDEN),
            pair("s.properties[spec].properties[b]", reason::REQUIRED),
        ]
    );
}

#[test]
fn embedded_resource_rules() {
    let schema =
        json!({"type": "object", "properties": {"t": {"x-kubernetes-embedded-resource": true}}});
    let got = fr(&structural_errors(&schema, "s"));
    assert_eq!(
        got,
        vec![
            pair("s.properties[t].properties", reason::REQUIRED),
            pair("s.properties[t].type", reason::REQUIRED),
        ]
    );
}

#[test]
fn list_type_rules() {
    let schema = json!({"type": "object", "properties": {
        "a": {"type": "array", "x-kubernetes-list-type": "map", "items": {"type": "object", "properties": {"k": {"type": "string"}}}},
        "b": {"type": "array", "x-kubernetes-list-type": "bag", "items": {"type": "string"}},
        "c": {"type": "object", "x-kubernetes-list-type": "set"}
    }});
    let got = fr(&structural_errors(&schema, "s"));
    for want in [
        pair(
            "s.properties[a].x-kubernetes-list-map-keys",
            reason::REQUIRED,
        ),
        pair(
            "s.properties[b].x-kubernetes-list-type",
            reason::NOT_SUPPORTED,
        ),
        pair("s.properties[c].type", reason::INVALID),
    ] {
        assert!(got.contains(&want), "missing {want:?} in {got:?}");
    }
}

#[test]
fn defaults_must_validate() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "mode": {"type": "string", "enum": ["auto", "manual"], "default": "sometimes"},
        "obj": {"type": "object", "properties": {"a": {"type": "string"}}, "default": {"a": "x", "b": 1}}
    }}}});
    assert_eq!(
        fr(&structural_errors(&schema, "s")),
        vec![
            pair(
                "s.properties[spec].properties[mode].default",
                reason::NOT_SUPPORTED
            ),
            pair(
                "s.properties[spec].properties[obj].default",
                reason::INVALID
            ),
        ]
    );
}

#[test]
fn invalid_pattern_is_reported() {
    let schema = json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "("}}});
    assert_eq!(
        fr(&structural_errors(&schema, "s")),
        vec![pair("s.properties[a].pattern", reason::INVALID)]
    );
}

#[test]
fn corpus_crd_schemas_are_structural() {
    // Real provider CRDs must be accepted: every openAPIV3Schema in the shared corpus.
    let Some(dir) =
        crate::shared_data::shared_or_skip("corpus", "corpus_crd_schemas_are_structural")
    else {
        return;
    };
    let mut checked = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            if !matches!(p.extension().and_then(|x| x.to_str()), Some("yaml" | "yml")) {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            for doc in text.split("\n---") {
                let Ok(v) = serde_saphyr::from_str::<Value>(doc) else {
                    continue;
                };
                if v.get("kind").and_then(Value::as_str) != Some("CustomResourceDefinition") {
                    continue;
                }
                for (i, ver) in v["spec"]["versions"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
                    .iter()
                    .enumerate()
                {
                    let s = &ver["schema"]["openAPIV3Schema"];
                    if s.is_null() {
                        continue;
                    }
                    let prefix = format!("spec.versions[{i}].schema.openAPIV3Schema");
                    let errs = structural_errors(s, &prefix);
                    assert!(
                        errs.is_empty(),
                        "{}: {:?}",
                        p.display(),
                        &errs[..errs.len().min(3)]
                    );
                    checked += 1;
                }
            }
        }
    }
    eprintln!("checked {checked} corpus schemas");
}

//! Pipeline and structural-schema tests, including docs/embedded-apiserver.md §7 checks 10 and 21–27.

use super::*;
use serde_json::json;

/// The §7 fixture schema: spec{replicas:int (min 0), size enum required, mode default "auto"},
/// status preserve-unknown.
fn widget_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": {
                "type": "object",
                "required": ["size"],
                "properties": {
                    "replicas": {"type": "integer", "minimum": 0},
                    "size": {"type": "string", "enum": ["small", "large"]},
                    "mode": {"type": "string", "default": "auto"}
                }
            },
            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
        }
    })
}

fn widget(spec: Value) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w1", "namespace": "default"}, "spec": spec})
}

fn run(obj: Value) -> PipelineResult {
    process(obj, &widget_schema(), &PipelineOptions::default())
}

fn fr(c: &[Cause]) -> Vec<(String, String)> {
    c.iter()
        .map(|c| (c.field.clone(), c.reason.clone()))
        .collect()
}

fn pair(f: &str, r: &str) -> (String, String) {
    (f.to_string(), r.to_string())
}

#[test]
fn check_12_defaults_mode_and_accepts_valid_widget() {
    let r = run(widget(json!({"size": "small", "replicas": 1})));
    assert!(r.causes.is_empty(), "{:?}", r.causes);
    assert_eq!(r.object["spec"]["mode"], "auto");
    assert!(r.unknown_fields.is_empty());
}

#[test]
fn check_21_wrong_type_is_type_invalid() {
    let r = run(widget(json!({"size": "small", "replicas": "three"})));
    assert_eq!(
        fr(&r.causes),
        vec![pair("spec.replicas", reason::TYPE_INVALID)]
    );
    assert_eq!(
        r.causes[0].error_string(),
        "spec.replicas: Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\""
    );
}

#[test]
fn check_22_missing_required_is_required() {
    let r = run(widget(json!({"replicas": 1})));
    assert_eq!(fr(&r.causes), vec![pair("spec.size", reason::REQUIRED)]);
}

#[test]
fn check_23_enum_is_not_supported() {
    let r = run(widget(json!({"size": "huge"})));
    assert_eq!(
        fr(&r.causes),
        vec![pair("spec.size", reason::NOT_SUPPORTED)]
    );
    assert_eq!(
        r.causes[0].message,
        "Unsupported value: \"huge\": supported values: \"small\", \"large\""
    );
}

#[test]
fn check_24_below_minimum_is_invalid() {
    let r = run(widget(json!({"size": "small", "replicas": -1})));
    assert_eq!(fr(&r.causes), vec![pair("spec.replicas", reason::INVALID)]);
    assert_eq!(
        r.causes[0].error_string(),
        "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0"
    );
}

#[test]
fn invalid_message_lists_causes_in_field_order() {
    let r = run(widget(json!({"replicas": "string"})));
    assert_eq!(
        invalid_message("Widget", "example.com", "w1", &r.causes),
        "Widget.example.com \"w1\" is invalid: [spec.replicas: Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\", spec.size: Required value]"
    );
}

#[test]
fn checks_25_26_unknown_fields_are_pruned_and_reported() {
    let r = run(widget(json!({"size": "small", "bogus": 1})));
    assert_eq!(r.unknown_fields, vec!["spec.bogus"]);
    assert!(r.object["spec"].get("bogus").is_none());
    assert!(r.causes.is_empty());
    assert_eq!(
        r.strict_error_message().unwrap(),
        "strict decoding error: unknown field \"spec.bogus\""
    );
    assert_eq!(r.warnings(), vec!["unknown field \"spec.bogus\""]);
}

#[test]
fn check_27_preserve_unknown_fields_kept_verbatim() {
    let mut obj = widget(json!({"size": "small"}));
    obj["status"] = json!({"anything": {"nested": [1, {"x": null}]}, "ready": true});
    let r = run(obj.clone());
    assert_eq!(r.object["status"], obj["status"]);
    assert!(r.unknown_fields.is_empty());
}

#[test]
fn root_metadata_is_coerced_to_object_meta() {
    let mut obj = widget(json!({"size": "small"}));
    obj["metadata"]["bogus"] = json!(1);
    obj["metadata"]["ownerReferences"] =
        json!([{"apiVersion": "v1", "kind": "A", "name": "a", "uid": "u", "x": 1}]);
    obj["extra"] = json!(true);
    let r = run(obj);
    assert_eq!(
        r.unknown_fields,
        vec!["extra", "metadata.bogus", "metadata.ownerReferences[0].x"]
    );
    assert_eq!(r.object["apiVersion"], "example.com/v1");
    assert_eq!(r.object["metadata"]["name"], "w1");
}

#[test]
fn nested_defaults_recurse_into_created_defaults() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "default": {},
        "properties": {"a": {"type": "object", "default": {"x": 1},
            "properties": {"x": {"type": "integer"}, "y": {"type": "string", "default": "d"}}}}}}});
    let r = process(
        json!({"metadata": {"name": "n"}}),
        &schema,
        &PipelineOptions::default(),
    );
    assert_eq!(r.object["spec"], json!({"a": {"x": 1, "y": "d"}}));
}

#[test]
fn nulls_are_defaulted_or_dropped_unless_nullable() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "d": {"type": "string", "default": "x"},
        "n": {"type": "string"},
        "ok": {"type": "string", "nullable": true}}}}});
    let r = process(
        json!({"spec": {"d": null, "n": null, "ok": null}}),
        &schema,
        &PipelineOptions::default(),
    );
    assert_eq!(r.object["spec"], json!({"d": "x", "ok": null}));
    assert!(r.causes.is_empty());
}

#[test]
fn additional_properties_and_arrays_are_pruned_and_validated() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "m": {"type": "object", "additionalProperties": {"type": "object", "properties": {"v": {"type": "integer"}}}},
        "l": {"type": "array", "maxItems": 2, "items": {"type": "object", "properties": {"n": {"type": "string", "minLength": 2}}}}
    }}}});
    let r = process(
        json!({"spec": {"m": {"a": {"v": 1, "junk": 2}, "b": {"v": "x"}}, "l": [{"n": "ab", "q": 1}, {"n": "a"}, {}]}}),
        &schema,
        &PipelineOptions::default(),
    );
    assert_eq!(r.unknown_fields, vec!["spec.l[0].q", "spec.m.a.junk"]);
    assert_eq!(
        fr(&r.causes),
        vec![
            pair("spec.l[1].n", reason::INVALID),
            pair("spec.l", reason::TOO_MANY),
            pair("spec.m.b.v", reason::TYPE_INVALID),
        ]
    );
}

#[test]
fn int_or_string_and_numbers() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "p": {"x-kubernetes-int-or-string": true},
        "f": {"type": "number", "maximum": 1.5, "exclusiveMaximum": true},
        "m": {"type": "integer", "multipleOf": 5},
        "i": {"type": "integer", "format": "int32"}
    }}}});
    let ok = process(
        json!({"spec": {"p": "50%", "f": 1, "m": 10, "i": 3}}),
        &schema,
        &PipelineOptions::default(),
    );
    assert!(ok.causes.is_empty(), "{:?}", ok.causes);
    let ok = process(
        json!({"spec": {"p": 8080, "f": 1.0}}),
        &schema,
        &PipelineOptions::default(),
    );
    assert!(ok.causes.is_empty(), "{:?}", ok.causes);
    let bad = process(
        json!({"spec": {"p": true, "f": 1.5, "m": 7, "i": 3_000_000_000u64}}),
        &schema,
        &PipelineOptions::default(),
    );
    // kube-openapi does not range-check int32 formats; it reports one number error per value.
    assert_eq!(
        fr(&bad.causes),
        vec![
            pair("spec.f", reason::INVALID),
            pair("spec.m", reason::INVALID),
            pair("spec.p", reason::TYPE_INVALID),
        ]
    );
    let first_only = json!({"type": "object", "properties": {"n": {"type": "integer", "multipleOf": 2, "maximum": 3}}});
    let r = process(json!({"n": 5}), &first_only, &PipelineOptions::default());
    assert_eq!(r.causes.len(), 1);
    assert!(r.causes[0].message.ends_with("should be a multiple of 2"));
    assert!(
        bad.causes[0]
            .message
            .ends_with("spec.f in body should be less than 1.5")
    );
}

#[test]
fn strings_patterns_formats_and_sets() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
        "minProperties": 1, "maxProperties": 4, "properties": {
        "s": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 3},
        "t": {"type": "string", "format": "date-time"},
        "u": {"type": "array", "uniqueItems": true, "minItems": 1, "items": {"type": "string"}},
        "k": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
              "items": {"type": "object", "properties": {"name": {"type": "string"}}}}
    }}}});
    let ok = process(
        json!({"spec": {"s": "abc", "t": "2024-01-02T03:04:05Z", "u": ["a", "b"], "k": [{"name": "a"}, {"name": "b"}]}}),
        &schema,
        &PipelineOptions::default(),
    );
    assert!(ok.causes.is_empty(), "{:?}", ok.causes);
    let bad = process(
        json!({"spec": {"s": "ABCD", "t": "yesterday", "u": ["a", "a"], "k": [{"name": "a"}, {"name": "a"}]}}),
        &schema,
        &PipelineOptions::default(),
    );
    assert_eq!(
        fr(&bad.causes),
        vec![
            pair("spec.k[1]", reason::DUPLICATE),
            pair("spec.s", reason::TOO_LONG),
            pair("spec.t", reason::TYPE_INVALID),
            pair("spec.u[1]", reason::DUPLICATE),
        ]
    );
    let empty = process(
        json!({"spec": {"u": []}}),
        &schema,
        &PipelineOptions::default(),
    );
    assert_eq!(fr(&empty.causes), vec![pair("spec.u", reason::INVALID)]);
    let none = process(json!({"spec": {}}), &schema, &PipelineOptions::default());
    assert_eq!(fr(&none.causes), vec![pair("spec", reason::INVALID)]);
}

#[test]
fn embedded_resources_keep_type_and_object_meta() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "template": {"type": "object", "x-kubernetes-embedded-resource": true,
            "properties": {"spec": {"type": "object", "properties": {"a": {"type": "string"}}}}}
    }}}});
    let r = process(
        json!({"spec": {"template": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "junk": 1},
            "spec": {"a": "b", "c": "d"}}}}),
        &schema,
        &PipelineOptions::default(),
    );
    assert_eq!(
        r.unknown_fields,
        vec!["spec.template.metadata.junk", "spec.template.spec.c"]
    );
    assert_eq!(r.object["spec"]["template"]["kind"], "ConfigMap");
    assert!(r.causes.is_empty());
    let missing = process(
        json!({"spec": {"template": {"spec": {}}}}),
        &schema,
        &PipelineOptions::default(),
    );
    assert_eq!(
        fr(&missing.causes),
        vec![
            pair("spec.template.apiVersion", reason::REQUIRED),
            pair("spec.template.kind", reason::REQUIRED),
        ]
    );
}

#[test]
fn metadata_validation_is_optional_in_pipeline() {
    let opts = PipelineOptions {
        validate_metadata: Some(true),
        ..PipelineOptions::default()
    };
    let mut obj = widget(json!({"size": "small"}));
    obj["metadata"]["name"] = json!("Bad_Name");
    let r = process(obj, &widget_schema(), &opts);
    assert_eq!(fr(&r.causes), vec![pair("metadata.name", reason::INVALID)]);
}

#[test]
fn no_prune_keeps_unknown_fields() {
    let opts = PipelineOptions {
        prune: false,
        ..PipelineOptions::default()
    };
    let r = process(
        widget(json!({"size": "small", "bogus": 1})),
        &widget_schema(),
        &opts,
    );
    assert_eq!(r.object["spec"]["bogus"], 1);
    assert!(r.unknown_fields.is_empty());
}

// ---- structural_errors ----

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

#[test]
fn junctors_one_of_any_of_all_of_not() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "string"}, "n": {"type": "integer"}},
        "oneOf": [{"required": ["a"]}, {"required": ["b"]}],
        "not": {"required": ["n"]}
    }}});
    let ok = process(
        json!({"spec": {"a": "x"}}),
        &schema,
        &PipelineOptions::default(),
    );
    assert!(ok.causes.is_empty(), "{:?}", ok.causes);

    let none = process(json!({"spec": {}}), &schema, &PipelineOptions::default());
    assert_eq!(
        none.causes[0].error_string(),
        "<nil>: Invalid value: \"\": \"spec\" must validate one and only one schema (oneOf). Found none valid"
    );
    assert_eq!(none.causes[1].field, "spec.a");

    let both = process(
        json!({"spec": {"a": "x", "b": "y"}}),
        &schema,
        &PipelineOptions::default(),
    );
    assert_eq!(both.causes.len(), 1);
    assert!(
        both.causes[0]
            .message
            .ends_with("Found 2 valid alternatives")
    );

    let not = process(
        json!({"spec": {"a": "x", "n": 1}}),
        &schema,
        &PipelineOptions::default(),
    );
    assert_eq!(not.causes.len(), 1);
    assert!(
        not.causes[0]
            .message
            .ends_with("\"spec\" must not validate the schema (not)")
    );

    let any = json!({"type": "object", "properties": {"p": {"type": "string",
        "anyOf": [{"pattern": "^a"}, {"maxLength": 2}]}}});
    assert!(
        process(json!({"p": "abcdef"}), &any, &PipelineOptions::default())
            .causes
            .is_empty()
    );
    assert!(
        process(json!({"p": "zz"}), &any, &PipelineOptions::default())
            .causes
            .is_empty()
    );
    let bad = process(json!({"p": "zzz"}), &any, &PipelineOptions::default());
    assert_eq!(bad.causes[0].field, JUNCTOR_FIELD);
    assert!(bad.causes[0].message.contains("(anyOf)"));

    let all = json!({"type": "object", "properties": {"p": {"type": "integer",
        "allOf": [{"minimum": 1}, {"maximum": 5}]}}});
    assert!(
        process(json!({"p": 3}), &all, &PipelineOptions::default())
            .causes
            .is_empty()
    );
    let bad = process(json!({"p": 9}), &all, &PipelineOptions::default());
    assert_eq!(
        fr(&bad.causes),
        vec![
            pair(JUNCTOR_FIELD, reason::INVALID),
            pair("p", reason::INVALID)
        ]
    );
}

#[test]
fn int_or_string_with_any_of_pattern_reports_type_once() {
    let schema = json!({"type": "object", "properties": {"p": {"x-kubernetes-int-or-string": true,
        "anyOf": [{"type": "integer"}, {"type": "string"}]}}});
    assert!(
        process(json!({"p": 1}), &schema, &PipelineOptions::default())
            .causes
            .is_empty()
    );
    assert!(
        process(json!({"p": "1%"}), &schema, &PipelineOptions::default())
            .causes
            .is_empty()
    );
    let bad = process(json!({"p": true}), &schema, &PipelineOptions::default());
    assert_eq!(fr(&bad.causes), vec![pair("p", reason::TYPE_INVALID)]);
    assert!(
        bad.causes[0]
            .message
            .ends_with("p in body must be of type integer,string: \"boolean\"")
    );
}

#[test]
fn update_ratchets_unchanged_invalid_fields() {
    // Stored under an older schema without the enum: size "medium" is now invalid.
    let old = json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w1", "namespace": "default"},
        "spec": {"size": "medium", "mode": "auto", "replicas": 1}});
    let mut new = old.clone();
    new["spec"]["replicas"] = json!(2);
    let r = process_update(
        new.clone(),
        &old,
        &widget_schema(),
        &PipelineOptions::default(),
    );
    assert!(r.causes.is_empty(), "{:?}", r.causes);
    let plain = process(new, &widget_schema(), &PipelineOptions::default());
    assert_eq!(
        fr(&plain.causes),
        vec![pair("spec.size", reason::NOT_SUPPORTED)]
    );
    let mut changed = old.clone();
    changed["spec"]["size"] = json!("tiny");
    let r = process_update(changed, &old, &widget_schema(), &PipelineOptions::default());
    assert_eq!(
        fr(&r.causes),
        vec![pair("spec.size", reason::NOT_SUPPORTED)]
    );
}

fn arb_json() -> impl proptest::strategy::Strategy<Value = Value> {
    use proptest::prelude::*;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        prop_oneof![
            Just("object".to_string()),
            Just("array".to_string()),
            Just("string".to_string()),
            Just("integer".to_string()),
            Just("date-time".to_string()),
            Just("map".to_string()),
            "\\PC{0,6}",
        ]
        .prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 48, 5, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map(
                prop_oneof![
                    Just("type".to_string()),
                    Just("properties".to_string()),
                    Just("items".to_string()),
                    Just("additionalProperties".to_string()),
                    Just("required".to_string()),
                    Just("enum".to_string()),
                    Just("default".to_string()),
                    Just("pattern".to_string()),
                    Just("format".to_string()),
                    Just("minimum".to_string()),
                    Just("maxLength".to_string()),
                    Just("multipleOf".to_string()),
                    Just("anyOf".to_string()),
                    Just("oneOf".to_string()),
                    Just("not".to_string()),
                    Just("nullable".to_string()),
                    Just("x-kubernetes-preserve-unknown-fields".to_string()),
                    Just("x-kubernetes-embedded-resource".to_string()),
                    Just("x-kubernetes-int-or-string".to_string()),
                    Just("x-kubernetes-list-type".to_string()),
                    Just("x-kubernetes-list-map-keys".to_string()),
                    Just("metadata".to_string()),
                    Just("spec".to_string()),
                    "[a-z]{1,3}",
                ],
                inner,
                0..5
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest::proptest! {
    #[test]
    fn arbitrary_objects_and_schemas_never_panic(obj in arb_json(), schema in arb_json()) {
        let _ = structural_errors(&schema, "s");
        let r = process(obj.clone(), &schema, &PipelineOptions { validate_metadata: Some(true), ..PipelineOptions::default() });
        let _ = invalid_message("Widget", "example.com", "w", &r.causes);
        let _ = process_update(obj.clone(), &obj, &schema, &PipelineOptions::default());
        let _ = process(obj, &widget_schema(), &PipelineOptions::default());
    }
}

fn schema_with_rules() -> Value {
    let mut s = widget_schema();
    s["properties"]["spec"]["x-kubernetes-validations"] = json!([
        {"rule": "!has(self.replicas) || self.replicas <= 10", "message": "at most 10 replicas"}
    ]);
    s["properties"]["spec"]["properties"]["size"]["x-kubernetes-validations"] =
        json!([{"rule": "self == oldSelf", "message": "size is immutable"}]);
    s
}

#[test]
fn cel_rules_run_after_schema_validation() {
    let r = process(
        widget(json!({"size": "small", "replicas": 11})),
        &schema_with_rules(),
        &PipelineOptions::default(),
    );
    assert_eq!(
        r.causes.iter().map(Cause::error_string).collect::<Vec<_>>(),
        vec!["spec: Invalid value: \"object\": at most 10 replicas"]
    );
    // Type errors block the rules, with kube's notice.
    let r = process(
        widget(json!({"size": "small", "replicas": "x"})),
        &schema_with_rules(),
        &PipelineOptions::default(),
    );
    assert_eq!(
        fr(&r.causes),
        vec![
            pair("spec.replicas", reason::TYPE_INVALID),
            pair(JUNCTOR_FIELD, reason::INVALID)
        ]
    );
    assert!(r.causes[1].message.ends_with(RULES_NOT_CHECKED));
}

#[test]
fn transition_rules_and_ratcheting_on_update() {
    let old = process(
        widget(json!({"size": "small", "replicas": 1})),
        &schema_with_rules(),
        &PipelineOptions::default(),
    )
    .object;
    let mut changed = old.clone();
    changed["spec"]["size"] = json!("large");
    let r = process_update(
        changed,
        &old,
        &schema_with_rules(),
        &PipelineOptions::default(),
    );
    assert_eq!(
        r.causes.iter().map(Cause::error_string).collect::<Vec<_>>(),
        vec!["spec.size: Invalid value: \"string\": size is immutable"]
    );
    // An object stored before the replicas rule existed may keep its value.
    let mut stored = old.clone();
    stored["spec"]["replicas"] = json!(50);
    let mut relabelled = stored.clone();
    relabelled["metadata"]["labels"] = json!({"a": "b"});
    let r = process_update(
        relabelled,
        &stored,
        &schema_with_rules(),
        &PipelineOptions::default(),
    );
    assert!(r.causes.is_empty(), "{:?}", r.causes);
}

fn collect_rules(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            if let Some(rules) = m.get("x-kubernetes-validations").and_then(Value::as_array) {
                out.extend(
                    rules
                        .iter()
                        .filter_map(|r| r.get("rule").and_then(Value::as_str).map(str::to_string)),
                );
            }
            m.values().for_each(|c| collect_rules(c, out));
        }
        Value::Array(a) => a.iter().for_each(|c| collect_rules(c, out)),
        _ => {}
    }
}

#[test]
fn corpus_cel_rules_parse() {
    let Some(dir) = crate::shared_data::shared_or_skip("corpus", "corpus_cel_rules_parse") else {
        return;
    };
    let mut rules = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path().join("components.yaml");
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        for doc in text.split("\n---") {
            if let Ok(v) = serde_saphyr::from_str::<Value>(doc) {
                collect_rules(&v, &mut rules);
            }
        }
    }
    let failed: Vec<&String> = rules.iter().filter(|r| cel::parse(r).is_err()).collect();
    eprintln!(
        "{} corpus rules, {} unparsed: {failed:?}",
        rules.len(),
        failed.len()
    );
    assert!(failed.is_empty(), "{failed:?}");
}

#[test]
fn validation_rule_entries_are_checked() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
    "x-kubernetes-validations": [
        {"rule": ""},
        {"rule": "self.a\n|| self.b"},
        {"rule": "true", "reason": "Nope"},
        {"rule": "true", "message": "ok", "reason": "FieldValueForbidden"}
    ]}}});
    assert_eq!(
        fr(&structural_errors(&schema, "s")),
        vec![
            pair(
                "s.properties[spec].x-kubernetes-validations[0].rule",
                reason::REQUIRED
            ),
            pair(
                "s.properties[spec].x-kubernetes-validations[1].message",
                reason::REQUIRED
            ),
            pair(
                "s.properties[spec].x-kubernetes-validations[2].reason",
                reason::NOT_SUPPORTED
            ),
        ]
    );
}

#[test]
#[ignore = "timing probe: cargo test --release --lib pipeline_timing -- --ignored --nocapture"]
fn pipeline_timing() {
    let Some(path) =
        crate::shared_data::shared_or_skip("corpus/capi-core/components.yaml", "pipeline_timing")
    else {
        return;
    };
    let text = std::fs::read_to_string(path).unwrap();
    let crd = text
        .split("\n---")
        .filter_map(|d| serde_saphyr::from_str::<Value>(d).ok())
        .find(|v| {
            v["kind"] == "CustomResourceDefinition" && v["spec"]["names"]["kind"] == "Cluster"
        })
        .unwrap();
    let versions = crd["spec"]["versions"].as_array().unwrap();
    let schema = versions.last().unwrap()["schema"]["openAPIV3Schema"].clone();
    let obj = json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
        "metadata": {"name": "c1", "namespace": "default", "labels": {"a": "b"}},
        "spec": {"clusterNetwork": {"pods": {"cidrBlocks": ["192.168.0.0/16"]}},
                 "controlPlaneRef": {"apiGroup": "controlplane.cluster.x-k8s.io", "kind": "KubeadmControlPlane", "name": "cp"},
                 "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerCluster", "name": "c1"}}});
    let n = 2000;
    let start = std::time::Instant::now();
    for _ in 0..n {
        let r = process(obj.clone(), &schema, &PipelineOptions::default());
        assert!(r.causes.is_empty(), "{:?}", r.causes);
    }
    let per = start.elapsed() / n;
    let start = std::time::Instant::now();
    let s = structural_errors(&schema, "s");
    eprintln!(
        "process: {per:?}/object; structural_errors: {:?} ({} causes)",
        start.elapsed(),
        s.len()
    );
}

#[test]
fn string_formats_kube_keeps() {
    let schema =
        |f: &str| json!({"type": "object", "properties": {"v": {"type": "string", "format": f}}});
    for (format, good, bad) in [
        ("ipv4", "10.0.0.1", "10.0.0"),
        ("ipv6", "fd00::1", "10.0.0.1"),
        ("cidr", "10.0.0.0/8", "10.0.0.0/33"),
        ("uri", "https://example.com/x", "not a uri"),
        ("duration", "1h30m", "soon"),
        ("hostname", "api.example.com", "-bad-"),
        ("email", "a@example.com", "nobody"),
        ("mac", "00:11:22:33:44:55", "00:11"),
        ("uuid", "123e4567-e89b-12d3-a456-426614174000", "123"),
        ("byte", "aGVsbG8=", "%%%"),
        ("date-time", "2024-01-02T03:04:05Z", "2024-01-02"),
        ("int32", "anything", "anything"),
    ] {
        let ok = process(
            json!({"v": good}),
            &schema(format),
            &PipelineOptions::default(),
        );
        assert!(ok.causes.is_empty(), "{format} {good}: {:?}", ok.causes);
        let r = process(
            json!({"v": bad}),
            &schema(format),
            &PipelineOptions::default(),
        );
        let want = if good == bad { 0 } else { 1 };
        assert_eq!(r.causes.len(), want, "{format} {bad}");
        if want == 1 {
            assert_eq!(r.causes[0].reason, reason::TYPE_INVALID);
        }
    }
}

#[test]
fn corpus_builtin_objects_are_valid() {
    // Every built-in object real providers ship must pass, or the emulator rejects them.
    let Some(dir) =
        crate::shared_data::shared_or_skip("corpus", "corpus_builtin_objects_are_valid")
    else {
        return;
    };
    let mut checked = 0;
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let Ok(text) = std::fs::read_to_string(e.path().join("components.yaml")) else {
            continue;
        };
        for doc in text.split("\n---") {
            let Ok(mut v) = serde_saphyr::from_str::<Value>(doc) else {
                continue;
            };
            let kind = v["kind"].as_str().unwrap_or("").to_string();
            let namespaced = match kind.as_str() {
                "Secret" | "ConfigMap" | "ServiceAccount" | "Role" | "RoleBinding" => true,
                "Namespace" | "ClusterRole" | "ClusterRoleBinding" => false,
                _ => continue,
            };
            default_rbac_subjects(&mut v);
            let mut meta = v["metadata"].clone();
            if namespaced && meta.get("namespace").is_none() {
                meta["namespace"] = json!("default");
            }
            let mut causes = validate_object_meta_for_kind(&meta, namespaced, &kind);
            causes.extend(validate_builtin(&kind, &v));
            // Unrendered template variables (${NAMESPACE}) are not our concern here.
            causes.retain(|c| !c.message.contains("${"));
            assert!(
                causes.is_empty(),
                "{}: {kind} {}: {causes:?}",
                e.path().display(),
                meta["name"]
            );
            checked += 1;
        }
    }
    eprintln!("checked {checked} built-in corpus objects");
}

#[test]
#[ignore = "survey: cargo test --lib corpus_minimal_objects_survey -- --ignored --nocapture"]
fn corpus_minimal_objects_survey() {
    let Some(dir) = crate::shared_data::shared_or_skip("corpus", "corpus_minimal_objects_survey")
    else {
        return;
    };
    let mut counts: std::collections::BTreeMap<String, usize> = Default::default();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let Ok(text) = std::fs::read_to_string(e.path().join("components.yaml")) else {
            continue;
        };
        for doc in text.split("\n---") {
            let Ok(v) = serde_saphyr::from_str::<Value>(doc) else {
                continue;
            };
            if v["kind"] != "CustomResourceDefinition" {
                continue;
            }
            for ver in v["spec"]["versions"]
                .as_array()
                .cloned()
                .unwrap_or_default()
            {
                let schema = &ver["schema"]["openAPIV3Schema"];
                let obj = json!({"apiVersion": "x/v1", "kind": v["spec"]["names"]["kind"],
                    "metadata": {"name": "x", "namespace": "default"}, "spec": {}});
                let r = process(obj, schema, &PipelineOptions::default());
                for c in r.causes {
                    if c.reason != reason::REQUIRED {
                        eprintln!(
                            "{} {}: {}",
                            v["metadata"]["name"],
                            ver["name"],
                            c.error_string()
                        );
                    }
                    *counts.entry(c.reason).or_default() += 1;
                }
            }
        }
    }
    eprintln!("{counts:?}");
}

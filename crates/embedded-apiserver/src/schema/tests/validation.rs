//! Value validation corner cases: junctors (`oneOf`/`anyOf`/`allOf`/`not`), int-or-string,
//! ratcheting of unchanged invalid fields, and property tests of the pipeline.

use super::*;

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

//! `x-kubernetes-validations` in the pipeline: CEL rules after schema validation, transition
//! rules and ratcheting, and every corpus rule parsed.

use super::*;

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

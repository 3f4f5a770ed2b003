//! Unit tests of `config`.

use super::*;

fn hook() -> Value {
    json!({"name": "a.b.c", "clientConfig": {"url": "https://127.0.0.1:1/x"},
        "rules": [{"operations": ["CREATE"], "apiGroups": ["g"], "apiVersions": ["v1"], "resources": ["rs"]}],
        "sideEffects": "None", "admissionReviewVersions": ["v1"]})
}

#[test]
fn defaults_and_valid() {
    let mut obj = json!({"webhooks": [hook()]});
    default(&mut obj, true);
    assert_eq!(obj["webhooks"][0]["failurePolicy"], "Fail");
    assert_eq!(obj["webhooks"][0]["matchPolicy"], "Equivalent");
    assert_eq!(obj["webhooks"][0]["timeoutSeconds"], 10);
    assert_eq!(obj["webhooks"][0]["reinvocationPolicy"], "Never");
    assert_eq!(obj["webhooks"][0]["rules"][0]["scope"], "*");
    assert!(validate(&obj, true).is_empty());
    let c = Configs::parse([(true, &obj)].into_iter());
    assert_eq!(c.mutating.len(), 1);
    assert!(!c.mutating[0].fail_open);
}

#[test]
fn kube_messages() {
    let mut w = hook();
    w["name"] = json!("foo");
    w["timeoutSeconds"] = json!(31);
    w["sideEffects"] = json!("Some");
    w.as_object_mut().unwrap().remove("admissionReviewVersions");
    w["rules"][0]["operations"] = json!(["GET"]);
    let causes = validate(&json!({"webhooks": [w]}), false);
    let msgs: Vec<String> = causes
        .iter()
        .map(|c| format!("{}: {}", c.field, c.message))
        .collect();
    assert!(msgs.contains(&"webhooks[0].name: Invalid value: \"foo\": should be a domain with at least three segments separated by dots".to_string()), "{msgs:?}");
    assert!(msgs.contains(&"webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds".to_string()));
    assert!(msgs.contains(&"webhooks[0].sideEffects: Unsupported value: \"Some\": supported values: \"None\", \"NoneOnDryRun\"".to_string()));
    assert!(
        msgs.contains(
            &"webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1"
                .to_string()
        )
    );
    assert!(msgs.contains(&"webhooks[0].rules[0].operations[0]: Unsupported value: \"GET\": supported values: \"*\", \"CONNECT\", \"CREATE\", \"DELETE\", \"UPDATE\"".to_string()));
    let both = validate_client_config(
        &json!({"url": "https://a", "service": {"name": "s", "namespace": "n"}}),
        "webhooks[0].clientConfig",
    );
    assert_eq!(
        both[0].message,
        "Required value: exactly one of url or service is required"
    );
    assert!(
        validate(&json!({}), true).is_empty(),
        "no webhooks is valid (kopf)"
    );
}

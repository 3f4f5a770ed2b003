//! `admissionregistration.k8s.io/v1` `MutatingWebhookConfiguration` and
//! `ValidatingWebhookConfiguration`: v1 defaults and the validation a manifest can fail cheaply
//! (webhook names, client configs, side effects, review versions, policies). Stored only: the
//! server calls no webhook.

use super::cause::Cause;
use super::names;
use super::workloads::{default_to, list_of, str_of, supported, valid_port};
use serde_json::{Value, json};

pub(super) fn apply_defaults(obj: &mut Value, mutating: bool) {
    let Some(hooks) = obj.get_mut("webhooks").and_then(Value::as_array_mut) else {
        return;
    };
    for h in hooks.iter_mut().filter_map(Value::as_object_mut) {
        default_to(h, "failurePolicy", json!("Fail"));
        default_to(h, "matchPolicy", json!("Equivalent"));
        default_to(h, "namespaceSelector", json!({}));
        default_to(h, "objectSelector", json!({}));
        default_to(h, "timeoutSeconds", json!(10));
        if mutating {
            default_to(h, "reinvocationPolicy", json!("Never"));
        }
        if let Some(svc) = h
            .get_mut("clientConfig")
            .and_then(|c| c.get_mut("service"))
            .and_then(Value::as_object_mut)
        {
            default_to(svc, "port", json!(443));
        }
        if let Some(rules) = h.get_mut("rules").and_then(Value::as_array_mut) {
            for r in rules.iter_mut().filter_map(Value::as_object_mut) {
                default_to(r, "scope", json!("*"));
            }
        }
    }
}

pub(super) fn validate(obj: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (i, h) in list_of(obj, "webhooks").iter().enumerate() {
        let path = format!("webhooks[{i}]");
        let name = str_of(h, "name");
        if name.is_empty() {
            out.push(Cause::required(&format!("{path}.name"), ""));
        } else {
            let mut bad = names::dns1123_subdomain(name);
            if bad.is_empty() && name.split('.').count() < 3 {
                bad.push(
                    "should be a domain with at least three segments separated by dots".into(),
                );
            }
            for msg in bad {
                out.push(Cause::invalid(&format!("{path}.name"), &json!(name), &msg));
            }
            if seen.contains(&name) {
                out.push(Cause::duplicate(&format!("{path}.name"), &json!(name)));
            }
            seen.push(name);
        }
        let cc = h.get("clientConfig").cloned().unwrap_or(Value::Null);
        match (cc.get("url"), cc.get("service")) {
            (Some(_), Some(_)) | (None, None) => out.push(Cause::required(
                &format!("{path}.clientConfig"),
                "exactly one of url or service is required",
            )),
            (None, Some(svc)) => {
                for k in ["name", "namespace"] {
                    if str_of(svc, k).is_empty() {
                        out.push(Cause::required(
                            &format!("{path}.clientConfig.service.{k}"),
                            &format!("service {k} is required"),
                        ));
                    }
                }
                if let Some(port) = svc.get("port")
                    && !valid_port(port)
                {
                    out.push(Cause::invalid(
                        &format!("{path}.clientConfig.service.port"),
                        port,
                        "port is not valid: must be between 1 and 65535, inclusive",
                    ));
                }
            }
            (Some(_), None) => {}
        }
        let effects = str_of(h, "sideEffects");
        if effects.is_empty() {
            out.push(Cause::required(
                &format!("{path}.sideEffects"),
                "must specify one of None, NoneOnDryRun",
            ));
        } else if !["None", "NoneOnDryRun"].contains(&effects) {
            out.push(Cause::not_supported(
                &format!("{path}.sideEffects"),
                &json!(effects),
                &supported(&["None", "NoneOnDryRun"]),
            ));
        }
        let versions = list_of(h, "admissionReviewVersions");
        if !versions
            .iter()
            .any(|v| matches!(v.as_str(), Some("v1" | "v1beta1")))
        {
            out.push(Cause::required(
                &format!("{path}.admissionReviewVersions"),
                "must specify one of v1, v1beta1",
            ));
        }
        let policy = str_of(h, "failurePolicy");
        if !["Fail", "Ignore"].contains(&policy) {
            out.push(Cause::not_supported(
                &format!("{path}.failurePolicy"),
                &json!(policy),
                &supported(&["Fail", "Ignore"]),
            ));
        }
        if let Some(t) = h.get("timeoutSeconds").and_then(Value::as_i64)
            && !(1..=30).contains(&t)
        {
            out.push(Cause::invalid(
                &format!("{path}.timeoutSeconds"),
                &json!(t),
                "the timeout value must be between 1 and 30 seconds",
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(c: &[Cause]) -> Vec<(&str, &str)> {
        c.iter()
            .map(|c| (c.field.as_str(), c.reason.as_str()))
            .collect()
    }

    #[test]
    fn webhook_configuration_rules() {
        let mut ok = json!({"webhooks": [{"name": "validation.foo.example.io",
            "clientConfig": {"service": {"name": "s", "namespace": "n", "path": "/v"}},
            "sideEffects": "None", "admissionReviewVersions": ["v1"],
            "rules": [{"apiGroups": ["x"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["foos"]}]}]});
        apply_defaults(&mut ok, false);
        assert_eq!(ok["webhooks"][0]["clientConfig"]["service"]["port"], 443);
        assert_eq!(ok["webhooks"][0]["timeoutSeconds"], 10);
        assert!(validate(&ok).is_empty());
        let mut bad = json!({"webhooks": [{"name": "short.name", "clientConfig": {}},
            {"name": "short.name"}]});
        apply_defaults(&mut bad, true);
        assert_eq!(bad["webhooks"][0]["reinvocationPolicy"], "Never");
        let causes = validate(&bad);
        let got = fields(&causes);
        assert_eq!(
            got[..4],
            [
                ("webhooks[0].name", "FieldValueInvalid"),
                ("webhooks[0].clientConfig", "FieldValueRequired"),
                ("webhooks[0].sideEffects", "FieldValueRequired"),
                ("webhooks[0].admissionReviewVersions", "FieldValueRequired"),
            ]
        );
        assert!(got.contains(&("webhooks[1].name", "FieldValueDuplicate")));
    }
}

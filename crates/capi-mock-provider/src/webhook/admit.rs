//! The mock's admission webhooks, as Cluster API providers write them (controller-runtime's
//! `CustomDefaulter` / `CustomValidator`), registered for the hub version `v1beta2` with
//! `matchPolicy: Equivalent`, so objects arrive at `v1beta2` whatever version the client used.
//!
//! - Defaulting (`/mutate`): a MockControlPlane without `spec.replicas` gets 1 (KCP defaults
//!   its replicas the same way).
//! - Validation (`/validate`): a MockControlPlane's `spec.replicas`, when set, is at least 1;
//!   a template's `spec` is immutable, except in topology's dry run (a dry-run request of an
//!   object annotated `topology.cluster.x-k8s.io/dry-run`), which CAPI's topology controller
//!   sends to learn whether a template would change (CAPI's `topology.IsDryRunRequest`).
//!
//! Faults: `all/defaulting-admitted` defaults replicas to 0, which the validation then rejects;
//! `template/ssa-dry-run` (and the role-specific `*-template/ssa-dry-run`) ignores the dry-run
//! exemption.

use serde_json::{Value, json};

/// Topology's dry-run annotation.
pub const DRY_RUN_ANNOTATION: &str = "topology.cluster.x-k8s.io/dry-run";

/// The webhook's answer: allowed (with JSON Patch operations) or denied.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Allowed(Vec<Value>),
    Denied {
        code: u16,
        reason: String,
        message: String,
    },
}

fn str_at<'a>(v: &'a Value, ptr: &str) -> &'a str {
    v.pointer(ptr).and_then(Value::as_str).unwrap_or_default()
}

fn group_of(request: &Value) -> &str {
    str_at(request, "/kind/group")
}

fn kind_of(request: &Value) -> &str {
    str_at(request, "/kind/kind")
}

/// Defaulting of one AdmissionReview `request`; `faulty`: the defaulting fault.
pub fn default(request: &Value, faulty: bool) -> Verdict {
    let mut patch = Vec::new();
    let Some(object) = request.get("object").filter(|o| o.is_object()) else {
        return Verdict::Allowed(patch);
    };
    if kind_of(request) == "MockControlPlane" && object.pointer("/spec/replicas").is_none() {
        if object.get("spec").is_none() {
            patch.push(json!({"op": "add", "path": "/spec", "value": {}}));
        }
        let replicas = if faulty { 0 } else { 1 };
        patch.push(json!({"op": "add", "path": "/spec/replicas", "value": replicas}));
    }
    Verdict::Allowed(patch)
}

/// Validation of one AdmissionReview `request`. `dry_run_exempt == false` is the template
/// fault.
pub fn validate(request: &Value, dry_run_exempt: bool) -> Verdict {
    let kind = kind_of(request);
    let name = str_at(request, "/name");
    let invalid = |field: &str, value: &Value, detail: &str| Verdict::Denied {
        code: 422,
        reason: "Invalid".into(),
        message: format!(
            "{kind}.{} \"{name}\" is invalid: {field}: Invalid value: {value}: {detail}",
            group_of(request)
        ),
    };
    let object = request.get("object").cloned().unwrap_or(Value::Null);
    let operation = str_at(request, "/operation");
    if kind == "MockControlPlane"
        && matches!(operation, "CREATE" | "UPDATE")
        && let Some(r) = object.pointer("/spec/replicas")
        && r.as_i64().is_some_and(|n| n < 1)
    {
        return invalid("spec.replicas", r, "must be at least 1");
    }
    if kind.ends_with("Template") && operation == "UPDATE" {
        let old_spec = request.pointer("/oldObject/spec");
        let new_spec = object.get("spec");
        if old_spec != new_spec {
            let topology_dry_run = request.get("dryRun").and_then(Value::as_bool) == Some(true)
                && object
                    .pointer("/metadata/annotations")
                    .and_then(|a| a.get(DRY_RUN_ANNOTATION))
                    .is_some();
            if !(topology_dry_run && dry_run_exempt) {
                return Verdict::Denied {
                    code: 422,
                    reason: "Invalid".into(),
                    message: format!(
                        "{kind}.{} \"{name}\" is invalid: spec: Forbidden: {kind} spec.template.spec field is immutable. Please create a new resource instead.",
                        group_of(request)
                    ),
                };
            }
        }
    }
    Verdict::Allowed(Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cp(spec: Value) -> Value {
        json!({"kind": {"group": "controlplane.mock.capi-conformance.io", "version": "v1beta2", "kind": "MockControlPlane"},
               "name": "cp", "operation": "CREATE", "object": {"spec": spec}})
    }

    #[test]
    fn replicas_default_to_one_and_the_fault_defaults_what_validation_rejects() {
        let req = cp(json!({"version": "v1.31.0"}));
        assert_eq!(
            default(&req, false),
            Verdict::Allowed(vec![
                json!({"op": "add", "path": "/spec/replicas", "value": 1})
            ])
        );
        assert_eq!(
            default(&cp(json!({"replicas": 3})), false),
            Verdict::Allowed(vec![])
        );
        let Verdict::Allowed(p) = default(&req, true) else {
            panic!()
        };
        let mut obj = req.clone();
        obj["object"]["spec"]["replicas"] = p[0]["value"].clone();
        let Verdict::Denied { code, message, .. } = validate(&obj, true) else {
            panic!()
        };
        assert_eq!(code, 422);
        assert_eq!(
            message,
            "MockControlPlane.controlplane.mock.capi-conformance.io \"cp\" is invalid: spec.replicas: Invalid value: 0: must be at least 1"
        );
    }

    #[test]
    fn templates_are_immutable_except_in_topology_dry_run() {
        let update = |dry_run: bool, annotated: bool| {
            let mut o = json!({"metadata": {}, "spec": {"template": {"spec": {"a": 2}}}});
            if annotated {
                o["metadata"]["annotations"] = json!({DRY_RUN_ANNOTATION: ""});
            }
            json!({"kind": {"group": "g", "version": "v1beta2", "kind": "MockMachineTemplate"},
                   "name": "t", "operation": "UPDATE", "dryRun": dry_run,
                   "object": o, "oldObject": {"spec": {"template": {"spec": {"a": 1}}}}})
        };
        assert!(matches!(
            validate(&update(false, false), true),
            Verdict::Denied { .. }
        ));
        assert!(matches!(
            validate(&update(true, false), true),
            Verdict::Denied { .. }
        ));
        assert!(matches!(
            validate(&update(false, true), true),
            Verdict::Denied { .. }
        ));
        assert_eq!(
            validate(&update(true, true), true),
            Verdict::Allowed(vec![])
        );
        assert!(matches!(
            validate(&update(true, true), false),
            Verdict::Denied { .. }
        ));
    }
}

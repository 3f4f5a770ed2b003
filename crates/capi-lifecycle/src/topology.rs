//! What CAPI's topology controller sets on a control plane it makes from its ClusterClass's
//! template, for the scenarios that build such an object (SC-template's clone, SC-webhooks'
//! minimal control plane).

use super::script::ScriptRun;
use kube::api::GroupVersionKind;
use kube::discovery::ApiResource;
use serde_json::{Value, json};

/// The InfraMachineTemplate kind a cloned control plane's machine template names: the mock's,
/// when the server serves it (every embedded run), since a provider's conversion may look the
/// kind up (KCP's v1beta1 conversion reads the referenced CRD's contract label to write its
/// `apiVersion`); else a kind of no one's (a real cluster: the clone is a dry run).
pub async fn machine_template_kind(r: &ScriptRun<'_>) -> (String, String) {
    let mock = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(
            "infrastructure.mock.capi-conformance.io",
            "v1beta2",
            "MockMachineTemplate",
        ),
        "mockmachinetemplates",
    );
    let served = r
        .env
        .api(&mock)
        .list(&kube::api::ListParams::default().limit(1))
        .await
        .is_ok();
    if served {
        (mock.group, mock.kind)
    } else {
        (
            "infrastructure.cluster.x-k8s.io".into(),
            "ConformanceMachineTemplate".into(),
        )
    }
}

/// Whether `schema` (an OpenAPI v3 schema) declares the dotted `path`.
fn declares(schema: &Value, path: &str) -> bool {
    let mut cur = schema;
    for key in path.split('.') {
        match cur.pointer(&format!("/properties/{key}")) {
            Some(next) => cur = next,
            None => return false,
        }
    }
    true
}

/// What CAPI's topology controller sets on a control plane it makes from its template
/// (`exp/topology/desiredstate/desired_state.go` `computeControlPlane`, v1.11): the Cluster's
/// Kubernetes version and, with a ClusterClass `machineInfrastructure`, the machine template's
/// infrastructure reference (`spec.machineTemplate.spec.infrastructureRef` in the v1beta2
/// contract, `spec.machineTemplate.infrastructureRef` in v1beta1). Set where `schema` (the
/// control plane's) declares them; the version where the template left it out, the reference
/// always, as `contract.ControlPlane().MachineTemplate().InfrastructureRef().Set` does (v1.10.5
/// line 329): a template may carry an empty one, the zero value a Go defaulting webhook writes
/// back (RKE2's `machineTemplate: {infrastructureRef: {}}`). The reference names a template of
/// kind `reference` (group, kind) that need not exist (the clone is a dry run).
pub fn set_topology_fields(
    spec: &mut Value,
    schema: &Value,
    reference: &(String, String),
    name: &str,
) {
    let Some(spec) = spec.as_object_mut() else {
        return;
    };
    if declares(schema, "spec.version") {
        spec.entry("version").or_insert_with(|| json!("v1.33.0"));
    }
    let (group, kind) = reference;
    let (path, reference) = if declares(schema, "spec.machineTemplate.spec.infrastructureRef") {
        (
            &["machineTemplate", "spec"][..],
            json!({"apiGroup": group, "kind": kind, "name": name}),
        )
    } else if declares(schema, "spec.machineTemplate.infrastructureRef") {
        (
            &["machineTemplate"][..],
            json!({"apiVersion": format!("{group}/v1beta1"), "kind": kind, "name": name}),
        )
    } else {
        return;
    };
    let mut at = spec;
    for key in path {
        let Some(next) = at
            .entry(key.to_string())
            .or_insert_with(|| json!({}))
            .as_object_mut()
        else {
            return;
        };
        at = next;
    }
    at.insert("infrastructureRef".to_string(), reference);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema(paths: &[&str]) -> Value {
        let mut root = json!({});
        for p in paths {
            let mut cur = &mut root;
            for key in p.split('.') {
                cur = &mut cur["properties"][key];
            }
            *cur = json!({"type": "object"});
        }
        root
    }

    fn reference() -> (String, String) {
        ("infrastructure.cluster.x-k8s.io".into(), "T".into())
    }

    #[test]
    fn topology_fields_follow_the_control_planes_schema() {
        let b2 = schema(&[
            "spec.version",
            "spec.machineTemplate.spec.infrastructureRef",
        ]);
        let mut spec = json!({"kubeadmConfigSpec": {}});
        set_topology_fields(&mut spec, &b2, &reference(), "x");
        assert_eq!(spec["version"], "v1.33.0");
        assert_eq!(
            spec["machineTemplate"]["spec"]["infrastructureRef"]["apiGroup"],
            "infrastructure.cluster.x-k8s.io"
        );
        let b1 = schema(&["spec.version", "spec.machineTemplate.infrastructureRef"]);
        let mut spec = json!({"version": "v1.30.1"});
        set_topology_fields(&mut spec, &b1, &reference(), "x");
        assert_eq!(spec["version"], "v1.30.1", "the template's own value stays");
        assert_eq!(
            spec["machineTemplate"]["infrastructureRef"]["apiVersion"],
            "infrastructure.cluster.x-k8s.io/v1beta1"
        );
        // An empty reference (a Go zero value a defaulting webhook wrote) is replaced.
        let mut spec = json!({"machineTemplate": {"infrastructureRef": {"namespace": "n"}}});
        set_topology_fields(&mut spec, &b1, &reference(), "x");
        assert_eq!(spec["machineTemplate"]["infrastructureRef"]["name"], "x");
        // A control plane without machines gets neither.
        let mut spec = json!({});
        set_topology_fields(&mut spec, &schema(&["spec.replicas"]), &reference(), "x");
        assert_eq!(spec, json!({}));
    }
}

//! Faults that live in the mock's CRDs rather than in its reconcilers: the template admission
//! rules (`*/ssa-dry-run`, `template/clone-compatible`) are decided by the API server, so the
//! faulty mock breaks them by changing the installed CRDs.
//!
//! - `template/ssa-dry-run` (every template kind) and `<role>/ssa-dry-run` (that role's template
//!   kind): an `x-kubernetes-validations` transition rule `self == oldSelf` on `spec`, which
//!   rejects every spec change, dry run and `topology.cluster.x-k8s.io/dry-run` annotation or not
//!   (CEL cannot read annotations, so such a rule can never honour the annotation).
//! - `template/clone-compatible`: the template schema defaults `spec.template.spec.flavor` to
//!   `large`, while the base kind only admits `small` or `medium`: every template is admitted,
//!   every clone of one is rejected.
//!
//! These faults are provider-wide only (no per-object annotation): they change the CRDs every
//! object of the kind shares, so start a faulty mock only in a throw-away cluster, after the
//! baseline ran (`check --embedded` does so).

use super::FaultSet;
use capi_contract::rule_ids::{self as id, RuleId};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};
use serde_json::{Value, json};

/// The template kinds of the mock and the role-specific ssa-dry-run rule id of each, if any.
const TEMPLATES: &[(&str, Option<RuleId>)] = &[
    (
        "mockclustertemplates.infrastructure.mock.capi-conformance.io",
        None,
    ),
    (
        "mockmachinetemplates.infrastructure.mock.capi-conformance.io",
        Some(id::infra_machine_template::SSA_DRY_RUN),
    ),
    (
        "mockmachinepooltemplates.infrastructure.mock.capi-conformance.io",
        Some(id::infra_machinepool_template::SSA_DRY_RUN),
    ),
    (
        "mockconfigtemplates.bootstrap.mock.capi-conformance.io",
        Some(id::bootstrap_template::SSA_DRY_RUN),
    ),
    (
        "mockcontrolplanetemplates.controlplane.mock.capi-conformance.io",
        None,
    ),
];

/// The faults this module implements.
pub const CRD_FAULTS: &[RuleId] = &[
    id::template::SSA_DRY_RUN,
    id::infra_machine_template::SSA_DRY_RUN,
    id::infra_machinepool_template::SSA_DRY_RUN,
    id::bootstrap_template::SSA_DRY_RUN,
    id::template::CLONE_COMPATIBLE,
];

/// The field the clone-compatible fault defaults in the template and restricts in the base kind.
pub const FLAVOR_FIELD: &str = "flavor";

/// Errors while changing the installed CRDs.
#[derive(Debug, thiserror::Error)]
pub enum CrdFaultError {
    #[error("reading CRD {name}: {source}")]
    Read { name: String, source: kube::Error },
    #[error("updating CRD {name}: {source}")]
    Write { name: String, source: kube::Error },
    #[error("CRD {name} does not round-trip: {source}")]
    Json {
        name: String,
        source: serde_json::Error,
    },
}

/// Whether any fault of `faults` lives in the CRDs.
pub fn has_crd_faults(faults: &FaultSet) -> bool {
    CRD_FAULTS.iter().any(|f| faults.has(*f))
}

fn base_crd_name(template_crd: &str) -> Option<String> {
    let (plural, group) = template_crd.split_once('.')?;
    let base = plural.strip_suffix("templates")?;
    Some(format!("{base}s.{group}"))
}

/// The CRD changes `faults` ask for: (CRD name, what to do to each version's root schema).
/// Whether `faults` change shared CRDs (what [`apply_crd_faults`] would write): a mock with
/// such faults changes what every other mock on the server reads.
pub fn changes_crds(faults: &FaultSet) -> bool {
    !changes(faults).is_empty()
}

fn changes(faults: &FaultSet) -> Vec<(String, Change)> {
    let mut out = Vec::new();
    for (crd, role_rule) in TEMPLATES {
        let immutable =
            faults.has(id::template::SSA_DRY_RUN) || role_rule.is_some_and(|r| faults.has(r));
        if immutable {
            out.push((crd.to_string(), Change::ImmutableSpec));
        }
        if faults.has(id::template::CLONE_COMPATIBLE) {
            out.push((crd.to_string(), Change::DefaultFlavor));
            if let Some(base) = base_crd_name(crd) {
                out.push((base, Change::RestrictFlavor));
            }
        }
    }
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    ImmutableSpec,
    DefaultFlavor,
    RestrictFlavor,
}

/// The object at `path` under `root`, creating missing objects; `None` when something on the
/// way is not an object.
fn object_at<'a>(
    root: &'a mut Value,
    path: &[&str],
) -> Option<&'a mut serde_json::Map<String, Value>> {
    let mut cur = root;
    for key in path {
        cur = cur
            .as_object_mut()?
            .entry(key.to_string())
            .or_insert_with(|| json!({}));
    }
    cur.as_object_mut()
}

fn apply_change(root: &mut Value, change: Change) {
    let (path, key, value): (&[&str], &str, Value) = match change {
        Change::ImmutableSpec => (
            &["properties", "spec"],
            "x-kubernetes-validations",
            json!([{
                "rule": "self == oldSelf",
                "message": "spec is immutable (mock fault: ignores the topology dry-run annotation)",
            }]),
        ),
        Change::DefaultFlavor => (
            &[
                "properties",
                "spec",
                "properties",
                "template",
                "properties",
                "spec",
                "properties",
            ],
            FLAVOR_FIELD,
            json!({
                "type": "string",
                "default": "large",
                "description": "mock fault template/clone-compatible: any flavor is admitted here",
            }),
        ),
        Change::RestrictFlavor => (
            &["properties", "spec", "properties"],
            FLAVOR_FIELD,
            json!({
                "type": "string",
                "enum": ["small", "medium"],
                "description": "mock fault template/clone-compatible: the base kind admits fewer flavors",
            }),
        ),
    };
    if let Some(obj) = object_at(root, path) {
        obj.insert(key.to_string(), value);
    }
}

/// `crd` with `change` applied to every version's schema.
fn changed(mut crd: Value, change: Change) -> Value {
    if let Some(versions) = crd
        .pointer_mut("/spec/versions")
        .and_then(Value::as_array_mut)
    {
        for v in versions {
            if let Some(root) = v.pointer_mut("/schema/openAPIV3Schema") {
                apply_change(root, change);
            }
        }
    }
    crd
}

/// Changes the installed mock CRDs for the CRD-level faults in `faults`; returns the names of
/// the CRDs it changed. A no-op without such faults.
pub async fn apply_crd_faults(
    client: &kube::Client,
    faults: &FaultSet,
) -> Result<Vec<String>, CrdFaultError> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let mut done = Vec::new();
    for (name, change) in changes(faults) {
        let current = api.get(&name).await.map_err(|source| CrdFaultError::Read {
            name: name.clone(),
            source,
        })?;
        let value = serde_json::to_value(&current).map_err(|source| CrdFaultError::Json {
            name: name.clone(),
            source,
        })?;
        let next: CustomResourceDefinition = serde_json::from_value(changed(value, change))
            .map_err(|source| CrdFaultError::Json {
                name: name.clone(),
                source,
            })?;
        api.replace(&name, &PostParams::default(), &next)
            .await
            .map_err(|source| CrdFaultError::Write {
                name: name.clone(),
                source,
            })?;
        done.push(name);
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_fault_names_its_crds() {
        let one = changes(&FaultSet::parse(id::infra_machine_template::SSA_DRY_RUN));
        assert_eq!(
            one,
            vec![(
                "mockmachinetemplates.infrastructure.mock.capi-conformance.io".to_string(),
                Change::ImmutableSpec
            )]
        );
        assert_eq!(
            changes(&FaultSet::parse(id::template::SSA_DRY_RUN)).len(),
            5
        );
        let clone = changes(&FaultSet::parse(id::template::CLONE_COMPATIBLE));
        assert!(clone.contains(&(
            "mockmachines.infrastructure.mock.capi-conformance.io".to_string(),
            Change::RestrictFlavor
        )));
        assert_eq!(clone.len(), 10);
        assert!(changes(&FaultSet::parse(id::all::PAUSE)).is_empty());
        assert!(!has_crd_faults(&FaultSet::parse(id::all::PAUSE)));
        assert!(has_crd_faults(&FaultSet::parse(
            id::template::CLONE_COMPATIBLE
        )));
    }

    #[test]
    fn changes_touch_every_version() {
        let crd = json!({"spec": {"versions": [
            {"name": "v1beta1", "schema": {"openAPIV3Schema": {"properties": {"spec": {"properties": {}}}}}},
            {"name": "v1beta2", "schema": {"openAPIV3Schema": {"properties": {"spec": {"properties": {}}}}}},
        ]}});
        let out = changed(crd, Change::RestrictFlavor);
        for v in out["spec"]["versions"].as_array().unwrap() {
            let enums = v.pointer("/schema/openAPIV3Schema/properties/spec/properties/flavor/enum");
            assert_eq!(enums, Some(&json!(["small", "medium"])));
        }
    }
}

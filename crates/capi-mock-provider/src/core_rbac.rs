//! The minimal CAPI core's RBAC (beside [`super::core_crds`]): what CAPI core's released manager
//! role grants, so a SubjectAccessReview as core's manager on the embedded server answers as on a
//! cluster where `clusterctl init` installed core.
//!
//! CAPI core ships (see docs/contract.md §3):
//! - `capi-manager-role`: core's own rules, itself labelled
//!   `cluster.x-k8s.io/aggregate-to-manager: "true"`; among them every verb on `resources: ["*"]`
//!   of the SIG groups `addons|bootstrap|controlplane|infrastructure.cluster.x-k8s.io`, which is
//!   why a provider in those groups needs no aggregated role;
//! - `capi-aggregated-manager-role`: empty, with an `aggregationRule` selecting that label (the
//!   aggregation controller fills it with every labelled role, the providers' included);
//! - a ClusterRoleBinding of the aggregated role to ServiceAccount `capi-system/capi-manager`.
//!
//! The rules below are written from those facts (the groups and verbs core's controllers use),
//! not copied; a test compares them with the released role in `../shared/corpus/capi-core`.

use super::core_crds::{CORE_GROUP, core_crd_documents};
use capi_contract::checks::rbac::{AGGREGATE_LABEL, ALL_VERBS};
use capi_contract::inventory::classify::SIG_GROUPS;
use serde_json::{Value, json};

/// Core's own (static) manager role.
pub const CORE_MANAGER_ROLE: &str = "capi-conformance-core-manager-role";
/// Core's aggregated manager role (filled by the aggregation controller).
pub const CORE_AGGREGATED_ROLE: &str = "capi-conformance-core-aggregated-manager";
/// The binding of the aggregated role to core's manager ServiceAccount.
pub const CORE_MANAGER_BINDING: &str = "capi-conformance-core-manager";
/// Core's manager ServiceAccount (`clusterctl init` installs core into `capi-system`).
pub const CORE_MANAGER_SA: (&str, &str) = ("capi-system", "capi-manager");

fn rule(groups: &[&str], resources: &[&str], verbs: &[&str]) -> Value {
    json!({"apiGroups": groups, "resources": resources, "verbs": verbs})
}

/// `resources` with `/status` and `/finalizers` of each, in that order.
fn with_subresources(resources: &[&str]) -> Vec<String> {
    resources
        .iter()
        .flat_map(|r| {
            [
                r.to_string(),
                format!("{r}/finalizers"),
                format!("{r}/status"),
            ]
        })
        .collect()
}

/// The rules of core's own manager role.
pub fn core_manager_rules() -> Vec<Value> {
    let read_write = ["get", "list", "patch", "update", "watch"];
    let crd_names: Vec<String> = core_crd_documents()
        .iter()
        .filter_map(|c| c.pointer("/metadata/name").and_then(Value::as_str))
        .map(str::to_string)
        .collect();
    let owned_kinds = with_subresources(&[
        "machinedeployments",
        "machinepools",
        "machines",
        "machinesets",
    ]);
    let owned_kinds: Vec<&str> = owned_kinds.iter().map(String::as_str).collect();
    vec![
        rule(
            &[""],
            &["configmaps"],
            &["delete", "get", "list", "patch", "update", "watch"],
        ),
        rule(&[""], &["events"], &["create", "patch"]),
        rule(&[""], &["namespaces"], &["get", "list", "watch"]),
        rule(&[""], &["secrets"], &ALL_VERBS),
        rule(
            &["addons.cluster.x-k8s.io"],
            &[
                "clusterresourcesets/finalizers",
                "clusterresourcesets/status",
            ],
            &["get", "patch", "update"],
        ),
        // The SIG groups: every kind of every provider that uses them.
        rule(&SIG_GROUPS, &["*"], &ALL_VERBS),
        rule(
            &["apiextensions.k8s.io"],
            &["customresourcedefinitions"],
            &["get", "list", "watch"],
        ),
        json!({"apiGroups": ["apiextensions.k8s.io"], "resourceNames": crd_names,
            "resources": ["customresourcedefinitions", "customresourcedefinitions/status"],
            "verbs": ["patch", "update"]}),
        rule(&["authentication.k8s.io"], &["tokenreviews"], &["create"]),
        rule(
            &["authorization.k8s.io"],
            &["subjectaccessreviews"],
            &["create"],
        ),
        rule(
            &[CORE_GROUP],
            &[
                "clusterclasses",
                "clusterclasses/status",
                "clusters",
                "clusters/finalizers",
                "clusters/status",
                "machinedrainrules",
                "machinehealthchecks/finalizers",
                "machinehealthchecks/status",
            ],
            &read_write,
        ),
        rule(
            &[CORE_GROUP],
            &[&["machinehealthchecks"][..], &owned_kinds[..]].concat(),
            &ALL_VERBS,
        ),
        rule(
            &["ipam.cluster.x-k8s.io"],
            &["ipaddressclaims", "ipaddresses"],
            &read_write,
        ),
        rule(
            &["ipam.cluster.x-k8s.io"],
            &["ipaddressclaims/status"],
            &["patch", "update"],
        ),
        rule(
            &["runtime.cluster.x-k8s.io"],
            &["extensionconfigs", "extensionconfigs/status"],
            &read_write,
        ),
    ]
}

/// Core's RBAC documents: its own manager role (aggregated to itself, like core's), the
/// aggregated role, and the binding to core's manager ServiceAccount.
pub fn core_manager_rbac() -> Vec<Value> {
    let (ns, sa) = CORE_MANAGER_SA;
    vec![
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": CORE_MANAGER_ROLE, "labels": {
                AGGREGATE_LABEL: "true",
                "cluster.x-k8s.io/provider": "cluster-api",
            }},
            "rules": core_manager_rules(),
        }),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": CORE_AGGREGATED_ROLE,
                "labels": {"cluster.x-k8s.io/provider": "cluster-api"}},
            "aggregationRule": {"clusterRoleSelectors": [
                {"matchLabels": {AGGREGATE_LABEL: "true"}}
            ]},
            "rules": [],
        }),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": CORE_MANAGER_BINDING,
                "labels": {"cluster.x-k8s.io/provider": "cluster-api"}},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                "name": CORE_AGGREGATED_ROLE},
            "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": ns}],
        }),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sig_groups_are_granted_every_verb_on_every_resource() {
        let rules = core_manager_rules();
        for g in SIG_GROUPS {
            for v in ALL_VERBS {
                assert!(
                    rules
                        .iter()
                        .any(|r| capi_contract::checks::rbac::rule_grants(r, g, "anythings", v)),
                    "{g} {v}"
                );
            }
        }
        assert!(
            !rules
                .iter()
                .any(|r| capi_contract::checks::rbac::rule_grants(
                    r,
                    "infrastructure.acme.io",
                    "x",
                    "get"
                ))
        );
        let docs = core_manager_rbac();
        assert_eq!(docs[0]["metadata"]["labels"][AGGREGATE_LABEL], "true");
    }
}

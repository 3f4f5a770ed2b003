//! What `mock-provider manifests` prints: Namespace, CRDs (the contract kinds', then the IPAM
//! pool's), the aggregated ClusterRole core needs, the controller's own RBAC, a Deployment
//! running `capi-conformance mock-provider run`, and what serving the CRDs' conversion webhook
//! takes (the Service, cert-manager's Issuer and Certificate, the CA injection:
//! [`super::serving::add_webhook_serving`]).

use super::api::{BOOTSTRAP_GROUP, CONTROLPLANE_GROUP, INFRASTRUCTURE_GROUP, IPAM_GROUP};
use super::core_crds::IPAM_CORE_GROUP;
use super::crds::mock_crds;
use super::kinds::{ALL, IP_POOLS, provider_label};
use serde_json::{Value, json};

/// Name of the ClusterRole aggregated into CAPI core's manager role.
pub const AGGREGATED_ROLE: &str = "capi-conformance-mock-aggregated-manager-role";
/// Name of the mock controller's own ClusterRole (and binding, and ServiceAccount).
pub const MANAGER_NAME: &str = "capi-conformance-mock-manager";
/// Name of the Deployment.
pub const DEPLOYMENT_NAME: &str = "capi-conformance-mock-controller-manager";

/// Errors building the manifests.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("merging the mock CRD versions failed: {0}")]
    Merge(#[from] kube::core::crd::MergeError),
    #[error("serialising a manifest failed: {0}")]
    Json(#[from] serde_json::Error),
    #[error("rendering YAML failed: {0}")]
    Yaml(String),
}

/// Options of [`manifests`].
#[derive(Debug, Clone)]
pub struct ManifestOptions {
    pub image: String,
    pub namespace: String,
}

impl Default for ManifestOptions {
    fn default() -> Self {
        ManifestOptions {
            image: "ghcr.io/capi-conformance/capi-conformance:latest".into(),
            namespace: "capi-conformance-mock-system".into(),
        }
    }
}

const ALL_VERBS: [&str; 7] = [
    "create", "delete", "get", "list", "patch", "update", "watch",
];
const GROUPS: [&str; 3] = [INFRASTRUCTURE_GROUP, BOOTSTRAP_GROUP, CONTROLPLANE_GROUP];

/// Every manifest document, in apply order.
pub fn manifests(opts: &ManifestOptions) -> Result<Vec<Value>, ManifestError> {
    let mut docs = vec![namespace(opts)];
    for crd in mock_crds()? {
        docs.push(serde_json::to_value(crd)?);
    }
    docs.push(aggregated_cluster_role());
    docs.push(manager_cluster_role());
    docs.push(service_account(opts));
    docs.push(cluster_role_binding(opts));
    docs.push(deployment(opts));
    super::serving::add_webhook_serving(&mut docs, &opts.namespace, DEPLOYMENT_NAME);
    Ok(docs)
}

/// The manifests as one multi-document YAML stream.
pub fn manifests_yaml(opts: &ManifestOptions) -> Result<String, ManifestError> {
    let docs = manifests(opts)?;
    serde_saphyr::to_string_multiple(&docs).map_err(|e| ManifestError::Yaml(e.to_string()))
}

fn labels() -> Value {
    json!({ "cluster.x-k8s.io/provider": provider_label(INFRASTRUCTURE_GROUP) })
}

fn plurals_of(group: &str) -> Vec<&'static str> {
    ALL.iter()
        .filter(|k| k.group == group)
        .map(|k| k.plural)
        .collect()
}

fn namespace(opts: &ManifestOptions) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": { "name": opts.namespace, "labels": labels() },
    })
}

/// Full verbs on every plural (templates included) of the mock's groups, the IPAM pool's
/// included, aggregated into core.
pub fn aggregated_cluster_role() -> Value {
    let mut rules: Vec<Value> = GROUPS
        .iter()
        .map(|g| json!({ "apiGroups": [g], "resources": plurals_of(g), "verbs": ALL_VERBS }))
        .collect();
    let pools: Vec<&str> = IP_POOLS.iter().map(|k| k.plural).collect();
    rules.push(json!({ "apiGroups": [IPAM_GROUP], "resources": pools, "verbs": ALL_VERBS }));
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {
            "name": AGGREGATED_ROLE,
            "labels": {
                "cluster.x-k8s.io/aggregate-to-manager": "true",
                "cluster.x-k8s.io/provider": provider_label(INFRASTRUCTURE_GROUP),
            },
        },
        "rules": rules,
    })
}

/// What the mock's controllers need.
pub fn manager_cluster_role() -> Value {
    let mut rules = Vec::new();
    for group in GROUPS {
        let plurals = plurals_of(group);
        let sub = |suffix: &str| -> Vec<String> {
            plurals
                .iter()
                .filter(|p| !p.ends_with("templates"))
                .map(|p| format!("{p}/{suffix}"))
                .collect()
        };
        rules.push(json!({ "apiGroups": [group], "resources": plurals, "verbs": ALL_VERBS }));
        rules.push(json!({ "apiGroups": [group], "resources": sub("status"), "verbs": ["get", "patch", "update"] }));
        rules.push(
            json!({ "apiGroups": [group], "resources": sub("finalizers"), "verbs": ["update"] }),
        );
    }
    rules.extend(ipam_rules());
    rules.push(json!({ "apiGroups": [""], "resources": ["secrets"], "verbs": ALL_VERBS }));
    rules.push(json!({ "apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"] }));
    rules.push(json!({ "apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch"] }));
    rules.push(json!({ "apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ALL_VERBS }));
    rules.push(json!({
        "apiGroups": ["cluster.x-k8s.io"],
        "resources": ["clusters", "machinepools"],
        "verbs": ["get", "list", "watch"],
    }));
    // Its control plane's instances are Machines (`reconcile::cp_machines`), as KCP's.
    rules.push(json!({
        "apiGroups": ["cluster.x-k8s.io"],
        "resources": ["machines"],
        "verbs": ["create", "delete", "get", "list", "patch", "watch"],
    }));
    // Their UpToDate condition is the owner's to set (KCP's `reconcileMachineUpToDateCondition`).
    rules.push(json!({
        "apiGroups": ["cluster.x-k8s.io"],
        "resources": ["machines/status"],
        "verbs": ["patch"],
    }));
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": { "name": MANAGER_NAME, "labels": labels() },
        "rules": rules,
    })
}

/// What the IPAM controllers need: the pool kinds (with status and finalizers), core's
/// IPAddressClaims (with status; finalizers added and removed) and IPAddresses (created,
/// released and deleted).
pub fn ipam_rules() -> Vec<Value> {
    let pools: Vec<&str> = IP_POOLS.iter().map(|k| k.plural).collect();
    let sub = |s: &str| -> Vec<String> { pools.iter().map(|p| format!("{p}/{s}")).collect() };
    vec![
        json!({ "apiGroups": [IPAM_GROUP], "resources": pools, "verbs": ALL_VERBS }),
        json!({ "apiGroups": [IPAM_GROUP], "resources": sub("status"), "verbs": ["get", "patch", "update"] }),
        json!({ "apiGroups": [IPAM_GROUP], "resources": sub("finalizers"), "verbs": ["update"] }),
        json!({
            "apiGroups": [IPAM_CORE_GROUP],
            "resources": ["ipaddressclaims", "ipaddresses"],
            "verbs": ALL_VERBS,
        }),
        json!({
            "apiGroups": [IPAM_CORE_GROUP],
            "resources": ["ipaddressclaims/status", "ipaddressclaims/finalizers", "ipaddresses/finalizers"],
            "verbs": ["get", "patch", "update"],
        }),
    ]
}

fn service_account(opts: &ManifestOptions) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": { "name": MANAGER_NAME, "namespace": opts.namespace, "labels": labels() },
    })
}

fn cluster_role_binding(opts: &ManifestOptions) -> Value {
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": { "name": MANAGER_NAME, "labels": labels() },
        "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": MANAGER_NAME },
        "subjects": [{ "kind": "ServiceAccount", "name": MANAGER_NAME, "namespace": opts.namespace }],
    })
}

fn deployment(opts: &ManifestOptions) -> Value {
    let selector = json!({ "app.kubernetes.io/name": "capi-conformance-mock" });
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": { "name": DEPLOYMENT_NAME, "namespace": opts.namespace, "labels": labels() },
        "spec": {
            "replicas": 1,
            "selector": { "matchLabels": selector },
            "template": {
                "metadata": { "labels": selector },
                "spec": {
                    "serviceAccountName": MANAGER_NAME,
                    "containers": [{
                        "name": "manager",
                        "image": opts.image,
                        "command": ["capi-conformance"],
                        "args": ["mock-provider", "run", "--namespace=", "--watch-filter="],
                        "securityContext": {
                            "allowPrivilegeEscalation": false,
                            "readOnlyRootFilesystem": true,
                            "runAsNonRoot": true,
                            "capabilities": { "drop": ["ALL"] },
                        },
                    }],
                    "terminationGracePeriodSeconds": 10,
                },
            },
        },
    })
}

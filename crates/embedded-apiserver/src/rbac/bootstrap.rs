//! The bootstrap policy kube-apiserver creates at start (`plugin/pkg/auth/authorizer/rbac/bootstrappolicy`):
//! the default ClusterRoles and ClusterRoleBindings a cluster starts with.

use serde_json::Value;

/// The group whose members every kube-apiserver allows before RBAC is consulted
/// (`user.SystemPrivilegedGroup`).
pub const PRIVILEGED_GROUP: &str = "system:masters";

fn bootstrap_meta(name: &str, extra_labels: Value) -> Value {
    let mut labels = serde_json::json!({"kubernetes.io/bootstrapping": "rbac-defaults"});
    if let (Some(l), Some(extra)) = (labels.as_object_mut(), extra_labels.as_object()) {
        l.extend(extra.clone());
    }
    serde_json::json!({"name": name, "labels": labels,
        "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}})
}

fn bootstrap_role(name: &str, rules: Value) -> Value {
    serde_json::json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": bootstrap_meta(name, serde_json::json!({})), "rules": rules})
}

fn bootstrap_binding(name: &str, role: &str, groups: &[&str]) -> Value {
    let subjects: Vec<Value> = groups
        .iter()
        .map(|g| serde_json::json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": g}))
        .collect();
    serde_json::json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": bootstrap_meta(name, serde_json::json!({})),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": subjects})
}

/// A subset of kube-apiserver's bootstrap RBAC policy that a fresh cluster has: `cluster-admin`
/// (bound to `system:masters`), `system:discovery`, `system:basic-user`,
/// `system:public-info-viewer`, `system:monitoring` (`/metrics` and the health checks, bound to
/// the group `system:monitoring`), and the aggregated `admin`/`edit`/`view` roles (aggregation
/// labels only; their built-in rule sets are not reproduced).
pub fn bootstrap_policy() -> Vec<Value> {
    use serde_json::json;
    let aggregated = |name: &str, labels: &[&str]| {
        let selectors: Vec<Value> = labels
            .iter()
            .map(|l| json!({"matchLabels": {format!("rbac.authorization.k8s.io/{l}"): "true"}}))
            .collect();
        let extra = match name {
            "edit" => json!({"rbac.authorization.k8s.io/aggregate-to-admin": "true"}),
            "view" => json!({"rbac.authorization.k8s.io/aggregate-to-edit": "true"}),
            _ => json!({}),
        };
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": bootstrap_meta(name, extra),
            "aggregationRule": {"clusterRoleSelectors": selectors}, "rules": []})
    };
    vec![
        bootstrap_role(
            "cluster-admin",
            json!([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                   {"nonResourceURLs": ["*"], "verbs": ["*"]}]),
        ),
        bootstrap_role(
            "system:discovery",
            json!([{"nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez",
                "/openapi", "/openapi/*", "/readyz", "/version", "/version/"], "verbs": ["get"]}]),
        ),
        bootstrap_role(
            "system:basic-user",
            json!([{"apiGroups": ["authorization.k8s.io"],
                    "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"], "verbs": ["create"]},
                   {"apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"], "verbs": ["create"]}]),
        ),
        bootstrap_role(
            "system:public-info-viewer",
            json!([{"nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"], "verbs": ["get"]}]),
        ),
        bootstrap_role(
            "system:monitoring",
            json!([{"nonResourceURLs": ["/healthz", "/healthz/*", "/livez", "/livez/*", "/metrics",
                "/metrics/slis", "/readyz", "/readyz/*"], "verbs": ["get"]}]),
        ),
        aggregated("admin", &["aggregate-to-admin"]),
        aggregated("edit", &["aggregate-to-edit"]),
        aggregated("view", &["aggregate-to-view"]),
        bootstrap_binding("cluster-admin", "cluster-admin", &[PRIVILEGED_GROUP]),
        bootstrap_binding(
            "system:monitoring",
            "system:monitoring",
            &["system:monitoring"],
        ),
        bootstrap_binding(
            "system:discovery",
            "system:discovery",
            &["system:authenticated"],
        ),
        bootstrap_binding(
            "system:basic-user",
            "system:basic-user",
            &["system:authenticated"],
        ),
        bootstrap_binding(
            "system:public-info-viewer",
            "system:public-info-viewer",
            &["system:authenticated", "system:unauthenticated"],
        ),
    ]
}

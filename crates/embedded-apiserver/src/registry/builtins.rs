//! The built-in kinds the emulator serves: verbs, short names, categories, status and scale
//! subresources.

use super::{CRUD_VERBS, NAMESPACE_VERBS, ResourceType, ScaleDef, VersionDef};

#[allow(clippy::too_many_arguments)]
fn builtin(
    group: &str,
    version: &str,
    resource: &str,
    kind: &str,
    namespaced: bool,
    short_names: &[&str],
    status: bool,
    verbs: &[&'static str],
) -> ResourceType {
    ResourceType {
        group: group.to_string(),
        resource: resource.to_string(),
        singular: kind.to_lowercase(),
        kind: kind.to_string(),
        list_kind: format!("{kind}List"),
        namespaced,
        short_names: short_names.iter().map(|s| s.to_string()).collect(),
        categories: Vec::new(),
        verbs: verbs.to_vec(),
        versions: vec![VersionDef::builtin(version, status)],
        custom: false,
        conversion: None,
    }
}

/// The `scale` subresource of a built-in workload: `spec.replicas`, `status.replicas` and its
/// `spec.selector` (`kubectl scale deployment`, the horizontal pod autoscaler).
fn with_scale(mut t: ResourceType) -> ResourceType {
    for v in &mut t.versions {
        v.scale = Some(ScaleDef {
            spec_replicas_path: ".spec.replicas".into(),
            status_replicas_path: ".status.replicas".into(),
            label_selector_path: None,
        });
    }
    t
}

fn with_categories(mut t: ResourceType, categories: &[&str]) -> ResourceType {
    t.categories = categories.iter().map(|s| s.to_string()).collect();
    t
}

/// The built-in kinds the emulator serves (docs/embedded-apiserver.md M3, M17).
pub fn builtins() -> Vec<ResourceType> {
    let c = CRUD_VERBS;
    let create = &["create"][..];
    vec![
        builtin(
            "",
            "v1",
            "namespaces",
            "Namespace",
            false,
            &["ns"],
            true,
            NAMESPACE_VERBS,
        ),
        builtin("", "v1", "secrets", "Secret", true, &[], false, c),
        builtin("", "v1", "configmaps", "ConfigMap", true, &["cm"], false, c),
        builtin(
            "",
            "v1",
            "serviceaccounts",
            "ServiceAccount",
            true,
            &["sa"],
            false,
            c,
        ),
        builtin("", "v1", "events", "Event", true, &["ev"], false, c),
        // Workload clusters: CAPI's ClusterCache maps and caches Nodes there before it hands a
        // provider a client ("no matches for kind \"Node\" in version \"v1\"" otherwise);
        // stored objects, no kubelet.
        builtin("", "v1", "nodes", "Node", false, &["no"], true, c),
        // ClusterCache asks the workload cluster for the manager's own Pod (POD_NAMESPACE /
        // POD_NAME, set from its Deployment) to tell whether it runs there ("error checking if
        // we're running on workload cluster: no matches for kind \"Pod\"" otherwise); stored
        // objects, nothing schedules or runs them.
        with_categories(
            builtin("", "v1", "pods", "Pod", true, &["po"], true, c),
            &["all"],
        ),
        // Webhook clientConfig.service references resolve through stored Services (webhook/).
        with_categories(
            builtin("", "v1", "services", "Service", true, &["svc"], true, c),
            &["all"],
        ),
        builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "roles",
            "Role",
            true,
            &[],
            false,
            c,
        ),
        builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "clusterroles",
            "ClusterRole",
            false,
            &[],
            false,
            c,
        ),
        builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "rolebindings",
            "RoleBinding",
            true,
            &[],
            false,
            c,
        ),
        builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "clusterrolebindings",
            "ClusterRoleBinding",
            false,
            &[],
            false,
            c,
        ),
        builtin(
            "events.k8s.io",
            "v1",
            "events",
            "Event",
            true,
            &["ev"],
            false,
            c,
        ),
        // Provider components ship their controllers as Deployments (clusterctl's
        // manager-container rule reads them); served as stored objects, no controller runs them.
        with_scale(with_categories(
            builtin(
                "apps",
                "v1",
                "deployments",
                "Deployment",
                true,
                &["deploy"],
                true,
                c,
            ),
            &["all"],
        )),
        // kube-proxy runs as a DaemonSet on every kubeadm cluster; KCP reads and updates it in
        // the workload cluster ("no matches for kind \"DaemonSet\"" otherwise). Stored objects,
        // no controller runs them.
        with_categories(
            builtin(
                "apps",
                "v1",
                "daemonsets",
                "DaemonSet",
                true,
                &["ds"],
                true,
                c,
            ),
            &["all"],
        ),
        // Admission webhook configurations, enforced by webhook/ (exempt from webhooks).
        with_categories(
            builtin(
                "admissionregistration.k8s.io",
                "v1",
                "mutatingwebhookconfigurations",
                "MutatingWebhookConfiguration",
                false,
                &[],
                false,
                c,
            ),
            &["api-extensions"],
        ),
        with_categories(
            builtin(
                "admissionregistration.k8s.io",
                "v1",
                "validatingwebhookconfigurations",
                "ValidatingWebhookConfiguration",
                false,
                &[],
                false,
                c,
            ),
            &["api-extensions"],
        ),
        // `kubectl apply` of the in-cluster Job (`manifests job`); stored with kube's defaults,
        // generated selector and validation (schema::job), no controller runs it.
        ResourceType {
            categories: vec!["all".to_string()],
            ..builtin("batch", "v1", "jobs", "Job", true, &[], true, c)
        },
        builtin(
            "coordination.k8s.io",
            "v1",
            "leases",
            "Lease",
            true,
            &[],
            false,
            c,
        ),
        with_categories(
            builtin(
                "apiextensions.k8s.io",
                "v1",
                "customresourcedefinitions",
                "CustomResourceDefinition",
                false,
                &["crd", "crds"],
                true,
                c,
            ),
            &["api-extensions"],
        ),
        builtin(
            "authorization.k8s.io",
            "v1",
            "selfsubjectaccessreviews",
            "SelfSubjectAccessReview",
            false,
            &[],
            false,
            create,
        ),
        builtin(
            "authorization.k8s.io",
            "v1",
            "selfsubjectrulesreviews",
            "SelfSubjectRulesReview",
            false,
            &[],
            false,
            create,
        ),
        builtin(
            "authorization.k8s.io",
            "v1",
            "subjectaccessreviews",
            "SubjectAccessReview",
            false,
            &[],
            false,
            create,
        ),
        builtin(
            "authentication.k8s.io",
            "v1",
            "selfsubjectreviews",
            "SelfSubjectReview",
            false,
            &[],
            false,
            create,
        ),
    ]
}

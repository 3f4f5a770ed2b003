//! The RBAC the tool itself needs on a cluster: the least-privilege ClusterRoles `rbac` prints
//! and `manifests job` binds, and the role `check` binds in its run namespaces (see
//! [`LONG_ABOUT`] for the shape and why).

use k8s_openapi::api::rbac::v1::{ClusterRole, PolicyRule};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use std::collections::BTreeMap;

/// ClusterRole for everything `check --static-only` (and `check`'s static phase) reads.
pub const STATIC_ROLE: &str = "capi-conformance-static";
/// ClusterRole for the cluster-scoped writes of a full `check`: its run namespaces.
pub const CHECK_ROLE: &str = "capi-conformance-check";
/// ClusterRole the tool binds (RoleBinding) inside each run namespace it creates.
pub const RUN_ROLE: &str = "capi-conformance-run";

/// API groups of the built-in mock provider, which runs as the baseline before the provider.
pub const MOCK_GROUPS: [&str; 4] = [
    "bootstrap.mock.capi-conformance.io",
    "controlplane.mock.capi-conformance.io",
    "infrastructure.mock.capi-conformance.io",
    "ipam.mock.capi-conformance.io",
];

/// `rbac --help`: the shape of the printed RBAC and the reasons for it.
pub const LONG_ABOUT: &str = "\
Print the RBAC the tool itself needs on a cluster, as ClusterRoles (multi-document YAML).

capi-conformance-static (all that `check --static-only` needs, and nothing more: a test removes
each permission in turn and expects `forbidden`): get/list CustomResourceDefinitions, list
ClusterRoles, Roles and Deployments, and create SubjectAccessReviews (the effective-RBAC rule
asks the API server instead of reading bindings). Read-only.

Without --static-only, a full `check` also needs:

capi-conformance-check (cluster-wide, bind with a ClusterRoleBinding): create/delete/get
Namespaces (one `capi-conformance-<run-id>` namespace per run; Kubernetes RBAC
cannot scope a create to a name prefix), create RoleBindings, and `bind` on exactly the
ClusterRole capi-conformance-run (resourceNames), so the only role the tool can grant is that one.
(It could bind it in any namespace: RBAC cannot name namespaces that do not exist yet. Each such
RoleBinding is a visible, labelled object, and the alternative, Secrets and Cluster API objects
granted cluster-wide, would be strictly broader.)

capi-conformance-run (never bound cluster-wide): the tool binds it with a RoleBinding inside each
run namespace it creates, so every write below is confined to its own namespaces: Cluster API
core Clusters, Machines, MachinePools (create/delete/get/patch, and patch Cluster and Machine status:
the tool plays CAPI core; list/watch: the in-process mock baseline watches them in its run namespace), Secrets (bootstrap data, kubeconfigs), and the provider's objects. The provider's kinds are not
known statically, so each provider API group given with --group (plus the mock provider's groups,
the baseline) gets all resources of that group, but only inside the run namespaces; a `*` on
provider groups cluster-wide would reach other teams' objects and is never printed.

Not included: `check --install-core-crds` (creating CRDs is cluster-admin territory: install CAPI
core's CRDs beforehand instead) and the provider controller's own RBAC (from its manifests).";

/// Errors in the `rbac` arguments.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RbacError {
    #[error(
        "--group {0:?} is not an API group name (lowercase DNS subdomain with a dot, e.g. infrastructure.cluster.x-k8s.io)"
    )]
    InvalidGroup(String),
}

/// What the tool does with the provider's objects in its run namespaces (never `update`).
const PROVIDER_VERBS: [&str; 6] = ["create", "delete", "get", "list", "patch", "watch"];

/// The ClusterRoles in print order: static, then (unless `static_only`) check and run.
pub fn cluster_roles(static_only: bool, groups: &[String]) -> Result<Vec<ClusterRole>, RbacError> {
    let provider_groups = provider_groups(groups)?;
    let mut roles = vec![static_role()];
    if !static_only {
        roles.push(check_role());
        roles.push(run_role(&provider_groups));
    }
    Ok(roles)
}

/// Multi-document YAML with a leading comment saying how to bind the roles.
pub fn render(roles: &[ClusterRole]) -> Result<String, serde_saphyr::SerializeError> {
    let body = serde_saphyr::to_string_multiple(roles)?;
    let mut out = String::from(
        "# RBAC for capi-conformance (see `capi-conformance rbac --help`).\n\
         # Bind capi-conformance-static and capi-conformance-check to the tool's identity with\n\
         # ClusterRoleBindings; the tool binds capi-conformance-run inside each run namespace.\n",
    );
    out.push_str(&body);
    Ok(out)
}

fn provider_groups(groups: &[String]) -> Result<Vec<String>, RbacError> {
    let mut all: Vec<String> = MOCK_GROUPS.iter().map(|g| (*g).to_string()).collect();
    for group in groups {
        if !is_api_group(group) {
            return Err(RbacError::InvalidGroup(group.clone()));
        }
        all.push(group.clone());
    }
    all.sort();
    all.dedup();
    Ok(all)
}

/// A named (non-core) API group: a lowercase DNS-1123 subdomain with at least one dot.
fn is_api_group(group: &str) -> bool {
    let label_ok = |label: &str| {
        !label.is_empty()
            && label.len() <= 63
            && label
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !label.starts_with('-')
            && !label.ends_with('-')
    };
    group.len() <= 253 && group.contains('.') && group.split('.').all(label_ok)
}

fn role(name: &str, rules: Vec<PolicyRule>) -> ClusterRole {
    ClusterRole {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            labels: Some(BTreeMap::from([(
                "app.kubernetes.io/name".to_string(),
                "capi-conformance".to_string(),
            )])),
            ..ObjectMeta::default()
        },
        rules: Some(rules),
        ..ClusterRole::default()
    }
}

fn rule(group: &str, resources: &[&str], verbs: &[&str]) -> PolicyRule {
    PolicyRule {
        api_groups: Some(vec![group.to_string()]),
        resources: Some(resources.iter().map(|r| (*r).to_string()).collect()),
        verbs: verbs.iter().map(|v| (*v).to_string()).collect(),
        ..PolicyRule::default()
    }
}

fn static_role() -> ClusterRole {
    role(
        STATIC_ROLE,
        vec![
            rule(
                "apiextensions.k8s.io",
                &["customresourcedefinitions"],
                &["get", "list"],
            ),
            rule(
                "rbac.authorization.k8s.io",
                &["clusterroles", "roles"],
                &["list"],
            ),
            rule("apps", &["deployments"], &["list"]),
            rule(
                "authorization.k8s.io",
                &["subjectaccessreviews"],
                &["create"],
            ),
        ],
    )
}

fn check_role() -> ClusterRole {
    role(
        CHECK_ROLE,
        vec![
            rule("", &["namespaces"], &["create", "delete", "get"]),
            rule("rbac.authorization.k8s.io", &["rolebindings"], &["create"]),
            // SC-webhooks: which kinds a defaulting webhook mutates.
            rule(
                "admissionregistration.k8s.io",
                &["mutatingwebhookconfigurations"],
                &["list"],
            ),
            PolicyRule {
                resource_names: Some(vec![RUN_ROLE.to_string()]),
                ..rule("rbac.authorization.k8s.io", &["clusterroles"], &["bind"])
            },
        ],
    )
}

fn run_role(provider_groups: &[String]) -> ClusterRole {
    let provider_rule = PolicyRule {
        api_groups: Some(provider_groups.to_vec()),
        resources: Some(vec!["*".to_string()]),
        verbs: PROVIDER_VERBS.iter().map(|v| (*v).to_string()).collect(),
        ..PolicyRule::default()
    };
    role(
        RUN_ROLE,
        vec![
            rule(
                "cluster.x-k8s.io",
                &["clusters", "machinepools", "machines"],
                &["create", "delete", "get", "list", "patch", "watch"],
            ),
            // Core's Cluster and Machine controllers write status (the Machines a control
            // plane creates get their conditions and Node from the simulation).
            rule(
                "cluster.x-k8s.io",
                &["clusters/status", "machines/status"],
                &["patch"],
            ),
            // SC-ipam: the tool claims addresses from the provider's pools as an
            // infrastructure provider does, and reads the IPAddresses the provider makes.
            rule(
                "ipam.cluster.x-k8s.io",
                &["ipaddressclaims", "ipaddresses"],
                &["create", "delete", "get", "list", "patch", "watch"],
            ),
            // The in-process mock baseline reports its claims' addresses there.
            rule(
                "ipam.cluster.x-k8s.io",
                &["ipaddressclaims/status"],
                &["patch"],
            ),
            // patch: control-plane/kubeconfig-rotation puts an expiring client certificate
            // into the control plane's `<cluster>-kubeconfig` of the run's Cluster.
            rule(
                "",
                &["secrets"],
                &["create", "delete", "get", "list", "patch", "watch"],
            ),
            provider_rule,
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_group_names() {
        for ok in ["infrastructure.cluster.x-k8s.io", "a.b", "x-1.example.com"] {
            assert!(is_api_group(ok), "{ok}");
        }
        for bad in [
            "",
            "*",
            "apps",
            "Infra.example.com",
            "a..b",
            "-a.b",
            "a.b-",
            "a/b.c",
        ] {
            assert!(!is_api_group(bad), "{bad}");
        }
    }

    #[test]
    fn bad_group_is_an_input_error() {
        let err = cluster_roles(false, &["*".to_string()]).unwrap_err();
        assert_eq!(err, RbacError::InvalidGroup("*".to_string()));
    }

    #[test]
    fn provider_groups_sorted_deduplicated_with_mock_groups() {
        let groups = provider_groups(&[
            "infrastructure.cluster.x-k8s.io".to_string(),
            "infrastructure.cluster.x-k8s.io".to_string(),
        ])
        .unwrap();
        assert_eq!(groups.len(), 5);
        assert!(groups.windows(2).all(|w| w[0] < w[1]));
        assert!(groups.contains(&"infrastructure.cluster.x-k8s.io".to_string()));
    }
}

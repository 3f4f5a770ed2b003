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

/// The mock's cluster-scoped kinds (resource, group): the baseline of a provider's
/// cluster-scoped kinds. Their objects are in no namespace, so the run role cannot cover them.
pub const MOCK_CLUSTER_SCOPED: [(&str, &str); 1] =
    [("mockglobalippools", "ipam.mock.capi-conformance.io")];

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
granted cluster-wide, would be strictly broader.) It also gets the cluster-scoped kinds whose
objects the run creates, which no namespace can hold: the mock's
mockglobalippools.ipam.mock.capi-conformance.io (create/delete/get/list/watch, and patch of its
status, which the in-process mock baseline writes: the baseline of a cluster-scoped IP pool) and
each kind given with --cluster-scoped RESOURCE.GROUP (a provider kind whose CRD says `scope:
Cluster`, e.g. globalinclusterippools.ipam.cluster.x-k8s.io: create/delete/get/list/patch/watch
and patch of its status); the tool writes and deletes only the objects it created and labelled.

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
    #[error(
        "--cluster-scoped {0:?} is not RESOURCE.GROUP (a CRD's name: its plural, a dot, its API group, e.g. globalinclusterippools.ipam.cluster.x-k8s.io)"
    )]
    InvalidClusterResource(String),
}

/// What the tool does with the provider's objects in its run namespaces (never `update`).
const PROVIDER_VERBS: [&str; 6] = ["create", "delete", "get", "list", "patch", "watch"];

/// The ClusterRoles in print order: static, then (unless `static_only`) check and run.
/// `groups`: the provider's API groups (granted in the run namespaces); `cluster_scoped`: its
/// cluster-scoped kinds as `RESOURCE.GROUP` (granted at the cluster level).
pub fn cluster_roles(
    static_only: bool,
    groups: &[String],
    cluster_scoped: &[String],
) -> Result<Vec<ClusterRole>, RbacError> {
    let provider_groups = provider_groups(groups)?;
    let cluster_resources = cluster_resources(cluster_scoped)?;
    let mut roles = vec![static_role()];
    if !static_only {
        roles.push(check_role(&cluster_resources));
        roles.push(run_role(&provider_groups));
    }
    Ok(roles)
}

/// What the tool does with the mock's cluster-scoped pools (its scenario creates, watches and
/// deletes them; it never patches one).
const MOCK_CLUSTER_SCOPED_VERBS: [&str; 5] = ["create", "delete", "get", "list", "watch"];

/// The cluster-scoped kinds the run writes, by group: the given `RESOURCE.GROUP`s (the
/// mock's are [`mock_cluster_rules`]).
fn cluster_resources(given: &[String]) -> Result<BTreeMap<String, Vec<String>>, RbacError> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for name in given {
        let (resource, group) = name
            .split_once('.')
            .filter(|(r, g)| is_dns_label(r) && is_api_group(g))
            .ok_or_else(|| RbacError::InvalidClusterResource(name.clone()))?;
        out.entry(group.to_string())
            .or_default()
            .push(resource.to_string());
    }
    for resources in out.values_mut() {
        resources.sort();
        resources.dedup();
    }
    Ok(out)
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

/// A lowercase DNS-1123 label (a resource's plural is one).
fn is_dns_label(label: &str) -> bool {
    !label.is_empty()
        && label.len() <= 63
        && label
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !label.starts_with('-')
        && !label.ends_with('-')
}

/// A named (non-core) API group: a lowercase DNS-1123 subdomain with at least one dot.
fn is_api_group(group: &str) -> bool {
    group.len() <= 253 && group.contains('.') && group.split('.').all(is_dns_label)
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

fn check_role(cluster_resources: &BTreeMap<String, Vec<String>>) -> ClusterRole {
    let mut rules = vec![
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
    ];
    // Cluster-scoped kinds: their objects are in no run namespace. `/status`: the in-process
    // mock baseline writes its pools' status with the tool's identity, and the tool writes a
    // provider object's status where it plays core (a failure reason, a cleared status).
    rules.extend(mock_cluster_rules());
    for (group, resources) in cluster_resources {
        let resources: Vec<&str> = resources.iter().map(String::as_str).collect();
        rules.push(rule(group, &resources, &PROVIDER_VERBS));
        let status: Vec<String> = resources.iter().map(|r| format!("{r}/status")).collect();
        let status: Vec<&str> = status.iter().map(String::as_str).collect();
        rules.push(rule(group, &status, &["patch"]));
    }
    role(CHECK_ROLE, rules)
}

/// The mock's cluster-scoped kinds ([`MOCK_CLUSTER_SCOPED`]), with their status.
fn mock_cluster_rules() -> Vec<PolicyRule> {
    MOCK_CLUSTER_SCOPED
        .iter()
        .flat_map(|(resource, group)| {
            let status = format!("{resource}/status");
            [
                rule(group, &[resource], &MOCK_CLUSTER_SCOPED_VERBS),
                rule(group, &[status.as_str()], &["patch"]),
            ]
        })
        .collect()
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

    /// A cluster-scoped kind's objects are in no run namespace: the check role (bound
    /// cluster-wide) grants the mock's and the given ones, the run role none of them.
    #[test]
    fn cluster_scoped_kinds_are_granted_at_the_cluster_level() {
        let roles = cluster_roles(
            false,
            &[],
            &["globalinclusterippools.ipam.cluster.x-k8s.io".to_string()],
        )
        .unwrap();
        let rules = |name: &str| -> Vec<PolicyRule> {
            roles
                .iter()
                .find(|r| r.metadata.name.as_deref() == Some(name))
                .and_then(|r| r.rules.clone())
                .unwrap_or_default()
        };
        let grants = |rules: &[PolicyRule], group: &str, resource: &str| {
            rules.iter().any(|r| {
                r.api_groups.as_deref() == Some(&[group.to_string()][..])
                    && r.resources
                        .as_deref()
                        .is_some_and(|rs| rs.iter().any(|x| x == resource))
                    && PROVIDER_VERBS
                        .iter()
                        .all(|v| r.verbs.iter().any(|x| x == v))
            })
        };
        let check = rules(CHECK_ROLE);
        assert!(grants(
            &check,
            "ipam.cluster.x-k8s.io",
            "globalinclusterippools"
        ));
        assert!(check.iter().any(|r| {
            r.resources
                .as_deref()
                .is_some_and(|rs| rs.iter().any(|x| x == "mockglobalippools"))
                && r.verbs == MOCK_CLUSTER_SCOPED_VERBS
        }));
        assert!(!grants(
            &check,
            "ipam.mock.capi-conformance.io",
            "mockippools"
        ));
        assert!(check.iter().any(|r| {
            r.resources
                .as_deref()
                .is_some_and(|rs| rs.iter().any(|x| x == "mockglobalippools/status"))
                && r.verbs == ["patch"]
        }));
        assert!(!grants(
            &rules(RUN_ROLE),
            "ipam.cluster.x-k8s.io",
            "globalinclusterippools"
        ));
        assert_eq!(cluster_roles(true, &[], &[]).unwrap().len(), 1);
    }

    #[test]
    fn bad_group_is_an_input_error() {
        let err = cluster_roles(false, &["*".to_string()], &[]).unwrap_err();
        assert_eq!(err, RbacError::InvalidGroup("*".to_string()));
        for bad in [
            "pools",
            "*.ipam.example.com",
            "Pools.ipam.example.com",
            "pools.ipam",
        ] {
            let err = cluster_roles(false, &[], &[bad.to_string()]).unwrap_err();
            assert_eq!(err, RbacError::InvalidClusterResource(bad.to_string()));
        }
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

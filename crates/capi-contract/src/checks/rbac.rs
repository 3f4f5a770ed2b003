//! RBAC: `all/rbac-aggregation` (union of rules of ClusterRoles labelled
//! `cluster.x-k8s.io/aggregate-to-manager: "true"`), `all/rbac-owner-finalizers`,
//! `bootstrap/provider-rbac`.

use super::{CheckCtx, Finding};
use crate::contract::Role;
use crate::inventory::Document;
use crate::inventory::classify::SIG_GROUPS;
use crate::model::Evidence;
use crate::suite::Rule;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};

pub const AGGREGATE_LABEL: &str = "cluster.x-k8s.io/aggregate-to-manager";
pub const ALL_VERBS: [&str; 7] = [
    "create", "delete", "get", "list", "patch", "update", "watch",
];

fn has(rule: &Value, key: &str, pred: impl Fn(&str) -> bool) -> bool {
    rule.get(key)
        .and_then(Value::as_array)
        .is_some_and(|a| a.iter().filter_map(Value::as_str).any(pred))
}

/// Whether one PolicyRule grants `verb` on `group`/`resource` (no resourceNames restriction).
/// `*` matches any group, resource or verb; `<base>/*` matches every subresource of `<base>`.
pub fn rule_grants(rule: &Value, group: &str, resource: &str, verb: &str) -> bool {
    let restricted = rule
        .get("resourceNames")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty());
    if restricted {
        return false;
    }
    let base = resource.split_once('/').map(|(b, _)| b);
    has(rule, "apiGroups", |g| g == group || g == "*")
        && has(rule, "resources", |r| {
            r == resource || r == "*" || base.is_some_and(|b| r.strip_suffix("/*") == Some(b))
        })
        && has(rule, "verbs", |v| v == verb || v == "*")
}

fn role_rules(doc: &Document) -> Vec<&Value> {
    doc.value
        .get("rules")
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default()
}

fn is_aggregated_to_manager(doc: &Document) -> bool {
    doc.value
        .get("metadata")
        .and_then(|m| m.get("labels"))
        .and_then(|l| l.get(AGGREGATE_LABEL))
        .and_then(Value::as_str)
        == Some("true")
}

/// Union of the PolicyRules of a set of roles, indexed by (apiGroup, resource) so that
/// coverage questions are lookups (built once per evaluation).
#[derive(Debug, Default, Clone)]
pub struct RbacIndex {
    /// apiGroup → resource → what the roles grant there (nested so that lookups by `&str`
    /// need no owned key).
    grants: HashMap<String, HashMap<String, Grant>>,
    pub roles: usize,
}

/// What the indexed roles grant on one (apiGroup, resource).
#[derive(Debug, Default, Clone)]
struct Grant {
    verbs: BTreeSet<String>,
    /// Which roles contribute (`Kind/name`).
    sources: BTreeSet<String>,
}

impl RbacIndex {
    pub fn build<'a>(docs: impl IntoIterator<Item = &'a Document>) -> RbacIndex {
        let mut idx = RbacIndex::default();
        for doc in docs {
            idx.roles += 1;
            let name = format!(
                "{}/{}",
                doc.value.get("kind").and_then(Value::as_str).unwrap_or("?"),
                doc.value
                    .get("metadata")
                    .and_then(|m| m.get("name"))
                    .and_then(Value::as_str)
                    .unwrap_or("?")
            );
            for rule in role_rules(doc) {
                let restricted = rule
                    .get("resourceNames")
                    .and_then(Value::as_array)
                    .is_some_and(|a| !a.is_empty());
                if restricted {
                    continue;
                }
                let list = |k: &str| -> Vec<&str> {
                    rule.get(k)
                        .and_then(Value::as_array)
                        .map(|a| a.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_default()
                };
                let verbs = list("verbs");
                let resources = list("resources");
                for g in list("apiGroups") {
                    // Keys, verbs and role names are copied only when new to the index.
                    if !idx.grants.contains_key(g) {
                        idx.grants.insert(g.to_string(), HashMap::new());
                    }
                    let Some(by_resource) = idx.grants.get_mut(g) else {
                        continue;
                    };
                    for r in &resources {
                        if !by_resource.contains_key(*r) {
                            by_resource.insert((*r).to_string(), Grant::default());
                        }
                        let Some(grant) = by_resource.get_mut(*r) else {
                            continue;
                        };
                        for v in &verbs {
                            if !grant.verbs.contains(*v) {
                                grant.verbs.insert((*v).to_string());
                            }
                        }
                        if !grant.sources.contains(&name) {
                            grant.sources.insert(name.clone());
                        }
                    }
                }
            }
        }
        idx
    }

    /// The index entries that cover `group`/`resource`: the exact (apiGroup, resource) and
    /// the wildcards `*` for either, and `<base>/*` for a subresource.
    fn covering<'s>(&'s self, group: &str, resource: &str) -> impl Iterator<Item = &'s Grant> {
        let base_wildcard = resource
            .split_once('/')
            .map(|(base, _)| format!("{base}/*"));
        let mut out = Vec::new();
        for g in [group, "*"] {
            let Some(by_resource) = self.grants.get(g) else {
                continue;
            };
            for r in [Some(resource), Some("*"), base_wildcard.as_deref()]
                .into_iter()
                .flatten()
            {
                out.extend(by_resource.get(r));
            }
        }
        out.into_iter()
    }

    /// Verbs of `verbs` not granted on `group`/`resource`.
    pub fn missing(&self, group: &str, resource: &str, verbs: &[&str]) -> Vec<String> {
        let granted: BTreeSet<&str> = self
            .covering(group, resource)
            .flat_map(|g| &g.verbs)
            .map(String::as_str)
            .collect();
        if granted.contains("*") {
            return Vec::new();
        }
        verbs
            .iter()
            .filter(|v| !granted.contains(**v))
            .map(|v| v.to_string())
            .collect()
    }

    /// Roles granting anything on `group`/`resource`.
    pub fn sources(&self, group: &str, resource: &str) -> Vec<String> {
        let set: BTreeSet<&String> = self
            .covering(group, resource)
            .flat_map(|g| &g.sources)
            .collect();
        set.into_iter().cloned().collect()
    }
}

/// The views the RBAC rules need: ClusterRoles aggregated to CAPI's manager (whoever ships
/// them: aggregation is by label alone), and each provider's own ClusterRoles and Roles.
#[derive(Debug, Default, Clone)]
pub struct RbacIndexes {
    pub aggregated: RbacIndex,
    /// Roles labelled `cluster.x-k8s.io/provider: <provider>`, per provider.
    by_provider: HashMap<String, RbacIndex>,
    /// Roles without a provider label.
    unlabelled: RbacIndex,
}

/// A role's `cluster.x-k8s.io/provider` label (non-empty).
fn provider_of(doc: &Document) -> Option<&str> {
    doc.value
        .pointer("/metadata/labels")
        .and_then(|l| l.get(crate::inventory::PROVIDER_LABEL))
        .and_then(Value::as_str)
        .filter(|p| !p.is_empty())
}

impl RbacIndexes {
    pub fn build(inv: &crate::inventory::Inventory) -> RbacIndexes {
        let roles = || inv.cluster_roles.iter().chain(inv.roles.iter());
        let mut owners: BTreeSet<&str> = BTreeSet::new();
        owners.extend(roles().filter_map(provider_of));
        RbacIndexes {
            aggregated: RbacIndex::build(
                inv.cluster_roles
                    .iter()
                    .filter(|d| is_aggregated_to_manager(d)),
            ),
            by_provider: owners
                .into_iter()
                .map(|o| {
                    let idx = RbacIndex::build(roles().filter(|d| provider_of(d) == Some(o)));
                    (o.to_string(), idx)
                })
                .collect(),
            unlabelled: RbacIndex::build(
                roles().filter(|d| provider_of(d).is_none() && !d.origin.is_cluster()),
            ),
        }
    }

    /// The provider's own roles: those labelled with its name; when none is, the unlabelled
    /// roles of the input files (e.g. a kustomize tree without common labels: `clusterctl init`
    /// labels every object it installs, so the file's roles become the provider's). On a
    /// cluster only labelled roles count: an unlabelled role there (CAPI core's, another
    /// provider's, the cluster's own, this tool's) is nobody's in particular and would otherwise
    /// grant a provider what it lacks, or make its verdict depend on unrelated roles.
    pub fn of_provider(&self, provider: &str) -> &RbacIndex {
        self.by_provider.get(provider).unwrap_or(&self.unlabelled)
    }
}

pub fn rbac_aggregation(_: &Rule, ctx: &CheckCtx) -> Finding {
    let Some(c) = ctx.crd else {
        return Finding::skip("provider-wide column has no CRD");
    };
    let group = c.crd.group.as_str();
    if SIG_GROUPS.contains(&group) {
        return Finding::skip(format!(
            "condition does not hold: {group} is a SIG group; core's own role already covers it"
        ));
    }
    let idx = &ctx.rbac.aggregated;
    if idx.roles == 0 {
        let m = format!(
            "no ClusterRole labelled {AGGREGATE_LABEL}: \"true\" among the inputs; core cannot access {}.{group}",
            c.crd.plural
        );
        return Finding::fail(m.clone(), vec![ctx.ev(m)]);
    }
    let missing = idx.missing(group, &c.crd.plural, &ALL_VERBS);
    if missing.is_empty() {
        let mut ev = vec![ctx.ev(format!("all seven verbs on {}.{group}", c.crd.plural))];
        ev.extend(
            idx.sources(group, &c.crd.plural)
                .into_iter()
                .map(|s| Evidence {
                    object: Some(s.into()),
                    ..Evidence::msg("aggregated to CAPI's manager role")
                }),
        );
        Finding::pass(ev)
    } else {
        let m = format!(
            "aggregated ClusterRoles do not grant {} on {}.{group}",
            missing.join(", "),
            c.crd.plural
        );
        Finding::fail(m.clone(), vec![ctx.ev(m)])
    }
}

/// `all/rbac-owner-finalizers` (COND-MUST: the controller sets ownerRefs with
/// `blockOwnerDeletion: true`, which under OwnerReferencesPermissionEnforcement needs `update`
/// on the owner's `<plural>/finalizers`). Statically the condition is known to hold for
/// BootstrapConfig and ControlPlane kinds: the contract makes their Secrets (bootstrap data,
/// kubeconfig) carry a controller ownerRef to them, which controller-runtime creates with
/// `blockOwnerDeletion: true`. Other kinds are left to the scenarios; a provider without such
/// kinds is skipped.
pub fn rbac_owner_finalizers(_: &Rule, ctx: &CheckCtx) -> Finding {
    let roles = ctx.rbac.of_provider(&ctx.provider.name);
    let owners: Vec<_> = ctx
        .provider
        .crds
        .iter()
        .filter(|c| matches!(c.role, Role::BootstrapConfig | Role::ControlPlane))
        .collect();
    if owners.is_empty() {
        return Finding::skip(
            "condition not established statically: no BootstrapConfig or ControlPlane kind (whose Secrets carry blockOwnerDeletion ownerRefs); the scenarios check the others",
        );
    }
    if roles.roles == 0 {
        return Finding::skip(format!(
            "no ClusterRole or Role of provider {} among the inputs (labelled {}: {}, or unlabelled)",
            ctx.provider.name,
            crate::inventory::PROVIDER_LABEL,
            ctx.provider.name
        ));
    }
    let mut missing = Vec::new();
    let mut missing_groups = Vec::new();
    let mut granted = Vec::new();
    for c in owners {
        let res = format!("{}/finalizers", c.crd.plural);
        if roles.missing(&c.crd.group, &res, &["update"]).is_empty() {
            granted.push(format!("{res}.{}", c.crd.group));
        } else {
            missing.push(format!("{res}.{}", c.crd.group));
            missing_groups.push(c.crd.group.clone());
        }
    }
    if missing.is_empty() {
        Finding::pass_msg(format!("update granted on {}", granted.join(", ")))
    } else {
        let message = "the contract's Secrets carry a controller ownerRef (blockOwnerDeletion: true) to these objects; under OwnerReferencesPermissionEnforcement that needs update on <plural>/finalizers";
        // Where the grant goes: the ClusterRole that already has rules on the kinds' group
        // (the manager's), at its rules.
        let groups: BTreeSet<&str> = missing_groups.iter().map(String::as_str).collect();
        let evidence = match ctx
            .inv
            .cluster_roles
            .iter()
            .find(|r| role_mentions_group(r, &groups))
        {
            Some(role) => Evidence {
                path: Some("rules".into()),
                ..super::doc_ev(role, message)
            },
            None => Evidence::msg(message),
        };
        Finding::fail(
            format!("no role grants update on {}", missing.join(", ")),
            vec![evidence],
        )
    }
}

/// Whether a ClusterRole has a rule on one of `groups`.
fn role_mentions_group(role: &Document, groups: &BTreeSet<&str>) -> bool {
    role.value
        .get("rules")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| r.get("apiGroups").and_then(Value::as_array))
        .flatten()
        .filter_map(Value::as_str)
        .any(|g| groups.contains(g))
}

/// `bootstrap/provider-rbac`: the provider's roles manage its BootstrapConfig kinds (+status)
/// and Secrets.
pub fn bootstrap_provider_rbac(_: &Rule, ctx: &CheckCtx) -> Finding {
    let roles = ctx.rbac.of_provider(&ctx.provider.name);
    let Some(c) = ctx.crd else {
        return Finding::skip("provider-wide column has no CRD");
    };
    if roles.roles == 0 {
        return Finding::skip(format!(
            "no ClusterRole or Role of provider {} among the inputs (labelled {}: {}, or unlabelled)",
            ctx.provider.name,
            crate::inventory::PROVIDER_LABEL,
            ctx.provider.name
        ));
    }
    let mut problems = Vec::new();
    let need = ["get", "list", "watch", "patch", "update"];
    let m = roles.missing(&c.crd.group, &c.crd.plural, &need);
    if !m.is_empty() {
        problems.push(format!(
            "{} on {}.{}",
            m.join(", "),
            c.crd.plural,
            c.crd.group
        ));
    }
    if c.role == Role::BootstrapConfig {
        let status = format!("{}/status", c.crd.plural);
        let m = roles.missing(&c.crd.group, &status, &["patch", "update"]);
        if m.len() == 2 {
            problems.push(format!("patch or update on {status}.{}", c.crd.group));
        }
        let m = roles.missing(
            "",
            "secrets",
            &[
                "create", "get", "list", "watch", "update", "patch", "delete",
            ],
        );
        if !m.is_empty() {
            problems.push(format!("{} on secrets", m.join(", ")));
        }
    }
    if problems.is_empty() {
        Finding::pass(vec![ctx.ev(
            "the provider's roles manage its kinds, their status, and Secrets",
        )])
    } else {
        let m = format!("the provider's roles do not grant: {}", problems.join("; "));
        Finding::fail(m.clone(), vec![ctx.ev(m)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rule_matching_handles_wildcards_and_resource_names() {
        let r = json!({"apiGroups": ["g"], "resources": ["foos", "foos/*"], "verbs": ["*"]});
        assert!(rule_grants(&r, "g", "foos", "get"));
        assert!(rule_grants(&r, "g", "foos/finalizers", "update"));
        assert!(!rule_grants(&r, "h", "foos", "get"));
        let r = json!({"apiGroups": ["*"], "resources": ["*"], "verbs": ["get"], "resourceNames": ["x"]});
        assert!(!rule_grants(&r, "g", "foos", "get"));
    }

    #[test]
    fn index_unions_rules_across_roles() {
        let doc = |name: &str, rules: serde_json::Value| {
            Document::new(
                json!({"kind": "ClusterRole", "metadata": {"name": name}, "rules": rules}),
                crate::inventory::Origin::new("r.yaml", 0, 1),
            )
        };
        let a = doc(
            "a",
            json!([{"apiGroups": ["g"], "resources": ["foos"], "verbs": ["get", "list"]}]),
        );
        let b = doc(
            "b",
            json!([{"apiGroups": ["g"], "resources": ["foos", "bars/*"], "verbs": ["watch"]},
            {"apiGroups": ["*"], "resources": ["bazs"], "verbs": ["*"]},
            {"apiGroups": ["g"], "resources": ["quxs"], "verbs": ["*"], "resourceNames": ["only-one"]}]),
        );
        let idx = RbacIndex::build([&a, &b]);
        assert_eq!(
            idx.missing("g", "foos", &["get", "list", "watch", "create"]),
            ["create"]
        );
        assert!(idx.missing("g", "bars/finalizers", &["watch"]).is_empty());
        assert!(idx.missing("other", "bazs", &ALL_VERBS).is_empty());
        assert_eq!(idx.missing("g", "quxs", &["get"]), ["get"]);
        assert_eq!(idx.sources("g", "foos"), ["ClusterRole/a", "ClusterRole/b"]);
    }

    #[test]
    fn unlabelled_roles_are_a_providers_only_in_input_files() {
        let role = |file: &str, provider: Option<&str>| {
            let mut v = json!({"kind": "ClusterRole", "metadata": {"name": file}, "rules": [
                {"apiGroups": ["g"], "resources": ["foos/finalizers"], "verbs": ["update"]}]});
            if let Some(p) = provider {
                v["metadata"]["labels"] = json!({crate::inventory::PROVIDER_LABEL: p});
            }
            Document::new(v, crate::inventory::Origin::new(file, 0, 1))
        };
        let cluster = format!("{}ClusterRole/x", crate::inventory::Origin::CLUSTER_PREFIX);
        let inv = |roles: Vec<Document>| crate::inventory::Inventory {
            cluster_roles: roles,
            ..Default::default()
        };
        // A file's unlabelled role is the provider's when none is labelled for it.
        let from_file = RbacIndexes::build(&inv(vec![role("r.yaml", None)]));
        assert!(
            from_file
                .of_provider("p")
                .missing("g", "foos/finalizers", &["update"])
                .is_empty()
        );
        // On a cluster an unlabelled role is nobody's in particular.
        let on_cluster = RbacIndexes::build(&inv(vec![role(&cluster, None)]));
        assert_eq!(on_cluster.of_provider("p").roles, 0);
        // A labelled role counts wherever it was read.
        let labelled = RbacIndexes::build(&inv(vec![role(&cluster, Some("p"))]));
        assert!(
            labelled
                .of_provider("p")
                .missing("g", "foos/finalizers", &["update"])
                .is_empty()
        );
    }
}

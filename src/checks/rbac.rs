//! RBAC: `all/rbac-aggregation` (union of rules of ClusterRoles labelled
//! `cluster.x-k8s.io/aggregate-to-manager: "true"`), `all/rbac-owner-finalizers`,
//! `bootstrap/provider-rbac`.

use super::{CheckCtx, Finding, doc_ev};
use crate::contract::Role;
use crate::inventory::Document;
use crate::inventory::classify::SIG_GROUPS;
use crate::suite::Rule;
use serde_json::Value;

pub const AGGREGATE_LABEL: &str = "cluster.x-k8s.io/aggregate-to-manager";
pub const ALL_VERBS: [&str; 7] = [
    "create", "delete", "get", "list", "patch", "update", "watch",
];

fn strings<'a>(rule: &'a Value, key: &str) -> Vec<&'a str> {
    rule.get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Whether one PolicyRule grants `verb` on `group`/`resource` (no resourceNames restriction).
pub fn rule_grants(rule: &Value, group: &str, resource: &str, verb: &str) -> bool {
    if !strings(rule, "resourceNames").is_empty() {
        return false;
    }
    let groups = strings(rule, "apiGroups");
    let resources = strings(rule, "resources");
    let verbs = strings(rule, "verbs");
    let base_wild = resource
        .split_once('/')
        .map(|(b, _)| format!("{b}/*"))
        .unwrap_or_default();
    (groups.contains(&group) || groups.contains(&"*"))
        && (resources.contains(&resource)
            || resources.contains(&"*")
            || resources.contains(&base_wild.as_str()))
        && (verbs.contains(&verb) || verbs.contains(&"*"))
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

/// Verbs missing for `group`/`resource` in the union of `docs`' rules.
fn missing_verbs(docs: &[&Document], group: &str, resource: &str, verbs: &[&str]) -> Vec<String> {
    verbs
        .iter()
        .filter(|v| {
            !docs
                .iter()
                .flat_map(|d| role_rules(d))
                .any(|r| rule_grants(r, group, resource, v))
        })
        .map(|v| v.to_string())
        .collect()
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
    let aggregated: Vec<&Document> = ctx
        .inv
        .cluster_roles
        .iter()
        .filter(|d| is_aggregated_to_manager(d))
        .collect();
    if aggregated.is_empty() {
        let m = format!(
            "no ClusterRole labelled {AGGREGATE_LABEL}: \"true\" among the inputs; core cannot access {}.{group}",
            c.crd.plural
        );
        return Finding::fail(m.clone(), vec![ctx.ev(m)]);
    }
    let missing = missing_verbs(&aggregated, group, &c.crd.plural, &ALL_VERBS);
    if missing.is_empty() {
        let mut ev: Vec<_> = aggregated
            .iter()
            .map(|d| doc_ev(d, "aggregated to CAPI's manager role"))
            .collect();
        ev.insert(
            0,
            ctx.ev(format!("all seven verbs on {}.{group}", c.crd.plural)),
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

fn all_roles<'a>(ctx: &CheckCtx<'a>) -> Vec<&'a Document> {
    ctx.inv
        .cluster_roles
        .iter()
        .chain(ctx.inv.roles.iter())
        .collect()
}

/// The provider's own roles grant `update` on `<plural>/finalizers` for each non-template
/// contract kind (the objects it makes owners of Secrets and other objects with
/// `blockOwnerDeletion: true`).
pub fn rbac_owner_finalizers(_: &Rule, ctx: &CheckCtx) -> Finding {
    let roles = all_roles(ctx);
    if roles.is_empty() {
        return Finding::skip("no ClusterRole or Role among the inputs");
    }
    let mut missing = Vec::new();
    let mut checked = 0;
    for c in &ctx.provider.crds {
        if !c.role.is_contract_kind() || c.role.is_template() {
            continue;
        }
        checked += 1;
        let res = format!("{}/finalizers", c.crd.plural);
        if !missing_verbs(&roles, &c.crd.group, &res, &["update"]).is_empty() {
            missing.push(format!("{res}.{}", c.crd.group));
        }
    }
    if checked == 0 {
        return Finding::skip("no contract kinds in this provider");
    }
    if missing.is_empty() {
        Finding::pass_msg("update on <plural>/finalizers granted for every contract kind")
    } else {
        Finding::fail_msg(format!(
            "no role grants update on {} (needed when ownerRefs with blockOwnerDeletion point at these objects)",
            missing.join(", ")
        ))
    }
}

/// `bootstrap/provider-rbac`: the provider's roles manage its BootstrapConfig kinds (+status)
/// and Secrets.
pub fn bootstrap_provider_rbac(_: &Rule, ctx: &CheckCtx) -> Finding {
    let roles = all_roles(ctx);
    let Some(c) = ctx.crd else {
        return Finding::skip("provider-wide column has no CRD");
    };
    if roles.is_empty() {
        return Finding::skip("no ClusterRole or Role among the inputs");
    }
    let mut problems = Vec::new();
    let need = ["get", "list", "watch", "patch", "update"];
    let m = missing_verbs(&roles, &c.crd.group, &c.crd.plural, &need);
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
        let m = missing_verbs(&roles, &c.crd.group, &status, &["patch", "update"]);
        if m.len() == 2 {
            problems.push(format!("patch or update on {status}.{}", c.crd.group));
        }
        let m = missing_verbs(
            &roles,
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
}

//! RBAC escalation prevention (kube's `rbac/rolebinding`, `clusterrolebinding`, `role` and
//! `clusterrole` REST strategies): a (Cluster)RoleBinding or (Cluster)Role write is refused unless
//! the user may `bind`/`escalate` or already holds every permission it grants, with kube's
//! wording of what is missing.

use serde_json::{Value, json};

use super::{is_privileged, snapshot};
use crate::error::{ApiError, qualified};
use crate::meta;
use crate::rbac::{self, Attributes, RbacSnapshot, UserInfo};
use crate::store::Store;

/// RBAC escalation prevention on a (Cluster)RoleBinding create/update (kube's
/// `rbac/rolebinding` and `clusterrolebinding` REST strategies): the user must hold `bind` on
/// the referenced role, or already hold every permission the role grants (in the binding's
/// namespace, cluster-wide for ClusterRoleBindings).
pub fn check_binding_escalation(
    store: &Store,
    user: &UserInfo,
    resource: &str,
    namespace: &str,
    binding: &Value,
) -> Result<(), ApiError> {
    if is_privileged(user) {
        return Ok(());
    }
    let role_kind = meta::str_at(binding, "/roleRef/kind");
    let role_name = meta::str_at(binding, "/roleRef/name");
    let role_resource = if role_kind == "Role" {
        "roles"
    } else {
        "clusterroles"
    };
    let snap = snapshot(store);
    let mut bind = Attributes::resource(
        "bind",
        "rbac.authorization.k8s.io",
        role_resource,
        namespace,
    );
    bind.name = role_name.to_string();
    if rbac::authorize(&snap, user, &bind).allowed {
        return Ok(());
    }
    let role_rules: Vec<Value> = match role_kind {
        "Role" => snap
            .roles
            .iter()
            .find(|r| meta::name(r) == role_name && meta::namespace(r) == namespace)
            .and_then(|r| r.get("rules").and_then(Value::as_array).cloned()),
        _ => rbac::aggregate_cluster_roles(&snap.cluster_roles)
            .into_iter()
            .find(|(n, _)| n == role_name)
            .map(|(_, rules)| rules)
            .or_else(|| {
                snap.cluster_roles
                    .iter()
                    .find(|r| meta::name(r) == role_name)
                    .and_then(|r| r.get("rules").and_then(Value::as_array).cloned())
            }),
    }
    .unwrap_or_default();
    let missing = missing_permissions(&snap, user, &role_rules, namespace);
    if missing.is_empty() {
        return Ok(());
    }
    Err(not_held(resource, meta::name(binding), user, &missing))
}

/// Every permission of `rules` (in `namespace`) that `user` does not hold, compacted and
/// ordered as kube's `ConfirmNoEscalation` prints them.
fn missing_permissions(
    snap: &RbacSnapshot,
    user: &UserInfo,
    rules: &[Value],
    namespace: &str,
) -> Vec<String> {
    let missing: Vec<Attributes> = rules
        .iter()
        .flat_map(|rule| expand_rule(rule, namespace))
        .filter(|attrs| !rbac::authorize(snap, user, attrs).allowed)
        .collect();
    compact_rules(&missing)
}

/// Go's `%q` of a string slice: `["a" "b"]`.
fn go_quoted(items: &[&str]) -> String {
    let quoted: Vec<String> = items.iter().map(|i| format!("{i:?}")).collect();
    format!("[{}]", quoted.join(" "))
}

/// kube's `CompactRules` + `SortableRuleSlice` + `PolicyRule.CompactString`: single
/// permissions on the same group/resource/name merge into one rule listing their verbs in
/// order; rules are sorted by their generated `String()` (which starts with the verbs).
fn compact_rules(missing: &[Attributes]) -> Vec<String> {
    // (group, resource, name, non-resource path) → verbs, in first-seen order.
    type RuleKey = (String, String, String, Option<String>);
    let mut merged: Vec<(RuleKey, Vec<&str>)> = Vec::new();
    for a in missing {
        let resource = if a.subresource.is_empty() {
            a.resource.clone()
        } else {
            format!("{}/{}", a.resource, a.subresource)
        };
        let key = (
            a.group.clone(),
            resource,
            a.name.clone(),
            a.non_resource_path.clone(),
        );
        match merged.iter_mut().find(|(k, _)| *k == key && k.3.is_none()) {
            Some((_, verbs)) => verbs.push(&a.verb),
            None => merged.push((key, vec![&a.verb])),
        }
    }
    let mut out: Vec<(String, String)> = merged
        .into_iter()
        .map(|((group, resource, name, path), verbs)| {
            let list = |v: &[&str]| format!("[{}]", v.join(" "));
            let (compact, sort_key) = match path {
                Some(p) => (
                    format!(
                        "{{NonResourceURLs:{}, Verbs:{}}}",
                        go_quoted(&[&p]),
                        go_quoted(&verbs)
                    ),
                    format!(
                        "&PolicyRule{{Verbs:{},APIGroups:[],Resources:[],ResourceNames:[],NonResourceURLs:[{p}],}}",
                        list(&verbs)
                    ),
                ),
                None => {
                    let names = if name.is_empty() {
                        String::new()
                    } else {
                        format!(", ResourceNames:{}", go_quoted(&[&name]))
                    };
                    (
                        format!(
                            "{{APIGroups:{}, Resources:{}{names}, Verbs:{}}}",
                            go_quoted(&[&group]),
                            go_quoted(&[&resource]),
                            go_quoted(&verbs)
                        ),
                        format!(
                            "&PolicyRule{{Verbs:{},APIGroups:[{group}],Resources:[{resource}],ResourceNames:[{name}],NonResourceURLs:[],}}",
                            list(&verbs)
                        ),
                    )
                }
            };
            (sort_key, compact)
        })
        .collect();
    out.sort();
    out.into_iter().map(|(_, compact)| compact).collect()
}

/// kube's 403 for an escalation attempt: `<resource>.rbac.authorization.k8s.io "<name>" is
/// forbidden: user "<u>" (groups=["a" "b"]) is attempting to grant RBAC permissions not
/// currently held:` followed by one line per missing (compacted) rule.
fn not_held(resource: &str, name: &str, user: &UserInfo, missing: &[String]) -> ApiError {
    let groups: Vec<&str> = user.groups.iter().map(String::as_str).collect();
    rbac_forbidden(
        resource,
        name,
        format!(
            "user {:?} (groups={}) is attempting to grant RBAC permissions not currently held:\n{}",
            user.name,
            go_quoted(&groups),
            missing.join("\n")
        ),
    )
}

fn rbac_forbidden(resource: &str, name: &str, why: String) -> ApiError {
    ApiError::forbidden(format!(
        "{} {name:?} is forbidden: {why}",
        qualified(resource, "rbac.authorization.k8s.io")
    ))
    .with_details(json!({"name": name, "group": "rbac.authorization.k8s.io", "kind": resource}))
}

/// RBAC escalation prevention on every write of a Role, ClusterRole, RoleBinding or
/// ClusterRoleBinding by a user outside `system:masters` (kube's `rbac/*/policybased`
/// storage): roles need the `escalate` verb or every permission they grant already held
/// (a ClusterRole's `aggregationRule` needs cluster-admin); bindings need `bind` on the role or
/// its permissions held. An update that changes only ownerReferences or finalizers (what the
/// garbage collector writes) is never refused. `old` is the stored object on update/patch.
pub fn check_rbac_write(
    store: &Store,
    user: &UserInfo,
    resource: &str,
    namespace: &str,
    new: &Value,
    old: Option<&Value>,
) -> Result<(), ApiError> {
    if is_privileged(user) || old.is_some_and(|old| only_gc_fields_differ(old, new)) {
        return Ok(());
    }
    match resource {
        "roles" | "clusterroles" => check_role_escalation(store, user, resource, namespace, new),
        "rolebindings" | "clusterrolebindings" => {
            check_binding_escalation(store, user, resource, namespace, new)
        }
        _ => Ok(()),
    }
}

/// kube's `IsOnlyMutatingGCFields`: the objects are equal once the new ownerReferences and
/// finalizers (and the server-managed resourceVersion/managedFields) are copied onto the old.
fn only_gc_fields_differ(old: &Value, new: &Value) -> bool {
    let mut a = old.clone();
    let mut b = new.clone();
    for v in [&mut a, &mut b] {
        if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
            for k in [
                "ownerReferences",
                "finalizers",
                "resourceVersion",
                "managedFields",
            ] {
                m.remove(k);
            }
        }
    }
    a == b
}

fn check_role_escalation(
    store: &Store,
    user: &UserInfo,
    resource: &str,
    namespace: &str,
    role: &Value,
) -> Result<(), ApiError> {
    let name = meta::name(role);
    let snap = snapshot(store);
    let mut escalate =
        Attributes::resource("escalate", "rbac.authorization.k8s.io", resource, namespace);
    escalate.name = name.to_string();
    if rbac::authorize(&snap, user, &escalate).allowed {
        return Ok(());
    }
    let rules = role
        .get("rules")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let missing = missing_permissions(&snap, user, &rules, namespace);
    if !missing.is_empty() {
        return Err(not_held(resource, name, user, &missing));
    }
    let aggregates = role.get("aggregationRule").is_some_and(|a| !a.is_null());
    if resource == "clusterroles" && aggregates {
        let full_authority = [
            json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}),
            json!({"verbs": ["*"], "nonResourceURLs": ["*"]}),
        ];
        if !missing_permissions(&snap, user, &full_authority, "").is_empty() {
            return Err(rbac_forbidden(
                resource,
                name,
                "must have cluster-admin privileges to use the aggregationRule".to_string(),
            ));
        }
    }
    Ok(())
}

/// Every single permission a policy rule grants (wildcards stay literal `*`, which only a
/// wildcard rule covers, as kube's `ConfirmNoEscalation` coverage check requires).
pub fn expand_rule(rule: &Value, namespace: &str) -> Vec<Attributes> {
    let verbs = meta::strings_at(rule, "/verbs");
    let urls = meta::strings_at(rule, "/nonResourceURLs");
    let mut out = Vec::new();
    if !urls.is_empty() {
        for verb in &verbs {
            for url in &urls {
                out.push(Attributes::non_resource(verb, url));
            }
        }
        return out;
    }
    let names = meta::strings_at(rule, "/resourceNames");
    let names = if names.is_empty() {
        vec![String::new()]
    } else {
        names
    };
    for group in meta::strings_at(rule, "/apiGroups") {
        for resource in meta::strings_at(rule, "/resources") {
            let (res, sub) = match resource.split_once('/') {
                Some((r, s)) => (r.to_string(), s.to_string()),
                None => (resource.clone(), String::new()),
            };
            for verb in &verbs {
                for name in &names {
                    out.push(Attributes {
                        verb: verb.clone(),
                        group: group.clone(),
                        resource: res.clone(),
                        subresource: sub.clone(),
                        name: name.clone(),
                        namespace: namespace.to_string(),
                        non_resource_path: None,
                    });
                }
            }
        }
    }
    out
}

//! The RBAC authorizer (kube `plugin/pkg/auth/authorizer/rbac`): which Roles and ClusterRoles
//! reach a user through bindings, whether a rule covers a request, the reason text kube puts in
//! a SubjectAccessReview, and ClusterRole aggregation (`aggregationRule`) as the
//! clusterrole-aggregation controller computes it.

use super::selector::LabelSelector;
use serde_json::Value;

mod bootstrap;

pub use self::bootstrap::{PRIVILEGED_GROUP, bootstrap_policy};

/// The users and groups a request is made as.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UserInfo {
    pub name: String,
    pub groups: Vec<String>,
}

impl UserInfo {
    /// A user with exactly these groups (what a SubjectAccessReview spec states).
    pub fn new(name: &str, groups: &[&str]) -> Self {
        UserInfo {
            name: name.to_string(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
        }
    }

    /// A ServiceAccount as the token authenticator presents it:
    /// `system:serviceaccount:<ns>:<name>` in `system:serviceaccounts`,
    /// `system:serviceaccounts:<ns>` and `system:authenticated`.
    pub fn service_account(namespace: &str, name: &str) -> Self {
        UserInfo {
            name: format!("system:serviceaccount:{namespace}:{name}"),
            groups: vec![
                "system:serviceaccounts".to_string(),
                format!("system:serviceaccounts:{namespace}"),
                "system:authenticated".to_string(),
            ],
        }
    }

    /// Like [`UserInfo::new`], but a ServiceAccount user name with no groups gets the
    /// ServiceAccount groups (the question "may this ServiceAccount do X?").
    pub fn from_name(name: &str, groups: &[&str]) -> Self {
        match (parse_service_account(name), groups.is_empty()) {
            (Some((ns, sa)), true) => Self::service_account(ns, sa),
            _ => Self::new(name, groups),
        }
    }
}

/// `(namespace, name)` of a `system:serviceaccount:<ns>:<name>` user name.
pub fn parse_service_account(user: &str) -> Option<(&str, &str)> {
    let rest = user.strip_prefix("system:serviceaccount:")?;
    let (ns, name) = rest.split_once(':')?;
    if ns.is_empty() || name.is_empty() || name.contains(':') {
        return None;
    }
    Some((ns, name))
}

/// What is being asked (`authorizer.Attributes`). A request with `non_resource_path` is a
/// non-resource request (only `verb` and the path count).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Attributes {
    pub verb: String,
    pub group: String,
    pub resource: String,
    pub subresource: String,
    pub name: String,
    pub namespace: String,
    pub non_resource_path: Option<String>,
}

impl Attributes {
    /// A resource request.
    pub fn resource(verb: &str, group: &str, resource: &str, namespace: &str) -> Self {
        Attributes {
            verb: verb.into(),
            group: group.into(),
            resource: resource.into(),
            namespace: namespace.into(),
            ..Default::default()
        }
    }

    /// A non-resource request (`/healthz`, `/apis`, …).
    pub fn non_resource(verb: &str, path: &str) -> Self {
        Attributes {
            verb: verb.into(),
            non_resource_path: Some(path.into()),
            ..Default::default()
        }
    }

    /// From a SubjectAccessReview-style `spec` (`resourceAttributes` / `nonResourceAttributes`).
    pub fn from_review_spec(spec: &Value) -> Self {
        let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        if let Some(nra) = spec.get("nonResourceAttributes").filter(|v| v.is_object()) {
            return Attributes::non_resource(&s(nra, "verb"), &s(nra, "path"));
        }
        let ra = spec
            .get("resourceAttributes")
            .cloned()
            .unwrap_or(Value::Null);
        Attributes {
            verb: s(&ra, "verb"),
            group: s(&ra, "group"),
            resource: s(&ra, "resource"),
            subresource: s(&ra, "subresource"),
            name: s(&ra, "name"),
            namespace: s(&ra, "namespace"),
            non_resource_path: None,
        }
    }
}

/// The authorizer's answer. `reason` is kube's: `RBAC: allowed by …` when allowed; when not,
/// empty or `RBAC: <errors met on the way>` (a missing role, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    pub reason: String,
}

/// The RBAC objects (as JSON, the way the store holds them).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RbacSnapshot {
    pub roles: Vec<Value>,
    pub cluster_roles: Vec<Value>,
    pub role_bindings: Vec<Value>,
    pub cluster_role_bindings: Vec<Value>,
}

impl RbacSnapshot {
    /// Sorts a mixed list of RBAC objects by `kind` (others are ignored).
    pub fn from_objects<'a>(objects: impl IntoIterator<Item = &'a Value>) -> Self {
        let mut s = RbacSnapshot::default();
        for o in objects {
            let list = match o.get("kind").and_then(Value::as_str) {
                Some("Role") => &mut s.roles,
                Some("ClusterRole") => &mut s.cluster_roles,
                Some("RoleBinding") => &mut s.role_bindings,
                Some("ClusterRoleBinding") => &mut s.cluster_role_bindings,
                _ => continue,
            };
            list.push(o.clone());
        }
        s
    }
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    let mut cur = v;
    for p in path {
        match cur.get(p) {
            Some(n) => cur = n,
            None => return "",
        }
    }
    cur.as_str().unwrap_or("")
}

fn name_of(v: &Value) -> &str {
    str_at(v, &["metadata", "name"])
}

fn namespace_of(v: &Value) -> &str {
    str_at(v, &["metadata", "namespace"])
}

fn rules_of(v: &Value) -> Vec<Value> {
    v.get("rules")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn labels_of(v: &Value) -> Option<&Value> {
    v.get("metadata").and_then(|m| m.get("labels"))
}

/// The rules each aggregated ClusterRole (one with `aggregationRule`) should carry: the
/// rules of every other ClusterRole matching any of its `clusterRoleSelectors`, in selector
/// order then by role name, without duplicates. Chains (aggregating an aggregated role) are
/// followed to a fixed point, as the controller converges to.
pub fn aggregate_cluster_roles(roles: &[Value]) -> Vec<(String, Vec<Value>)> {
    let mut current: Vec<Value> = roles.to_vec();
    let mut result = Vec::new();
    for _ in 0..=roles.len().min(16) {
        result = aggregate_once(&current);
        let mut changed = false;
        for (name, rules) in &result {
            if let Some(role) = current.iter_mut().find(|r| name_of(r) == name)
                && role.get("rules") != Some(&Value::from(rules.clone()))
            {
                role["rules"] = Value::from(rules.clone());
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    result
}

fn aggregate_once(roles: &[Value]) -> Vec<(String, Vec<Value>)> {
    let mut sorted: Vec<&Value> = roles.iter().collect();
    sorted.sort_by(|a, b| name_of(a).cmp(name_of(b)));
    let mut out = Vec::new();
    for role in roles {
        let Some(selectors) = role
            .get("aggregationRule")
            .and_then(|a| a.get("clusterRoleSelectors"))
            .and_then(Value::as_array)
        else {
            continue;
        };
        let mut rules: Vec<Value> = Vec::new();
        for sel in selectors {
            let Ok(sel) = LabelSelector::from_label_selector(sel) else {
                continue;
            };
            for other in &sorted {
                if name_of(other) == name_of(role) || !sel.matches_json(labels_of(other)) {
                    continue;
                }
                for r in rules_of(other) {
                    if !rules.contains(&r) {
                        rules.push(r);
                    }
                }
            }
        }
        out.push((name_of(role).to_string(), rules));
    }
    out
}

/// `rbacv1helpers` rule matching.
pub fn rule_allows(attrs: &Attributes, rule: &Value) -> bool {
    let verbs = super::meta::strings_at(rule, "/verbs");
    let verb_ok = verbs.iter().any(|v| v == "*" || *v == attrs.verb);
    if !verb_ok {
        return false;
    }
    if let Some(path) = &attrs.non_resource_path {
        return super::meta::strings_at(rule, "/nonResourceURLs")
            .iter()
            .any(|u| {
                u == "*"
                    || u == path
                    || (u.ends_with('*') && path.starts_with(u.trim_end_matches('*')))
            });
    }
    let groups = super::meta::strings_at(rule, "/apiGroups");
    if !groups.iter().any(|g| g == "*" || *g == attrs.group) {
        return false;
    }
    let combined = if attrs.subresource.is_empty() {
        attrs.resource.clone()
    } else {
        format!("{}/{}", attrs.resource, attrs.subresource)
    };
    let resource_ok = super::meta::strings_at(rule, "/resources").iter().any(|r| {
        r == "*"
            || *r == combined
            || (!attrs.subresource.is_empty()
                && r.len() == attrs.subresource.len() + 2
                && r.starts_with("*/")
                && r.ends_with(&attrs.subresource))
    });
    if !resource_ok {
        return false;
    }
    let names = super::meta::strings_at(rule, "/resourceNames");
    names.is_empty() || names.contains(&attrs.name)
}

fn applies_to(user: &UserInfo, subject: &Value, binding_namespace: &str) -> bool {
    let kind = str_at(subject, &["kind"]);
    let name = str_at(subject, &["name"]);
    match kind {
        "User" => user.name == name,
        "Group" => user.groups.iter().any(|g| g == name),
        "ServiceAccount" => {
            let ns = match str_at(subject, &["namespace"]) {
                "" => binding_namespace,
                ns => ns,
            };
            !ns.is_empty() && user.name == format!("system:serviceaccount:{ns}:{name}")
        }
        _ => false,
    }
}

fn describe_subject(subject: &Value, binding_namespace: &str) -> String {
    let kind = str_at(subject, &["kind"]);
    let name = str_at(subject, &["name"]);
    if kind == "ServiceAccount" {
        let ns = match str_at(subject, &["namespace"]) {
            "" => binding_namespace,
            ns => ns,
        };
        format!("{kind} {:?}", format!("{name}/{ns}"))
    } else {
        format!("{kind} {name:?}")
    }
}

struct Resolver<'a> {
    snapshot: &'a RbacSnapshot,
    aggregated: Vec<(String, Vec<Value>)>,
}

impl Resolver<'_> {
    fn cluster_role_rules(&self, name: &str) -> Result<Vec<Value>, String> {
        if let Some((_, rules)) = self.aggregated.iter().find(|(n, _)| n == name) {
            return Ok(rules.clone());
        }
        self.snapshot
            .cluster_roles
            .iter()
            .find(|r| name_of(r) == name)
            .map(rules_of)
            .ok_or_else(|| format!("clusterrole.rbac.authorization.k8s.io {name:?} not found"))
    }

    fn role_ref_rules(&self, role_ref: &Value, namespace: &str) -> Result<Vec<Value>, String> {
        let kind = str_at(role_ref, &["kind"]);
        let name = str_at(role_ref, &["name"]);
        match kind {
            "ClusterRole" => self.cluster_role_rules(name),
            "Role" if !namespace.is_empty() => self
                .snapshot
                .roles
                .iter()
                .find(|r| name_of(r) == name && namespace_of(r) == namespace)
                .map(rules_of)
                .ok_or_else(|| format!("role.rbac.authorization.k8s.io {name:?} not found")),
            other => Err(format!("unsupported role reference kind: {other:?}")),
        }
    }
}

fn subjects(binding: &Value) -> Vec<Value> {
    binding
        .get("subjects")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// Decides `attrs` for `user` like kube's RBAC authorizer: ClusterRoleBindings first, then
/// RoleBindings of the request's namespace; the first rule that allows wins.
pub fn authorize(store: &RbacSnapshot, user: &UserInfo, attrs: &Attributes) -> Decision {
    let resolver = Resolver {
        snapshot: store,
        aggregated: aggregate_cluster_roles(&store.cluster_roles),
    };
    let mut errors: Vec<String> = Vec::new();

    let mut crbs: Vec<&Value> = store.cluster_role_bindings.iter().collect();
    crbs.sort_by(|a, b| name_of(a).cmp(name_of(b)));
    for b in crbs {
        let Some(subject) = subjects(b).into_iter().find(|s| applies_to(user, s, "")) else {
            continue;
        };
        let role_ref = b.get("roleRef").cloned().unwrap_or(Value::Null);
        match resolver.role_ref_rules(&role_ref, "") {
            Ok(rules) => {
                if rules.iter().any(|r| rule_allows(attrs, r)) {
                    return Decision {
                        allowed: true,
                        reason: format!(
                            "RBAC: allowed by ClusterRoleBinding {:?} of {} {:?} to {}",
                            name_of(b),
                            str_at(&role_ref, &["kind"]),
                            str_at(&role_ref, &["name"]),
                            describe_subject(&subject, "")
                        ),
                    };
                }
            }
            Err(e) => errors.push(e),
        }
    }

    if !attrs.namespace.is_empty() {
        let mut rbs: Vec<&Value> = store
            .role_bindings
            .iter()
            .filter(|b| namespace_of(b) == attrs.namespace)
            .collect();
        rbs.sort_by(|a, b| name_of(a).cmp(name_of(b)));
        for b in rbs {
            let ns = namespace_of(b);
            let Some(subject) = subjects(b).into_iter().find(|s| applies_to(user, s, ns)) else {
                continue;
            };
            let role_ref = b.get("roleRef").cloned().unwrap_or(Value::Null);
            match resolver.role_ref_rules(&role_ref, ns) {
                Ok(rules) => {
                    if rules.iter().any(|r| rule_allows(attrs, r)) {
                        return Decision {
                            allowed: true,
                            reason: format!(
                                "RBAC: allowed by RoleBinding {:?} of {} {:?} to {}",
                                format!("{}/{ns}", name_of(b)),
                                str_at(&role_ref, &["kind"]),
                                str_at(&role_ref, &["name"]),
                                describe_subject(&subject, ns)
                            ),
                        };
                    }
                }
                Err(e) => errors.push(e),
            }
        }
    }

    let reason = match errors.as_slice() {
        [] => String::new(),
        [one] => format!("RBAC: {one}"),
        many => format!("RBAC: [{}]", many.join(", ")),
    };
    Decision {
        allowed: false,
        reason,
    }
}

/// The decision of kube-apiserver's default authorizer chain for what this module models:
/// members of `system:masters` are allowed outright (empty reason, as the privileged-groups
/// authorizer gives none), everyone else goes through [`authorize`].
pub fn authorize_request(store: &RbacSnapshot, user: &UserInfo, attrs: &Attributes) -> Decision {
    if user.groups.iter().any(|g| g == PRIVILEGED_GROUP) {
        return Decision {
            allowed: true,
            reason: String::new(),
        };
    }
    authorize(store, user, attrs)
}

/// Every rule that applies to `user` in `namespace` (cluster-wide bindings, plus the
/// namespace's RoleBindings when `namespace` is not empty), as a SelfSubjectRulesReview lists
/// them: `(resource_rules, non_resource_rules, evaluation_errors)`, each rule in the review's
/// shape (`verbs`, `apiGroups`, `resources`, `resourceNames` / `verbs`, `nonResourceURLs`).
pub fn rules_for(
    store: &RbacSnapshot,
    user: &UserInfo,
    namespace: &str,
) -> (Vec<Value>, Vec<Value>, Vec<String>) {
    let resolver = Resolver {
        snapshot: store,
        aggregated: aggregate_cluster_roles(&store.cluster_roles),
    };
    let mut resource_rules = Vec::new();
    let mut non_resource_rules = Vec::new();
    let mut errors = Vec::new();
    let mut add = |rules: Vec<Value>| {
        for r in rules {
            let pick = |keys: &[&str]| {
                let mut m = serde_json::Map::new();
                for k in keys {
                    if let Some(v) = r
                        .get(*k)
                        .filter(|v| v.as_array().is_some_and(|a| !a.is_empty()))
                    {
                        m.insert((*k).to_string(), v.clone());
                    }
                }
                Value::Object(m)
            };
            let has_urls = r
                .get("nonResourceURLs")
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty());
            let entry = if has_urls {
                pick(&["verbs", "nonResourceURLs"])
            } else {
                pick(&["verbs", "apiGroups", "resources", "resourceNames"])
            };
            let list = if has_urls {
                &mut non_resource_rules
            } else {
                &mut resource_rules
            };
            if !list.contains(&entry) {
                list.push(entry);
            }
        }
    };
    let mut crbs: Vec<&Value> = store.cluster_role_bindings.iter().collect();
    crbs.sort_by(|a, b| name_of(a).cmp(name_of(b)));
    for b in crbs {
        if subjects(b).iter().any(|s| applies_to(user, s, "")) {
            let role_ref = b.get("roleRef").cloned().unwrap_or(Value::Null);
            match resolver.role_ref_rules(&role_ref, "") {
                Ok(rules) => add(rules),
                Err(e) => errors.push(e),
            }
        }
    }
    if !namespace.is_empty() {
        let mut rbs: Vec<&Value> = store
            .role_bindings
            .iter()
            .filter(|b| namespace_of(b) == namespace)
            .collect();
        rbs.sort_by(|a, b| name_of(a).cmp(name_of(b)));
        for b in rbs {
            if subjects(b).iter().any(|s| applies_to(user, s, namespace)) {
                let role_ref = b.get("roleRef").cloned().unwrap_or(Value::Null);
                match resolver.role_ref_rules(&role_ref, namespace) {
                    Ok(rules) => add(rules),
                    Err(e) => errors.push(e),
                }
            }
        }
    }
    (resource_rules, non_resource_rules, errors)
}

#[cfg(test)]
mod tests;

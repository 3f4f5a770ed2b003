//! Who a request is made as and whether RBAC lets it through (kube-apiserver's
//! authentication → `RequestInfoFactory` → authorization filter chain, for what the emulator
//! models): ServiceAccount tokens from the TokenRequest subresource, the request attributes the
//! authorizer sees, the exact 403 `Forbidden` Status kube-apiserver answers, and the RBAC
//! escalation check on (Cluster)RoleBinding writes.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::http::Method;
use serde_json::{Value, json};

use super::error::{ApiError, qualified};
use super::meta;
pub use super::rbac::UserInfo;
use super::rbac::{self, Attributes, RbacSnapshot};
use super::store::Store;

/// The identity of requests without a ServiceAccount token (in-process and the admin token).
pub const ADMIN_USER: &str = "kubernetes-admin";

/// The user every request without a token-bound identity runs as (the in-process client and
/// the admin bearer token): a member of `system:masters`, so RBAC is never consulted.
pub fn admin() -> UserInfo {
    UserInfo::new(
        ADMIN_USER,
        &[rbac::PRIVILEGED_GROUP, "system:authenticated"],
    )
}

/// The authenticated user of a request (an axum request extension set by the TCP listener's
/// authentication layer; absent ⇒ [`admin`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity(pub UserInfo);

/// What a ServiceAccount token is bound to (`authentication.k8s.io/v1 BoundObjectReference`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenBinding {
    pub namespace: String,
    pub name: String,
    /// The ServiceAccount's uid when the token was issued: a deleted and recreated account does
    /// not inherit old tokens.
    pub uid: String,
}

/// Tokens issued by the TokenRequest subresource.
#[derive(Debug, Default)]
pub struct TokenRegistry {
    tokens: Mutex<BTreeMap<String, TokenBinding>>,
}

impl TokenRegistry {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, TokenBinding>> {
        match self.tokens.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Issues a new opaque token bound to `binding`.
    pub fn issue(&self, binding: TokenBinding) -> String {
        let token = format!("capi-conformance-sa.{}", uuid::Uuid::new_v4().simple());
        self.lock().insert(token.clone(), binding);
        token
    }

    /// The user a token authenticates as, when it was issued here and its ServiceAccount still
    /// exists with the same uid.
    pub fn authenticate(&self, store: &Store, token: &str) -> Option<UserInfo> {
        let binding = self.lock().get(token).cloned()?;
        let key = (
            String::new(),
            "serviceaccounts".to_string(),
            binding.namespace.clone(),
            binding.name.clone(),
        );
        let sa = store.objects.get(&key)?;
        (meta::str_at(sa, "/metadata/uid") == binding.uid)
            .then(|| UserInfo::service_account(&binding.namespace, &binding.name))
    }
}

/// Answers `POST …/namespaces/{ns}/serviceaccounts/{name}/token` (what `kubectl create token`
/// sends): a TokenRequest whose `status.token` authenticates as the ServiceAccount. The request
/// body's `spec` (audiences, expirationSeconds) is echoed, not enforced: tokens live as long as
/// the server and their ServiceAccount.
/// `manager` is the request's field manager: kube records the TokenRequest's defaulted spec
/// under it (subresource `token`).
pub fn token_request(
    store: &Store,
    tokens: &TokenRegistry,
    namespace: &str,
    name: &str,
    body: &[u8],
    manager: &str,
) -> Result<Value, ApiError> {
    let key = (
        String::new(),
        "serviceaccounts".to_string(),
        namespace.to_string(),
        name.to_string(),
    );
    let sa = store
        .objects
        .get(&key)
        .ok_or_else(|| ApiError::not_found("", "serviceaccounts", name))?;
    let uid = meta::str_at(sa, "/metadata/uid").to_string();
    // kubectl ≥1.32 sends protobuf here; only the optional spec would be read from it.
    let spec = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v.get("spec").cloned())
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({}));
    let expiration_seconds = spec
        .get("expirationSeconds")
        .and_then(Value::as_i64)
        .unwrap_or(3600);
    let token = tokens.issue(TokenBinding {
        namespace: namespace.to_string(),
        name: name.to_string(),
        uid: uid.clone(),
    });
    let expires = jiff::Timestamp::now()
        .checked_add(jiff::SignedDuration::from_secs(expiration_seconds.max(0)))
        .unwrap_or_else(|_| jiff::Timestamp::now());
    let mut spec = spec;
    spec["expirationSeconds"] = json!(expiration_seconds);
    // Owned by the requester: what it sent and what defaulting added, before the REST
    // storage fills the audiences.
    let owned: serde_json::Map<String, Value> = spec
        .as_object()
        .map(|m| m.keys().map(|k| (format!("f:{k}"), json!({}))).collect())
        .unwrap_or_default();
    if spec.get("audiences").is_none() {
        spec["audiences"] = json!(["https://kubernetes.default.svc.cluster.local"]);
    }
    if spec.get("boundObjectRef").is_none() {
        spec["boundObjectRef"] = Value::Null;
    }
    let now = meta::now_rfc3339();
    // The ServiceAccount's name, namespace and uid, created now (kube's TokenRequest REST).
    let mut metadata =
        json!({"name": name, "namespace": namespace, "uid": uid, "creationTimestamp": now});
    if !manager.is_empty() {
        metadata["managedFields"] = json!([{
            "manager": manager, "operation": "Update", "apiVersion": "authentication.k8s.io/v1",
            "time": now, "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": owned},
            "subresource": "token"
        }]);
    }
    Ok(json!({
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": metadata,
        "spec": spec,
        "status": {
            "token": token,
            "expirationTimestamp": expires.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
        }
    }))
}

/// The authorizer attributes of a request, as kube's `RequestInfoFactory` derives them:
/// resource requests under `/api/v1/…` and `/apis/<group>/<version>/…` (verb from the method,
/// `list`/`watch`/`deletecollection` for collections, the namespace of a `namespaces/<name>`
/// path is `<name>`), everything else a non-resource request on its path.
pub fn request_attributes(
    method: &Method,
    path: &str,
    query: &BTreeMap<String, String>,
) -> Attributes {
    let http_verb = match *method {
        Method::GET | Method::HEAD => "get",
        Method::POST => "post",
        Method::PUT => "put",
        Method::PATCH => "patch",
        Method::DELETE => "delete",
        _ => "",
    };
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, rest) = match parts.as_slice() {
        ["api", _version, rest @ ..] if !rest.is_empty() => ("", rest),
        ["apis", group, _version, rest @ ..] if !rest.is_empty() => (*group, rest),
        _ => {
            let verb = if http_verb.is_empty() {
                method.as_str().to_lowercase()
            } else {
                http_verb.to_string()
            };
            return Attributes::non_resource(&verb, path);
        }
    };
    let mut rest: &[&str] = rest;
    let mut namespace = String::new();
    if rest.first() == Some(&"namespaces") && rest.len() > 1 {
        namespace = rest[1].to_string();
        if rest.len() > 2 && !matches!(rest[2], "status" | "finalize") {
            rest = &rest[2..];
        }
    }
    let resource = rest.first().copied().unwrap_or_default().to_string();
    let name = rest.get(1).copied().unwrap_or_default().to_string();
    let subresource = rest.get(2).copied().unwrap_or_default().to_string();
    let watching = matches!(query.get("watch").map(String::as_str), Some("true" | "1"));
    let verb = match (
        *method == Method::GET || *method == Method::HEAD,
        name.is_empty(),
    ) {
        (true, _) if watching => "watch",
        (true, true) => "list",
        (true, false) => "get",
        _ => match (http_verb, name.is_empty()) {
            ("post", _) => "create",
            ("put", _) => "update",
            ("patch", _) => "patch",
            ("delete", true) => "deletecollection",
            ("delete", false) => "delete",
            _ => "",
        },
    };
    Attributes {
        verb: verb.to_string(),
        group: group.to_string(),
        resource,
        subresource,
        name,
        namespace,
        non_resource_path: None,
    }
}

/// kube-apiserver's 403 for a denied request (`responsewriters.ForbiddenStatusError`):
/// `<resource>[.<group>] "<name>" is forbidden: User "<user>" cannot <verb> resource
/// "<resource>[/<sub>]" in API group "<group>" in the namespace "<ns>"` (or `at the cluster
/// scope`); non-resource requests: `forbidden: User "<user>" cannot <verb> path "<path>"`.
pub fn forbidden(user: &UserInfo, attrs: &Attributes, reason: &str) -> ApiError {
    let mut why = match &attrs.non_resource_path {
        Some(path) => format!("User {:?} cannot {} path {:?}", user.name, attrs.verb, path),
        None => {
            let resource = if attrs.subresource.is_empty() {
                attrs.resource.clone()
            } else {
                format!("{}/{}", attrs.resource, attrs.subresource)
            };
            let scope = if attrs.namespace.is_empty() {
                "at the cluster scope".to_string()
            } else {
                format!("in the namespace {:?}", attrs.namespace)
            };
            format!(
                "User {:?} cannot {} resource {:?} in API group {:?} {scope}",
                user.name, attrs.verb, resource, attrs.group
            )
        }
    };
    if !reason.is_empty() {
        why = format!("{why}: {reason}");
    }
    if attrs.non_resource_path.is_some() || attrs.resource.is_empty() {
        return ApiError::forbidden(format!("forbidden: {why}")).with_details(json!({}));
    }
    let gr = qualified(&attrs.resource, &attrs.group);
    let message = if attrs.name.is_empty() {
        format!("{gr} is forbidden: {why}")
    } else {
        format!("{gr} {:?} is forbidden: {why}", attrs.name)
    };
    let mut details = serde_json::Map::new();
    if !attrs.name.is_empty() {
        details.insert("name".into(), json!(attrs.name));
    }
    if !attrs.group.is_empty() {
        details.insert("group".into(), json!(attrs.group));
    }
    details.insert("kind".into(), json!(attrs.resource));
    ApiError::forbidden(message).with_details(Value::Object(details))
}

/// The RBAC objects the authorizer sees: the stored ones plus kube-apiserver's bootstrap policy
/// (`system:discovery`, `system:basic-user`, `system:public-info-viewer` bound to
/// `system:authenticated`, …) for every bootstrap name the store does not override. The
/// bootstrap objects are served to the authorizer only, not listed, so `check` and `lint` see
/// exactly the RBAC that was applied.
pub fn snapshot(store: &Store) -> Arc<RbacSnapshot> {
    const RBAC: [&str; 4] = [
        "roles",
        "clusterroles",
        "rolebindings",
        "clusterrolebindings",
    ];
    let stored: Vec<&Value> = RBAC
        .into_iter()
        .flat_map(|r| store.objects_of("rbac.authorization.k8s.io", r, None))
        .collect();
    // Every write has a resourceVersion of its own: the versions name the objects' state.
    let versions: Vec<u64> = stored
        .iter()
        .map(|o| meta::resource_version(o).parse().unwrap_or(0))
        .collect();
    let mut cached = store
        .rbac_snapshot
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if let Some((at, snap)) = cached.as_ref()
        && *at == versions
    {
        return snap.clone();
    }
    let bootstrap = rbac::bootstrap_policy();
    let overridden = |b: &Value| {
        stored.iter().any(|s| {
            meta::str_at(s, "/kind") == meta::str_at(b, "/kind") && meta::name(s) == meta::name(b)
        })
    };
    let extra: Vec<&Value> = bootstrap.iter().filter(|b| !overridden(b)).collect();
    let snap = Arc::new(RbacSnapshot::from_objects(stored.into_iter().chain(extra)));
    *cached = Some((versions, snap.clone()));
    snap
}

/// Allows or refuses `attrs` for `user` (privileged users always pass).
pub fn authorize(store: &Store, user: &UserInfo, attrs: &Attributes) -> Result<(), ApiError> {
    if is_privileged(user) {
        return Ok(());
    }
    let decision = rbac::authorize(&snapshot(store), user, attrs);
    if decision.allowed {
        Ok(())
    } else {
        Err(forbidden(user, attrs, ""))
    }
}

pub fn is_privileged(user: &UserInfo) -> bool {
    user.groups.iter().any(|g| g == rbac::PRIVILEGED_GROUP)
}

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
    let verbs = super::meta::strings_at(rule, "/verbs");
    let urls = super::meta::strings_at(rule, "/nonResourceURLs");
    let mut out = Vec::new();
    if !urls.is_empty() {
        for verb in &verbs {
            for url in &urls {
                out.push(Attributes::non_resource(verb, url));
            }
        }
        return out;
    }
    let names = super::meta::strings_at(rule, "/resourceNames");
    let names = if names.is_empty() {
        vec![String::new()]
    } else {
        names
    };
    for group in super::meta::strings_at(rule, "/apiGroups") {
        for resource in super::meta::strings_at(rule, "/resources") {
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

#[cfg(test)]
mod tests;

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

mod escalation;
pub use escalation::{check_binding_escalation, check_rbac_write, expand_rule};

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

#[cfg(test)]
mod tests;

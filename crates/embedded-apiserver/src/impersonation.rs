//! User impersonation (`kubectl --as`, `--as-group`, `--as-uid`; kube-apiserver's
//! `WithImpersonation` filter): the `Impersonate-User`, `Impersonate-Group`, `Impersonate-Uid`
//! and `Impersonate-Extra-<key>` headers replace the authenticated user, after RBAC allows the
//! requester the `impersonate` verb on each of them (`users`, `serviceaccounts`, `groups`,
//! `uids`, `userextras/<key>`). Without this, `kubectl auth can-i --as=…` against the embedded
//! server would answer for the admin instead of the impersonated user.

use axum::http::HeaderMap;

use super::access;
use super::error::ApiError;
use super::rbac::{Attributes, UserInfo};
use super::schema::names::{dns1123_label, dns1123_subdomain};
use super::store::Store;

/// Why an impersonation request was refused.
#[derive(Debug)]
pub enum Refusal {
    /// The requester may not impersonate something it asked for: kube's 403 Status.
    Forbidden(ApiError),
    /// Groups, extras or a uid without a user: kube answers 500 with a plain-text body.
    Malformed(String),
}

const USER: &str = "impersonate-user";
const GROUP: &str = "impersonate-group";
const UID: &str = "impersonate-uid";
const EXTRA_PREFIX: &str = "impersonate-extra-";

/// What the headers ask to act as.
#[derive(Debug, Default, PartialEq, Eq)]
struct Requested {
    user: String,
    groups: Vec<String>,
    uid: String,
    /// `(key, value)`, one per value, keys lower-cased.
    extras: Vec<(String, String)>,
}

fn requested(headers: &HeaderMap) -> Requested {
    let text = |v: &axum::http::HeaderValue| v.to_str().unwrap_or_default().to_string();
    let mut r = Requested {
        user: headers.get(USER).map(text).unwrap_or_default(),
        groups: headers.get_all(GROUP).iter().map(text).collect(),
        uid: headers.get(UID).map(text).unwrap_or_default(),
        extras: Vec::new(),
    };
    for (name, value) in headers {
        if let Some(key) = name.as_str().strip_prefix(EXTRA_PREFIX) {
            r.extras.push((key.to_string(), text(value)));
        }
    }
    r
}

/// Whether any impersonation header is present (cheap: no lock, no allocation).
pub fn requested_any(headers: &HeaderMap) -> bool {
    headers
        .keys()
        .any(|k| k.as_str().starts_with("impersonate-"))
}

/// `system:serviceaccount:<ns>:<name>` split into its namespace and name (kube's
/// `serviceaccount.SplitUsername`: exactly two parts after the prefix, a valid namespace name
/// and a valid ServiceAccount name).
fn service_account_of(user: &str) -> Option<(&str, &str)> {
    let rest = user.strip_prefix("system:serviceaccount:")?;
    let (ns, name) = rest.split_once(':')?;
    let valid =
        !name.contains(':') && dns1123_label(ns).is_empty() && dns1123_subdomain(name).is_empty();
    valid.then_some((ns, name))
}

/// An extra key as kube reads it from `Impersonate-Extra-<key>`: lower-cased, %-decoded
/// (kept as sent when the escape is malformed).
fn extra_key(encoded: &str) -> String {
    let lower = encoded.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok());
            match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                Some(b) => {
                    out.push(b);
                    i += 3;
                    continue;
                }
                None => return lower,
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or(lower)
}

fn impersonate(group: &str, resource: &str, namespace: &str, name: &str) -> Attributes {
    let mut a = Attributes::resource("impersonate", group, resource, namespace);
    a.name = name.to_string();
    a
}

/// The user a request acts as: `requester` unchanged when no impersonation header is present,
/// otherwise the impersonated user once every impersonation is authorized.
pub fn resolve(
    store: &Store,
    requester: UserInfo,
    headers: &HeaderMap,
) -> Result<UserInfo, Refusal> {
    let r = requested(headers);
    if r.user.is_empty() {
        if r.groups.is_empty() && r.extras.is_empty() && r.uid.is_empty() {
            return Ok(requester);
        }
        return Err(Refusal::Malformed(format!(
            "requested groups {:?}, uid {:?} and {} extra value(s) without impersonating a user",
            r.groups,
            r.uid,
            r.extras.len()
        )));
    }
    let mut checks = Vec::new();
    let mut groups: Vec<String> = Vec::new();
    match service_account_of(&r.user) {
        Some((ns, name)) => {
            checks.push(impersonate("", "serviceaccounts", ns, name));
            if r.groups.is_empty() {
                groups = vec![
                    "system:serviceaccounts".to_string(),
                    format!("system:serviceaccounts:{ns}"),
                ];
            }
        }
        None => checks.push(impersonate("", "users", "", &r.user)),
    }
    for g in &r.groups {
        checks.push(impersonate("", "groups", "", g));
        groups.push(g.clone());
    }
    for (key, value) in &r.extras {
        let mut a = impersonate("authentication.k8s.io", "userextras", "", value);
        a.subresource = extra_key(key);
        checks.push(a);
    }
    if !r.uid.is_empty() {
        checks.push(impersonate("authentication.k8s.io", "uids", "", &r.uid));
    }
    for attrs in &checks {
        access::authorize(store, &requester, attrs).map_err(Refusal::Forbidden)?;
    }
    // kube adds `system:authenticated` unless either well-known group was given, and
    // `system:unauthenticated` to `system:anonymous`.
    let has = |g: &str| groups.iter().any(|x| x == g);
    if r.user != "system:anonymous" {
        if !has("system:authenticated") && !has("system:unauthenticated") {
            groups.push("system:authenticated".to_string());
        }
    } else if !has("system:unauthenticated") {
        groups.push("system:unauthenticated".to_string());
    }
    Ok(UserInfo {
        name: r.user,
        groups,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn no_headers_keeps_the_requester() {
        let store = Store::new(16);
        let u = resolve(&store, access::admin(), &HeaderMap::new()).unwrap();
        assert_eq!(u, access::admin());
    }

    #[test]
    fn admin_impersonates_a_user_a_service_account_and_groups() {
        let store = Store::new(16);
        let u = resolve(&store, access::admin(), &headers(&[(USER, "bob")])).unwrap();
        assert_eq!(u, UserInfo::new("bob", &["system:authenticated"]));
        let u = resolve(
            &store,
            access::admin(),
            &headers(&[(USER, "system:serviceaccount:capi-system:capi-manager")]),
        )
        .unwrap();
        assert_eq!(u, UserInfo::service_account("capi-system", "capi-manager"));
        let u = resolve(
            &store,
            access::admin(),
            &headers(&[(USER, "bob"), (GROUP, "devs"), (GROUP, "ops")]),
        )
        .unwrap();
        assert_eq!(
            u,
            UserInfo::new("bob", &["devs", "ops", "system:authenticated"])
        );
        let u = resolve(
            &store,
            access::admin(),
            &headers(&[(USER, "bob"), (GROUP, "system:unauthenticated")]),
        )
        .unwrap();
        assert_eq!(u, UserInfo::new("bob", &["system:unauthenticated"]));
        let u = resolve(
            &store,
            access::admin(),
            &headers(&[(USER, "system:serviceaccount:ns:sa"), (GROUP, "devs")]),
        )
        .unwrap();
        assert_eq!(
            u,
            UserInfo::new(
                "system:serviceaccount:ns:sa",
                &["devs", "system:authenticated"]
            )
        );
        let u = resolve(
            &store,
            access::admin(),
            &headers(&[(USER, "system:anonymous")]),
        )
        .unwrap();
        assert_eq!(
            u,
            UserInfo::new("system:anonymous", &["system:unauthenticated"])
        );
    }

    #[test]
    fn malformed_service_account_names_are_plain_users() {
        assert_eq!(
            service_account_of("system:serviceaccount:ns:sa"),
            Some(("ns", "sa"))
        );
        for bad in [
            "system:serviceaccount:ns",
            "system:serviceaccount::sa",
            "system:serviceaccount:ns:",
            "system:serviceaccount:ns:a:b",
            "system:serviceaccount:Bad_NS:sa",
        ] {
            assert_eq!(service_account_of(bad), None, "{bad}");
        }
    }

    #[test]
    fn extra_keys_are_lower_cased_and_percent_decoded() {
        assert_eq!(extra_key("Scopes"), "scopes");
        assert_eq!(extra_key("example.com%2Fteam"), "example.com/team");
        assert_eq!(extra_key("bad%zzkey"), "bad%zzkey");
    }

    #[test]
    fn groups_without_a_user_are_refused() {
        let store = Store::new(16);
        for h in [
            headers(&[(GROUP, "devs")]),
            headers(&[(UID, "1234")]),
            headers(&[("impersonate-extra-scopes", "view")]),
        ] {
            assert!(matches!(
                resolve(&store, access::admin(), &h),
                Err(Refusal::Malformed(m)) if m.contains("without impersonating a user")
            ));
        }
    }

    #[test]
    fn an_unprivileged_requester_needs_the_impersonate_verb() {
        let store = Store::new(16);
        let sa = UserInfo::service_account("default", "robot");
        let e = match resolve(&store, sa, &headers(&[(USER, "bob")])) {
            Err(Refusal::Forbidden(e)) => Some(e),
            _ => None,
        }
        .expect("a 403 refusal");
        assert_eq!(e.code, 403);
        assert_eq!(
            e.message,
            "users \"bob\" is forbidden: User \"system:serviceaccount:default:robot\" cannot \
             impersonate resource \"users\" in API group \"\" at the cluster scope"
        );
    }
}

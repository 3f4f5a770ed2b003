//! Unit tests of `access`.

use super::*;

fn attrs(method: Method, path: &str, query: &[(&str, &str)]) -> Attributes {
    let q = query
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    request_attributes(&method, path, &q)
}

#[test]
fn request_info_like_kube() {
    let a = attrs(Method::GET, "/api/v1/namespaces/ns/secrets", &[]);
    assert_eq!(
        (a.verb.as_str(), a.resource.as_str(), a.namespace.as_str()),
        ("list", "secrets", "ns")
    );
    let a = attrs(
        Method::GET,
        "/apis/apps/v1/deployments",
        &[("watch", "true")],
    );
    assert_eq!(
        (a.verb.as_str(), a.group.as_str(), a.namespace.as_str()),
        ("watch", "apps", "")
    );
    let a = attrs(Method::DELETE, "/api/v1/namespaces/ns/secrets", &[]);
    assert_eq!(a.verb, "deletecollection");
    let a = attrs(
        Method::PATCH,
        "/apis/cluster.x-k8s.io/v1beta2/namespaces/n/machines/m/status",
        &[],
    );
    assert_eq!(
        (
            a.verb.as_str(),
            a.resource.as_str(),
            a.name.as_str(),
            a.subresource.as_str()
        ),
        ("patch", "machines", "m", "status")
    );
    // The namespace of a namespace is its name (kube's RequestInfoFactory).
    let a = attrs(Method::DELETE, "/api/v1/namespaces/run-1", &[]);
    assert_eq!(
        (
            a.verb.as_str(),
            a.resource.as_str(),
            a.name.as_str(),
            a.namespace.as_str()
        ),
        ("delete", "namespaces", "run-1", "run-1")
    );
    let a = attrs(Method::PUT, "/api/v1/namespaces/run-1/finalize", &[]);
    assert_eq!(
        (a.resource.as_str(), a.subresource.as_str()),
        ("namespaces", "finalize")
    );
    let a = attrs(
        Method::POST,
        "/api/v1/namespaces/ns/serviceaccounts/sa/token",
        &[],
    );
    assert_eq!(
        (a.verb.as_str(), a.subresource.as_str()),
        ("create", "token")
    );
    for p in [
        "/api",
        "/api/v1",
        "/apis",
        "/apis/apps",
        "/apis/apps/v1",
        "/version",
        "/openapi/v3",
    ] {
        let a = attrs(Method::GET, p, &[]);
        assert_eq!(a.non_resource_path.as_deref(), Some(p), "{p}");
        assert_eq!(a.verb, "get");
    }
}

#[test]
fn forbidden_messages_have_kube_apiservers_shape() {
    let sa = UserInfo::service_account("ci", "tool");
    let e = forbidden(
        &sa,
        &attrs(Method::GET, "/api/v1/namespaces/ns/secrets/s1", &[]),
        "",
    );
    assert_eq!(e.code, 403);
    assert_eq!(
        e.message,
        "secrets \"s1\" is forbidden: User \"system:serviceaccount:ci:tool\" cannot get resource \"secrets\" in API group \"\" in the namespace \"ns\""
    );
    assert_eq!(
        e.status()["details"],
        json!({"name": "s1", "kind": "secrets"})
    );
    let e = forbidden(
        &sa,
        &attrs(
            Method::GET,
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            &[],
        ),
        "",
    );
    assert_eq!(
        e.message,
        "customresourcedefinitions.apiextensions.k8s.io is forbidden: User \"system:serviceaccount:ci:tool\" cannot list resource \"customresourcedefinitions\" in API group \"apiextensions.k8s.io\" at the cluster scope"
    );
    let e = forbidden(
        &sa,
        &attrs(
            Method::PATCH,
            "/apis/cluster.x-k8s.io/v1beta2/namespaces/n/machines/m/status",
            &[],
        ),
        "",
    );
    assert!(
        e.message
            .starts_with("machines.cluster.x-k8s.io \"m\" is forbidden: "),
        "{}",
        e.message
    );
    assert!(
        e.message
            .contains("cannot patch resource \"machines/status\""),
        "{}",
        e.message
    );
    let e = forbidden(&sa, &attrs(Method::GET, "/metrics", &[]), "");
    assert_eq!(
        e.message,
        "forbidden: User \"system:serviceaccount:ci:tool\" cannot get path \"/metrics\""
    );
}

#[test]
fn rules_expand_to_single_permissions() {
    let rule = json!({"apiGroups": ["", "apps"], "resources": ["secrets", "deployments/status"], "verbs": ["get", "list"]});
    let all = expand_rule(&rule, "ns");
    assert_eq!(all.len(), 8);
    assert!(all.iter().any(|a| a.group == "apps"
        && a.resource == "deployments"
        && a.subresource == "status"
        && a.verb == "list"));
    let urls = expand_rule(
        &json!({"nonResourceURLs": ["/healthz"], "verbs": ["get"]}),
        "",
    );
    assert_eq!(urls, vec![Attributes::non_resource("get", "/healthz")]);
}

//! Unit tests of `rbac`.

use super::*;
use serde_json::json;

fn cluster_role(name: &str, labels: Value, rules: Value) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": name, "labels": labels}, "rules": rules})
}

fn crb(name: &str, role: &str, subjects: Value) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": subjects})
}

fn capi_snapshot(with_provider_role: bool) -> RbacSnapshot {
    let mut objs = vec![
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "capi-aggregated-manager-role"},
            "aggregationRule": {"clusterRoleSelectors": [
                {"matchLabels": {"cluster.x-k8s.io/aggregate-to-manager": "true"}}]},
            "rules": []}),
        crb(
            "capi-manager-rolebinding",
            "capi-aggregated-manager-role",
            json!([{"kind": "ServiceAccount", "name": "capi-manager", "namespace": "capi-system"}]),
        ),
        cluster_role(
            "unrelated",
            json!({}),
            json!([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]),
        ),
    ];
    if with_provider_role {
        objs.push(cluster_role(
            "capd-provider-aggregate",
            json!({"cluster.x-k8s.io/aggregate-to-manager": "true"}),
            json!([{"apiGroups": ["infrastructure.cluster.x-k8s.io"],
                    "resources": ["dockerclusters", "dockerclusters/status"],
                    "verbs": ["get", "list", "watch", "patch", "update"]}]),
        ));
    }
    RbacSnapshot::from_objects(&objs)
}

#[test]
fn aggregation_by_label_grants_and_removal_revokes() {
    let sa = UserInfo::service_account("capi-system", "capi-manager");
    let attrs = Attributes::resource(
        "patch",
        "infrastructure.cluster.x-k8s.io",
        "dockerclusters",
        "default",
    );
    let d = authorize(&capi_snapshot(true), &sa, &attrs);
    assert!(d.allowed);
    assert_eq!(
        d.reason,
        "RBAC: allowed by ClusterRoleBinding \"capi-manager-rolebinding\" of ClusterRole \"capi-aggregated-manager-role\" to ServiceAccount \"capi-manager/capi-system\""
    );
    let d = authorize(&capi_snapshot(false), &sa, &attrs);
    assert_eq!(
        d,
        Decision {
            allowed: false,
            reason: String::new()
        }
    );
}

#[test]
fn aggregate_cluster_roles_lists_rules_in_order_without_duplicates() {
    let roles = vec![
        json!({"kind": "ClusterRole", "metadata": {"name": "agg"},
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"a": "1"}}, {"matchLabels": {"b": "1"}}]}}),
        cluster_role(
            "z",
            json!({"a": "1"}),
            json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]),
        ),
        cluster_role(
            "y",
            json!({"a": "1", "b": "1"}),
            json!([{"verbs": ["list"], "apiGroups": [""], "resources": ["pods"]}]),
        ),
        cluster_role(
            "x",
            json!({"b": "1"}),
            json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]),
        ),
    ];
    let agg = aggregate_cluster_roles(&roles);
    assert_eq!(agg.len(), 1);
    assert_eq!(agg[0].0, "agg");
    assert_eq!(
        agg[0].1,
        vec![
            json!({"verbs": ["list"], "apiGroups": [""], "resources": ["pods"]}),
            json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}),
        ]
    );
}

#[test]
fn chained_aggregation_reaches_a_fixed_point() {
    let roles = vec![
        json!({"kind": "ClusterRole", "metadata": {"name": "top"},
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"to-top": "true"}}]}}),
        json!({"kind": "ClusterRole", "metadata": {"name": "mid", "labels": {"to-top": "true"}},
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"to-mid": "true"}}]}}),
        cluster_role(
            "leaf",
            json!({"to-mid": "true"}),
            json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"]}]),
        ),
    ];
    let agg = aggregate_cluster_roles(&roles);
    let top = agg.iter().find(|(n, _)| n == "top").unwrap();
    assert_eq!(top.1.len(), 1);
}

#[test]
fn service_account_groups_match_group_subjects() {
    let snap = RbacSnapshot::from_objects(&[
        cluster_role(
            "view-cm",
            json!({}),
            json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"]}]),
        ),
        crb(
            "all-sas",
            "view-cm",
            json!([{"kind": "Group", "name": "system:serviceaccounts:team"}]),
        ),
    ]);
    let attrs = Attributes::resource("get", "", "configmaps", "team");
    let d = authorize(&snap, &UserInfo::service_account("team", "bot"), &attrs);
    assert!(d.allowed);
    assert!(
        d.reason
            .ends_with("to Group \"system:serviceaccounts:team\""),
        "{}",
        d.reason
    );
    assert!(!authorize(&snap, &UserInfo::service_account("other", "bot"), &attrs).allowed);
    assert!(
        !authorize(
            &snap,
            &UserInfo::new("system:serviceaccount:team:bot", &[]),
            &attrs
        )
        .allowed
    );
    assert!(
        authorize(
            &snap,
            &UserInfo::from_name("system:serviceaccount:team:bot", &[]),
            &attrs
        )
        .allowed
    );
}

#[test]
fn namespaced_role_binding_to_cluster_role() {
    let snap = RbacSnapshot::from_objects(&[
        cluster_role(
            "edit-secrets",
            json!({}),
            json!([{"verbs": ["create", "update"], "apiGroups": [""], "resources": ["secrets"]}]),
        ),
        json!({"kind": "RoleBinding", "metadata": {"name": "rb", "namespace": "ns1"},
            "roleRef": {"kind": "ClusterRole", "name": "edit-secrets"},
            "subjects": [{"kind": "ServiceAccount", "name": "sa"}]}),
    ]);
    let sa = UserInfo::service_account("ns1", "sa");
    let d = authorize(
        &snap,
        &sa,
        &Attributes::resource("create", "", "secrets", "ns1"),
    );
    assert_eq!(
        d.reason,
        "RBAC: allowed by RoleBinding \"rb/ns1\" of ClusterRole \"edit-secrets\" to ServiceAccount \"sa/ns1\""
    );
    assert!(
        !authorize(
            &snap,
            &sa,
            &Attributes::resource("create", "", "secrets", "ns2")
        )
        .allowed
    );
    assert!(
        !authorize(
            &snap,
            &sa,
            &Attributes::resource("create", "", "secrets", "")
        )
        .allowed
    );
    assert!(
        !authorize(
            &snap,
            &sa,
            &Attributes::resource("delete", "", "secrets", "ns1")
        )
        .allowed
    );
}

#[test]
fn role_binding_to_role_and_missing_roles() {
    let snap = RbacSnapshot::from_objects(&[
        json!({"kind": "Role", "metadata": {"name": "r", "namespace": "ns"},
            "rules": [{"verbs": ["get"], "apiGroups": ["example.com"], "resources": ["widgets"], "resourceNames": ["w1"]}]}),
        json!({"kind": "RoleBinding", "metadata": {"name": "rb", "namespace": "ns"},
            "roleRef": {"kind": "Role", "name": "r"}, "subjects": [{"kind": "User", "name": "alice"}]}),
        json!({"kind": "RoleBinding", "metadata": {"name": "rb2", "namespace": "ns"},
            "roleRef": {"kind": "Role", "name": "gone"}, "subjects": [{"kind": "User", "name": "alice"}]}),
    ]);
    let alice = UserInfo::new("alice", &[]);
    let mut attrs = Attributes::resource("get", "example.com", "widgets", "ns");
    attrs.name = "w1".into();
    let d = authorize(&snap, &alice, &attrs);
    assert!(d.allowed);
    assert_eq!(
        d.reason,
        "RBAC: allowed by RoleBinding \"rb/ns\" of Role \"r\" to User \"alice\""
    );
    attrs.name = "w2".into();
    let d = authorize(&snap, &alice, &attrs);
    assert_eq!(
        d,
        Decision {
            allowed: false,
            reason: "RBAC: role.rbac.authorization.k8s.io \"gone\" not found".into()
        }
    );
    assert!(!authorize(&snap, &UserInfo::new("bob", &[]), &attrs).allowed);
}

#[test]
fn rule_matching_wildcards_subresources_and_urls() {
    let rule = json!({"verbs": ["get"], "apiGroups": ["*"], "resources": ["*/status"]});
    let mut a = Attributes::resource("get", "example.com", "widgets", "ns");
    assert!(!rule_allows(&a, &rule));
    a.subresource = "status".into();
    assert!(rule_allows(&a, &rule));
    a.subresource = "scale".into();
    assert!(!rule_allows(&a, &rule));
    let exact =
        json!({"verbs": ["*"], "apiGroups": ["example.com"], "resources": ["widgets/scale"]});
    assert!(rule_allows(&a, &exact));
    let urls = json!({"verbs": ["get"], "nonResourceURLs": ["/healthz", "/apis/*"]});
    assert!(rule_allows(
        &Attributes::non_resource("get", "/healthz"),
        &urls
    ));
    assert!(rule_allows(
        &Attributes::non_resource("get", "/apis/example.com"),
        &urls
    ));
    assert!(!rule_allows(
        &Attributes::non_resource("get", "/api"),
        &urls
    ));
    assert!(!rule_allows(
        &Attributes::non_resource("post", "/healthz"),
        &urls
    ));
    // A resource rule never grants a non-resource URL.
    assert!(!rule_allows(
        &Attributes::non_resource("get", "/healthz"),
        &exact
    ));
}

#[test]
fn review_spec_attributes() {
    let a = Attributes::from_review_spec(&json!({"resourceAttributes": {"verb": "list",
        "group": "cluster.x-k8s.io", "resource": "machines", "subresource": "status", "namespace": "n"}}));
    assert_eq!(a.resource, "machines");
    assert_eq!(a.subresource, "status");
    let n = Attributes::from_review_spec(
        &json!({"nonResourceAttributes": {"verb": "get", "path": "/version"}}),
    );
    assert_eq!(n.non_resource_path.as_deref(), Some("/version"));
    assert_eq!(
        parse_service_account("system:serviceaccount:a:b"),
        Some(("a", "b"))
    );
    assert_eq!(parse_service_account("system:serviceaccount:a"), None);
    assert_eq!(parse_service_account("alice"), None);
}

#[test]
fn missing_cluster_role_is_reported() {
    let snap =
        RbacSnapshot::from_objects(&[crb("b", "nope", json!([{"kind": "User", "name": "u"}]))]);
    let d = authorize(
        &snap,
        &UserInfo::new("u", &[]),
        &Attributes::resource("get", "", "pods", ""),
    );
    assert_eq!(
        d.reason,
        "RBAC: clusterrole.rbac.authorization.k8s.io \"nope\" not found"
    );
}

#[test]
fn rules_for_lists_what_a_user_may_do() {
    let snap = RbacSnapshot::from_objects(&[
        cluster_role(
            "health",
            json!({}),
            json!([{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]),
        ),
        cluster_role(
            "read",
            json!({}),
            json!([{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}]),
        ),
        crb(
            "h",
            "health",
            json!([{"kind": "Group", "name": "system:authenticated"}]),
        ),
        json!({"kind": "RoleBinding", "metadata": {"name": "r", "namespace": "ns"},
            "roleRef": {"kind": "ClusterRole", "name": "read"}, "subjects": [{"kind": "ServiceAccount", "name": "sa"}]}),
        json!({"kind": "RoleBinding", "metadata": {"name": "gone", "namespace": "ns"},
            "roleRef": {"kind": "Role", "name": "missing"}, "subjects": [{"kind": "ServiceAccount", "name": "sa"}]}),
    ]);
    let sa = UserInfo::service_account("ns", "sa");
    let (res, non_res, errs) = rules_for(&snap, &sa, "ns");
    assert_eq!(
        res,
        vec![json!({"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]})]
    );
    assert_eq!(
        non_res,
        vec![json!({"verbs": ["get"], "nonResourceURLs": ["/healthz"]})]
    );
    assert_eq!(
        errs,
        vec!["role.rbac.authorization.k8s.io \"missing\" not found".to_string()]
    );
    let (res, _, _) = rules_for(&snap, &sa, "other");
    assert!(res.is_empty());
}

#[test]
fn bootstrap_policy_and_privileged_group() {
    let snap = RbacSnapshot::from_objects(&bootstrap_policy());
    let sa = UserInfo::service_account("capi-system", "capi-manager");
    let d = authorize(
        &snap,
        &sa,
        &Attributes::non_resource("get", "/apis/cluster.x-k8s.io"),
    );
    assert_eq!(
        d.reason,
        "RBAC: allowed by ClusterRoleBinding \"system:discovery\" of ClusterRole \"system:discovery\" to Group \"system:authenticated\""
    );
    let create_ssar = Attributes::resource(
        "create",
        "authorization.k8s.io",
        "selfsubjectaccessreviews",
        "",
    );
    assert!(authorize(&snap, &sa, &create_ssar).allowed);
    let secrets = Attributes::resource("list", "", "secrets", "default");
    assert!(!authorize(&snap, &sa, &secrets).allowed);
    let admin = UserInfo::new(
        "kubernetes-admin",
        &[PRIVILEGED_GROUP, "system:authenticated"],
    );
    assert!(authorize(&snap, &admin, &secrets).allowed);
    let direct = authorize_request(&RbacSnapshot::default(), &admin, &secrets);
    assert_eq!(
        direct,
        Decision {
            allowed: true,
            reason: String::new()
        }
    );
    assert!(!authorize_request(&RbacSnapshot::default(), &sa, &secrets).allowed);
    // CRD authors aggregate into view/edit/admin by label.
    let mut objs = bootstrap_policy();
    objs.push(cluster_role(
        "widgets-view",
        json!({"rbac.authorization.k8s.io/aggregate-to-view": "true"}),
        json!([{"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["get"]}]),
    ));
    objs.push(json!({"kind": "RoleBinding", "metadata": {"name": "v", "namespace": "ns"},
        "roleRef": {"kind": "ClusterRole", "name": "admin"}, "subjects": [{"kind": "User", "name": "u"}]}));
    let d = authorize(
        &RbacSnapshot::from_objects(&objs),
        &UserInfo::new("u", &[]),
        &Attributes::resource("get", "example.com", "widgets", "ns"),
    );
    assert!(
        d.allowed,
        "view aggregates into edit, edit into admin: {}",
        d.reason
    );
}

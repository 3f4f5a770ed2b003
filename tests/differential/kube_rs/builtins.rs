//! Built-in kinds through kube-rs.

use super::*;

pub(super) async fn builtins(rec: &mut Recorder) {
    let cms = format!("/api/v1/namespaces/{NS}/configmaps");
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm1", "finalizers": ["x.io/one", "x.io/two"], "labels": {"a": "1", "b": "2"}}, "data": {"k1": "v1", "k2": "v2"}});
    rec.send(post(&cms, cm).label("create a ConfigMap")).await;
    rec.send(patch(&format!("{cms}/cm1"), "strategic", json!({"data": {"k1": "v1b", "k2": null}, "metadata": {"$deleteFromPrimitiveList/finalizers": ["x.io/one"], "$setElementOrder/finalizers": ["x.io/two"], "finalizers": ["x.io/two"], "labels": {"b": null}}})).label("strategic merge patch with kubectl's directives"))
        .await;
    rec.send(
        patch(
            &format!("{cms}/cm1"),
            "json",
            json!([{"op": "remove", "path": "/metadata/finalizers"}]),
        )
        .label("remove the ConfigMap's finalizers"),
    )
    .await;
    rec.send(post(&format!("{cms}?fieldValidation=Strict"), json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm2"}, "data": {"k": "v"}, "bogus": 1})).label("create a ConfigMap with an unknown field, Strict"))
        .await;
    rec.send(post(&format!("{cms}?fieldValidation=Warn"), json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm3"}, "data": {"k": "v"}, "bogus": 1})).label("create a ConfigMap with an unknown field, Warn"))
        .await;
    rec.send(post(&cms, json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm4"}, "data": {"k": 1}})).label("create a ConfigMap with a number in data"))
        .await;
    rec.send(post(&cms, json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm5"}, "data": {"k": "v"}, "immutable": true})).label("create an immutable ConfigMap"))
        .await;
    rec.send(
        patch(&format!("{cms}/cm5"), "merge", json!({"data": {"k": "w"}}))
            .label("change an immutable ConfigMap"),
    )
    .await;
    let secrets = format!("/api/v1/namespaces/{NS}/secrets");
    rec.send(post(&secrets, json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s1"}, "stringData": {"a": "b"}, "type": "Opaque"})).label("create a Secret with stringData"))
        .await;
    rec.send(post(&secrets, json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s2"}, "data": {"a": "not base64!"}})).label("create a Secret with data that is not base64"))
        .await;
    let deps = format!("/apis/apps/v1/namespaces/{NS}/deployments");
    let dep = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d1"},
        "spec": {"selector": {"matchLabels": {"app": "d"}}, "template": {"metadata": {"labels": {"app": "d"}},
            "spec": {"containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 80}]}]}}}});
    rec.send(post(&deps, dep).label("create a Deployment (defaults)"))
        .await;
    rec.send(
        patch(
            &format!("{deps}/d1?fieldManager=sidecar"),
            "apply",
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d1"},
        "spec": {"template": {"spec": {"containers": [{"name": "side", "image": "busybox"}]}}}}),
        )
        .label("apply a second container to the Deployment"),
    )
    .await;
    rec.send(
        patch(
            &format!("{deps}/d1?fieldManager=typo"),
            "apply",
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d1"},
        "spec": {"replicass": 2}}),
        )
        .label("apply an unknown field to the Deployment"),
    )
    .await;
    rec.send(get(&format!("{deps}/d1/scale")).label("GET the Deployment's scale"))
        .await;
    rec.send(post(&deps, json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d2"}, "spec": {"replicas": "two"}})).label("create a Deployment with a string for replicas"))
        .await;
    rec.send(post(&deps, json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d3"}, "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": {"metadata": {"labels": {"app": "y"}}, "spec": {"containers": []}}}})).label("create an invalid Deployment"))
        .await;
    rec.send(post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "spec": {"resourceAttributes": {"verb": "create", "group": GROUP, "resource": "widgets", "namespace": NS}}})).label("self subject access review"))
        .await;
    rec.send(
        post(
            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}),
        )
        .focus(|b| {
            // The users differ (a client certificate in system:masters, a bearer token).
            let mut b = b.clone();
            b["status"] = json!("<user>");
            b
        })
        .label("self subject review (user left out)"),
    )
    .await;
    let leases = format!("/apis/coordination.k8s.io/v1/namespaces/{NS}/leases");
    rec.send(post(&leases, json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"}, "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15}})).label("create a Lease"))
        .await;
    rec.send(post(&format!("/apis/events.k8s.io/v1/namespaces/{NS}/events"), json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e1"},
        "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "diff/c", "reportingInstance": "i", "action": "Test", "reason": "Tested", "type": "Normal",
        "regarding": {"kind": "Widget", "name": "w1", "namespace": NS, "apiVersion": "diff.example.com/v1"}, "note": "hello"})).label("create an events.k8s.io Event"))
        .await;
    rec.send(get(&format!("/api/v1/namespaces/{NS}/events/e1")).label("read that Event as v1"))
        .await;
    rec.send(
        get(&format!("/api/v1/namespaces/{NS}/serviceaccounts/default"))
            .until(WAIT, code(200))
            .focus(|b| {
                let mut b = b.clone();
                b["secrets"] = json!("<secrets>");
                b
            })
            .label("the namespace's default ServiceAccount"),
    )
    .await;
}

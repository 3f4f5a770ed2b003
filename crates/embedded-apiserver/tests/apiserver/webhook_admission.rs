//! Admission webhooks in detail against a real HTTPS webhook server: subresources, apply,
//! delete, dry run, match policy, selectors and conditions, reinvocation, warnings, scale, and
//! the configurations' own defaulting and validation.

use axum::http::Method;
use serde_json::json;

use super::common::{APPLY, H, JSON, JSONPATCH, MERGE};
use super::webhook_support::{WebhookServer, gadget_rules, hook};
use super::webhooks::{G1, GA, MWC, VWC, configure, gadget_v1, gadget_v1alpha1, setup, url_config};

#[tokio::test]
async fn subresource_rules_status_updates_and_patches_as_update() {
    let (h, hooks) = setup().await;
    let main_only = hook(
        "main.example.com",
        url_config(&hooks, "/validate"),
        json!([{"operations": ["*"], "apiGroups": ["conv.example.com"], "apiVersions": ["*"], "resources": ["gadgets"]}]),
    );
    let status_only = hook(
        "status.example.com",
        url_config(&hooks, "/allow-status"),
        json!([{"operations": ["UPDATE"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*/status"]}]),
    );
    configure(&h, VWC, "subs", vec![main_only, status_only]).await;
    assert_eq!(h.post(G1, gadget_v1("s", None)).await.code, 201);
    assert_eq!(hooks.on("/validate").len(), 1);
    assert_eq!(hooks.on("/allow-status").len(), 0);
    let r = h
        .patch(
            &format!("{G1}/s/status"),
            MERGE,
            json!({"status": {"ready": true}}),
        )
        .await;
    assert_eq!(r.code, 200, "{}", r.body);
    let status_calls = hooks.on("/allow-status");
    assert_eq!(
        status_calls.len(),
        1,
        "only the */status rule matches a status write"
    );
    let req = &status_calls[0].body["request"];
    assert_eq!(req["subResource"], "status");
    assert_eq!(req["requestSubResource"], "status");
    assert_eq!(req["operation"], "UPDATE");
    assert_eq!(req["options"]["kind"], "UpdateOptions");
    assert_eq!(req["object"]["status"]["ready"], true);
    assert_eq!(
        hooks.on("/validate").len(),
        1,
        "gadgets (no /*) does not match status"
    );
    // A merge patch of the main resource is an UPDATE with the old object.
    let r = h
        .patch(
            &format!("{G1}/s"),
            MERGE,
            json!({"spec": {"paint": {"color": "green"}}}),
        )
        .await;
    assert_eq!(r.code, 200, "{}", r.body);
    let req = &hooks.on("/validate")[1].body["request"];
    assert_eq!(req["operation"], "UPDATE");
    assert_eq!(req["oldObject"]["spec"]["dimensions"]["size"], "small");
    assert_eq!(req["object"]["spec"]["paint"]["color"], "green");
    // A JSON patch to red is denied.
    let r = h
        .patch(
            &format!("{G1}/s"),
            JSONPATCH,
            json!([{"op": "replace", "path": "/spec/paint/color", "value": "red"}]),
        )
        .await;
    assert_eq!(r.code, 403);
}

#[tokio::test]
async fn server_side_apply_create_is_create_then_update() {
    let (h, hooks) = setup().await;
    configure(
        &h,
        VWC,
        "ssa",
        vec![hook(
            "ssa.example.com",
            url_config(&hooks, "/validate"),
            gadget_rules(&["v1"]),
        )],
    )
    .await;
    let body = serde_json::to_vec(&gadget_v1("applied", Some("green"))).unwrap();
    let r = h
        .raw(
            Method::PATCH,
            &format!("{G1}/applied?fieldManager=test"),
            APPLY,
            JSON,
            body,
        )
        .await;
    assert_eq!(r.code, 201, "{}", r.body);
    let body = serde_json::to_vec(&gadget_v1("applied", Some("red"))).unwrap();
    let r = h
        .raw(
            Method::PATCH,
            &format!("{G1}/applied?fieldManager=test"),
            APPLY,
            JSON,
            body,
        )
        .await;
    assert_eq!(r.code, 403, "{}", r.body);
    let ops: Vec<String> = hooks
        .on("/validate")
        .iter()
        .map(|c| c.body["request"]["operation"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ops, ["CREATE", "UPDATE"]);
    assert_eq!(
        hooks.on("/validate")[0].body["request"]["options"]["fieldManager"],
        "test"
    );
}

#[tokio::test]
async fn delete_admission_sees_the_old_object_and_patches_fail() {
    let (h, hooks) = setup().await;
    assert_eq!(h.post(G1, gadget_v1("d", None)).await.code, 201);
    let del_rule = json!([{"operations": ["DELETE"], "apiGroups": ["conv.example.com"], "apiVersions": ["*"], "resources": ["gadgets"]}]);
    configure(
        &h,
        VWC,
        "del",
        vec![hook(
            "del.example.com",
            url_config(&hooks, "/record"),
            del_rule.clone(),
        )],
    )
    .await;
    configure(
        &h,
        MWC,
        "delpatch",
        vec![hook(
            "delpatch.example.com",
            url_config(&hooks, "/add-finalizer"),
            del_rule,
        )],
    )
    .await;
    let r = h.delete(&format!("{G1}/d")).await;
    assert_eq!(r.code, 500, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "Internal error occurred: admission webhook \"delpatch.example.com\" attempted to modify the object, which is not supported for this operation"
    );
    assert_eq!(h.get(&format!("{G1}/d")).await.code, 200, "not deleted");
    h.delete(&format!("{MWC}/delpatch")).await;
    let r = h.delete(&format!("{G1}/d")).await;
    assert_eq!(r.code, 200, "{}", r.body);
    let req = &hooks.on("/record")[0].body["request"];
    assert_eq!(req["operation"], "DELETE");
    assert!(req["object"].is_null());
    assert_eq!(req["oldObject"]["metadata"]["name"], "d");
    assert_eq!(req["options"]["kind"], "DeleteOptions");
}

#[tokio::test]
async fn dry_run_reaches_webhooks_and_stores_nothing() {
    let (h, hooks) = setup().await;
    configure(
        &h,
        VWC,
        "dry",
        vec![hook(
            "dry.example.com",
            url_config(&hooks, "/reject-dry-run"),
            gadget_rules(&["v1"]),
        )],
    )
    .await;
    let r = h
        .post(&format!("{G1}?dryRun=All"), gadget_v1("dry", None))
        .await;
    assert_eq!(r.code, 403, "{}", r.body);
    let seen = &hooks.on("/reject-dry-run")[0].body["request"];
    assert_eq!(seen["dryRun"], true);
    assert_eq!(seen["options"]["dryRun"], json!(["All"]));
    h.delete(&format!("{VWC}/dry")).await;
    configure(
        &h,
        MWC,
        "drym",
        vec![hook(
            "drym.example.com",
            url_config(&hooks, "/mutate"),
            gadget_rules(&["v1"]),
        )],
    )
    .await;
    let r = h
        .post(&format!("{G1}?dryRun=All"), gadget_v1("dry", None))
        .await;
    assert_eq!(r.code, 201);
    assert_eq!(r.body["spec"]["paint"]["color"], "blue");
    assert_eq!(h.get(&format!("{G1}/dry")).await.code, 404);
}

#[tokio::test]
async fn equivalent_match_policy_converts_for_the_webhook_and_back() {
    let (h, hooks) = setup().await;
    configure(
        &h,
        MWC,
        "eq",
        vec![
            hook(
                "eq.example.com",
                url_config(&hooks, "/mutate"),
                gadget_rules(&["v1"]),
            ),
            hook(
                "eq-next.example.com",
                url_config(&hooks, "/after"),
                gadget_rules(&["v1"]),
            ),
        ],
    )
    .await;
    let r = h.post(GA, gadget_v1alpha1("old", "")).await;
    assert_eq!(r.code, 201, "{}", r.body);
    // The webhook defaulted paint.color at v1; the client reads its own shape back.
    assert_eq!(r.body["apiVersion"], "conv.example.com/v1alpha1");
    assert_eq!(r.body["spec"]["color"], "");
    assert_eq!(r.body["metadata"]["labels"]["mutated-by"], "webhook");
    // After the patch the object was defaulted at v1 (paint.finish): the next webhook sees it.
    let next = &hooks.on("/after")[0].body["request"]["object"];
    assert_eq!(next["spec"]["paint"]["finish"], "matte");
    assert_eq!(next["metadata"]["labels"]["mutated-by"], "webhook");
    let req = &hooks.on("/mutate")[0].body["request"];
    assert_eq!(req["kind"]["version"], "v1");
    assert_eq!(req["requestKind"]["version"], "v1alpha1");
    assert_eq!(req["resource"]["version"], "v1");
    assert_eq!(req["requestResource"]["version"], "v1alpha1");
    assert_eq!(req["object"]["apiVersion"], "conv.example.com/v1");
    assert_eq!(req["object"]["spec"]["dimensions"]["size"], "large");
    // Exact does not match another version.
    let mut exact = hook(
        "exact.example.com",
        url_config(&hooks, "/record"),
        gadget_rules(&["v1"]),
    );
    exact["matchPolicy"] = json!("Exact");
    configure(&h, VWC, "exact", vec![exact]).await;
    assert_eq!(h.post(GA, gadget_v1alpha1("old2", "x")).await.code, 201);
    assert!(hooks.on("/record").is_empty());
    assert_eq!(h.post(G1, gadget_v1("new", None)).await.code, 201);
    assert_eq!(hooks.on("/record").len(), 1);
}

#[tokio::test]
async fn selectors_and_match_conditions() {
    let (h, hooks) = setup().await;
    let ns = h
        .post(
            "/api/v1/namespaces",
            json!({"metadata": {"name": "team-a", "labels": {"team": "a"}}}),
        )
        .await;
    assert_eq!(ns.code, 201);
    let mut by_ns = hook(
        "ns.example.com",
        url_config(&hooks, "/ns"),
        gadget_rules(&["*"]),
    );
    by_ns["namespaceSelector"] = json!({"matchLabels": {"team": "a"}});
    let mut by_label = hook(
        "obj.example.com",
        url_config(&hooks, "/obj"),
        gadget_rules(&["*"]),
    );
    by_label["objectSelector"] =
        json!({"matchExpressions": [{"key": "watched", "operator": "Exists"}]});
    let mut by_cel = hook(
        "cel.example.com",
        url_config(&hooks, "/cel"),
        gadget_rules(&["*"]),
    );
    by_cel["matchConditions"] =
        json!([{"name": "named-x", "expression": "object.metadata.name.startsWith('x')"}]);
    configure(&h, VWC, "sel", vec![by_ns, by_label, by_cel]).await;
    assert_eq!(h.post(G1, gadget_v1("plain", None)).await.code, 201);
    let mut labelled = gadget_v1("xlabelled", None);
    labelled["metadata"]["labels"] = json!({"watched": "1"});
    assert_eq!(h.post(G1, labelled).await.code, 201);
    let r = h
        .post(
            "/apis/conv.example.com/v1/namespaces/team-a/gadgets",
            gadget_v1("in-a", None),
        )
        .await;
    assert_eq!(r.code, 201, "{}", r.body);
    let names = |p: &str| -> Vec<String> {
        hooks
            .on(p)
            .iter()
            .map(|c| {
                c.body["request"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
            .collect()
    };
    assert_eq!(names("/ns"), ["in-a"]);
    assert_eq!(names("/obj"), ["xlabelled"]);
    assert_eq!(names("/cel"), ["xlabelled"]);
    // An expression that errors, failurePolicy Fail: 403 with kube's wording.
    let mut broken = hook(
        "broken.example.com",
        url_config(&hooks, "/broken"),
        gadget_rules(&["*"]),
    );
    broken["matchConditions"] = json!([{"name": "nope", "expression": "object.spec.nothing == 1"}]);
    configure(&h, VWC, "broken", vec![broken]).await;
    let r = h.post(G1, gadget_v1("z", None)).await;
    assert_eq!(r.code, 403, "{}", r.body);
    assert!(r.body["message"].as_str().unwrap().starts_with("gadgets.conv.example.com \"z\" is forbidden: expression 'object.spec.nothing == 1' resulted in error"), "{}", r.body);
}

#[tokio::test]
async fn reinvocation_if_needed_runs_once_more() {
    let (h, hooks) = setup().await;
    let mut first = hook(
        "a-first.example.com",
        url_config(&hooks, "/set-size-large"),
        gadget_rules(&["v1"]),
    );
    first["reinvocationPolicy"] = json!("IfNeeded");
    let second = hook(
        "b-second.example.com",
        url_config(&hooks, "/mutate"),
        gadget_rules(&["v1"]),
    );
    // Configurations run in name order: "a" then "b".
    configure(&h, MWC, "b", vec![second]).await;
    configure(&h, MWC, "a", vec![first]).await;
    let r = h.post(G1, gadget_v1("re", None)).await;
    assert_eq!(r.code, 201, "{}", r.body);
    assert_eq!(
        hooks.on("/set-size-large").len(),
        2,
        "reinvoked after the later patch"
    );
    assert_eq!(hooks.on("/mutate").len(), 1, "Never is not reinvoked");
    let second_call = &hooks.on("/set-size-large")[1].body["request"]["object"];
    assert_eq!(second_call["metadata"]["labels"]["mutated-by"], "webhook");
    assert_eq!(r.body["metadata"]["labels"]["second"], "yes");
}

#[tokio::test]
async fn warnings_become_headers_even_on_denial() {
    let (h, hooks) = setup().await;
    configure(
        &h,
        VWC,
        "warn",
        vec![hook(
            "warn.example.com",
            url_config(&hooks, "/warn"),
            gadget_rules(&["v1"]),
        )],
    )
    .await;
    let r = h.post(G1, gadget_v1("w", None)).await;
    assert_eq!(r.code, 201);
    assert_eq!(
        r.header("warning"),
        "299 - \"first warning\", 299 - \"second \\\"quoted\\\" warning\""
    );
    configure(
        &h,
        VWC,
        "warn2",
        vec![hook(
            "warn2.example.com",
            url_config(&hooks, "/warn-deny"),
            gadget_rules(&["v1"]),
        )],
    )
    .await;
    let r = h.post(G1, gadget_v1("w2", None)).await;
    assert_eq!(r.code, 403);
    assert!(
        r.header("warning")
            .contains("299 - \"denied with a warning\""),
        "{:?}",
        r.headers
    );
}

#[tokio::test]
async fn scale_subresource_admission_sees_a_scale() {
    let h = H::widgets().await;
    let hooks = WebhookServer::start().await;
    let rules = json!([{"operations": ["UPDATE"], "apiGroups": ["example.com"], "apiVersions": ["v1"], "resources": ["widgets/scale"]}]);
    configure(
        &h,
        VWC,
        "scale",
        vec![hook(
            "scale.example.com",
            url_config(&hooks, "/record"),
            rules,
        )],
    )
    .await;
    h.widget("w", json!({"size": "small", "replicas": 1})).await;
    let r = h
        .patch(
            "/apis/example.com/v1/namespaces/default/widgets/w/scale",
            MERGE,
            json!({"spec": {"replicas": 3}}),
        )
        .await;
    assert_eq!(r.code, 200, "{}", r.body);
    let calls = hooks.on("/record");
    assert_eq!(calls.len(), 1);
    let req = &calls[0].body["request"];
    assert_eq!(req["subResource"], "scale");
    assert_eq!(
        req["kind"],
        json!({"group": "autoscaling", "version": "v1", "kind": "Scale"})
    );
    assert_eq!(req["object"]["spec"]["replicas"], 3);
    assert_eq!(req["oldObject"]["spec"]["replicas"], 1);
}

#[tokio::test]
async fn configurations_are_defaulted_validated_and_exempt() {
    let (h, hooks) = setup().await;
    let mut bad = hook("foo", url_config(&hooks, "/x"), gadget_rules(&["v1"]));
    bad["timeoutSeconds"] = json!(31);
    let r = h
        .post(VWC, json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "bad"}, "webhooks": [bad]}))
        .await;
    assert_eq!(r.code, 422, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "ValidatingWebhookConfiguration.admissionregistration.k8s.io \"bad\" is invalid: [webhooks[0].name: Invalid value: \"foo\": should be a domain with at least three segments separated by dots, webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds]"
    );
    // A catch-all webhook that denies everything does not see configurations.
    let all = json!([{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*/*"]}]);
    configure(
        &h,
        VWC,
        "all",
        vec![hook(
            "all.example.com",
            url_config(&hooks, "/deny-bare"),
            all,
        )],
    )
    .await;
    let stored = h.get(&format!("{VWC}/all")).await.body;
    let w = &stored["webhooks"][0];
    assert_eq!(
        (
            w["failurePolicy"].as_str(),
            w["matchPolicy"].as_str(),
            w["timeoutSeconds"].as_i64()
        ),
        (Some("Fail"), Some("Equivalent"), Some(10))
    );
    assert_eq!(w["rules"][0]["scope"], "*");
    configure(&h, MWC, "still-allowed", vec![]).await;
    assert_eq!(h.delete(&format!("{VWC}/all")).await.code, 200);
    assert!(hooks.on("/deny-bare").is_empty());
}

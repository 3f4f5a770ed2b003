//! Unit tests of `admission`.

use super::*;
use serde_json::{Value, json};

#[test]
fn rejection_texts_and_codes() {
    let e = rejection("v.x.io", None);
    assert_eq!(e.code, 400);
    assert_eq!(
        e.message,
        "admission webhook \"v.x.io\" denied the request without explanation"
    );
    assert!(e.status().get("reason").is_none());
    let e = rejection(
        "v.x.io",
        Some(&json!({"code": 403, "reason": "Forbidden", "message": "no"})),
    );
    assert_eq!((e.code, e.reason.as_ref()), (403, "Forbidden"));
    assert_eq!(
        e.message,
        "admission webhook \"v.x.io\" denied the request: no"
    );
    let e = rejection("v.x.io", Some(&json!({"code": 200, "reason": "why"})));
    assert_eq!(e.code, 400);
    assert_eq!(
        e.message,
        "admission webhook \"v.x.io\" denied the request: why"
    );
    let e = rejection(
        "v.x.io",
        Some(&json!({"code": 422, "reason": "Invalid", "message": "m",
        "details": {"kind": "Widget", "causes": [{"field": "spec.a"}]}})),
    );
    assert_eq!(e.status()["details"]["causes"][0]["field"], "spec.a");
}

#[test]
fn dry_run_needs_side_effects_none() {
    let cfg = json!({"metadata": {"name": "c"}, "webhooks": [{"name": "a.b.c",
        "clientConfig": {"url": "https://x/y"}, "rules": [], "admissionReviewVersions": ["v1"]}]});
    let mut w =
        (*super::super::config::Configs::parse([(false, &cfg)].into_iter()).validating[0]).clone();
    let attrs = Attributes {
        operation: "CREATE",
        version: "v1".into(),
        subresource: String::new(),
        name: "n".into(),
        namespace: String::new(),
        dry_run: true,
        options: Value::Null,
    };
    // sideEffects nil: a calling error (failurePolicy decides).
    assert!(
        matches!(dry_run_check(&w, &attrs), Err(HookError::Calling(m)) if m == "failed calling webhook \"a.b.c\": Webhook SideEffects is nil")
    );
    // Some/Unknown (only storable through v1beta1): kube's 400, whatever the failurePolicy.
    w.side_effects = Some("Some".into());
    w.fail_open = true;
    match dry_run_check(&w, &attrs) {
        Err(HookError::Status(e)) => {
            assert_eq!(e.code, 400);
            assert_eq!(
                e.message,
                "admission webhook \"a.b.c\" does not support dry run"
            );
        }
        _ => panic!("expected a 400"),
    }
    w.side_effects = Some("NoneOnDryRun".into());
    assert!(dry_run_check(&w, &attrs).is_ok());
}

#[test]
fn response_verification() {
    let av = "admission.k8s.io/v1";
    let ok = br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"u","allowed":true}}"#;
    assert!(parse_response(ok, av, "u", true).unwrap().allowed);
    let err = |b: &[u8], mutating: bool| parse_response(b, av, "u", mutating).err().unwrap();
    assert_eq!(
        err(br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"x","allowed":true}}"#, true),
        "received invalid webhook response: expected response.uid=\"u\", got \"x\""
    );
    assert_eq!(
        err(br#"{"response":{"uid":"u","allowed":true}}"#, true),
        "received invalid webhook response: expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got /, Kind="
    );
    assert_eq!(
        err(br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"u","allowed":true,"patch":"W10="}}"#, true),
        "received invalid webhook response: webhook returned response.patch but not response.patchType"
    );
    assert_eq!(
        err(br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"u","allowed":true,"patch":"W10=","patchType":"JSONPatch"}}"#, false),
        "received invalid webhook response: validating webhook may not return response.patch"
    );
    assert_eq!(
        err(b"{}", true),
        "received invalid webhook response: webhook response was absent"
    );
    assert!(err(b"garbage", true).starts_with("couldn't get version/kind; json parse error"));
    // v1beta1: no uid or GVK checks.
    let beta = br#"{"response":{"uid":"x","allowed":true,"patch":"W10="}}"#;
    let r = parse_response(beta, "admission.k8s.io/v1beta1", "u", true).unwrap();
    assert_eq!(r.patch_type.as_deref(), Some("JSONPatch"));
}

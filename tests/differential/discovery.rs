//! Discovery and the documents around it, before any CRD: `/version`, `/api`, `/apis` (legacy
//! and aggregated, with the Accept headers kubectl and client-go send), every group and group
//! version either server lists, the OpenAPI v3 index, health checks. The CRD's own discovery
//! and OpenAPI documents are compared in the kube-rs trace, once it exists.

use std::collections::BTreeSet;

use super::harness::{Recorder, get};

/// What kubectl ≥ 1.30 and client-go send for `/api` and `/apis`.
pub const ACCEPT_AGGREGATED: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";

pub async fn run(rec: &mut Recorder) {
    rec.trace("discovery");
    rec.send(get("/version")).await;
    rec.send(get("/api").accept("application/json")).await;
    rec.send(get("/api/v1").accept("application/json")).await;
    let (a, b) = rec.send(get("/apis").accept("application/json")).await;
    rec.send(
        get("/api")
            .accept(ACCEPT_AGGREGATED)
            .label("GET /api (aggregated)"),
    )
    .await;
    rec.send(
        get("/apis")
            .accept(ACCEPT_AGGREGATED)
            .label("GET /apis (aggregated)"),
    )
    .await;
    // Every group and group version either server lists.
    let mut groups = BTreeSet::new();
    let mut versions = BTreeSet::new();
    for r in [&a, &b] {
        for g in r.body["groups"].as_array().into_iter().flatten() {
            if let Some(name) = g["name"].as_str() {
                groups.insert(name.to_string());
            }
            for v in g["versions"].as_array().into_iter().flatten() {
                if let Some(gv) = v["groupVersion"].as_str() {
                    versions.insert(gv.to_string());
                }
            }
        }
    }
    assert!(
        groups.contains("apps") && versions.contains("apps/v1"),
        "no groups in /apis: {a:?} {b:?}"
    );
    for g in &groups {
        rec.send(get(&format!("/apis/{g}")).accept("application/json"))
            .await;
    }
    for gv in &versions {
        rec.send(get(&format!("/apis/{gv}")).accept("application/json"))
            .await;
    }
    rec.send(get("/apis/nope.example.com/v1").accept("application/json"))
        .await;
    rec.send(get("/apis/apps/v0").accept("application/json"))
        .await;
    rec.send(get("/openapi/v3").accept("application/json"))
        .await;
    for path in ["/healthz", "/livez", "/readyz", "/healthz/ping"] {
        rec.send(get(path)).await;
    }
}

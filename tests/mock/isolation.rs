//! Multi-tenancy: `--watch-filter` and `--namespace` keep a mock to its own objects; shutdown
//! stops it.

use super::harness::*;
use capi_conformance::contract::Contract;
use capi_conformance::mock::kinds::MOCK_CLUSTER;
use capi_conformance::mock::{MockOptions, MockProvider};
use serde_json::json;

const B2: Contract = Contract::V1Beta2;

fn provisioned(o: &kube::core::DynamicObject) -> bool {
    flag(o, "status.initialization.provisioned")
}

#[tokio::test]
async fn watch_filter_limits_the_mock_to_labelled_objects() {
    let mut env = server_only().await;
    let opts = MockOptions {
        watch_filter: Some("tenant-a".into()),
        ..MockOptions::default()
    };
    env.mock = Some(MockProvider::start(env.client.clone(), opts));
    let cluster = env.cluster("c1", false).await;
    let api = env.mock_api(MOCK_CLUSTER, B2);
    for name in ["mine", "theirs"] {
        env.create_mock(MOCK_CLUSTER, B2, name, json!({}), json!({}))
            .await;
        env.own(MOCK_CLUSTER, B2, name, &cluster, "c1").await;
    }
    env.patch_mock(
        MOCK_CLUSTER,
        B2,
        "mine",
        json!({"metadata": {"labels": {"cluster.x-k8s.io/watch-filter": "tenant-a"}}}),
    )
    .await;
    env.patch_mock(
        MOCK_CLUSTER,
        B2,
        "theirs",
        json!({"metadata": {"labels": {"cluster.x-k8s.io/watch-filter": "tenant-b"}}}),
    )
    .await;
    wait_for(&api, "mine", "provisioned", provisioned).await;
    stays(&api, "theirs", "untouched", |o| {
        !has_finalizer(o) && at(o, "status").is_none()
    })
    .await;
    env.stop().await;
}

#[tokio::test]
async fn watch_namespace_limits_the_mock_to_one_namespace() {
    let mut env = server_only().await;
    let opts = MockOptions {
        watch_namespace: Some("elsewhere".into()),
        ..MockOptions::default()
    };
    env.mock = Some(MockProvider::start(env.client.clone(), opts));
    let cluster = env.cluster("c1", false).await;
    let api = env.mock_api(MOCK_CLUSTER, B2);
    env.create_mock(MOCK_CLUSTER, B2, "ic", json!({}), json!({}))
        .await;
    env.own(MOCK_CLUSTER, B2, "ic", &cluster, "c1").await;
    stays(&api, "ic", "untouched outside the watched namespace", |o| {
        !has_finalizer(o)
    })
    .await;
    env.stop().await;
}

#[tokio::test]
async fn shutdown_stops_reconciling() {
    let mut env = with_mock("").await;
    let cluster = env.cluster("c1", false).await;
    let api = env.mock_api(MOCK_CLUSTER, B2);
    env.create_mock(MOCK_CLUSTER, B2, "before", json!({}), json!({}))
        .await;
    env.own(MOCK_CLUSTER, B2, "before", &cluster, "c1").await;
    wait_for(&api, "before", "provisioned", provisioned).await;
    env.mock.take().unwrap().shutdown().await;
    env.create_mock(MOCK_CLUSTER, B2, "after", json!({}), json!({}))
        .await;
    env.own(MOCK_CLUSTER, B2, "after", &cluster, "c1").await;
    stays(&api, "after", "untouched after shutdown", |o| {
        !has_finalizer(o)
    })
    .await;
    env.stop().await;
}

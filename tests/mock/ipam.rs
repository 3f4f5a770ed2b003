//! The mock's IPAM pool (MockIPPool) and its IPAddressClaim controller against the embedded
//! server: the healthy contract behaviour, then one test per `ipam/*` fault showing exactly the
//! behaviour it changes.

use super::harness::*;
use capi_conformance::mock::core_crds::ipam_crd_documents;
use capi_conformance::mock::crds::mock_ipam_crds;
use capi_conformance::mock::reconcile::ipam::{
    CLAIM_FINALIZER, PROTECT_ADDRESS_FINALIZER, address_resource, claim_resource, pool_resource,
};
use capi_conformance::mock::{FaultSet, MockOptions, MockProvider};
use kube::api::{Api, DeleteParams, PostParams};
use kube::core::{ApiResource, DynamicObject};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};
use std::net::Ipv4Addr;

mod crds;
mod faults;

const POOL_GROUP: &str = "ipam.mock.capi-conformance.io";

/// The server with core's and the mock's IPAM CRDs, the mock running with `faults`.
async fn ipam_env(faults: &str) -> Env {
    ipam_env_with(MockOptions {
        faults: FaultSet::parse(faults),
        ..MockOptions::default()
    })
    .await
}

async fn ipam_env_with(opts: MockOptions) -> Env {
    let mut env = server_only().await;
    let mut docs = ipam_crd_documents();
    for crd in mock_ipam_crds() {
        docs.push(serde_json::to_value(crd).unwrap());
    }
    env.server
        .as_ref()
        .unwrap()
        .apply_documents(docs)
        .await
        .unwrap();
    env.mock = Some(MockProvider::start(env.client.clone(), opts));
    env
}

fn api(client: &Client, ar: &ApiResource) -> Api<DynamicObject> {
    Api::namespaced_with(client.clone(), NS, ar)
}

struct Ipam {
    claims: Api<DynamicObject>,
    addresses: Api<DynamicObject>,
    pools: Api<DynamicObject>,
}

fn ipam(env: &Env) -> Ipam {
    Ipam {
        claims: api(&env.client, &claim_resource()),
        addresses: api(&env.client, &address_resource()),
        pools: api(&env.client, &pool_resource()),
    }
}

async fn create(api: &Api<DynamicObject>, body: Value) -> DynamicObject {
    let obj: DynamicObject = serde_json::from_value(body).unwrap();
    api.create(&PostParams::default(), &obj).await.unwrap()
}

/// MockIPPool `name` (labelled with cluster `c1`) holding 10.0.0.10-10.0.0.12, gateway 10.0.0.1.
async fn pool(env: &Env, name: &str, annotations: Value) -> DynamicObject {
    pool_with(
        env,
        name,
        annotations,
        json!({"addresses": ["10.0.0.10-10.0.0.12"], "prefix": 24, "gateway": "10.0.0.1"}),
    )
    .await
}

async fn pool_with(env: &Env, name: &str, annotations: Value, spec: Value) -> DynamicObject {
    create(
        &ipam(env).pools,
        json!({
            "apiVersion": format!("{POOL_GROUP}/v1alpha1"),
            "kind": "MockIPPool",
            "metadata": {"name": name, "namespace": NS, "annotations": annotations,
                "labels": {"cluster.x-k8s.io/cluster-name": "c1"}},
            "spec": spec,
        }),
    )
    .await
}

/// IPAddressClaim `name` of Cluster `cluster` for the pool `(group, kind, pool)`.
async fn claim_for(
    env: &Env,
    name: &str,
    annotations: Value,
    (group, kind, pool): (&str, &str, &str),
    cluster: &str,
) -> DynamicObject {
    create(
        &ipam(env).claims,
        json!({
            "apiVersion": "ipam.cluster.x-k8s.io/v1beta2",
            "kind": "IPAddressClaim",
            "metadata": {"name": name, "namespace": NS, "annotations": annotations},
            "spec": {"clusterName": cluster,
                "poolRef": {"apiGroup": group, "kind": kind, "name": pool}},
        }),
    )
    .await
}

async fn claim(env: &Env, name: &str, annotations: Value, pool: &str) -> DynamicObject {
    claim_for(
        env,
        name,
        annotations,
        (POOL_GROUP, "MockIPPool", pool),
        "c1",
    )
    .await
}

fn address_ref(o: &DynamicObject) -> Option<&str> {
    at(o, "status.addressRef.name").and_then(Value::as_str)
}

fn ready_is(o: &DynamicObject, status: &str) -> bool {
    condition(o, "Ready").is_some_and(|c| c["status"] == status)
}

fn allocated(o: &DynamicObject) -> bool {
    address_ref(o).is_some() && ready_is(o, "True")
}

fn ip_of(address: &DynamicObject) -> Ipv4Addr {
    at(address, "spec.address")
        .and_then(Value::as_str)
        .unwrap()
        .parse()
        .unwrap()
}

fn in_pool(ip: Ipv4Addr) -> bool {
    (Ipv4Addr::new(10, 0, 0, 10)..=Ipv4Addr::new(10, 0, 0, 12)).contains(&ip)
}

fn owner<'a>(
    o: &'a DynamicObject,
    kind: &str,
) -> Option<&'a k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference> {
    o.owner_references().iter().find(|r| r.kind == kind)
}

/// Waits for the IPAddress `name` to exist.
async fn address(i: &Ipam, name: &str) -> DynamicObject {
    wait_for(&i.addresses, name, "IPAddress exists", |_| true).await
}

async fn untouched(i: &Ipam, name: &str, what: &str) {
    stays(&i.claims, name, what, |o| {
        o.finalizers().is_empty() && address_ref(o).is_none() && condition(o, "Ready").is_none()
    })
    .await;
    assert!(i.addresses.get_opt(name).await.unwrap().is_none(), "{name}");
}

#[tokio::test]
async fn claims_get_distinct_owned_protected_addresses_and_deletion_releases_them() {
    let env = ipam_env("").await;
    env.cluster("c1", true).await;
    let i = ipam(&env);
    let p = pool(&env, "p1", json!({})).await;
    let c = claim(&env, "a", json!({}), "p1").await;
    claim(&env, "b", json!({}), "p1").await;
    let a_claim = wait_for(&i.claims, "a", "allocated", allocated).await;
    let b_claim = wait_for(&i.claims, "b", "allocated", allocated).await;
    assert_eq!(address_ref(&a_claim), Some("a"));
    assert_eq!(address_ref(&b_claim), Some("b"));
    assert_eq!(a_claim.finalizers(), [CLAIM_FINALIZER.to_string()]);
    assert_eq!(condition(&a_claim, "Ready").unwrap()["reason"], "Ready");
    let a = address(&i, "a").await;
    let b = address(&i, "b").await;
    assert_ne!(ip_of(&a), ip_of(&b));
    assert!(in_pool(ip_of(&a)) && in_pool(ip_of(&b)), "{a:?} {b:?}");
    assert_eq!(a.finalizers(), [PROTECT_ADDRESS_FINALIZER.to_string()]);
    assert_eq!(
        at(&a, "spec"),
        Some(&json!({
            "claimRef": {"name": "a"},
            "poolRef": {"apiGroup": POOL_GROUP, "kind": "MockIPPool", "name": "p1"},
            "address": ip_of(&a).to_string(),
            "prefix": 24,
            "gateway": "10.0.0.1",
        }))
    );
    let by_claim = owner(&a, "IPAddressClaim").unwrap();
    assert_eq!(by_claim.uid, c.uid().unwrap());
    assert_eq!(by_claim.api_version, "ipam.cluster.x-k8s.io/v1beta2");
    assert_eq!(
        (by_claim.controller, by_claim.block_owner_deletion),
        (Some(true), Some(true))
    );
    let by_pool = owner(&a, "MockIPPool").unwrap();
    assert_eq!(by_pool.uid, p.uid().unwrap());
    assert_eq!(by_pool.api_version, format!("{POOL_GROUP}/v1alpha1"));
    assert_eq!(
        (by_pool.controller, by_pool.block_owner_deletion),
        (Some(false), Some(true))
    );
    let p = wait_for(&i.pools, "p1", "pool counts", |o| {
        at(o, "status.ipAddresses") == Some(&json!({"total": 3, "used": 2, "free": 1}))
    })
    .await;
    assert!(ready_is(&p, "True"));
    assert_eq!(p.labels()["cluster.x-k8s.io/cluster-name"], "c1");

    i.claims
        .delete("a", &DeleteParams::default())
        .await
        .unwrap();
    wait_gone(&i.addresses, "a").await;
    wait_gone(&i.claims, "a").await;
    wait_for(&i.pools, "p1", "address released", |o| {
        at(o, "status.ipAddresses.used") == Some(&json!(1))
    })
    .await;
    env.stop().await;
}

#[tokio::test]
async fn exhausted_and_invalid_pools_leave_claims_not_ready() {
    let env = ipam_env("").await;
    env.cluster("c1", true).await;
    let i = ipam(&env);
    pool_with(
        &env,
        "one",
        json!({}),
        json!({"addresses": ["10.0.1.5"], "prefix": 24}),
    )
    .await;
    pool_with(
        &env,
        "bad",
        json!({}),
        json!({"addresses": ["nope"], "prefix": 24}),
    )
    .await;
    claim(&env, "first", json!({}), "one").await;
    wait_for(&i.claims, "first", "allocated", allocated).await;
    claim(&env, "second", json!({}), "one").await;
    let o = wait_for(&i.claims, "second", "Ready=False", |o| ready_is(o, "False")).await;
    assert_eq!(condition(&o, "Ready").unwrap()["reason"], "PoolExhausted");
    assert!(address_ref(&o).is_none());
    assert!(i.addresses.get_opt("second").await.unwrap().is_none());
    claim(&env, "third", json!({}), "bad").await;
    let o = wait_for(&i.claims, "third", "Ready=False", |o| ready_is(o, "False")).await;
    assert_eq!(condition(&o, "Ready").unwrap()["reason"], "PoolNotReady");
    let bad = wait_for(&i.pools, "bad", "pool not ready", |o| ready_is(o, "False")).await;
    assert_eq!(condition(&bad, "Ready").unwrap()["reason"], "InvalidSpec");
    env.stop().await;
}

#[tokio::test]
async fn foreign_paused_and_orphan_claims_stay_untouched_until_their_cluster_allows() {
    let env = ipam_env("").await;
    env.cluster("c1", true).await;
    env.create_core("Cluster", "paused", json!({}), json!({"paused": true}))
        .await;
    let i = ipam(&env);
    pool(&env, "p1", json!({})).await;
    claim_for(
        &env,
        "foreign",
        json!({}),
        ("ipam.example.io", "OtherPool", "p1"),
        "c1",
    )
    .await;
    claim_for(
        &env,
        "other-kind",
        json!({}),
        (POOL_GROUP, "OtherPool", "p1"),
        "c1",
    )
    .await;
    claim_for(
        &env,
        "on-paused",
        json!({}),
        (POOL_GROUP, "MockIPPool", "p1"),
        "paused",
    )
    .await;
    claim_for(
        &env,
        "orphan",
        json!({}),
        (POOL_GROUP, "MockIPPool", "p1"),
        "missing",
    )
    .await;
    for name in ["foreign", "other-kind", "on-paused", "orphan"] {
        untouched(
            &i,
            name,
            "nothing while filtered out, paused or without a Cluster",
        )
        .await;
    }
    env.patch_core("Cluster", "paused", json!({"spec": {"paused": false}}))
        .await;
    wait_for(
        &i.claims,
        "on-paused",
        "allocated after unpausing",
        allocated,
    )
    .await;
    env.cluster("missing", true).await;
    wait_for(
        &i.claims,
        "orphan",
        "allocated once the Cluster exists",
        allocated,
    )
    .await;
    env.stop().await;
}

#[tokio::test]
async fn the_watch_filter_limits_the_mock_to_labelled_claims() {
    let env = ipam_env_with(MockOptions {
        watch_filter: Some("tenant-a".into()),
        ..MockOptions::default()
    })
    .await;
    env.cluster("c1", true).await;
    let i = ipam(&env);
    pool(&env, "p1", json!({})).await;
    claim(&env, "theirs", json!({}), "p1").await;
    claim(&env, "mine", json!({}), "p1").await;
    let label = json!({"metadata": {"labels": {"cluster.x-k8s.io/watch-filter": "tenant-a"}}});
    i.claims
        .patch(
            "mine",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(&label),
        )
        .await
        .unwrap();
    wait_for(&i.claims, "mine", "allocated", allocated).await;
    untouched(&i, "theirs", "an unlabelled claim is not reconciled").await;
    env.stop().await;
}

#[tokio::test]
async fn a_paused_cluster_holds_the_deletion_back() {
    let env = ipam_env("").await;
    env.cluster("c1", true).await;
    let i = ipam(&env);
    pool(&env, "p1", json!({})).await;
    claim(&env, "a", json!({}), "p1").await;
    wait_for(&i.claims, "a", "allocated", allocated).await;
    env.patch_core(
        "Cluster",
        "c1",
        json!({"metadata": {"annotations": {"cluster.x-k8s.io/paused": ""}}}),
    )
    .await;
    i.claims
        .delete("a", &DeleteParams::default())
        .await
        .unwrap();
    stays(&i.claims, "a", "finalizer kept while paused", |o| {
        o.finalizers().contains(&CLAIM_FINALIZER.to_string())
    })
    .await;
    assert!(i.addresses.get_opt("a").await.unwrap().is_some());
    env.patch_core(
        "Cluster",
        "c1",
        json!({"metadata": {"annotations": {"cluster.x-k8s.io/paused": null}}}),
    )
    .await;
    wait_gone(&i.claims, "a").await;
    wait_gone(&i.addresses, "a").await;
    env.stop().await;
}

/// The cluster-scoped pool (MockGlobalIPPool): claims of two namespaces take distinct
/// addresses from it, each IPAddress (in its claim's namespace) owned by the pool, and a
/// deleted claim's address goes back to it.
#[tokio::test]
async fn a_global_pool_serves_claims_of_every_namespace() {
    use capi_conformance::mock::reconcile::ipam::global_pool_resource;
    let env = ipam_env("").await;
    let other = "mock-test-other";
    env.server
        .as_ref()
        .unwrap()
        .apply_documents(vec![
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": other}}),
        ])
        .await
        .unwrap();
    let cluster_api = |ns: &str| {
        let gvk = kube::core::GroupVersionKind::gvk("cluster.x-k8s.io", "v1beta2", "Cluster");
        Api::<DynamicObject>::namespaced_with(
            env.client.clone(),
            ns,
            &ApiResource::from_gvk_with_plural(&gvk, "clusters"),
        )
    };
    for ns in [NS, other] {
        create(
            &cluster_api(ns),
            json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
                "metadata": {"name": "c1", "namespace": ns}, "spec": {"clusterName": "c1"}}),
        )
        .await;
    }
    let pools: Api<DynamicObject> = Api::all_with(env.client.clone(), &global_pool_resource());
    let p = create(
        &pools,
        json!({"apiVersion": format!("{POOL_GROUP}/v1alpha1"), "kind": "MockGlobalIPPool",
            "metadata": {"name": "shared"},
            "spec": {"addresses": ["10.0.0.10-10.0.0.12"], "prefix": 24, "gateway": "10.0.0.1"}}),
    )
    .await;
    assert!(p.namespace().is_none());
    let mut ips = Vec::new();
    for ns in [NS, other] {
        let claims =
            Api::<DynamicObject>::namespaced_with(env.client.clone(), ns, &claim_resource());
        let addresses =
            Api::<DynamicObject>::namespaced_with(env.client.clone(), ns, &address_resource());
        create(
            &claims,
            json!({"apiVersion": "ipam.cluster.x-k8s.io/v1beta2", "kind": "IPAddressClaim",
                "metadata": {"name": "a", "namespace": ns},
                "spec": {"clusterName": "c1",
                    "poolRef": {"apiGroup": POOL_GROUP, "kind": "MockGlobalIPPool", "name": "shared"}}}),
        )
        .await;
        let claim = wait_for(&claims, "a", "allocated", allocated).await;
        assert_eq!(address_ref(&claim), Some("a"));
        let a = wait_for(&addresses, "a", "the address", |_| true).await;
        let by_pool = owner(&a, "MockGlobalIPPool").unwrap();
        assert_eq!(by_pool.uid, p.uid().unwrap());
        assert_eq!(
            (by_pool.controller, by_pool.block_owner_deletion),
            (Some(false), Some(true))
        );
        assert!(in_pool(ip_of(&a)));
        ips.push(ip_of(&a));
    }
    assert_ne!(ips[0], ips[1], "one pool, two claims, two addresses");
    wait_for(&pools, "shared", "pool counts", |o| {
        at(o, "status.ipAddresses") == Some(&json!({"total": 3, "used": 2, "free": 1}))
            && ready_is(o, "True")
    })
    .await;
    let claims =
        Api::<DynamicObject>::namespaced_with(env.client.clone(), other, &claim_resource());
    claims.delete("a", &DeleteParams::default()).await.unwrap();
    wait_gone(&claims, "a").await;
    wait_for(&pools, "shared", "address released", |o| {
        at(o, "status.ipAddresses.used") == Some(&json!(1))
    })
    .await;
    env.stop().await;
}

//! One test per `ipam/*` fault of the mock: each changes exactly the behaviour it names.

use super::*;

#[tokio::test]
async fn claim_filter_fault_handles_claims_for_other_pool_kinds() {
    let env = ipam_env("").await;
    env.cluster("c1", true).await;
    let i = ipam(&env);
    pool(&env, "p1", json!({})).await;
    claim_for(
        &env,
        "foreign",
        fault("ipam/claim-filter"),
        ("ipam.example.io", "OtherPool", "p1"),
        "c1",
    )
    .await;
    wait_for(&i.claims, "foreign", "allocated", allocated).await;
    assert!(in_pool(ip_of(&address(&i, "foreign").await)));
    env.stop().await;
}

/// Each variant of the `ipam/paused` fault breaks one of its three cases (a Cluster with
/// `spec.paused`, one with the paused annotation, a missing Cluster) and keeps the other two.
#[tokio::test]
async fn paused_fault_variants_each_break_one_case() {
    use capi_conformance::mock::faults::{
        MISSING_CLUSTER_FAULT, PAUSED_ANNOTATION_FAULT, PAUSED_SPEC_FAULT,
    };
    let env = ipam_env("").await;
    env.create_core("Cluster", "c-spec", json!({}), json!({"paused": true}))
        .await;
    env.create_core("Cluster", "c-ann", json!({}), json!({"paused": false}))
        .await;
    env.patch_core(
        "Cluster",
        "c-ann",
        json!({"metadata": {"annotations": {"cluster.x-k8s.io/paused": ""}}}),
    )
    .await;
    pool(&env, "p1", json!({})).await;
    let i = ipam(&env);
    let cases = [
        (PAUSED_SPEC_FAULT, "c-spec"),
        (PAUSED_ANNOTATION_FAULT, "c-ann"),
        (MISSING_CLUSTER_FAULT, "missing"),
    ];
    for (v, (variant, _)) in cases.iter().enumerate() {
        for (c, (_, cluster)) in cases.iter().enumerate() {
            let name = format!("v{v}-c{c}");
            let pool_ref = (POOL_GROUP, "MockIPPool", "p1");
            claim_for(&env, &name, fault(variant), pool_ref, cluster).await;
        }
    }
    for (v, (variant, _)) in cases.iter().enumerate() {
        let name = format!("v{v}-c{v}");
        wait_for(&i.claims, &name, variant, allocated).await;
    }
    for v in 0..cases.len() {
        for c in (0..cases.len()).filter(|c| *c != v) {
            let name = format!("v{v}-c{c}");
            stays(&i.claims, &name, "left alone", |o| !allocated(o)).await;
        }
    }
    env.stop().await;
}

#[tokio::test]
async fn paused_fault_allocates_for_paused_and_missing_clusters() {
    let env = ipam_env("").await;
    env.create_core("Cluster", "c1", json!({}), json!({"paused": true}))
        .await;
    let i = ipam(&env);
    pool(&env, "p1", json!({})).await;
    claim(&env, "paused", fault("ipam/paused"), "p1").await;
    claim_for(
        &env,
        "orphan",
        fault("ipam/paused"),
        (POOL_GROUP, "MockIPPool", "p1"),
        "missing",
    )
    .await;
    wait_for(&i.claims, "paused", "allocated while paused", allocated).await;
    wait_for(
        &i.claims,
        "orphan",
        "allocated without a Cluster",
        allocated,
    )
    .await;
    env.stop().await;
}

#[tokio::test]
async fn claim_finalizer_fault_adds_none_and_deletion_still_cleans_up() {
    let env = ipam_env("").await;
    env.cluster("c1", true).await;
    let i = ipam(&env);
    pool(&env, "p1", json!({})).await;
    claim(&env, "a", fault("ipam/claim-finalizer"), "p1").await;
    let o = wait_for(&i.claims, "a", "allocated", allocated).await;
    assert!(o.finalizers().is_empty());
    address(&i, "a").await;
    i.claims
        .delete("a", &DeleteParams::default())
        .await
        .unwrap();
    wait_gone(&i.claims, "a").await;
    wait_gone(&i.addresses, "a").await;
    env.stop().await;
}

#[tokio::test]
async fn address_object_fault_allocates_outside_the_pool() {
    let env = ipam_env("").await;
    env.cluster("c1", true).await;
    let i = ipam(&env);
    pool(&env, "p1", json!({})).await;
    claim(&env, "a", fault("ipam/address-object"), "p1").await;
    wait_for(&i.claims, "a", "allocated", allocated).await;
    assert_eq!(ip_of(&address(&i, "a").await), Ipv4Addr::new(10, 0, 0, 13));
    env.stop().await;
}

#[tokio::test]
async fn address_owners_fault_drops_block_owner_deletion_of_the_pool() {
    let env = ipam_env("").await;
    env.cluster("c1", true).await;
    let i = ipam(&env);
    pool(&env, "p1", json!({})).await;
    claim(&env, "a", fault("ipam/address-owners"), "p1").await;
    wait_for(&i.claims, "a", "allocated", allocated).await;
    let a = address(&i, "a").await;
    assert_eq!(owner(&a, "MockIPPool").unwrap().block_owner_deletion, None);
    let by_claim = owner(&a, "IPAddressClaim").unwrap();
    assert_eq!(
        (by_claim.controller, by_claim.block_owner_deletion),
        (Some(true), Some(true))
    );
    env.stop().await;
}

#[tokio::test]
async fn address_finalizer_fault_leaves_the_address_unprotected() {
    let env = ipam_env("").await;
    env.cluster("c1", true).await;
    let i = ipam(&env);
    pool(&env, "p1", json!({})).await;
    claim(&env, "a", fault("ipam/address-finalizer"), "p1").await;
    wait_for(&i.claims, "a", "allocated", allocated).await;
    assert!(address(&i, "a").await.finalizers().is_empty());
    env.stop().await;
}

#[tokio::test]
async fn address_ref_fault_never_points_the_claim_at_its_address() {
    let env = ipam_env("").await;
    env.cluster("c1", true).await;
    let i = ipam(&env);
    pool(&env, "p1", json!({})).await;
    claim(&env, "a", fault("ipam/address-ref"), "p1").await;
    wait_for(&i.claims, "a", "Ready", |o| ready_is(o, "True")).await;
    address(&i, "a").await;
    stays(&i.claims, "a", "no addressRef", |o| {
        address_ref(o).is_none()
    })
    .await;
    env.stop().await;
}

#[tokio::test]
async fn delete_fault_leaves_the_address_behind() {
    let env = ipam_env("").await;
    env.cluster("c1", true).await;
    let i = ipam(&env);
    pool(&env, "p1", json!({})).await;
    claim(&env, "a", fault("ipam/delete"), "p1").await;
    wait_for(&i.claims, "a", "allocated", allocated).await;
    i.claims
        .delete("a", &DeleteParams::default())
        .await
        .unwrap();
    wait_gone(&i.claims, "a").await;
    stays(
        &i.addresses,
        "a",
        "IPAddress kept with its finalizer",
        |o| {
            o.finalizers()
                .contains(&PROTECT_ADDRESS_FINALIZER.to_string())
        },
    )
    .await;
    env.stop().await;
}

#[tokio::test]
async fn pool_move_label_fault_removes_the_cluster_name_label() {
    let env = ipam_env("").await;
    let i = ipam(&env);
    pool(&env, "p1", fault("ipam/pool-move-label")).await;
    wait_for(&i.pools, "p1", "label removed", |o| {
        !o.labels().contains_key("cluster.x-k8s.io/cluster-name")
    })
    .await;
    env.stop().await;
}

#[tokio::test]
async fn pool_ready_condition_fault_never_sets_ready() {
    let env = ipam_env("").await;
    let i = ipam(&env);
    pool(&env, "p1", fault("ipam/pool-ready-condition")).await;
    let p = wait_for(&i.pools, "p1", "counts", |o| {
        at(o, "status.ipAddresses.total") == Some(&json!(3))
    })
    .await;
    assert!(condition(&p, "Ready").is_none());
    assert_eq!(p.labels()["cluster.x-k8s.io/cluster-name"], "c1");
    stays(&i.pools, "p1", "no Ready condition", |o| {
        condition(o, "Ready").is_none()
    })
    .await;
    env.stop().await;
}

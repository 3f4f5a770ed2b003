//! One test per InfraMachine fault.

use super::harness::*;
use super::infra_machine::{machine_setup, open_gates};
use capi_conformance::contract::Contract;
use capi_conformance::mock::kinds::MOCK_MACHINE;
use kube::api::{Api, Patch, PatchParams};
use kube::core::DynamicObject;
use serde_json::json;

const B2: Contract = Contract::V1Beta2;

/// Cluster `c`, Machine `m` (failure domain fd-2) and MockMachine `im` with `faults`, owned;
/// gates opened when `gates` is true.
async fn drive(faults: &str, contract: Contract, gates: bool) -> (Env, Api<DynamicObject>) {
    let env = with_mock("").await;
    let (_, machine) = machine_setup(&env, Some("fd-2")).await;
    if gates {
        open_gates(&env).await;
    }
    env.create_mock(MOCK_MACHINE, contract, "im", fault(faults), json!({}))
        .await;
    env.own(MOCK_MACHINE, contract, "im", &machine, "c").await;
    let api = env.mock_api(MOCK_MACHINE, contract);
    (env, api)
}

fn provisioned(o: &DynamicObject) -> bool {
    flag(o, "status.initialization.provisioned") || flag(o, "status.ready")
}

fn provider_id(o: &DynamicObject) -> Option<&str> {
    at(o, "spec.providerID").and_then(|v| v.as_str())
}

#[tokio::test]
async fn owner_gate_fault_adds_a_finalizer_without_owner() {
    let env = with_mock("").await;
    machine_setup(&env, None).await;
    env.create_mock(
        MOCK_MACHINE,
        B2,
        "im",
        fault("infra-machine/owner-gate"),
        json!({}),
    )
    .await;
    let api = env.mock_api(MOCK_MACHINE, B2);
    wait_for(&api, "im", "finalizer without an owner", has_finalizer).await;
    env.stop().await;
}

#[tokio::test]
async fn finalizer_fault_provisions_without_a_finalizer() {
    let (env, api) = drive("infra-machine/finalizer", B2, true).await;
    let o = wait_for(&api, "im", "provisioned", provisioned).await;
    assert!(!has_finalizer(&o));
    env.stop().await;
}

#[tokio::test]
async fn cluster_lookup_fault_provisions_for_a_missing_cluster() {
    let env = with_mock("").await;
    let (_, machine) = machine_setup(&env, None).await;
    open_gates(&env).await;
    env.create_mock(
        MOCK_MACHINE,
        B2,
        "im",
        fault("infra-machine/cluster-lookup"),
        json!({}),
    )
    .await;
    env.own(MOCK_MACHINE, B2, "im", &machine, "no-such-cluster")
        .await;
    let api = env.mock_api(MOCK_MACHINE, B2);
    wait_for(&api, "im", "provisioned", provisioned).await;
    env.stop().await;
}

#[tokio::test]
async fn cluster_infra_gate_fault_provisions_before_the_cluster() {
    let (env, api) = drive("infra-machine/cluster-infra-gate", B2, false).await;
    env.patch_core(
        "Machine",
        "m",
        json!({"spec": {"bootstrap": {"dataSecretName": "boot"}}}),
    )
    .await;
    wait_for(
        &api,
        "im",
        "provisioned with the cluster gate closed",
        provisioned,
    )
    .await;
    env.stop().await;
}

#[tokio::test]
async fn bootstrap_gate_fault_provisions_before_bootstrap_data() {
    let (env, api) = drive("infra-machine/bootstrap-gate", B2, false).await;
    env.set_cluster_infra("c", true).await;
    wait_for(
        &api,
        "im",
        "provisioned without bootstrap data",
        provisioned,
    )
    .await;
    env.stop().await;
}

#[tokio::test]
async fn failure_gate_fault_provisions_after_a_terminal_failure() {
    for (faults, expect_progress) in [("", false), ("infra-machine/failure-gate", true)] {
        let (env, api) = drive(faults, Contract::V1Beta1, false).await;
        wait_for(&api, "im", "finalizer", has_finalizer).await;
        let failed = json!({"status": {"failureReason": "CreateError", "failureMessage": "boom"}});
        api.patch_status("im", &PatchParams::default(), &Patch::Merge(&failed))
            .await
            .unwrap();
        open_gates(&env).await;
        if expect_progress {
            wait_for(&api, "im", "provisioned despite the failure", provisioned).await;
        } else {
            stays(&api, "im", "no progress after a terminal failure", |o| {
                !provisioned(o)
            })
            .await;
        }
        env.stop().await;
    }
}

#[tokio::test]
async fn provider_id_fault_provisions_without_provider_id() {
    let (env, api) = drive("infra-machine/provider-id", B2, true).await;
    wait_for(&api, "im", "provisioned", provisioned).await;
    stays(&api, "im", "no providerID", |o| provider_id(o).is_none()).await;
    env.stop().await;
}

#[tokio::test]
async fn provisioned_fault_sets_provider_id_only() {
    let (env, api) = drive("infra-machine/provisioned", B2, true).await;
    wait_for(&api, "im", "providerID", |o| provider_id(o).is_some()).await;
    stays(&api, "im", "never provisioned", |o| !provisioned(o)).await;
    env.stop().await;
}

#[tokio::test]
async fn provider_id_before_provisioned_fault_reverses_the_order() {
    let (env, api) = drive("infra-machine/provider-id-before-provisioned", B2, false).await;
    let rec = Recorder::start(&api, "im");
    open_gates(&env).await;
    rec.wait_any("provisioned without providerID", |o| {
        provisioned(o) && provider_id(o).is_none()
    })
    .await;
    wait_for(&api, "im", "providerID eventually", |o| {
        provider_id(o).is_some()
    })
    .await;
    env.stop().await;
}

#[tokio::test]
async fn healthy_machine_never_shows_provisioned_without_provider_id() {
    let (env, api) = drive("", B2, false).await;
    let rec = Recorder::start(&api, "im");
    open_gates(&env).await;
    wait_for(&api, "im", "provisioned", provisioned).await;
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    assert!(
        rec.states()
            .iter()
            .all(|o| !provisioned(o) || provider_id(o).is_some())
    );
    env.stop().await;
}

#[tokio::test]
async fn provisioned_sticky_fault_flips_back() {
    let (env, api) = drive("infra-machine/provisioned-sticky", B2, true).await;
    let rec = Recorder::start(&api, "im");
    rec.wait_any("provisioned", provisioned).await;
    wait_for(&api, "im", "flipped back", |o| {
        at(o, "status.initialization.provisioned") == Some(&json!(false))
    })
    .await;
    env.stop().await;
}

#[tokio::test]
async fn addresses_fault_reports_an_unknown_address_type() {
    let (env, api) = drive("infra-machine/addresses", B2, true).await;
    let o = wait_for(&api, "im", "provisioned", provisioned).await;
    let types: Vec<&str> = at(&o, "status.addresses")
        .and_then(|a| a.as_array())
        .map(|a| a.iter().filter_map(|x| x["type"].as_str()).collect())
        .unwrap_or_default();
    assert!(types.contains(&"PrivateIP"), "{types:?}");
    env.stop().await;
}

#[tokio::test]
async fn failure_domain_placement_fault_places_elsewhere() {
    let (env, api) = drive("infra-machine/failure-domain-placement", B2, true).await;
    let o = wait_for(&api, "im", "provisioned", provisioned).await;
    assert_eq!(
        at(&o, "status.failureDomain"),
        Some(&json!("fd-2-elsewhere"))
    );
    env.stop().await;
}

#[tokio::test]
async fn ready_condition_fault_never_writes_ready() {
    let (env, api) = drive("infra-machine/ready-condition", B2, true).await;
    let o = wait_for(&api, "im", "provisioned", provisioned).await;
    assert!(condition(&o, "Ready").is_none());
    env.stop().await;
}

#[tokio::test]
async fn delete_fault_never_completes() {
    let (env, api) = drive("infra-machine/delete", B2, true).await;
    wait_for(&api, "im", "provisioned", provisioned).await;
    env.delete_mock(MOCK_MACHINE, B2, "im").await;
    stays(&api, "im", "still there", |o| {
        o.metadata.deletion_timestamp.is_some() && has_finalizer(o)
    })
    .await;
    env.stop().await;
}

/// MockMachine `im` (Machine `m`, Cluster `c`, gates open) claiming from MockIPPool `pool`
/// (192.0.2.10-192.0.2.11), with `faults`: the claim `im-0` and the machine once provisioned.
async fn consume(faults: &str) -> (Env, DynamicObject, DynamicObject) {
    let env = with_mock(faults).await;
    let (_, machine) = machine_setup(&env, None).await;
    let pools = Api::<DynamicObject>::namespaced_with(
        env.client.clone(),
        NS,
        &capi_conformance::mock::reconcile::ipam::pool_resource(),
    );
    let pool: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "ipam.mock.capi-conformance.io/v1alpha1",
        "kind": "MockIPPool",
        "metadata": {"name": "pool", "namespace": NS},
        "spec": {"addresses": ["192.0.2.10-192.0.2.11"], "prefix": 24, "gateway": "192.0.2.1"},
    }))
    .unwrap();
    pools
        .create(&kube::api::PostParams::default(), &pool)
        .await
        .unwrap();
    let spec = json!({"addressesFromPools": [
        {"apiGroup": "ipam.mock.capi-conformance.io", "kind": "MockIPPool", "name": "pool"}
    ]});
    env.create_mock(MOCK_MACHINE, B2, "im", json!({}), spec)
        .await;
    env.own(MOCK_MACHINE, B2, "im", &machine, "c").await;
    let api = env.mock_api(MOCK_MACHINE, B2);
    let claims = Api::<DynamicObject>::namespaced_with(
        env.client.clone(),
        NS,
        &capi_conformance::mock::reconcile::ipam::claim_resource(),
    );
    // The gates closed, nothing is claimed: the claim comes with the providerID.
    stays(&api, "im", "no claim before the gates open", |o| {
        provider_id(o).is_none()
    })
    .await;
    assert!(claims.get_opt("im-0").await.unwrap().is_none());
    open_gates(&env).await;
    let machine = wait_for(&api, "im", "provisioned", provisioned).await;
    let claim = claims.get_opt("im-0").await.unwrap().expect("claim im-0");
    (env, claim, machine)
}

#[tokio::test]
async fn a_machine_naming_a_pool_claims_its_address_before_provisioning() {
    let (env, claim, machine) = consume("").await;
    let owner = &claim.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(owner.kind, "MockMachine");
    assert_eq!(owner.name, "im");
    assert_eq!(owner.controller, Some(true));
    assert_eq!(owner.block_owner_deletion, Some(true));
    assert_eq!(at(&claim, "spec.clusterName"), Some(&json!("c")));
    assert_eq!(at(&claim, "spec.poolRef.name"), Some(&json!("pool")));
    // The claimed address is the machine's (the pool's first).
    let addresses = at(&machine, "status.addresses").unwrap().to_string();
    assert!(addresses.contains("192.0.2.10"), "{addresses}");
    env.stop().await;
}

#[tokio::test]
async fn consumer_claim_fault_claims_without_a_controller_reference() {
    let (env, claim, _) = consume("ipam/consumer-claim").await;
    let owner = &claim.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(owner.name, "im");
    assert_eq!(owner.controller, Some(false));
    env.stop().await;
}

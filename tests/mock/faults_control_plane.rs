//! One test per ControlPlane fault.

use super::control_plane::{counters_at, initialized_path};
use super::harness::*;
use capi_conformance::contract::Contract;
use capi_conformance::mock::kinds::MOCK_CONTROL_PLANE;
use kube::ResourceExt;
use kube::api::{Api, Patch, PatchParams};
use kube::core::DynamicObject;
use serde_json::json;

const B2: Contract = Contract::V1Beta2;

async fn drive(faults: &str, contract: Contract) -> (Env, Api<DynamicObject>) {
    let env = with_mock("").await;
    let cluster = env.cluster("c", true).await;
    env.create_mock(
        MOCK_CONTROL_PLANE,
        contract,
        "cp",
        fault(faults),
        json!({"version": "v1.33.0", "replicas": 1}),
    )
    .await;
    env.own(MOCK_CONTROL_PLANE, contract, "cp", &cluster, "c")
        .await;
    let api = env.mock_api(MOCK_CONTROL_PLANE, contract);
    (env, api)
}

fn replicas(o: &DynamicObject) -> i64 {
    at(o, "status.replicas")
        .and_then(|v| v.as_i64())
        .unwrap_or(-1)
}

fn initialized(o: &DynamicObject) -> bool {
    flag(o, initialized_path(B2)) || flag(o, initialized_path(Contract::V1Beta1))
}

#[tokio::test]
async fn pause_fault_keeps_reconciling_while_paused() {
    let (env, api) = drive("control-plane/pause", B2).await;
    wait_for(&api, "cp", "replicas 1", |o| replicas(o) == 1).await;
    env.patch_core("Cluster", "c", json!({"spec": {"paused": true}}))
        .await;
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    api.patch_status(
        "cp",
        &PatchParams::default(),
        &Patch::Merge(&json!({"status": {"replicas": 0}})),
    )
    .await
    .unwrap();
    wait_for(&api, "cp", "restored while paused", |o| replicas(o) == 1).await;
    env.stop().await;
}

#[tokio::test]
async fn kubeconfig_secret_fault_uses_another_key() {
    let (env, api) = drive("control-plane/kubeconfig-secret", B2).await;
    wait_for(&api, "cp", "initialized", initialized).await;
    let data = env
        .secrets()
        .get("c-kubeconfig")
        .await
        .unwrap()
        .data
        .unwrap();
    assert!(data.contains_key("kubeconfig") && !data.contains_key("value"));
    env.stop().await;
}

#[tokio::test]
async fn certificates_fault_omits_the_cluster_name_label() {
    for (faults, labelled) in [("", true), ("control-plane/certificates", false)] {
        let (env, api) = drive(faults, B2).await;
        wait_for(&api, "cp", "initialized", initialized).await;
        for purpose in ["ca", "etcd", "proxy", "sa"] {
            let s = env.secrets().get(&format!("c-{purpose}")).await.unwrap();
            assert_eq!(s.type_.as_deref(), Some("cluster.x-k8s.io/secret"));
            assert!(s.data.as_ref().unwrap().contains_key("tls.crt"));
            let has = s
                .metadata
                .labels
                .unwrap_or_default()
                .contains_key("cluster.x-k8s.io/cluster-name");
            assert_eq!(has, labelled, "{faults} {purpose}");
        }
        env.stop().await;
    }
}

#[tokio::test]
async fn initialized_fault_never_sets_the_flag() {
    let (env, api) = drive("control-plane/initialized", B2).await;
    wait_for(&api, "cp", "counters", |o| counters_at(o, B2, 1)).await;
    stays(&api, "cp", "not initialized", |o| !initialized(o)).await;
    env.stop().await;
}

#[tokio::test]
async fn ready_fault_never_sets_ready_v1beta1() {
    let b1 = Contract::V1Beta1;
    let (env, api) = drive("control-plane/ready", b1).await;
    wait_for(&api, "cp", "counters", |o| {
        counters_at(o, b1, 1) && initialized(o)
    })
    .await;
    stays(&api, "cp", "not ready", |o| !flag(o, "status.ready")).await;
    env.stop().await;
}

#[tokio::test]
async fn endpoint_fault_initializes_without_endpoint() {
    let (env, api) = drive("control-plane/endpoint", B2).await;
    let o = wait_for(&api, "cp", "initialized", initialized).await;
    assert!(at(&o, "spec.controlPlaneEndpoint").is_none());
    env.stop().await;
}

#[tokio::test]
async fn scale_subresource_fault_never_converges() {
    let (env, api) = drive("control-plane/scale-subresource", B2).await;
    wait_for(&api, "cp", "replicas 1", |o| replicas(o) == 1).await;
    api.patch_scale(
        "cp",
        &PatchParams::default(),
        &Patch::Merge(&json!({"spec": {"replicas": 3}})),
    )
    .await
    .unwrap();
    stays(&api, "cp", "stuck at 1", |o| replicas(o) == 1).await;
    env.stop().await;
}

#[tokio::test]
async fn status_replicas_fault_leaves_counters_at_zero() {
    let (env, api) = drive("control-plane/status-replicas", B2).await;
    let o = wait_for(&api, "cp", "replicas 1", |o| {
        replicas(o) == 1 && initialized(o)
    })
    .await;
    for f in ["readyReplicas", "availableReplicas", "upToDateReplicas"] {
        assert_eq!(at(&o, &format!("status.{f}")), Some(&json!(0)), "{f}");
    }
    env.stop().await;
}

#[tokio::test]
async fn status_version_fault_reports_no_versions() {
    for contract in [Contract::V1Beta1, B2] {
        let (env, api) = drive("control-plane/status-version", contract).await;
        let o = wait_for(&api, "cp", "initialized", |o| {
            initialized(o) && replicas(o) == 1
        })
        .await;
        assert!(at(&o, "status.version").is_none() && at(&o, "status.versions").is_none());
        env.stop().await;
    }
}

#[tokio::test]
async fn conditions_fault_writes_no_summary_condition() {
    let (env, api) = drive("control-plane/conditions", B2).await;
    let o = wait_for(&api, "cp", "initialized", initialized).await;
    assert!(condition(&o, "Available").is_none() && condition(&o, "Ready").is_none());
    env.stop().await;
}

/// A control plane whose machine template names the mock's InfraMachineTemplate `tmpl`; its
/// Machines (by the control-plane-name label).
async fn drive_with_machines(faults: &str) -> (Env, Api<DynamicObject>, Api<DynamicObject>) {
    let env = with_mock("").await;
    let cluster = env.cluster("c", true).await;
    // Two failure domains for control plane Machines, one not (as core copies them from the
    // InfraCluster).
    let domains = json!({"status": {"failureDomains": [
        {"name": "fd-a", "controlPlane": true}, {"name": "fd-b", "controlPlane": true},
        {"name": "fd-c", "controlPlane": false}]}});
    env.core("Cluster")
        .patch_status("c", &PatchParams::default(), &Patch::Merge(&domains))
        .await
        .unwrap();
    let template = capi_conformance::mock::kinds::ALL
        .into_iter()
        .find(|k| k.kind == "MockMachineTemplate")
        .unwrap();
    env.create_mock(
        template,
        B2,
        "tmpl",
        json!({}),
        json!({"template": {"spec": {}}}),
    )
    .await;
    env.create_mock(
        MOCK_CONTROL_PLANE,
        B2,
        "cp",
        fault(faults),
        json!({"version": "v1.33.0", "replicas": 2, "machineTemplate": {"spec": {"infrastructureRef": {
            "apiGroup": "infrastructure.mock.capi-conformance.io", "kind": "MockMachineTemplate", "name": "tmpl"}}}}),
    )
    .await;
    env.own(MOCK_CONTROL_PLANE, B2, "cp", &cluster, "c").await;
    let api = env.mock_api(MOCK_CONTROL_PLANE, B2);
    let machines = env.core("Machine");
    (env, api, machines)
}

async fn two_machines(machines: &Api<DynamicObject>) -> Vec<DynamicObject> {
    let params = kube::api::ListParams::default().labels("cluster.x-k8s.io/control-plane-name=cp");
    for _ in 0..200 {
        let list = machines.list(&params).await.unwrap().items;
        if list.len() == 2 {
            return list;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    panic!("the control plane did not create its 2 Machines");
}

#[tokio::test]
async fn machine_label_fault_creates_machines_without_the_control_plane_label() {
    for (faults, labelled) in [("", true), ("control-plane/machine-label", false)] {
        let (env, _, machines) = drive_with_machines(faults).await;
        for m in two_machines(&machines).await {
            let labels = m.metadata.labels.clone().unwrap_or_default();
            assert_eq!(
                labels
                    .get("cluster.x-k8s.io/control-plane")
                    .map(String::as_str),
                labelled.then_some(""),
                "{faults}: {labels:?}"
            );
            assert_eq!(
                labels
                    .get("cluster.x-k8s.io/cluster-name")
                    .map(String::as_str),
                Some("c")
            );
            // Its InfraMachine is cloned from the template, owned by the control plane until
            // core's Machine controller takes it over.
            let infra = env
                .mock_api(capi_conformance::mock::kinds::MOCK_MACHINE, B2)
                .get(&m.name_any())
                .await
                .unwrap();
            let annotations = infra.metadata.annotations.clone().unwrap_or_default();
            assert_eq!(
                annotations
                    .get("cluster.x-k8s.io/cloned-from-name")
                    .map(String::as_str),
                Some("tmpl")
            );
            assert_eq!(
                infra.metadata.owner_references.unwrap()[0].kind,
                "MockControlPlane"
            );
        }
        env.stop().await;
    }
}

#[tokio::test]
async fn in_place_propagation_fault_leaves_existing_machines_unchanged() {
    for (faults, propagated) in [("", true), ("control-plane/in-place-propagation", false)] {
        let (env, _, machines) = drive_with_machines(faults).await;
        let before: Vec<_> = two_machines(&machines)
            .await
            .iter()
            .map(|m| m.uid().unwrap())
            .collect();
        env.patch_mock(
            MOCK_CONTROL_PLANE,
            B2,
            "cp",
            json!({"spec": {"machineTemplate": {"metadata": {"labels": {"x": "y"}},
                   "spec": {"deletion": {"nodeDrainTimeoutSeconds": 91}}}}}),
        )
        .await;
        let updated = |m: &DynamicObject| {
            m.labels().get("x").map(String::as_str) == Some("y")
                && at(m, "spec.deletion.nodeDrainTimeoutSeconds").and_then(|v| v.as_i64())
                    == Some(91)
        };
        if propagated {
            for name in ["cp-0", "cp-1"] {
                wait_for(&machines, name, "template metadata and timeout", updated).await;
            }
            let after: Vec<_> = two_machines(&machines)
                .await
                .iter()
                .map(|m| m.uid().unwrap())
                .collect();
            assert_eq!(before, after, "the Machines were replaced");
        } else {
            stays(&machines, "cp-0", "no propagation", |m| !updated(m)).await;
        }
        env.stop().await;
    }
}

#[tokio::test]
async fn placement_fault_puts_every_machine_in_one_failure_domain() {
    for (faults, want) in [
        ("", ["fd-a", "fd-b"]),
        ("control-plane/placement", ["fd-a", "fd-a"]),
    ] {
        let (env, _, machines) = drive_with_machines(faults).await;
        let mut placed: Vec<String> = two_machines(&machines)
            .await
            .iter()
            .map(|m| {
                at(m, "spec.failureDomain")
                    .and_then(|v| v.as_str())
                    .unwrap_or("none")
                    .to_string()
            })
            .collect();
        placed.sort();
        assert_eq!(placed, want, "{faults}");
        env.stop().await;
    }
}

#[tokio::test]
async fn min_ready_uptodate_fault_never_sets_the_machines_up_to_date_condition() {
    for (faults, kept) in [("", true), ("control-plane/min-ready-uptodate", false)] {
        let (env, _, machines) = drive_with_machines(faults).await;
        two_machines(&machines).await;
        let up_to_date = |m: &DynamicObject| {
            condition(m, "UpToDate").and_then(|c| c.get("status")) == Some(&json!("True"))
        };
        for name in ["cp-0", "cp-1"] {
            if kept {
                wait_for(&machines, name, "UpToDate=True", up_to_date).await;
            } else {
                stays(&machines, name, "no UpToDate condition", |m| {
                    condition(m, "UpToDate").is_none()
                })
                .await;
            }
        }
        env.stop().await;
    }
}

#[tokio::test]
async fn kubeconfig_rotation_fault_never_renews_an_expiring_client_certificate() {
    use capi_conformance::mock::kubeconfig::{
        VALIDITY_DAYS, client_certificates, self_signed_client, with_client_certificate,
    };
    for (faults, renews) in [("", true), ("control-plane/kubeconfig-rotation", false)] {
        let (env, api) = drive(faults, B2).await;
        wait_for(&api, "cp", "initialized", initialized).await;
        let text = |s: &k8s_openapi::api::core::v1::Secret| {
            String::from_utf8(s.data.as_ref().unwrap()["value"].0.clone()).unwrap()
        };
        // A year's client certificate, as KCP's.
        let secret = env.secrets().get("c-kubeconfig").await.unwrap();
        let certs = client_certificates(&text(&secret)).unwrap();
        assert_eq!(certs.len(), 1);
        let days = (certs[0].not_after - certs[0].not_before) / 86_400;
        assert!(
            (VALIDITY_DAYS..=VALIDITY_DAYS + 1).contains(&days),
            "{days}"
        );
        // One expiring tomorrow in its place, and a resync.
        let (cert, key) = self_signed_client(1).unwrap();
        let short = with_client_certificate(&text(&secret), &cert, &key).unwrap();
        let expiry = client_certificates(&short).unwrap()[0].not_after;
        use base64::Engine;
        let value = base64::engine::general_purpose::STANDARD.encode(&short);
        env.secrets()
            .patch(
                "c-kubeconfig",
                &PatchParams::default(),
                &Patch::Merge(&json!({"data": {"value": value}})),
            )
            .await
            .unwrap();
        env.patch_mock(
            MOCK_CONTROL_PLANE,
            B2,
            "cp",
            json!({"metadata": {"annotations": {"resync": "1"}}}),
        )
        .await;
        let mut renewed = false;
        for _ in 0..40 {
            let s = env.secrets().get("c-kubeconfig").await.unwrap();
            renewed = client_certificates(&text(&s))
                .unwrap()
                .iter()
                .all(|c| c.not_after > expiry);
            if renewed {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        }
        assert_eq!(renewed, renews, "{faults}");
        env.stop().await;
    }
}

#[tokio::test]
async fn endpoint_wait_fault_takes_the_clusters_endpoint_and_does_not_wait_for_it() {
    // A Cluster without endpoint: the healthy mock makes its own; the faulty one makes none
    // and still writes its kubeconfig.
    let (env, api) = drive("control-plane/endpoint-wait", B2).await;
    wait_for(&api, "cp", "initialized", initialized).await;
    assert!(env.secrets().get("c-kubeconfig").await.is_ok());
    let o = api.get("cp").await.unwrap();
    assert!(at(&o, "spec.controlPlaneEndpoint").is_none(), "{o:?}");
    // Once the Cluster has one, it is copied.
    env.patch_core(
        "Cluster",
        "c",
        json!({"spec": {"controlPlaneEndpoint": {"host": "from.cluster", "port": 6443}}}),
    )
    .await;
    wait_for(&api, "cp", "the Cluster's endpoint", |o| {
        at(o, "spec.controlPlaneEndpoint.host").and_then(|v| v.as_str()) == Some("from.cluster")
    })
    .await;
    env.stop().await;
    let (env, api) = drive("", B2).await;
    wait_for(&api, "cp", "its own endpoint", |o| {
        at(o, "spec.controlPlaneEndpoint.host").is_some()
    })
    .await;
    env.stop().await;
}

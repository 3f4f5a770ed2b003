//! One test per CRD-level (template admission) fault: the faulty CRDs on the embedded server.

use super::harness::*;
use capi_conformance::contract::Contract;
use capi_conformance::mock::FaultSet;
use capi_conformance::mock::crd_faults::apply_crd_faults;
use capi_conformance::mock::kinds::{ALL, MOCK_MACHINE, MockKind};
use kube::api::{Patch, PatchParams, PostParams};
use kube::core::DynamicObject;
use serde_json::json;

const B2: Contract = Contract::V1Beta2;

fn template(kind: &str) -> MockKind {
    *ALL.iter().find(|k| k.kind == kind).unwrap()
}

/// Creates a template, then server-side applies a spec change with `dryRun=All` and the
/// topology dry-run annotation: whether it is admitted.
async fn dry_run_admitted(env: &Env, kind: MockKind) -> bool {
    let created = env
        .create_mock(kind, B2, "t", json!({}), json!({"template": {"spec": {}}}))
        .await;
    let ar = kind.api_resource(B2);
    let applied = json!({
        "apiVersion": ar.api_version, "kind": ar.kind,
        "metadata": {"name": "t", "annotations": {"topology.cluster.x-k8s.io/dry-run": ""}},
        "spec": {"template": {"metadata": {"annotations": {"changed": "1"}},
                              "spec": created.data["spec"]["template"]["spec"].clone()}},
    });
    env.mock_api(kind, B2)
        .patch(
            "t",
            &PatchParams::apply("t").dry_run().force(),
            &Patch::Apply(&applied),
        )
        .await
        .is_ok()
}

async fn faulty(faults: &str) -> Env {
    let env = server_only().await;
    let changed = apply_crd_faults(&env.client, &FaultSet::parse(faults))
        .await
        .unwrap();
    assert!(!changed.is_empty());
    env
}

#[tokio::test]
async fn ssa_dry_run_fault_rejects_dry_run_changes_of_every_template() {
    let healthy = server_only().await;
    assert!(dry_run_admitted(&healthy, template("MockClusterTemplate")).await);
    let env = faulty("template/ssa-dry-run").await;
    for kind in [
        "MockClusterTemplate",
        "MockMachineTemplate",
        "MockConfigTemplate",
    ] {
        assert!(!dry_run_admitted(&env, template(kind)).await, "{kind}");
    }
}

#[tokio::test]
async fn role_ssa_dry_run_faults_break_only_their_template() {
    for (fault, kind, other) in [
        (
            "infra-machine-template/ssa-dry-run",
            "MockMachineTemplate",
            "MockConfigTemplate",
        ),
        (
            "infra-machinepool-template/ssa-dry-run",
            "MockMachinePoolTemplate",
            "MockMachineTemplate",
        ),
        (
            "bootstrap-template/ssa-dry-run",
            "MockConfigTemplate",
            "MockMachinePoolTemplate",
        ),
    ] {
        let env = faulty(fault).await;
        assert!(!dry_run_admitted(&env, template(kind)).await, "{fault}");
        assert!(dry_run_admitted(&env, template(other)).await, "{fault}");
    }
}

#[tokio::test]
async fn clone_compatible_fault_admits_templates_whose_clones_are_rejected() {
    for (faults, clone_ok) in [("", true), ("template/clone-compatible", false)] {
        let env = if faults.is_empty() {
            server_only().await
        } else {
            faulty(faults).await
        };
        let t = env
            .create_mock(
                template("MockMachineTemplate"),
                B2,
                "t",
                json!({}),
                json!({"template": {"spec": {}}}),
            )
            .await;
        let spec = t.data["spec"]["template"]["spec"].clone();
        let ar = MOCK_MACHINE.api_resource(B2);
        let clone: DynamicObject = serde_json::from_value(json!({
            "apiVersion": ar.api_version, "kind": ar.kind,
            "metadata": {"name": "clone", "namespace": NS}, "spec": spec,
        }))
        .unwrap();
        let pp = PostParams {
            dry_run: true,
            ..PostParams::default()
        };
        let created = env.mock_api(MOCK_MACHINE, B2).create(&pp, &clone).await;
        assert_eq!(created.is_ok(), clone_ok, "faults {faults:?}: {created:?}");
        // Base objects without the field stay admitted under the fault.
        env.create_mock(MOCK_MACHINE, B2, "plain", json!({}), json!({}))
            .await;
    }
}

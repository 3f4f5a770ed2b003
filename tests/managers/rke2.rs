//! Rancher's RKE2 providers at v0.21.0 (github.com/rancher/cluster-api-provider-rke2, contract
//! v1beta1): the control plane (RKE2ControlPlane) and its bootstrap companion (RKE2Config), built
//! from the Go module (`tools/providers/rke2-controlplane-v0.21`, `rke2-bootstrap-v0.21`), with
//! CAPD v1.11.11's in-memory machines as infrastructure, judged from samples written from their
//! e2e template (`tests/data/capi-managers/rke2-in-memory.yaml`).
//!
//! The control plane is judged end to end. It counts itself initialized only once the workload
//! cluster holds `kube-system/rke2-serving` (`pkg/rke2/workload_cluster.go` 255-267), which
//! RKE2's server writes on the node: the run plays that node's agent (`--workload-object
//! tests/data/capi-managers/rke2-node-agent.yaml`). It reads its Machines through CAPI's v1beta1
//! API and reports `status.version` only from Machines whose v1beta1 `Ready` is True
//! (`rke2controlplane_controller.go` 392, 530-533): core's simulated Machine controller writes
//! those conditions under `status.deprecated.v1beta1` as core v1.11 does.
//!
//! What is not RKE2's verdict yet, and not asserted: the `bootstrap/*` cells of RKE2Config.
//! RKE2Config makes data for a control-plane Machine only when an RKE2ControlPlane owns that
//! Machine (`bootstrap/internal/controllers/rke2config_scope.go` 143, used at
//! `rke2config_controller.go` 335), and a worker's only with the Cluster's `controlPlaneRef`
//! naming an RKE2ControlPlane with `status.availableServerIPs` and the `<cluster>-token` Secret
//! its first control-plane config wrote (`joinWorker`, 763-790). SC-bootstrap's Machines have
//! neither (its worker Cluster has no `controlPlaneRef`, which RKE2Config dereferences unchecked:
//! the recovered panics asserted below), so its data-secret cells fail for a state CAPI never
//! builds for RKE2 (docs/providers.md, the RKE2 row).

use super::support::{
    Server, built_provider, check_providers, components, manager, manager_cmd, sample,
};
use std::collections::BTreeSet;

const CP: &str = "control-plane-rke2/RKE2ControlPlane@v1beta1";
const CP_TEMPLATE: &str = "control-plane-rke2/RKE2ControlPlaneTemplate@v1beta1";

/// The static findings about the RKE2 columns, each shown by v0.21.0's source:
/// - `all/category` (MAY), RKE2Config, RKE2ConfigTemplate, RKE2ControlPlane: their CRDs
///   (`*/config/crd/bases`) declare no `categories`.
/// - `control-plane/scale-subresource` (MUST): `controlplane/api/v1beta1/rke2controlplane_types.go`
///   line 312 marks only `+kubebuilder:subresource:status`, so the CRD has no `scale`.
/// - `control-plane/status-replicas` (MUST): `RKE2ControlPlaneStatus` has no `selector`, which
///   the scale subresource's `labelSelectorPath` and CAPI's contract ask for.
fn static_findings() -> BTreeSet<(String, String)> {
    [
        ("all/category", "bootstrap-rke2/RKE2Config@v1beta1"),
        ("all/category", "bootstrap-rke2/RKE2ConfigTemplate@v1beta1"),
        ("all/category", CP),
        ("control-plane/scale-subresource", CP),
        ("control-plane/status-replicas", CP),
    ]
    .into_iter()
    .map(|(r, c)| (r.to_string(), c.to_string()))
    .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rke2_v0_21_with_capd_in_memory_gets_its_static_webhook_and_kubeconfig_findings() {
    let dir = tempfile::tempdir().unwrap();
    let (Some(capd), Some(capd_c)) = (manager(dir.path(), "capd-manager"), components("capd"))
    else {
        return;
    };
    let (Some((cp, cp_c)), Some((bs, bs_c))) = (
        built_provider("rke2-controlplane-v0.21"),
        built_provider("rke2-bootstrap-v0.21"),
    ) else {
        return;
    };
    let samples = [sample("rke2-in-memory.yaml"), sample("capd-in-memory.yaml")];
    let node_agent = sample("rke2-node-agent.yaml");
    let cmds = [manager_cmd(&cp), manager_cmd(&bs), manager_cmd(&capd)];
    let mut extra = vec![
        "--kinds",
        "RKE2*,DevCluster*,DevMachine,DevMachineTemplate",
        "--var",
        "CLUSTER_TOPOLOGY=true",
        "--workload-object",
        node_agent.to_str().unwrap(),
    ];
    for s in &samples {
        extra.extend(["--sample", s.to_str().unwrap()]);
    }
    let run = check_providers(
        dir.path(),
        Server::Embedded,
        &[
            (cp_c.as_path(), cmds[0].as_str()),
            (bs_c.as_path(), cmds[1].as_str()),
            (capd_c.as_path(), cmds[2].as_str()),
        ],
        &extra,
    )
    .await;
    assert_ne!(run.code, Some(2), "{}", run.stderr);
    // Its only panics: RKE2Config's worker join reads the Cluster's `spec.controlPlaneRef`
    // without a nil check (`rke2config_controller.go` 194-197), and SC-bootstrap's worker
    // Cluster has none (the field is optional in CAPI). Recovered by controller-runtime.
    let panics: Vec<&str> = run.log.split("Observed a panic").skip(1).collect();
    assert!(
        panics.iter().all(|p| p
            .lines()
            .take(16)
            .any(|l| l.contains("bootstrap/internal/controllers/rke2config_controller.go:197"))),
        "a panic elsewhere: {}",
        run.log
    );
    let static_failed: BTreeSet<(String, String)> = run.report["results"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["phase"] == "static" && r["outcome"] == "fail")
        .filter(|r| r["column"].as_str().is_some_and(|c| c.contains("-rke2/")))
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap_or_default().to_string();
            (s("rule_id"), s("column"))
        })
        .collect();
    assert_eq!(static_failed, static_findings(), "stderr: {}", run.stderr);
    let cells = run.cells();
    let outcome = |rule: &str, column: &str| {
        cells
            .iter()
            .find(|(r, c, ..)| r == rule && c == column)
            .map(|(_, _, o, w)| (o.clone(), w.clone()))
            .unwrap_or_else(|| panic!("no cell {rule} {column}: {cells:#?}"))
    };
    // Made as CAPI's topology controller makes them (the Cluster's version, the machine
    // template's reference): RKE2's defaulting webhook writes back an empty
    // `machineTemplate.infrastructureRef` and its validation asks for a named one
    // (`controlplane/api/v1beta1/rke2controlplane_webhook.go` 260-266), which CAPI always sets.
    for (rule, column) in [
        ("all/defaulting-admitted", CP),
        ("template/clone-compatible", CP_TEMPLATE),
        ("all/conversion-lossless", CP),
    ] {
        assert_eq!(outcome(rule, column).0, "pass", "{rule} {column}");
    }
    // A true MUST finding: RKE2 writes its kubeconfig Secret without a type (Opaque):
    // `pkg/kubeconfig/kubeconfig.go` `GenerateSecretWithOwner` (199-215) sets name, labels,
    // owner and data only, where the contract asks for type `cluster.x-k8s.io/secret`.
    let (o, why) = outcome("control-plane/kubeconfig-secret", CP);
    assert_eq!(o, "fail", "{why}");
    // Its certificates are typed and labelled as the contract asks (`pkg/secret`).
    assert_eq!(outcome("control-plane/certificates", CP).0, "pass");
    // A SHOULD finding: its first status write has no Ready condition. The first reconcile adds
    // the finalizer and patches at once with `WithStatusObservedGeneration`
    // (`rke2controlplane_controller.go` 154-166): `status.observedGeneration` alone; Ready comes
    // from `patchRKE2ControlPlane`'s `SetSummary` (238) on a later reconcile.
    let (o, why) = outcome("all/ready-condition-lifecycle", CP);
    assert_eq!(o, "fail", "{why}");
    assert!(why.contains("first status"), "{why}");
    // The rest of its lifecycle, judged and passing: initialized once the node's agent wrote
    // `rke2-serving` (`workload_cluster.go` 255-267, `rke2controlplane_controller.go` 493-494);
    // `status.version` and `status.ready` from its Machines' v1beta1 Ready (392, 524-533).
    for rule in [
        "control-plane/initialized",
        "control-plane/status-version",
        "control-plane/ready",
        "control-plane/endpoint-wait",
        "control-plane/conditions",
        "control-plane/kubeconfig-rotation",
        "control-plane/machine-label",
        "control-plane/machine-template",
        "control-plane/in-place-propagation",
        "control-plane/pause",
        "control-plane/spec-replicas",
        "control-plane/spec-version",
        "control-plane/terminal-failures",
        "all/conditions",
        "all/pause",
        "all/status-subresource",
    ] {
        let (o, why) = outcome(rule, CP);
        assert_eq!(o, "pass", "{rule}: {why}");
    }
    // No failure domains from CAPD's in-memory cluster: placement has nothing to spread over.
    let (o, why) = outcome("control-plane/placement", CP);
    assert_eq!(o, "skip", "{why}");
    // Its lifecycle cells that fail are exactly the findings above (the two static MUSTs fold
    // their lifecycle part into the same cell).
    let failed: BTreeSet<&str> = cells
        .iter()
        .filter(|(_, c, o, _)| c == CP && o == "fail")
        .map(|(r, ..)| r.as_str())
        .collect();
    assert_eq!(
        failed,
        BTreeSet::from([
            "all/category",
            "all/ready-condition-lifecycle",
            "control-plane/kubeconfig-secret",
            "control-plane/scale-subresource",
            "control-plane/status-replicas",
        ]),
        "{cells:#?}"
    );
}

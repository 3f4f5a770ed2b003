//! KCP v1.11.11 (the kubeadm control plane) run the way `clusterctl init` installs it: with its
//! bootstrap companion CABPK (KCP creates KubeadmConfigs; CABPK turns them into bootstrap data)
//! and CAPD's in-memory machines as infrastructure (KCP clones the DevMachineTemplate of its
//! machine template): three managers in one run, one `--crds` and one `--provider-cmd` each.

use super::capd;
use super::support::{
    Server, built_provider, check_providers, components, manager, manager_cmd, on_a_real_cluster,
    sample,
};
use std::collections::BTreeSet;
use std::path::PathBuf;

/// The failures that are true findings about KCP v1.11.11 and its companions (CAPI at tag
/// v1.11.11):
/// - `all/conversion-lossless` (MUST), KubeadmControlPlaneTemplate v1beta2: a template created
///   at v1beta2 and read at v1beta1 gets the v1beta1 schema's default
///   `spec.template.spec.rolloutStrategy` (`{type: RollingUpdate, rollingUpdate: {maxSurge: 1}}`
///   in `config/crd` of `controlplane/kubeadm`, applied on read by kube-apiserver as by ours);
///   written back unchanged, KCP's validating webhook refuses it as a change of an immutable
///   field: `internal/webhooks/kubeadmcontrolplanetemplate.go` `ValidateUpdate` allows only
///   the transition from the old default to unset, not from unset to it.
/// - `bootstrap/failure-gate` (SHOULD, v1beta1 contract), KubeadmConfig v1beta1: nothing
///   under `bootstrap/kubeadm/internal/controllers` reads `failureReason` (see `cabpk.rs`).
/// - CAPD's in-memory findings (`capd.rs`, [`capd::true_findings`]).
fn true_findings() -> BTreeSet<(String, String)> {
    let mut all = capd::true_findings();
    all.insert((
        "all/conversion-lossless".into(),
        "control-plane-kubeadm/KubeadmControlPlaneTemplate@v1beta2".into(),
    ));
    all.insert((
        "bootstrap/failure-gate".into(),
        "bootstrap-kubeadm/KubeadmConfig@v1beta1".into(),
    ));
    all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kcp_with_cabpk_and_capd_in_memory_gets_a_verdict_in_one_run() {
    judged(Server::Embedded).await;
}

/// The same verdict beside a real cluster (kube-apiserver v1.36): KCP's
/// `all/conversion-lossless` finding rests on the API server applying the v1beta1 schema's
/// default on read, which the real one does too. This run is also CAPD's and CABPK's (v1beta2
/// sample) beside the real cluster: their columns must show exactly their true findings
/// ([`capd::true_findings`], CABPK's `bootstrap/failure-gate`) here as in their own tests.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kcp_with_cabpk_and_capd_on_a_real_cluster() {
    on_a_real_cluster(
        "kcp_with_cabpk_and_capd_on_a_real_cluster",
        |kc| async move {
            judged(Server::Cluster(&kc)).await;
        },
    )
    .await;
}

async fn judged(server: Server<'_>) {
    let dir = tempfile::tempdir().unwrap();
    let (Some(kcp), Some(cabpk), Some(capd)) = (
        manager(dir.path(), "kubeadm-controlplane-manager"),
        manager(dir.path(), "kubeadm-bootstrap-manager"),
        manager(dir.path(), "capd-manager"),
    ) else {
        return;
    };
    let (Some(kcp_c), Some(cabpk_c), Some(capd_c)) =
        (components("kcp"), components("cabpk"), components("capd"))
    else {
        return;
    };
    let line = Line {
        providers: [(kcp, kcp_c), (cabpk, cabpk_c), (capd, capd_c)],
        true_findings: true_findings(),
        inconclusive: BTreeSet::new(),
        in_place_why: "not part of CAPI v1.11's core",
        contracts: &["v1beta1", "v1beta2"],
        samples: ["kcp-in-memory.yaml", "cabpk-v1beta2.yaml"],
        exit: 1,
    };
    judge(&line, server).await;
}

/// KCP v1.13.6 and CABPK v1.13.6 built from the module `sigs.k8s.io/cluster-api`
/// (`tools/providers/kcp-v1.13`, `cabpk-v1.13`), with CAPD v1.11.11's in-memory machines from
/// `../shared/providers` (CAPD lives in the module `sigs.k8s.io/cluster-api/test`, which the Go
/// module proxy here does not serve). The same true findings as v1.11.11 (the template's
/// round trip: `internal/webhooks/kubeadmcontrolplanetemplate.go` lines 83-92 of v1.13.6 allow
/// only the old default → unset; CABPK's `bootstrap/failure-gate`; CAPD's), and one cell
/// inconclusive for its environment, not failed: `control-plane/status-replicas` at v1beta2.
/// KCP v1.12+ gates its Machines on `NodeKubeadmLabelsAndTaintsSet`
/// (`internal/desiredstate/desired_state.go` `MandatoryMachineReadinessGates`), set False when
/// the Node lacks kubeadm's `node-role.kubernetes.io/control-plane:NoSchedule` taint
/// (`internal/workload_cluster_conditions.go` `updateNodeCondition`, `DefaultTaintIsMissing`:
/// expected when the sample's `nodeRegistration.taints` is unset, as in CAPI's e2e templates);
/// CAPD v1.11's in-memory Nodes have no taint, so the Machines never become Ready and KCP,
/// counting them as they are (`status.go` `setReplicas`), stays at readyReplicas 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kcp_v1_13_with_cabpk_v1_13_and_capd_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let Some([kcp, cabpk, capd]) = built_beside_shared_capd(dir.path(), "kcp-v1.13", "cabpk-v1.13")
    else {
        return;
    };
    let line = Line {
        providers: [kcp, cabpk, capd],
        true_findings: true_findings(),
        inconclusive: BTreeSet::from([(
            "control-plane/status-replicas".to_string(),
            "control-plane-kubeadm/KubeadmControlPlane@v1beta2".to_string(),
            "NodeKubeadmLabelsAndTaintsSet False".to_string(),
        )]),
        in_place_why: "CanUpdateMachine/UpdateMachine hooks",
        contracts: &["v1beta1", "v1beta2"],
        samples: ["kcp-in-memory.yaml", "cabpk-v1beta2.yaml"],
        exit: 1,
    };
    judge(&line, Server::Embedded).await;
}

/// KCP, CABPK and CAPD of one line, all built from Go modules: KCP and CABPK v1.13.6, CAPD
/// v1.13.7 (`tools/providers/capd-v1.13`). The same KCP and CABPK findings as beside CAPD
/// v1.11.11, CAPD v1.13.7's own ([`capd::true_findings_v1_13`]), and nothing inconclusive:
/// CAPD v1.13's in-memory control-plane Nodes carry kubeadm's
/// `node-role.kubernetes.io/control-plane:NoSchedule` taint
/// (`test/infrastructure/docker/internal/controllers/backends/inmemory/inmemorymachine_backend.go`
/// 340-345), so KCP's `NodeKubeadmLabelsAndTaintsSet` gate opens, its Machines become Ready and
/// `control-plane/status-replicas` is judged at v1beta2 too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kcp_v1_13_with_cabpk_v1_13_and_capd_v1_13() {
    let Some(line) = v1_13_line() else {
        return;
    };
    judge(&line, Server::Embedded).await;
}

/// The v1.13 line beside the real cluster (kube-apiserver v1.36): the same cells as embedded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kcp_v1_13_with_cabpk_v1_13_and_capd_v1_13_on_a_real_cluster() {
    let Some(line) = v1_13_line() else {
        return;
    };
    on_a_real_cluster(
        "kcp_v1_13_with_cabpk_v1_13_and_capd_v1_13_on_a_real_cluster",
        |kc| async move {
            judge(&line, Server::Cluster(&kc)).await;
        },
    )
    .await;
}

/// KCP, CABPK (v1.13.6) and CAPD (v1.13.7) built from modules, with what they must find;
/// `None` (with the skip line) when they cannot be built here.
fn v1_13_line() -> Option<Line> {
    let (Some(kcp), Some(cabpk), Some(capd)) = (
        built_provider("kcp-v1.13"),
        built_provider("cabpk-v1.13"),
        built_provider("capd-v1.13"),
    ) else {
        return None;
    };
    let mut findings = capd::true_findings_v1_13();
    findings.extend(
        true_findings()
            .into_iter()
            .filter(|(_, column)| !column.starts_with("infrastructure-docker/")),
    );
    Some(Line {
        providers: [kcp, cabpk, capd],
        true_findings: findings,
        inconclusive: BTreeSet::new(),
        in_place_why: "CanUpdateMachine/UpdateMachine hooks",
        contracts: &["v1beta1", "v1beta2"],
        samples: ["kcp-in-memory.yaml", "cabpk-v1beta2.yaml"],
        exit: 1,
    })
}

/// KCP v1.8.4 and CABPK v1.8.4 built from the module (contract v1beta1 only: their CRDs serve
/// v1beta1 alone), with CAPD v1.11.11's in-memory machines, judged from v1beta1 samples. No MUST
/// finding (exit 0): KubeadmControlPlaneTemplate serves one version, so there is no round trip to
/// refuse. Besides CABPK's and CAPD's findings, one of KCP's own: `all/ready-condition-lifecycle`
/// (SHOULD), KubeadmControlPlane@v1beta1: its first status write carries no Ready condition.
/// `controlplane/kubeadm/internal/controllers/controller.go` 176-190 of v1.8.4: on the first
/// reconcile KCP adds its finalizer and patches at once with `WithStatusObservedGeneration`
/// (status.observedGeneration alone), returning before the deferred patch that sets conditions.
///
/// Its `all/pause` at v1beta1 is judged without evidence (no Paused condition), and in 2 of 5
/// runs a reconcile KCP began before the paused annotation writes `status.conditions` after the
/// touch (KCP v1.8.4 returns before any patch once it sees the annotation, controller.go
/// 164-167): the scenario touches a second time then ("pause: touch again",
/// docs/core-simulation.md), and KCP stays quiet on it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kcp_v1_8_with_cabpk_v1_8_and_capd_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let Some([kcp, cabpk, capd]) = built_beside_shared_capd(dir.path(), "kcp-v1.8", "cabpk-v1.8")
    else {
        return;
    };
    let mut findings = capd::true_findings();
    findings.insert((
        "bootstrap/failure-gate".into(),
        "bootstrap-kubeadm/KubeadmConfig@v1beta1".into(),
    ));
    findings.insert((
        "all/ready-condition-lifecycle".into(),
        "control-plane-kubeadm/KubeadmControlPlane@v1beta1".into(),
    ));
    let line = Line {
        providers: [kcp, cabpk, capd],
        true_findings: findings,
        inconclusive: BTreeSet::new(),
        in_place_why: "",
        contracts: &["v1beta1"],
        samples: ["kcp-in-memory-v1beta1.yaml", "cabpk-v1beta1.yaml"],
        exit: 0,
    };
    judge(&line, Server::Embedded).await;
}

/// KCP and CABPK built from modules (`tools/providers/<kcp>`, `<cabpk>`) with CAPD v1.11.11 of
/// `../shared/providers` (decompressed into `dir`), each (manager, components); CAPD is looked
/// for first, so without `../shared` nothing is built. `None` with the skip line.
fn built_beside_shared_capd(
    dir: &std::path::Path,
    kcp: &str,
    cabpk: &str,
) -> Option<[(PathBuf, PathBuf); 3]> {
    let capd = (manager(dir, "capd-manager")?, components("capd")?);
    Some([built_provider(kcp)?, built_provider(cabpk)?, capd])
}

/// One release line of KCP with its companions: the managers and components of KCP, CABPK and
/// CAPD (in that order), and what the run must find.
struct Line {
    providers: [(PathBuf, PathBuf); 3],
    /// (rule, column) of every failing cell.
    true_findings: BTreeSet<(String, String)>,
    /// (rule, column, a part of the reason) of every inconclusive cell but
    /// `all/multi-instance-flags`.
    inconclusive: BTreeSet<(String, String, String)>,
    /// Part of the stated reason `control-plane/in-place-updates` is skipped for (v1beta2).
    in_place_why: &'static str,
    /// The contracts KCP's and CABPK's columns are judged at (v1.8: v1beta1 only).
    contracts: &'static [&'static str],
    /// The samples of KCP and CABPK (CAPD's is `capd-in-memory.yaml`).
    samples: [&'static str; 2],
    /// The run's exit code.
    exit: i32,
}

async fn judge(line: &Line, server: Server<'_>) {
    let dir = tempfile::tempdir().unwrap();
    let [(kcp, kcp_c), (cabpk, cabpk_c), (capd, capd_c)] = &line.providers;
    let samples = [
        sample(line.samples[0]),
        sample(line.samples[1]),
        sample("capd-in-memory.yaml"),
    ];
    let cmds = [manager_cmd(kcp), manager_cmd(cabpk), manager_cmd(capd)];
    let kinds = format!("Kubeadm*,{}", capd::IN_MEMORY_KINDS);
    let mut extra = vec!["--kinds", kinds.as_str(), "--var", "CLUSTER_TOPOLOGY=true"];
    for s in &samples {
        extra.extend(["--sample", s.to_str().unwrap()]);
    }
    let run = check_providers(
        dir.path(),
        server,
        &[
            (kcp_c.as_path(), cmds[0].as_str()),
            (cabpk_c.as_path(), cmds[1].as_str()),
            (capd_c.as_path(), cmds[2].as_str()),
        ],
        &extra,
    )
    .await;
    assert_ne!(run.code, Some(2), "{}", run.stderr);
    assert_eq!(run.panics(), 0, "{}", run.log);
    // Each manager ran as its own Deployment runs it, and said so.
    for deployment in [
        "capi-kubeadm-control-plane-system/capi-kubeadm-control-plane-controller-manager",
        "capi-kubeadm-bootstrap-system/capi-kubeadm-bootstrap-controller-manager",
        "capd-system/capd-controller-manager",
    ] {
        assert!(
            run.stderr
                .contains(&format!("runs as Deployment {deployment}")),
            "{deployment}: {}",
            run.stderr
        );
    }
    let lifecycle = run.lifecycle();
    let cells = run.cells();
    // The control plane is judged through its companions: initialized from the workload
    // cluster, its kubeconfig and certificates, version from the Machines it made.
    for v in line.contracts {
        for rule in [
            "control-plane/initialized",
            "control-plane/kubeconfig-secret",
            "control-plane/certificates",
            "control-plane/status-version",
            // Its replica counters count its Machines' Ready/Available/UpToDate conditions, and
            // its scale-up waits for healthy Machines (`preflightChecks`): both through core's
            // Machine controller (simulated) and the Nodes of CAPD's in-memory workload cluster.
            "control-plane/status-replicas",
            "control-plane/scale-subresource",
            // Its Machines are labelled as control plane, and a label added to its machine
            // template reaches them in place (KCP `syncMachines`).
            "control-plane/machine-label",
            "control-plane/in-place-propagation",
            // Its kubeconfig's client certificate (a year's) is renewed once it expires within
            // six months (`reconcileKubeconfig` → `NeedsClientCertRotation`).
            "control-plane/kubeconfig-rotation",
            "all/pause",
        ] {
            let column = format!("control-plane-kubeadm/KubeadmControlPlane@{v}");
            if line
                .inconclusive
                .iter()
                .any(|(r, c, _)| r == rule && *c == column)
            {
                continue;
            }
            assert!(
                cells
                    .iter()
                    .any(|(r, c, o, _)| r == rule && *c == column && o == "pass"),
                "{rule} {column}: {cells:#?}"
            );
        }
    }
    // Skipped for a stated reason, not for a missing step: CAPD's in-memory DevCluster reports
    // no failure domains (`InMemoryClusterBackendSpec` is empty in CAPI v1.11's
    // `devcluster_types.go`).
    for v in line.contracts {
        let column = format!("control-plane-kubeadm/KubeadmControlPlane@{v}");
        assert!(
            lifecycle
                .iter()
                .any(|(r, c, o, w)| r == "control-plane/placement"
                    && *c == column
                    && o == "skip"
                    && w.contains("no failure domain for control plane Machines")),
            "placement {column}: {lifecycle:#?}"
        );
    }
    let b2 = "control-plane-kubeadm/KubeadmControlPlane@v1beta2";
    if line.contracts.contains(&"v1beta2") {
        // Contract v1beta2: KCP keeps its Machines' UpToDate condition
        // (`reconcileMachineUpToDateCondition` in `controlplane/kubeadm/internal/controllers`).
        assert!(
            cells
                .iter()
                .any(|(r, c, o, _)| r == "control-plane/min-ready-uptodate"
                    && c == b2
                    && o == "pass"),
            "{cells:#?}"
        );
        assert!(
            lifecycle
                .iter()
                .any(|(r, c, o, w)| r == "control-plane/in-place-updates"
                    && c == b2
                    && o == "skip"
                    && w.contains(line.in_place_why)),
            "in-place-updates: {lifecycle:#?}"
        );
    }
    // Its companions are judged in their own columns in the same run.
    for (rule, column) in [
        (
            "bootstrap/data-secret-created",
            if line.contracts.contains(&"v1beta2") {
                "bootstrap-kubeadm/KubeadmConfig@v1beta2"
            } else {
                "bootstrap-kubeadm/KubeadmConfig@v1beta1"
            },
        ),
        (
            "infra-machine/delete",
            "infrastructure-docker/DevMachine@v1beta2",
        ),
    ] {
        assert!(
            cells
                .iter()
                .any(|(r, c, o, _)| r == rule && c == column && o == "pass"),
            "{rule} {column}: {cells:#?}"
        );
    }
    let problems = run.problems();
    let failed: BTreeSet<(String, String)> = problems
        .iter()
        .filter(|(.., o, _)| o == "fail")
        .map(|(r, c, ..)| (r.clone(), c.clone()))
        .collect();
    assert_eq!(failed, line.true_findings, "stderr: {}", run.stderr);
    let inconclusive: BTreeSet<(String, String)> = problems
        .iter()
        .filter(|(r, _, o, _)| o == "inconclusive" && r != "all/multi-instance-flags")
        .map(|(r, c, ..)| (r.clone(), c.clone()))
        .collect();
    let expected: BTreeSet<(String, String)> = line
        .inconclusive
        .iter()
        .map(|(r, c, _)| (r.clone(), c.clone()))
        .collect();
    assert_eq!(inconclusive, expected);
    for (rule, column, why) in &line.inconclusive {
        assert!(
            lifecycle.iter().any(|(r, c, o, w)| r == rule
                && c == column
                && o == "inconclusive"
                && w.contains(why.as_str())),
            "{rule} {column}: {why}: {lifecycle:#?}"
        );
    }
    // Nothing of the three providers' selected kinds is left unjudged for a missing sample, and
    // every lifecycle rule of theirs is judged or skipped for a stated reason: none is left to
    // the generic "no step judges this rule".
    for generic in ["no sample", "no step that judges"] {
        let skipped: Vec<_> = lifecycle
            .iter()
            .filter(|(_, c, o, why)| {
                (c.contains("/Kubeadm") || c.contains("/Dev"))
                    && o == "skip"
                    && why.contains(generic)
            })
            .collect();
        assert!(skipped.is_empty(), "{generic}: {skipped:#?}");
    }
    // A MUST finding (the template's round trip, v1.11 and v1.13) makes it a failing verdict.
    assert_eq!(run.code, Some(line.exit), "stderr: {}", run.stderr);
}

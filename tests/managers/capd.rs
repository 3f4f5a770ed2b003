//! CAPD v1.11.11's in-memory backend (DevCluster/DevMachine with `spec.backend.inMemory`: fake
//! VMs and a fake workload API server per cluster, no Docker), judged from our own samples.

use super::support::{Server, built_provider, check, components, manager, manager_cmd, sample};
use std::collections::BTreeSet;

/// The failures that are true findings about CAPD v1.11.11, each shown by its source
/// (kubernetes-sigs/cluster-api at tag v1.11.11):
/// - `infra-cluster/externally-managed` (SHOULD), both DevCluster columns: the in-memory backend
///   never reads `cluster.x-k8s.io/managed-by` (no `IsExternallyManaged` anywhere under
///   `test/infrastructure/docker`); `backends/inmemory/inmemorycluster_backend.go`
///   `ReconcileNormal` writes the listener annotation and `spec.controlPlaneEndpoint`
///   unconditionally.
/// - `infra-cluster/ready-condition` (SHOULD), both DevCluster columns: the same
///   `ReconcileNormal` sets only `status.initialization.provisioned`, and `PatchDevCluster`
///   owns only the `Paused` condition: no `Ready` condition.
/// - `infra-machine/failure-gate` (SHOULD, v1beta1 contract only), DevMachine v1beta1: nothing
///   under `test/infrastructure/docker/internal/controllers` reads `failureReason`; the v1.11
///   contract text says "Starting from the v1beta2 contract version, there is no more special
///   treatment for provider's terminal failures" (`contracts/infra-machine.md`, "InfraMachine:
///   terminal failures"), but CAPD still declares the v1beta1 contract, whose workflow asks it
///   to stop.
/// - `infra-machinepool/initialization-provisioned` (SHOULD, static), DockerMachinePool v1beta2:
///   its v1beta2 schema has no `status.initialization` (`exp/api/v1beta2`
///   `DockerMachinePoolStatus` keeps `ready`).
pub fn true_findings() -> BTreeSet<(String, String)> {
    [
        (
            "infra-cluster/externally-managed",
            "infrastructure-docker/DevCluster@v1beta1",
        ),
        (
            "infra-cluster/externally-managed",
            "infrastructure-docker/DevCluster@v1beta2",
        ),
        (
            "infra-cluster/ready-condition",
            "infrastructure-docker/DevCluster@v1beta1",
        ),
        (
            "infra-cluster/ready-condition",
            "infrastructure-docker/DevCluster@v1beta2",
        ),
        (
            "infra-machine/failure-gate",
            "infrastructure-docker/DevMachine@v1beta1",
        ),
        (
            "infra-machinepool/initialization-provisioned",
            "infrastructure-docker/DockerMachinePool@v1beta2",
        ),
    ]
    .into_iter()
    .map(|(r, c)| (r.to_string(), c.to_string()))
    .collect()
}

/// The failures that are true findings about CAPD v1.13.7 (kubernetes-sigs/cluster-api at tag
/// v1.13.7, module `test`, under `test/infrastructure/docker`): those of v1.11.11 but one, plus
/// the same schema finding on a new kind.
/// - `infra-cluster/externally-managed` is gone: `internal/controllers/devcluster_controller.go`
///   105-109 returns before any backend when `annotations.IsExternallyManaged(devCluster)`.
/// - `infra-cluster/ready-condition` (SHOULD), both DevCluster columns: still no `Ready`
///   condition: `backends/inmemory/inmemorycluster_backend.go` `ReconcileNormal` (line 130) sets
///   only `status.initialization.provisioned`, `PatchDevCluster` (159-171) owns only `Paused`.
/// - `infra-machine/failure-gate` (SHOULD, v1beta1), DevMachine v1beta1: nothing under
///   `internal/controllers` reads `failureReason`.
/// - `infra-machinepool/initialization-provisioned` (SHOULD, static), DockerMachinePool v1beta2
///   and the new DevMachinePool v1beta2: neither status has `initialization`
///   (`api/v1beta2/devmachinepool_types.go` 117-146 keeps `ready`, as `dockermachinepool_types.go`).
pub fn true_findings_v1_13() -> BTreeSet<(String, String)> {
    let mut all = true_findings();
    all.retain(|(rule, _)| rule != "infra-cluster/externally-managed");
    all.insert((
        "infra-machinepool/initialization-provisioned".into(),
        "infrastructure-docker/DevMachinePool@v1beta2".into(),
    ));
    all
}

/// The kinds CAPD's in-memory backend serves (v1.13's DevMachinePool has a Docker backend only).
pub const IN_MEMORY_KINDS: &str = "DevCluster*,DevMachine,DevMachineTemplate";

/// The run a provider team makes: components, our samples, the manager's own command line; no
/// `--timeout`, no hand-set environment (its Deployment's `POD_IP` and feature gates come from
/// the components, `CLUSTER_TOPOLOGY=true` as a clusterctl variable so CAPD's webhook admits
/// DevClusterTemplates). `--kinds` [`IN_MEMORY_KINDS`]: the Docker* kinds need a Docker engine, so
/// only the in-memory kinds get scenarios (the others keep their static cells). Then the same run
/// under server faults must give the same cells ([`under_server_faults_it_equals`]).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn capd_in_memory_gets_a_verdict_with_only_true_findings() {
    judged(Server::Embedded).await;
}

async fn judged(server: Server<'_>) {
    let dir = tempfile::tempdir().unwrap();
    let (Some(capd), Some(comps)) = (manager(dir.path(), "capd-manager"), components("capd"))
    else {
        return;
    };
    judge(server, &capd, &comps, &true_findings(), true).await;
}

/// CAPD v1.13.7 built from the module `sigs.k8s.io/cluster-api/test` (`tools/providers/capd-v1.13`;
/// its CAPI libraries at v1.13.6, the newest `sigs.k8s.io/cluster-api` the proxy serves), with its
/// own `config/` and the same samples: the findings of [`true_findings_v1_13`].
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn capd_v1_13_in_memory_gets_a_verdict_with_only_true_findings() {
    let Some((capd, comps)) = built_provider("capd-v1.13") else {
        return;
    };
    judge(
        Server::Embedded,
        &capd,
        &comps,
        &true_findings_v1_13(),
        false,
    )
    .await;
}

async fn judge(
    server: Server<'_>,
    capd: &std::path::Path,
    comps: &std::path::Path,
    findings: &BTreeSet<(String, String)>,
    with_faults: bool,
) {
    let dir = tempfile::tempdir().unwrap();
    let sample = sample("capd-in-memory.yaml");
    let args = [
        "--sample",
        sample.to_str().unwrap(),
        "--kinds",
        IN_MEMORY_KINDS,
        "--var",
        "CLUSTER_TOPOLOGY=true",
    ];
    let run = check(dir.path(), server, comps, &manager_cmd(capd), &args).await;
    assert_eq!(run.panics(), 0, "{}", run.log);
    let failed: BTreeSet<(String, String)> = run
        .problems()
        .into_iter()
        .filter(|(.., o, _)| o == "fail")
        .map(|(r, c, ..)| (r, c))
        .collect();
    assert_eq!(&failed, findings, "stderr: {}", run.stderr);
    // Every lifecycle rule of the in-memory kinds is judged, or skipped for a stated contract
    // reason, never for a missing sample.
    let dev: Vec<_> = run
        .lifecycle()
        .into_iter()
        .filter(|(_, c, ..)| c.contains("/Dev"))
        .collect();
    assert!(dev.len() > 40, "{dev:#?}");
    let unjudged: Vec<_> = dev
        .iter()
        .filter(|(_, _, o, why)| o == "inconclusive" || (o == "skip" && why.contains("no sample")))
        .collect();
    assert!(unjudged.is_empty(), "{unjudged:#?}");
    for rule in ["infra-machine/delete", "infra-cluster/delete", "all/pause"] {
        assert!(
            dev.iter().any(|(r, _, o, _)| r == rule && o == "pass"),
            "{rule}: {dev:#?}"
        );
    }
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    if with_faults && matches!(server, Server::Embedded) {
        under_server_faults_it_equals(&run, capd, comps, &args, dir.path()).await;
    }
}

/// The same run under server faults (watches dropped every 2 s, the next 20
/// watch resumes expired, 5 % 429s, 5 % 500s, 200 ms added to every request) gives the clean
/// run's verdict, cell for cell: a slowed, interrupted provider is waited for, its half-refused
/// writes are not judged as meant, and the tool's own requests retry. One cell may be
/// inconclusive instead of passing, with that reason: `all/ready-condition-lifecycle` when a
/// write to the object was refused before its Ready condition first appeared (CAPD's first
/// reconcile sends its conditions, object and status patches apart; a refused one leaves the
/// first status seen without Ready).
async fn under_server_faults_it_equals(
    clean: &super::support::Run,
    capd: &std::path::Path,
    comps: &std::path::Path,
    args: &[&str],
    dir: &std::path::Path,
) {
    let cells = |run: &super::support::Run| -> BTreeSet<(String, String, String)> {
        run.cells()
            .into_iter()
            .map(|(r, c, o, _)| (r, c, o))
            .collect()
    };
    let faults = "drop-watch=2s,force-410=20,429=5%,500=5%,latency=200ms";
    let mut faulted_args = args.to_vec();
    faulted_args.extend(["--server-faults", faults]);
    let faulted = check(
        dir,
        Server::Embedded,
        comps,
        &manager_cmd(capd),
        &faulted_args,
    )
    .await;
    assert_eq!(faulted.panics(), 0, "{}", faulted.log);
    let (a, b) = (cells(clean), cells(&faulted));
    assert!(a.len() > 1000, "{}", clean.stderr);
    // Allowed: `all/ready-condition-lifecycle` inconclusive under faults where the clean run
    // passed, when a refused write came before the Ready condition appeared (the first status
    // seen may be half a write: CAPI's patch helper sends one write as several requests).
    let half_write = |rule: &str, column: &str| {
        rule == "all/ready-condition-lifecycle"
            && faulted.cells().iter().any(|(r, c, o, w)| {
                r == rule
                    && c == column
                    && o == "inconclusive"
                    && w.contains("refused a write to the object (a server fault)")
            })
            && clean
                .cells()
                .iter()
                .any(|(r, c, o, _)| r == rule && c == column && o == "pass")
    };
    let differ: Vec<_> = a
        .symmetric_difference(&b)
        .filter(|(r, c, _)| !half_write(r, c))
        .collect();
    // Each differing cell with its reason in both runs.
    let why: Vec<_> = clean
        .cells()
        .into_iter()
        .map(|c| ("clean", c))
        .chain(faulted.cells().into_iter().map(|c| ("faulted", c)))
        .filter(|(_, (r, c, ..))| differ.iter().any(|(dr, dc, _)| dr == r && dc == c))
        .collect();
    assert!(
        differ.is_empty(),
        "clean vs faulted: {why:#?}\n{}",
        faulted.stderr
    );
    assert_eq!(faulted.code, clean.code, "{}", faulted.stderr);
}

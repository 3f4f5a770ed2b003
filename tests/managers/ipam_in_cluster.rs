//! The in-cluster IPAM provider (`sigs.k8s.io/cluster-api-ipam-provider-in-cluster`) at two
//! release lines, v1.0.3 (on CAPI v1.10) and v1.1.0 (on CAPI v1.11), judged from our own
//! samples. Its managers are not among `../shared/providers`: each is built from
//! `tools/providers/ipam-in-cluster-v1.<n>` (`scripts/providers/build.sh`, cached), its
//! components its module's `config/`, read in place from the Go module cache. Without Go or the
//! module the tests print their skip line (and fail under `CAPI_CONFORMANCE_REQUIRE_REAL_CLUSTER=1`).
//! `CAPI_CONFORMANCE_IPAM_IN_CLUSTER` may name a v1.0.3 manager built by hand instead.

use super::shared_data::project_root;
use super::support::{Run, Server, built_provider, check};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The environment variable naming a built manager of the in-cluster IPAM provider v1.0.3
/// (instead of building one).
pub const MANAGER_ENV: &str = "CAPI_CONFORMANCE_IPAM_IN_CLUSTER";
const MODULE_V1_0: &str = "sigs.k8s.io/cluster-api-ipam-provider-in-cluster@v1.0.3";

/// v1.0.3's manager (from [`MANAGER_ENV`], else built) and the module's `config/` directory.
fn provider_v1_0() -> Option<(PathBuf, PathBuf)> {
    let Some(manager) = std::env::var_os(MANAGER_ENV).map(PathBuf::from) else {
        return built_provider("ipam-in-cluster-v1.0");
    };
    assert!(
        manager.is_file(),
        "{MANAGER_ENV}={}: not found",
        manager.display()
    );
    let cache = std::process::Command::new("go")
        .args(["env", "GOMODCACHE"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .expect("`go env GOMODCACHE` beside a hand-built manager");
    let config = PathBuf::from(cache).join(MODULE_V1_0).join("config");
    assert!(
        config.is_dir(),
        "{} not found (go mod download {MODULE_V1_0})",
        config.display()
    );
    Some((manager, config))
}

/// `check --embedded` of `manager` with `config` and our samples `samples` (under
/// `tests/data/ipam-in-cluster`), `flags` after the run's kubeconfig and webhook placeholders.
async fn judge(manager: &Path, config: &Path, flags: &str, samples: &[&str]) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let cmd = format!(
        "{} --kubeconfig {{kubeconfig}} --webhook-cert-dir {{webhook-cert-dir}} --webhook-port {{webhook-port}} {flags}",
        manager.display()
    );
    let mut extra = Vec::new();
    for s in samples {
        extra.push("--sample".to_string());
        extra.push(
            project_root()
                .join("tests/data/ipam-in-cluster")
                .join(s)
                .to_str()
                .unwrap()
                .to_string(),
        );
    }
    let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
    let run = check(dir.path(), Server::Embedded, config, &cmd, &extra).await;
    eprintln!(
        "{}: exit {:?} after {:.1} s, {} cells, manager log {} bytes",
        manager.display(),
        run.code,
        // From the run's own start (not the wait for another test's manager to finish).
        run.report["context"]["started_at"]
            .as_str()
            .and_then(|t| t.parse::<jiff::Timestamp>().ok())
            .map(|t| jiff::Timestamp::now().duration_since(t).as_secs_f64())
            .unwrap_or_default(),
        run.cells().len(),
        run.log.len()
    );
    run
}

/// Every pool column is judged in full (a cluster-scoped pool at the cluster level), the
/// manager's own `--help` decides `all/multi-instance-flags`, and what fails is exactly `want`.
fn assert_judged(run: &Run, pools: &[&str], want: &BTreeSet<(String, String)>) {
    assert_ne!(run.code, Some(2), "{}", run.stderr);
    assert_eq!(run.panics(), 0, "{}", run.log);
    for pool in pools {
        let column = format!("ipam-in-cluster/{pool}");
        let judged: Vec<_> = run
            .lifecycle()
            .into_iter()
            .filter(|(r, c, o, _)| c == &column && r.starts_with("ipam/") && o != "skip")
            .collect();
        assert!(
            judged.len() >= 9,
            "{column}: {judged:#?}\nstderr: {}\nlog: {}",
            run.stderr,
            run.log
        );
    }
    let flags: Vec<_> = run
        .cells()
        .into_iter()
        .filter(|(r, c, ..)| r == "all/multi-instance-flags" && c.starts_with("ipam-in-cluster/"))
        .collect();
    assert!(
        !flags.is_empty() && flags.iter().all(|(.., o, _)| o == "pass"),
        "{flags:#?}"
    );
    let problems: BTreeSet<(String, String)> = run
        .problems()
        .into_iter()
        .filter(|(_, c, ..)| !c.contains("(baseline)"))
        .map(|(r, c, ..)| (r, c))
        .collect();
    assert_eq!(&problems, want, "{:#?}", run.cells());
    assert_eq!(run.code, Some(1), "{}", run.stderr);
}

fn findings(rules: &[&str], pools: &[&str]) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for rule in rules {
        for pool in pools {
            out.insert((rule.to_string(), format!("ipam-in-cluster/{pool}")));
        }
    }
    out
}

/// The true findings about v1.0.3, each shown by its source (the module's files, v1.0.3):
///
/// - `ipam/claim-filter` (MUST), both pool columns: the claim of another provider's pool
///   (`poolRef` `ipam.other.example.com/OtherIPPool`) gets `ipam.cluster.x-k8s.io/ReleaseAddress`.
///   The claim's own events are filtered by pool kind (`internal/controllers/ipaddressclaim.go`
///   lines 72-83, `For(&ipamv1.IPAddressClaim{}, … ClaimReferencesPoolKind …)`), but the Cluster
///   watch of `pkg/ipamutil/reconciler.go` (lines 101-119, `Watches(&clusterv1.Cluster{},
///   EnqueueRequestsFromMapFunc(r.clusterToIPClaims), …)`, its `CreateFunc` at 110-113 and the
///   unpause `UpdateFunc` at 105-109) enqueues every claim of the Cluster whatever its pool:
///   `clusterToIPClaims` (lines 315-331) lists claims by the `clusterName` index alone. `Reconcile`
///   then adds the finalizer (line 181, `if controllerutil.AddFinalizer(claim,
///   ReleaseAddressFinalizer) { return ctrl.Result{}, nil }`) before it looks at the pool
///   (`handler.FetchPool`, line 190). For another kind `FetchPool` finds no pool
///   (`ipaddressclaim.go` lines 182-186 return `nil, nil, nil`) and `Reconcile` stops at `pool
///   is nil` (lines 202-206), so `reconcileDelete` (its `RemoveFinalizer`, line 311) is never
///   reached: a deleted claim of the other provider keeps the finalizer. Any Cluster event that
///   reaches the claim (the Cluster created or unpaused after its claims exist: a restart,
///   `clusterctl move`) does it; in the scenario the Cluster's create event is handled after
///   the claim is in the manager's cache.
/// - `ipam/pool-ready-condition` (SHOULD), both pool columns: `api/v1alpha2/inclusterippool_types.go`
///   `InClusterIPPoolStatus` (line 53) holds only `ipAddresses`: no `status.conditions`, so no
///   `Ready` condition either.
fn true_findings() -> BTreeSet<(String, String)> {
    findings(
        &["ipam/claim-filter", "ipam/pool-ready-condition"],
        &V1_0_POOLS,
    )
}

const V1_0_POOLS: [&str; 2] = ["InClusterIPPool", "GlobalInClusterIPPool"];

/// Both pool columns are judged in full (the cluster-scoped pool at the cluster level: created
/// at a namespaced path it was a 404, and 9 MUST cells of its column inconclusive), the
/// manager's own `--help` decides `all/multi-instance-flags`, and what fails is exactly the
/// true findings.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_in_cluster_ipam_provider_is_judged_on_both_pool_kinds() {
    let Some((manager, config)) = provider_v1_0() else {
        return;
    };
    let run = judge(
        &manager,
        &config,
        "--health-probe-bind-address {health-addr} --metrics-bind-address {metrics-addr} \
         --namespace {namespace} --watch-filter {watch_filter}",
        &["pools.yaml"],
    )
    .await;
    assert_judged(&run, &V1_0_POOLS, &true_findings());
}

const V1_1_POOLS: [&str; 4] = [
    "InClusterIPPool",
    "GlobalInClusterIPPool",
    "InClusterPrefixPool",
    "GlobalInClusterPrefixPool",
];

/// The true findings about v1.1.0, each shown by its source (the module's files, v1.1.0). Its
/// claims, addresses and Clusters are CAPI v1.11's (`ipam.cluster.x-k8s.io/v1beta2`,
/// `cluster.x-k8s.io/v1beta2`, `main.go` lines 32-33), its pools still `v1alpha2`, and it adds
/// two prefix pool kinds (`InClusterPrefixPool`, `GlobalInClusterPrefixPool`, IPv6 sub-prefixes).
///
/// - `ipam/claim-filter` (MUST), all four pool columns: unchanged from v1.0.3. The claim's own
///   events are filtered by pool kind (`internal/controllers/ipaddressclaim.go` lines 49-68), but
///   the Cluster watch of `pkg/ipamutil/reconciler.go` (lines 100-118, `Watches(&clusterv1.Cluster{},
///   EnqueueRequestsFromMapFunc(r.clusterToIPClaims), …)`, its `CreateFunc` at 109-112)
///   enqueues every claim of the Cluster whatever its pool: `clusterToIPClaims` (lines 318-334)
///   lists claims by the `clusterName` index alone. `Reconcile` adds the finalizer (line 180,
///   `if controllerutil.AddFinalizer(claim, ReleaseAddressFinalizer) { return ctrl.Result{}, nil }`)
///   before it fetches the pool (line 189). A claim of another kind gets the IP pool handler
///   (`ClaimHandlerFor`, `ipaddressclaim.go` lines 129-141, `default:`), whose `FetchPool`
///   finds no pool and returns `nil, nil, nil` (`internal/controllers/ipaddressclaim_address.go`
///   lines 118-122); `Reconcile` then stops at `pool is nil` (`reconciler.go` lines 201-205, an
///   error, so the claim is retried with back-off), and `reconcileDelete`'s `RemoveFinalizer`
///   (line 314) is never reached: a deleted claim of the other provider keeps
///   `ipam.cluster.x-k8s.io/ReleaseAddress`.
/// - `ipam/pool-ready-condition` (SHOULD), all four pool columns: `api/v1alpha2/inclusterippool_types.go`
///   `InClusterIPPoolStatus` (lines 65-69, the status of both IP pool kinds, lines 106 and 135)
///   and `api/v1alpha2/inclusterprefixpool_types.go` `InClusterPrefixPoolStatus` (lines 51-57,
///   both prefix pool kinds, lines 95 and 124) hold only `ipAddresses`: no `status.conditions`,
///   so no `Ready` condition either.
fn true_findings_v1_1() -> BTreeSet<(String, String)> {
    findings(
        &["ipam/claim-filter", "ipam/pool-ready-condition"],
        &V1_1_POOLS,
    )
}

/// v1.1.0 takes CAPI v1.11's manager flags (`main.go` line 79, `flags.AddManagerOptions`):
/// its metrics are served at `--diagnostics-address` (`--insecure-diagnostics` for plain HTTP),
/// and `--metrics-bind-address`, which v1.0.3 took, is gone (v1.0.3's command line makes it
/// exit 2 at once, `unknown flag: --metrics-bind-address`: the manager never serves). Its four
/// pool columns are judged in full, and what fails is exactly the true findings.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_in_cluster_ipam_provider_v1_1_is_judged_on_its_four_pool_kinds() {
    let Some((manager, config)) = built_provider("ipam-in-cluster-v1.1") else {
        return;
    };
    let run = judge(
        &manager,
        &config,
        "--health-probe-bind-address {health-addr} --diagnostics-address {metrics-addr} --insecure-diagnostics \
         --namespace {namespace} --watch-filter {watch_filter}",
        &["pools.yaml", "prefix-pools.yaml"],
    )
    .await;
    assert_judged(&run, &V1_1_POOLS, &true_findings_v1_1());
}

/// v1.1.0 started with v1.0.3's command line never serves: it rejects `--metrics-bind-address`
/// (`unknown flag`, exit 2; `main.go` line 79 takes CAPI v1.11's `--diagnostics-address`
/// instead), each time it is started again. Our command line is wrong there, not the provider;
/// and the run says so: every scenario cell of its pool columns is inconclusive for the
/// environment (none passes or is left out), and it exits 3.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_in_cluster_ipam_provider_v1_1_with_v1_0_flags_is_inconclusive_exit_3() {
    let Some((manager, config)) = built_provider("ipam-in-cluster-v1.1") else {
        return;
    };
    let run = judge(
        &manager,
        &config,
        "--health-probe-bind-address {health-addr} --metrics-bind-address {metrics-addr} \
         --namespace {namespace} --watch-filter {watch_filter}",
        &["pools.yaml", "prefix-pools.yaml"],
    )
    .await;
    assert!(
        run.log.contains("unknown flag: --metrics-bind-address"),
        "{}",
        run.log
    );
    for pool in V1_1_POOLS {
        let column = format!("ipam-in-cluster/{pool}");
        let cells: Vec<_> = run
            .lifecycle()
            .into_iter()
            .filter(|(_, c, ..)| c == &column)
            .collect();
        assert!(
            cells
                .iter()
                .filter(|(r, ..)| r.starts_with("ipam/"))
                .count()
                >= 9,
            "{column}: {cells:#?}"
        );
        assert!(
            cells
                .iter()
                .all(|(_, _, o, why)| o == "inconclusive" && why.contains("environment: ")),
            "{column}: {cells:#?}"
        );
    }
    assert_eq!(run.code, Some(3), "{}", run.stderr);
}

//! The in-cluster IPAM provider v1.0.3 (`sigs.k8s.io/cluster-api-ipam-provider-in-cluster`):
//! its namespaced `InClusterIPPool` and its cluster-scoped `GlobalInClusterIPPool`, judged from
//! our own samples. Its manager is not among `../shared/providers`: build it outside the project
//! and name it with `CAPI_CONFORMANCE_IPAM_IN_CLUSTER` (docs/providers.md "IPAM providers"); its components
//! are its module's `config/`, read in place from the Go module cache (`go env GOMODCACHE`).
//! Without either the test prints its skip line.

use super::shared_data::project_root;
use super::support::{Server, check};
use std::collections::BTreeSet;
use std::path::PathBuf;

/// The environment variable naming a built manager of the in-cluster IPAM provider v1.0.3.
pub const MANAGER_ENV: &str = "CAPI_CONFORMANCE_IPAM_IN_CLUSTER";
const MODULE: &str = "sigs.k8s.io/cluster-api-ipam-provider-in-cluster@v1.0.3";

fn skip(what: &str) -> Option<(PathBuf, PathBuf)> {
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "skipped: the in-cluster IPAM provider v1.0.3: {what}"
    );
    None
}

/// The manager (from [`MANAGER_ENV`]) and the module's `config/` directory.
fn provider() -> Option<(PathBuf, PathBuf)> {
    let Some(manager) = std::env::var_os(MANAGER_ENV).map(PathBuf::from) else {
        return skip(&format!("{MANAGER_ENV} not set (a built manager)"));
    };
    if !manager.is_file() {
        return skip(&format!("{} not found", manager.display()));
    }
    let cache = std::process::Command::new("go")
        .args(["env", "GOMODCACHE"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    let Some(cache) = cache else {
        return skip("`go env GOMODCACHE` gave nothing");
    };
    let config = PathBuf::from(cache).join(MODULE).join("config");
    if !config.is_dir() {
        return skip(&format!(
            "{} not found (go mod download {MODULE})",
            config.display()
        ));
    }
    Some((manager, config))
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
    let mut out = BTreeSet::new();
    for rule in ["ipam/claim-filter", "ipam/pool-ready-condition"] {
        for pool in ["InClusterIPPool", "GlobalInClusterIPPool"] {
            out.insert((rule.to_string(), format!("ipam-in-cluster/{pool}")));
        }
    }
    out
}

/// Both pool columns are judged in full (the cluster-scoped pool at the cluster level: created
/// at a namespaced path it was a 404, and 9 MUST cells of its column inconclusive), the
/// manager's own `--help` decides `all/multi-instance-flags`, and what fails is exactly the
/// true findings.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_in_cluster_ipam_provider_is_judged_on_both_pool_kinds() {
    let Some((manager, config)) = provider() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let sample = project_root().join("tests/data/ipam-in-cluster/pools.yaml");
    let cmd = format!(
        "{} --kubeconfig {{kubeconfig}} --webhook-cert-dir {{webhook-cert-dir}} --webhook-port {{webhook-port}} \
         --health-probe-bind-address {{health-addr}} --metrics-bind-address {{metrics-addr}} \
         --namespace {{namespace}} --watch-filter {{watch_filter}}",
        manager.display()
    );
    let run = check(
        dir.path(),
        Server::Embedded,
        &config,
        &cmd,
        &["--sample", sample.to_str().unwrap()],
    )
    .await;
    assert_ne!(run.code, Some(2), "{}", run.stderr);
    assert_eq!(run.panics(), 0, "{}", run.log);
    for pool in ["InClusterIPPool", "GlobalInClusterIPPool"] {
        let column = format!("ipam-in-cluster/{pool}");
        let judged: Vec<_> = run
            .lifecycle()
            .into_iter()
            .filter(|(r, c, o, _)| c == &column && r.starts_with("ipam/") && o != "skip")
            .collect();
        assert!(judged.len() >= 9, "{column}: {judged:#?}");
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
    assert_eq!(problems, true_findings(), "{:#?}", run.cells());
    assert_eq!(run.code, Some(1), "{}", run.stderr);
}

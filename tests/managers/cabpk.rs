//! CABPK (the kubeadm bootstrap provider) at three release lines: v1.11.11 from
//! `../shared/providers`, and v1.13.6 and v1.8.4 built from the Go module `sigs.k8s.io/cluster-api`
//! (`tools/providers/cabpk-v1.<n>`, `scripts/providers/build.sh`), each with its module's
//! `bootstrap/kubeadm/config`. From v1.11 KubeadmConfig serves v1beta1 and v1beta2, whose shapes
//! differ (`kubeletExtraArgs` a map at v1beta1, a list of name/value pairs at v1beta2): a sample
//! written at either version drives both columns through CABPK's conversion webhook. v1.8.4
//! serves v1beta1 only (contract label `cluster.x-k8s.io/v1beta1` alone). The worker join needs
//! the workload cluster its ClusterCache (v1.8: ClusterCacheTracker) probes with `GET /`.

use super::support::{Server, built_provider, check, components, manager, manager_cmd, sample};
use std::path::Path;

async fn judged_with(sample_file: &str, server: Server<'_>) {
    let dir = tempfile::tempdir().unwrap();
    let (Some(cabpk), Some(comps)) = (
        manager(dir.path(), "kubeadm-bootstrap-manager"),
        components("cabpk"),
    ) else {
        return;
    };
    judge(&cabpk, &comps, sample_file, &["v1beta1", "v1beta2"], server).await;
}

/// A CABPK built from `tools/providers/<name>`, judged from our sample `sample_file` on the
/// columns of `contracts`.
async fn built_judged_with(name: &str, sample_file: &str, contracts: &[&str]) {
    let Some((cabpk, config)) = built_provider(name) else {
        return;
    };
    judge(&cabpk, &config, sample_file, contracts, Server::Embedded).await;
}

/// Every column of `contracts` makes its bootstrap data (init and worker join), its token is in
/// the workload cluster, conversion is lossless, and the one failure is the true finding
/// `bootstrap/failure-gate` (below); 0 panics; exit 0.
async fn judge(
    cabpk: &Path,
    comps: &Path,
    sample_file: &str,
    contracts: &[&str],
    server: Server<'_>,
) {
    let dir = tempfile::tempdir().unwrap();
    let sample = sample(sample_file);
    let run = check(
        dir.path(),
        server,
        comps,
        &manager_cmd(cabpk),
        &["--sample", sample.to_str().unwrap()],
    )
    .await;
    assert_ne!(run.code, Some(2), "{sample_file}: {}", run.stderr);
    assert_eq!(run.panics(), 0, "{}", run.log);
    assert!(
        !run.log.contains("cluster is not reachable"),
        "{sample_file}: CABPK's ClusterCache could not reach the workload cluster"
    );
    // It did reach it: its join tokens are in the workload clusters' kube-system, for the
    // worker joins of both columns.
    let notes: Vec<&str> = run.report["notes"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(|n| n["message"].as_str())
        .collect();
    let tokens = notes
        .iter()
        .find(|n| n.starts_with("workload clusters with bootstrap token Secrets"))
        .unwrap_or_else(|| {
            panic!("{sample_file}: no join token in any workload cluster: {notes:#?}")
        });
    for contract in contracts {
        let column = match *contract {
            "v1beta1" => "kubeadmconfig-b1-",
            _ => "kubeadmconfig-b2-",
        };
        assert!(tokens.contains(column), "{sample_file}: {column}: {tokens}");
    }
    let config: Vec<_> = run
        .cells()
        .into_iter()
        .filter(|(_, c, ..)| c.contains("/KubeadmConfig@"))
        .collect();
    // With one served version there is nothing to convert (that cell skips).
    let converts = contracts.len() > 1;
    for contract in contracts {
        for rule in [
            "bootstrap/data-secret-created",
            "bootstrap/data-secret-name",
            "all/conversion-lossless",
        ]
        .into_iter()
        .filter(|r| converts || *r != "all/conversion-lossless")
        {
            assert!(
                config
                    .iter()
                    .any(|(r, c, o, _)| r == rule && c.ends_with(*contract) && o == "pass"),
                "{sample_file}: {rule} {contract}: {config:#?}"
            );
        }
    }
    // The one true finding: `bootstrap/failure-gate` (SHOULD, v1beta1 contract only). Nothing
    // under `bootstrap/kubeadm/internal/controllers` of CAPI v1.11.11, v1.13.6 or v1.8.4 reads
    // `failureReason` (grep `FailureReason` there: only `kubeadmconfig_controller_test.go`)
    // (the v1beta2 contract dropped terminal failures: `contracts/bootstrap-config.md`,
    // "BootstrapConfig: terminal failures"), while CABPK still declares the v1beta1 contract,
    // whose workflow asks it to stop. The failed config is judged after its sibling made its
    // data, for the quiet window plus twice that time, from CABPK's Paused=False on it: it must
    // be found, and nothing else.
    let true_finding = (
        "bootstrap/failure-gate".to_string(),
        "bootstrap-kubeadm/KubeadmConfig@v1beta1".to_string(),
        "SHOULD".to_string(),
    );
    let all_failed: Vec<_> = run
        .problems()
        .into_iter()
        .filter(|(.., o, _)| o == "fail")
        .map(|(r, c, _, l)| (r, c, l))
        .collect();
    assert!(
        all_failed.contains(&true_finding),
        "{sample_file}: {true_finding:?} not found: {all_failed:#?}"
    );
    let failed: Vec<_> = all_failed
        .into_iter()
        .filter(|f| *f != true_finding)
        .map(|(r, c, _)| (r, c))
        .collect();
    let reasons: Vec<_> = run
        .cells()
        .into_iter()
        .filter(|(r, c, o, _)| o == "fail" && failed.iter().any(|f| &f.0 == r && &f.1 == c))
        .collect();
    assert!(failed.is_empty(), "{sample_file}: {reasons:#?}");
    assert_eq!(run.code, Some(0), "{sample_file}: {}", run.stderr);
}

/// `kubeletExtraArgs` as a map: valid at v1beta1 only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cabpk_with_a_v1beta1_sample() {
    judged_with("cabpk-v1beta1.yaml", Server::Embedded).await;
}

/// `kubeletExtraArgs` as a list: valid at v1beta2 only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cabpk_with_a_v1beta2_sample() {
    judged_with("cabpk-v1beta2.yaml", Server::Embedded).await;
}

// Beside a real cluster CABPK runs in KCP's test (`kcp.rs`), which judges its columns from the
// v1beta2 sample with the same true finding.

/// CABPK v1.13.6, built from the module, with the v1beta2 sample.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cabpk_v1_13_with_a_v1beta2_sample() {
    built_judged_with("cabpk-v1.13", "cabpk-v1beta2.yaml", &["v1beta1", "v1beta2"]).await;
}

/// CABPK v1.13.6 with the v1beta1 sample.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cabpk_v1_13_with_a_v1beta1_sample() {
    built_judged_with("cabpk-v1.13", "cabpk-v1beta1.yaml", &["v1beta1", "v1beta2"]).await;
}

/// CABPK v1.8.4 (KubeadmConfig served at v1beta1 only), built from the module.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cabpk_v1_8_with_a_v1beta1_sample() {
    built_judged_with("cabpk-v1.8", "cabpk-v1beta1.yaml", &["v1beta1"]).await;
}

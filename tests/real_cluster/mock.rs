//! The built-in mock provider as an out-of-process manager beside a real cluster gives the
//! embedded run's verdict, cell for cell, and the cluster is as it was afterwards.

use super::cluster::{ONE_AT_A_TIME, RealCluster};
use super::support::{check, cleanup_finds, differences, mock_cmd, mock_components, snapshot};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mock_on_a_real_cluster_equals_the_embedded_run_cell_for_cell() {
    let _one = ONE_AT_A_TIME.lock().await;
    let Some(cluster) =
        RealCluster::start("the_mock_on_a_real_cluster_equals_the_embedded_run_cell_for_cell")
    else {
        return;
    };
    let kc = cluster.kubeconfig().to_str().unwrap().to_string();
    let components = mock_components(cluster.dir());
    let before = snapshot(cluster.kubeconfig());
    let real = check(&[
        "check",
        "--kubeconfig",
        &kc,
        "--crds",
        components.to_str().unwrap(),
        "--provider-cmd",
        &mock_cmd(""),
    ])
    .await;
    let embedded = check(&["check", "--embedded"]).await;
    assert_eq!(embedded.code, Some(0), "{}", embedded.stderr);
    let (r, e) = (real.cells(), embedded.cells());
    assert!(e.len() > 900, "{}", embedded.stderr);
    let diff = differences(&e, &r);
    assert!(
        diff.is_empty(),
        "embedded vs real cluster:\n{}\n{}",
        diff.join("\n"),
        real.stderr
    );
    assert_eq!(real.code, Some(0), "{}", real.stderr);
    // The cluster is as it was, and a cleanup finds nothing of the run.
    assert_eq!(snapshot(cluster.kubeconfig()), before);
    assert_eq!(cleanup_finds(cluster.kubeconfig()), Vec::<String>::new());
}

/// A fault of the out-of-process mock fails its rule on the real cluster, and only it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fault_of_the_manager_fails_its_rule_on_a_real_cluster() {
    let _one = ONE_AT_A_TIME.lock().await;
    let Some(cluster) =
        RealCluster::start("a_fault_of_the_manager_fails_its_rule_on_a_real_cluster")
    else {
        return;
    };
    let kc = cluster.kubeconfig().to_str().unwrap().to_string();
    let components = mock_components(cluster.dir());
    let run = check(&[
        "check",
        "--kubeconfig",
        &kc,
        "--crds",
        components.to_str().unwrap(),
        "--scenarios",
        "SC-inframachine",
        "--provider-cmd",
        &mock_cmd("infra-machine/provider-id"),
    ])
    .await;
    let failed = run.failed();
    assert_eq!(
        failed,
        [
            (
                "infra-machine/provider-id".to_string(),
                "infrastructure-mock/MockMachine@v1beta1".to_string()
            ),
            (
                "infra-machine/provider-id".to_string(),
                "infrastructure-mock/MockMachine@v1beta2".to_string()
            ),
        ],
        "{}",
        run.stderr
    );
    assert_eq!(run.code, Some(1), "{}", run.stderr);
}

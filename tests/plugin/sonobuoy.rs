//! The Sonobuoy plugin: the definition `manifests sonobuoy` prints, its container
//! command run as Sonobuoy runs it (the results volume, `SONOBUOY_RESULTS_DIR`, the in-cluster
//! configuration of Sonobuoy's service account) against `serve`; then what Sonobuoy's worker
//! reads: the `done` file naming the report, and the JUnit, parsed by Python's junitparser.

use crate::in_cluster::{admin_kubeconfig, pod, run_container};
use crate::least_privilege::{check, cluster_with};
use crate::python_tools::python_with;
use crate::support::{repo_root, stderr, tool_bin};
use capi_conformance::commands::check::sonobuoy::{DONE_FILE, JUNIT_FILE, RESULTS_DIR_ENV};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The plugin definition `manifests sonobuoy ARGS` prints.
fn plugin(args: &[&str]) -> Value {
    let out = Command::new(tool_bin())
        .args(["manifests", "sonobuoy"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    serde_saphyr::from_str(&String::from_utf8_lossy(&out.stdout)).unwrap()
}

/// Our conformant v1beta2 provider with one MUST violation (its InfraMachine cluster-scoped):
/// its CRDs and ClusterRoles, for `serve --load`.
fn violating_provider(dir: &Path) -> Vec<PathBuf> {
    let text = std::fs::read_to_string(
        repo_root().join("fixtures/conformant-v1beta2/infrastructure-components.yaml"),
    )
    .unwrap();
    let mut docs: Vec<Value> = serde_saphyr::from_multiple(&text).unwrap();
    docs.retain(|d| {
        matches!(
            d["kind"].as_str(),
            Some("CustomResourceDefinition" | "ClusterRole")
        )
    });
    let crd = docs
        .iter_mut()
        .find(|d| d["metadata"]["name"] == "foomachines.infrastructure.foo.example.io")
        .unwrap();
    crd["spec"]["scope"] = Value::from("Cluster");
    vec![crate::manifests::write_docs(dir, "provider.yaml", &docs)]
}

/// junitparser's reading of a JUnit file: (tests, failures, errors, skipped).
fn junitparser_counts(python: &Path, file: &Path) -> (u64, u64, u64, u64) {
    let script = r#"
import json, sys
from junitparser import JUnitXml, Failure, Error, Skipped
xml = JUnitXml.fromfile(sys.argv[1])
counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
for suite in xml:
    for case in suite:
        counts["tests"] += 1
        for result in case.result:
            if isinstance(result, Failure):
                counts["failures"] += 1
            elif isinstance(result, Error):
                counts["errors"] += 1
            elif isinstance(result, Skipped):
                counts["skipped"] += 1
print(json.dumps(counts))
"#;
    let out = Command::new(python)
        .args(["-c", script])
        .arg(file)
        .output()
        .unwrap();
    assert!(out.status.success(), "junitparser: {}", stderr(&out));
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    let n = |k: &str| c[k].as_u64().unwrap();
    (n("tests"), n("failures"), n("errors"), n("skipped"))
}

/// The report file the `done` file names (it must be inside the results directory).
fn reported_file(results: &Path) -> PathBuf {
    let done = std::fs::read_to_string(results.join(DONE_FILE)).expect("the done file");
    assert_eq!(done, done.trim(), "the done file holds the bare path");
    let file = PathBuf::from(done);
    assert!(
        file.is_absolute() && file.starts_with(results),
        "{}",
        file.display()
    );
    assert_eq!(file.file_name().unwrap(), JUNIT_FILE);
    assert!(file.is_file(), "{}", file.display());
    file
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sonobuoy_plugin_writes_its_junit_and_the_done_file_as_the_worker_expects() {
    let test = "sonobuoy_plugin_writes_its_junit_and_the_done_file_as_the_worker_expects";
    let Some(python) = python_with("junitparser", test) else {
        return;
    };
    let Some(cluster) = cluster_with(test, violating_provider).await else {
        return;
    };
    let definition = plugin(&["--static-only"]);
    assert_eq!(definition["sonobuoy-config"]["driver"], "Job");
    assert_eq!(definition["sonobuoy-config"]["result-format"], "junit");
    let spec = &definition["spec"];
    let mount = spec["volumeMounts"][0]["mountPath"].as_str().unwrap();

    // The admin's verdict: the provider fails a MUST rule.
    let admin = check(&cluster.served.kubeconfig, &["--static-only"]);
    assert_eq!(admin.status.code(), Some(1), "{}", stderr(&admin));
    let report: Value = serde_json::from_slice(&admin.stdout).unwrap();
    let results = report["results"].as_array().unwrap();
    let count = |outcomes: &[&str]| {
        results
            .iter()
            .filter(|r| outcomes.contains(&r["outcome"].as_str().unwrap()))
            .count() as u64
    };

    // The plugin container as Sonobuoy runs it: its service account (cluster-admin by
    // default) in-cluster, the results volume mounted, SONOBUOY_RESULTS_DIR set.
    let results_dir = tempfile::tempdir().unwrap();
    let results_path = results_dir.path().to_path_buf();
    let (_, _, _, token) = admin_kubeconfig(&cluster.served.kubeconfig);
    let pod = pod(&cluster.served.kubeconfig, "sonobuoy", &token);
    let mounts = BTreeMap::from([(mount.to_string(), results_path.clone())]);
    let env = [(RESULTS_DIR_ENV, results_path.to_str().unwrap())];
    let out = tokio::task::block_in_place(|| run_container(spec, &mounts, &pod, &env));
    assert_eq!(out.status.code(), admin.status.code(), "{}", stderr(&out));
    let junit = reported_file(&results_path);
    let (tests, failures, errors, skipped) = junitparser_counts(&python, &junit);
    assert_eq!(tests, results.len() as u64);
    assert_eq!(failures, count(&["fail"]));
    assert!(failures > 0);
    assert_eq!(errors, count(&["inconclusive"]));
    assert_eq!(skipped, count(&["skip", "waived"]));

    // A run that cannot reach a verdict (a token the server rejects): exit 2, and Sonobuoy
    // still gets a report saying why.
    let results_dir = tempfile::tempdir().unwrap();
    let results_path = results_dir.path().to_path_buf();
    let pod = crate::in_cluster::pod(&cluster.served.kubeconfig, "sonobuoy", "not-a-token");
    let mounts = BTreeMap::from([(mount.to_string(), results_path.clone())]);
    let env = [(RESULTS_DIR_ENV, results_path.to_str().unwrap())];
    let out = tokio::task::block_in_place(|| run_container(spec, &mounts, &pod, &env));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let junit = reported_file(&results_path);
    assert_eq!(junitparser_counts(&python, &junit), (1, 0, 1, 0));
}

//! `check` as a process: against `serve` (non-embedded: broken environment, Ctrl-C cleanup)
//! and `check --embedded --provider-cmd` with the mock as an out-of-process controller.

use crate::manifests::write_docs;
use capi_conformance::mock::crds::mock_crds;
use capi_conformance::mock::manifests::{aggregated_cluster_role, manager_cluster_role};
use capi_conformance::scenarios::RUN_LABEL;
use kube::api::{Api, DynamicObject, ListParams};
use kube::discovery::ApiResource;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_capi-conformance")
}

/// A `serve` child with `docs` loaded; killed on drop.
struct Serve {
    child: Child,
    kubeconfig: PathBuf,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn mock_docs() -> Vec<Value> {
    let mut docs: Vec<Value> = mock_crds()
        .unwrap()
        .into_iter()
        .map(|c| serde_json::to_value(c).unwrap())
        .collect();
    docs.push(aggregated_cluster_role());
    docs.push(manager_cluster_role());
    docs
}

fn serve(dir: &Path, load: &[PathBuf]) -> Serve {
    let kubeconfig = dir.join("kubeconfig");
    let mut cmd = Command::new(bin());
    cmd.arg("serve").arg("--write-kubeconfig").arg(&kubeconfig);
    for l in load {
        cmd.arg("--load").arg(l);
    }
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let mut line = String::new();
    BufReader::new(out).read_line(&mut line).unwrap();
    assert!(line.starts_with("serving"), "serve said {line:?}");
    Serve { child, kubeconfig }
}

async fn client(kubeconfig: &Path) -> kube::Client {
    let kc = kube::config::Kubeconfig::read_from(kubeconfig).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    kube::Client::try_from(config).unwrap()
}

fn resource(group: &str, version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: group.into(),
        version: version.into(),
        api_version: if group.is_empty() {
            version.into()
        } else {
            format!("{group}/{version}")
        },
        kind: kind.into(),
        plural: plural.into(),
    }
}

/// Every object carrying the run label, in the kinds a run creates.
async fn labelled_objects(client: &kube::Client) -> Vec<String> {
    let kinds = [
        resource("", "v1", "Namespace", "namespaces"),
        resource("", "v1", "Secret", "secrets"),
        resource("cluster.x-k8s.io", "v1beta2", "Cluster", "clusters"),
        resource("cluster.x-k8s.io", "v1beta2", "Machine", "machines"),
        resource("cluster.x-k8s.io", "v1beta2", "MachinePool", "machinepools"),
        resource(
            "infrastructure.mock.capi-conformance.io",
            "v1beta2",
            "MockCluster",
            "mockclusters",
        ),
        resource(
            "infrastructure.mock.capi-conformance.io",
            "v1beta2",
            "MockMachine",
            "mockmachines",
        ),
        resource(
            "bootstrap.mock.capi-conformance.io",
            "v1beta2",
            "MockConfig",
            "mockconfigs",
        ),
    ];
    let mut out = Vec::new();
    for k in kinds {
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &k);
        if let Ok(list) = api.list(&ListParams::default().labels(RUN_LABEL)).await {
            out.extend(
                list.items
                    .into_iter()
                    .map(|o| format!("{} {}", k.kind, o.metadata.name.unwrap_or_default())),
            );
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_core_crds_make_the_scenarios_inconclusive_exit_3() {
    let dir = tempfile::tempdir().unwrap();
    let crds = write_docs(dir.path(), "mock.yaml", &mock_docs());
    let s = serve(dir.path(), &[crds]);
    let out = Command::new(bin())
        .args([
            "check",
            "--scenarios",
            "SC-inframachine",
            "-o",
            "json",
            "--progress",
            "never",
        ])
        .arg("--kubeconfig")
        .arg(&s.kubeconfig)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let lifecycle: Vec<&Value> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["phase"] == "lifecycle" && r["rule_id"] != "all/rbac-aggregation")
        .collect();
    assert!(!lifecycle.is_empty());
    assert!(lifecycle.iter().all(|r| {
        r["outcome"] == "inconclusive"
            && r["reason"]
                .as_str()
                .unwrap()
                .contains("--install-core-crds")
    }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_during_a_run_leaves_no_labelled_object() {
    let dir = tempfile::tempdir().unwrap();
    let crds = write_docs(dir.path(), "mock.yaml", &mock_docs());
    let core = write_docs(
        dir.path(),
        "core.yaml",
        &capi_conformance::mock::core_crds::core_crd_documents(),
    );
    let s = serve(dir.path(), &[crds, core]);
    // The provider: the mock as its own process.
    let mut provider = Command::new(bin())
        .args(["mock-provider", "run", "--kubeconfig"])
        .arg(&s.kubeconfig)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let client = client(&s.kubeconfig).await;
    // Interrupt at a pseudo-random step (time since the epoch picks the delay).
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let delay = Duration::from_millis(300 + u64::from(nanos % 1200));
    let mut check = Command::new(bin())
        .args([
            "check",
            "--progress",
            "never",
            "-o",
            "json",
            "--timeout",
            "3s",
            "--quiet-window",
            "300ms",
        ])
        .args([
            "--scenarios",
            "SC-infracluster,SC-inframachine,SC-bootstrap",
        ])
        .arg("--kubeconfig")
        .arg(&s.kubeconfig)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The delay counts from when the process handles Ctrl-C (before that a signal kills it).
    assert!(
        crate::signals::wait_until_catching_sigint(check.id(), Duration::from_secs(60)),
        "check never installed its Ctrl-C handling"
    );
    tokio::time::sleep(delay).await;
    crate::signals::sigint(&check);
    let status = check.wait().unwrap();
    let _ = provider.kill();
    let _ = provider.wait();
    // Either interrupted (exit 2 after cleanup) or finished first (0/1/3); never killed.
    assert!(status.code().is_some(), "{status:?}");
    let left = labelled_objects(&client).await;
    assert!(left.is_empty(), "left after SIGINT at {delay:?}: {left:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_cmd_runs_the_mock_out_of_process_and_its_fault_fails_its_rule() {
    let dir = tempfile::tempdir().unwrap();
    for (faults, want_exit, want_failed) in [
        ("", 0, None),
        (
            "infra-machine/provider-id",
            1,
            Some("infra-machine/provider-id"),
        ),
    ] {
        let mut cmd = format!(
            "{} mock-provider run --kubeconfig {{kubeconfig}} --watch-namespace {{namespace}}",
            bin()
        );
        if !faults.is_empty() {
            cmd.push_str(&format!(" --faults {faults}"));
        }
        let out = Command::new(bin())
            .args(["check", "--embedded", "--progress", "never", "-o", "json"])
            .args(["--scenarios", "SC-inframachine", "--provider-cmd", &cmd])
            .arg("--report-dir")
            .arg(dir.path())
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        let failed: Vec<String> = report["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| {
                r["outcome"] == "fail"
                    && r["phase"] == "lifecycle"
                    && r["rule_id"] != "all/rbac-aggregation"
            })
            .map(|r| {
                format!(
                    "{} {}",
                    r["rule_id"].as_str().unwrap(),
                    r["column"].as_str().unwrap()
                )
            })
            .collect();
        match want_failed {
            None => assert!(failed.is_empty(), "{failed:?}"),
            Some(rule) => {
                assert!(!failed.is_empty());
                assert!(
                    failed
                        .iter()
                        .all(|f| f.starts_with(rule) && !f.contains("(baseline)")),
                    "{failed:?}"
                );
            }
        }
        let _ = want_exit;
        // The provider's log was streamed to the report directory.
        assert!(std::fs::read_dir(dir.path()).unwrap().any(|e| {
            e.unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("provider-")
        }));
    }
}

/// On a non-embedded cluster (`serve` with one of the mock's CRDs, its single-version IPAM pool,
/// but no CAPI core), with `--install-core-crds`: the run installs the missing core CRDs (their
/// conversion served by the run: IPAddressClaims at v1beta1 and v1beta2), runs the in-process
/// mock as SC-ipam's baseline (it passes), and removes what it installed while the
/// pre-existing CRD stays. (A pre-existing two-version mock CRD would name a conversion
/// Service nobody serves on this cluster.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mock_baseline_runs_on_a_real_cluster_and_installed_crds_are_removed() {
    let dir = tempfile::tempdir().unwrap();
    let pool: Vec<Value> = mock_docs()
        .into_iter()
        .filter(|d| d["metadata"]["name"] == "mockippools.ipam.mock.capi-conformance.io")
        .collect();
    assert_eq!(pool.len(), 1);
    assert!(
        pool[0]["spec"]["conversion"]["webhook"].is_null(),
        "{:#}",
        pool[0]
    );
    let crds = write_docs(dir.path(), "mock.yaml", &pool);
    let s = serve(dir.path(), &[crds]);
    let client = client(&s.kubeconfig).await;
    let out = Command::new(bin())
        .args([
            "check",
            "--install-core-crds",
            "--progress",
            "never",
            "-o",
            "json",
        ])
        .args(["--scenarios", "SC-ipam", "--timeout", "2s"])
        .args(["--quiet-window", "300ms"])
        .arg("--kubeconfig")
        .arg(&s.kubeconfig)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
    });
    let baseline: Vec<&Value> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| {
            r["phase"] == "lifecycle" && r["column"].as_str().unwrap().contains("(baseline)")
        })
        .collect();
    assert!(
        baseline.iter().any(|r| r["outcome"] == "pass"),
        "no passing baseline cell: {baseline:?}"
    );
    let bad: Vec<&&Value> = baseline
        .iter()
        .filter(|r| r["outcome"] == "fail" || r["outcome"] == "inconclusive")
        .collect();
    assert!(bad.is_empty(), "baseline: {bad:?}");
    let crd_api: Api<DynamicObject> = Api::all_with(
        client.clone(),
        &resource(
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
            "customresourcedefinitions",
        ),
    );
    let names: Vec<String> = crd_api
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|c| c.metadata.name)
        .collect();
    assert!(
        !names.iter().any(|n| n == "clusters.cluster.x-k8s.io"),
        "installed core CRD left behind: {names:?}"
    );
    assert!(
        !names
            .iter()
            .any(|n| n == "mockconfigs.bootstrap.mock.capi-conformance.io"),
        "installed mock CRD left behind: {names:?}"
    );
    assert!(
        names
            .iter()
            .any(|n| n == "mockippools.ipam.mock.capi-conformance.io")
    );
    assert!(labelled_objects(&client).await.is_empty());
}

/// A `--provider-cmd` manager that never serves (it exits at once, each time it is started
/// again) leaves every scenario cell of its IPAM pool column inconclusive for the environment,
/// not missing, passed or skipped, and the run exits 3. An IPAM pool column has no contract of
/// its own (its CRD carries no `cluster.x-k8s.io/<contract>` label): its cells are still there.
#[test]
fn a_manager_that_never_serves_leaves_its_ipam_pool_cells_inconclusive_exit_3() {
    let dir = tempfile::tempdir().unwrap();
    let crd = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/ipam-kubebuilder/config/crd/bases/ipam.baz.example.io_bazippools.yaml");
    let sample = dir.path().join("pool.yaml");
    std::fs::write(
        &sample,
        "apiVersion: ipam.baz.example.io/v1alpha1\nkind: BazIPPool\nmetadata:\n  name: pool\n\
         spec:\n  addresses: [\"192.0.2.10-192.0.2.20\"]\n  prefix: 24\n",
    )
    .unwrap();
    let out = Command::new(bin())
        .args(["check", "--embedded", "--progress", "never", "-o", "json"])
        .arg("--crds")
        .arg(&crd)
        .arg("--sample")
        .arg(&sample)
        .args(["--provider-cmd", "echo starting; exit 1 # {health-addr}"])
        .arg("--report-dir")
        .arg(dir.path().join("reports"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no JSON report ({e}): {stderr}"));
    let cells: Vec<(String, String, String)> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| {
            r["phase"] == "lifecycle"
                && r["column"].as_str().unwrap().contains("BazIPPool")
                && !r["column"].as_str().unwrap().contains("(baseline)")
        })
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap_or_default().to_string();
            (s("rule_id"), s("outcome"), s("reason"))
        })
        .collect();
    assert!(
        cells
            .iter()
            .filter(|(r, ..)| r.starts_with("ipam/"))
            .count()
            >= 9,
        "{cells:#?}\n{stderr}"
    );
    for (rule, outcome, reason) in &cells {
        assert_eq!(outcome, "inconclusive", "{rule}: {reason}");
        assert!(
            reason.contains("environment: ") && reason.contains("exited"),
            "{rule}: {reason}"
        );
    }
    assert_eq!(out.status.code(), Some(3), "{stderr}");
}

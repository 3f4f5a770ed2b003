//! Running `check` against a real cluster and reading what it left.

#![allow(dead_code)]

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_capi-conformance")
}

/// What a `check -o json` run gave.
pub struct Run {
    pub code: Option<i32>,
    pub report: Value,
    pub stderr: String,
}

impl Run {
    /// Every cell: (rule, column) → (outcome, reason).
    pub fn cells(&self) -> BTreeMap<(String, String), (String, String)> {
        self.report["results"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .map(|r| {
                let s = |k: &str| r[k].as_str().unwrap_or_default().to_string();
                ((s("rule_id"), s("column")), (s("outcome"), s("reason")))
            })
            .collect()
    }

    /// Failing cells outside the baseline: (rule, column).
    pub fn failed(&self) -> Vec<(String, String)> {
        self.cells()
            .into_iter()
            .filter(|((_, c), (o, _))| o == "fail" && !c.contains("(baseline)"))
            .map(|(k, _)| k)
            .collect()
    }
}

/// `capi-conformance <args> -o json --progress never`.
pub async fn check(args: &[&str]) -> Run {
    let out = tokio::process::Command::new(bin())
        .args(args)
        .args(["-o", "json", "--progress", "never"])
        .output()
        .await
        .expect("the tool runs");
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no JSON report ({e}); stderr: {stderr}"));
    Run {
        code: out.status.code(),
        report,
        stderr,
    }
}

/// The differing cells of two runs, each with both sides, for an assertion message.
pub fn differences(
    a: &BTreeMap<(String, String), (String, String)>,
    b: &BTreeMap<(String, String), (String, String)>,
) -> Vec<String> {
    let keys: std::collections::BTreeSet<_> = a.keys().chain(b.keys()).collect();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| format!("{} {}: {:?} vs {:?}", k.0, k.1, a.get(k), b.get(k)))
        .collect()
}

/// What a cluster holds that a run may create or change: the names of every CRD, ClusterRole,
/// ClusterRoleBinding, webhook configuration and Namespace, and of every object carrying the run
/// label in the kinds `cleanup` removes (as `kubectl get` lists them).
pub fn snapshot(kubeconfig: &Path) -> Vec<String> {
    let kinds = "customresourcedefinitions,clusterroles,clusterrolebindings,mutatingwebhookconfigurations,validatingwebhookconfigurations,namespaces";
    let out = std::process::Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(["get", kinds, "-o", "name"])
        .output()
        .expect("kubectl runs");
    assert!(
        out.status.success(),
        "kubectl get: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    names.sort();
    names
}

/// What `cleanup --all` finds on the cluster (its `removed:`/`leftover:` lines).
pub fn cleanup_finds(kubeconfig: &Path) -> Vec<String> {
    let out = std::process::Command::new(bin())
        .args(["cleanup", "--all", "--kubeconfig"])
        .arg(kubeconfig)
        .output()
        .expect("cleanup runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "cleanup --all: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with("removed: ") || l.starts_with("leftover: "))
        .map(str::to_string)
        .collect()
}

/// The mock provider's components (`mock-provider manifests`) in `dir`.
pub fn mock_components(dir: &Path) -> std::path::PathBuf {
    let out = std::process::Command::new(bin())
        .args(["mock-provider", "manifests"])
        .output()
        .expect("mock-provider manifests runs");
    assert!(out.status.success());
    let path = dir.join("mock-components.yaml");
    std::fs::write(&path, out.stdout).expect("write the components");
    path
}

/// The mock as a provider team runs its manager beside a cluster (`--provider-cmd`), with
/// `faults` (comma-separated rule ids, or empty).
pub fn mock_cmd(faults: &str) -> String {
    let mut cmd = format!(
        "{} mock-provider run --kubeconfig {{kubeconfig}} --watch-namespace {{namespace}} \
         --watch-filter {{watch_filter}} --webhook-cert-dir {{webhook-cert-dir}} --webhook-port {{webhook-port}}",
        bin()
    );
    if !faults.is_empty() {
        cmd.push_str(&format!(" --faults {faults}"));
    }
    cmd
}

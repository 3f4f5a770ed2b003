//! Kustomize-aware inputs and findings at the source line, on our own kubebuilder-style tree
//! (`fixtures/kubebuilder`): bases without labels, webhook/cainjection patches, contract labels
//! added by `config/crd/kustomization.yaml`, `config/default`, a second provider tree under
//! `bootstrap/config`, and a `metadata.yaml` at the repository root.

#[path = "kustomize/source_lines.rs"]
mod source_lines;

use crate::support::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn tree() -> PathBuf {
    fixtures().join("kubebuilder")
}

/// Whether a kustomize is on PATH; else prints why the test is skipped (and fails under
/// `CAPI_CONFORMANCE_REQUIRE_SHARED=1`, where CI has kubectl).
pub fn kustomize_or_skip(what: &str) -> bool {
    if on_path("kustomize") || on_path("kubectl") {
        return true;
    }
    if std::env::var(crate::shared_data::REQUIRE_SHARED).as_deref() == Ok("1") {
        panic!(
            "{what}: neither kustomize nor kubectl is on PATH, and CAPI_CONFORMANCE_REQUIRE_SHARED=1 requires one"
        );
    }
    eprintln!("skipped: {what}: neither kustomize nor kubectl is on PATH");
    false
}

/// `lint ARGS -o json`: (exit code, report, stderr).
pub fn lint_json(args: &[&str]) -> (i32, Value, String) {
    let mut all = vec!["lint"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", "json"]);
    let (code, stdout, stderr) = run_bin(&all, None);
    let report = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (code, report, stderr)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// (rule, column, outcome) of every result.
pub fn cells(report: &Value) -> Vec<(String, String, String)> {
    let mut out: Vec<(String, String, String)> = report["results"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|r| {
                    (
                        r["rule_id"].as_str().unwrap_or("").to_string(),
                        r["column"].as_str().unwrap_or("").to_string(),
                        r["outcome"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

fn notes(report: &Value) -> Vec<String> {
    report["notes"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|n| {
                    format!(
                        "{}: {}",
                        n["source"].as_str().unwrap_or(""),
                        n["message"].as_str().unwrap_or("")
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn outcome<'a>(report: &'a Value, rule: &str, column: &str) -> Option<&'a Value> {
    report["results"]
        .as_array()?
        .iter()
        .find(|r| r["rule_id"] == rule && r["column"] == column)
}

/// Copies directory `from` into `to`, recursively.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

/// A copy of our tree in a temporary directory (for tests that edit it).
fn copy_tree() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    copy_dir(&tree(), d.path());
    d
}

/// The 1-based line of the first line of `file` that, trimmed, starts with `text`, after line
/// `after`.
fn line_of(file: &Path, text: &str, after: usize) -> usize {
    let body = std::fs::read_to_string(file).unwrap();
    body.lines()
        .enumerate()
        .skip(after)
        .find(|(_, l)| l.trim_start().starts_with(text))
        .map(|(i, _)| i + 1)
        .unwrap_or_else(|| panic!("no `{text}` in {}", file.display()))
}

pub fn on_path(name: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(name).is_file()))
}

#[test]
fn a_repository_config_renders_config_default() {
    if !kustomize_or_skip("lint of a kubebuilder config/") {
        return;
    }
    let config = tree().join("config");
    let (code, report, stderr) = lint_json(&[s(&config)]);
    assert_eq!(code, 0, "{stderr}");
    // The contract label came from config/crd/kustomization.yaml: the columns have a contract.
    for col in [
        "infrastructure-bar/BarCluster@v1beta2",
        "infrastructure-bar/BarMachine@v1beta2",
    ] {
        let r = outcome(&report, "all/contract-label", col).unwrap_or_else(|| panic!("{col}"));
        assert_eq!(r["outcome"], "pass", "{r}");
    }
    let n = notes(&report);
    assert!(
        n.iter().any(
            |n| n.starts_with(&format!("{}: kustomize root", s(&config.join("default"))))
                && n.contains("provider(s) infrastructure-bar")
        ),
        "{n:?}"
    );
    // The same directory read file by file (the bases alone) has no contract label at all:
    // the difference is the rendering.
    let (code, report, _) = lint_json(&[s(&config.join("crd/bases"))]);
    assert_eq!(code, 1);
    // (No provider label either: the provider is the group family.)
    let r = outcome(&report, "all/contract-label", "bar.example.io/BarMachine").unwrap();
    assert_eq!(r["outcome"], "fail");
}

#[test]
fn a_kustomization_directory_and_file_are_rendered() {
    if !kustomize_or_skip("lint of a kustomization directory") {
        return;
    }
    let crd = tree().join("config/crd");
    for input in [crd.clone(), crd.join("kustomization.yaml")] {
        let (code, report, stderr) = lint_json(&[s(&input)]);
        // Only the CRDs: the aggregated ClusterRole is in config/rbac.
        assert_eq!(code, 1, "{stderr}");
        let r = outcome(
            &report,
            "all/contract-label",
            "infrastructure-bar/BarMachine@v1beta2",
        )
        .unwrap();
        assert_eq!(r["outcome"], "pass", "{}", input.display());
        let r = outcome(
            &report,
            "all/rbac-aggregation",
            "infrastructure-bar/BarMachine@v1beta2",
        )
        .unwrap();
        assert_eq!(r["outcome"], "fail");
    }
}

#[test]
fn a_repository_root_renders_each_provider_tree_on_its_own() {
    if !kustomize_or_skip("lint of a repository root") {
        return;
    }
    let (code, report, stderr) = lint_json(&[s(&tree())]);
    assert_eq!(code, 0, "{stderr}");
    let n = notes(&report);
    for (root, provider) in [
        ("bootstrap/config/default", "bootstrap-bar"),
        ("config/default", "infrastructure-bar"),
    ] {
        let root = tree().join(root);
        assert!(
            n.iter()
                .any(|n| n.starts_with(&format!("{}: kustomize root", s(&root)))
                    && n.ends_with(&format!("provider(s) {provider}"))),
            "{root:?} {n:?}"
        );
    }
    assert!(
        n.iter().any(
            |n| n.contains("1 YAML file(s) beside its kustomize roots not read: metadata.yaml")
        ),
        "{n:?}"
    );
    // Cell for cell what each tree gives on its own.
    let mut separate = Vec::new();
    for t in ["config", "bootstrap/config"] {
        let (code, r, stderr) = lint_json(&[s(&tree().join(t))]);
        assert_eq!(code, 0, "{stderr}");
        separate.extend(cells(&r));
    }
    separate.sort();
    assert_eq!(cells(&report), separate);
}

#[test]
fn a_lone_kustomize_patch_is_skipped_with_a_note() {
    let patch = tree().join("config/crd/patches/webhook_in_barmachines.yaml");
    let components = fixtures().join("conformant-v1beta2/infrastructure-components.yaml");
    let (code, report, stderr) = lint_json(&[s(&components), s(&patch)]);
    assert_eq!(code, 0, "a lone patch is never an input error: {stderr}");
    let n = notes(&report);
    assert!(
        n.iter().any(|n| n.starts_with(&format!("{}#0: CustomResourceDefinition barmachines.infrastructure.bar.example.io is a kustomize patch", s(&patch)))
            && n.contains("lint the kustomization that uses it")),
        "{n:?}"
    );
    // The table says so too.
    let (_, table, _) = run_bin(&["lint", s(&components), s(&patch)], None);
    assert!(
        table.contains("Input notes (1)") && table.contains("is a kustomize patch"),
        "{table}"
    );
    // Patches alone: no CRD, said with the reason.
    let (code, stdout, stderr) = run_bin(&["lint", s(&tree().join("config/crd/patches"))], None);
    assert_eq!(code, 2);
    assert!(stdout.is_empty());
    assert!(
        stderr.contains("no CustomResourceDefinition found")
            && stderr
                .contains("2 kustomize patch(es) skipped: lint the kustomization that uses them"),
        "{stderr}"
    );
}

/// `check --kustomize` reaches every loader of the run (`--crds`, `--core-crds`, `--sample`):
/// the named tool, not the one on PATH, is asked to render the root.
#[test]
fn check_renders_its_inputs_with_the_named_kustomize() {
    let config = tree().join("config");
    for flag in ["--crds", "--core-crds", "--sample"] {
        let (code, stdout, stderr) = run_bin(
            &[
                "check",
                "--embedded",
                flag,
                s(&config),
                "--kustomize",
                "/nonexistent/kustomize",
            ],
            None,
        );
        assert_eq!(code, 2, "{flag}: {stderr}");
        assert!(stdout.is_empty(), "{flag}: no half report: {stdout}");
        assert!(
            stderr
                .contains("--kustomize /nonexistent/kustomize: `/nonexistent/kustomize` not found"),
            "{flag}: {stderr}"
        );
    }
}

#[test]
fn a_missing_kustomize_is_a_clear_error() {
    let config = tree().join("config");
    let (code, stdout, stderr) = run_bin(
        &["lint", "--kustomize", "/nonexistent/kustomize", s(&config)],
        None,
    );
    assert_eq!(code, 2);
    assert!(stdout.is_empty(), "no half report: {stdout}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{}: --kustomize /nonexistent/kustomize: `/nonexistent/kustomize` not found",
            s(&config.join("default"))
        )) && stderr.contains("install kustomize"),
        "{stderr}"
    );
    // Nothing on PATH at all.
    let empty = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_capi-conformance"))
        .args(["lint", s(&config)])
        .env("PATH", empty.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(out.stdout.is_empty());
    assert!(
        stderr.contains("neither `kustomize` nor `kubectl` is on PATH")
            && stderr.contains("https://kubectl.docs.kubernetes.io/installation/kustomize/"),
        "{stderr}"
    );
    // A plain directory needs no kustomize.
    let out = Command::new(env!("CARGO_BIN_EXE_capi-conformance"))
        .args(["lint", s(&fixtures().join("conformant-v1beta2"))])
        .env("PATH", empty.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn a_broken_kustomization_is_a_clear_error_naming_the_root() {
    if !kustomize_or_skip("lint of a broken kustomization") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("kustomization.yaml"),
        "resources:\n- missing-crd.yaml\n",
    )
    .unwrap();
    let (code, stdout, stderr) = run_bin(&["lint", s(d.path())], None);
    assert_eq!(code, 2);
    assert!(stdout.is_empty(), "no half report: {stdout}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains(&format!("{}: `", s(d.path())))
            && stderr.contains("failed: ")
            && stderr.contains("missing-crd.yaml"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("run.go"),
        "kubectl's log header is dropped: {stderr}"
    );
}

/// The overlay that adds origin annotations must not let a root render that its owner's
/// `kustomize build` refuses (a file outside the root, which kustomize's default load
/// restrictor forbids).
#[test]
fn the_owners_load_restrictions_hold() {
    if !kustomize_or_skip("kustomize load restrictions") {
        return;
    }
    let d = copy_tree();
    let crd = d.path().join("config/crd");
    std::fs::copy(
        crd.join("bases/infrastructure.bar.example.io_barclusters.yaml"),
        d.path().join("outside.yaml"),
    )
    .unwrap();
    let k = crd.join("kustomization.yaml");
    let text = std::fs::read_to_string(&k).unwrap().replace(
        "- bases/infrastructure.bar.example.io_barclusters.yaml",
        "- ../../outside.yaml",
    );
    std::fs::write(&k, text).unwrap();
    let (code, stdout, stderr) = run_bin(&["lint", s(&d.path().join("config"))], None);
    assert_eq!(code, 2, "{stdout}");
    assert!(stderr.contains("outside.yaml"), "{stderr}");
}

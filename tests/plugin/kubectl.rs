//! The real kubectl runs the plugin: `kubectl capi-conformance …` reaches our binary, names it
//! `kubectl capi-conformance` in help, and `kubectl plugin list` shows it. Tests of commands that
//! are not on main yet skip with a printed reason and turn on by themselves when they land.

use crate::support::{
    Kubectl, Serve, current_context, mock_provider_crds, not_built, repo_root, serve, stderr,
    stdout, tool_bin,
};
use std::path::PathBuf;
use std::process::Command;

#[test]
fn kubectl_help_names_the_plugin() {
    let Some(kubectl) = Kubectl::find("kubectl_help_names_the_plugin") else {
        return;
    };
    let output = kubectl.run(&["capi-conformance", "--help"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let help = stdout(&output);
    assert!(
        help.contains("Usage: kubectl capi-conformance <COMMAND>"),
        "{help}"
    );

    let output = kubectl.run(&["capi-conformance", "lint", "--help"]);
    assert!(
        stdout(&output).contains("Usage: kubectl capi-conformance lint"),
        "{}",
        stdout(&output)
    );

    let output = kubectl.run(&["capi-conformance", "--version"]);
    assert!(
        stdout(&output).starts_with("kubectl capi-conformance "),
        "{}",
        stdout(&output)
    );
}

#[test]
fn kubectl_usage_error_names_the_plugin() {
    let Some(kubectl) = Kubectl::find("kubectl_usage_error_names_the_plugin") else {
        return;
    };
    let output = kubectl.run(&["capi-conformance", "no-such-command"]);
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert!(err.contains("Usage: kubectl capi-conformance"), "{err}");
}

#[test]
fn kubectl_plugin_list_shows_the_plugin() {
    let Some(kubectl) = Kubectl::find("kubectl_plugin_list_shows_the_plugin") else {
        return;
    };
    let output = kubectl.run(&["plugin", "list"]);
    let listed = kubectl.plugin_dir().join("kubectl-capi_conformance");
    let listed = listed.to_string_lossy();
    assert!(
        stdout(&output).lines().any(|line| line.trim() == listed),
        "stdout:\n{}\nstderr:\n{}",
        stdout(&output),
        stderr(&output)
    );
    assert!(
        !stderr(&output).contains("kubectl-capi_conformance"),
        "kubectl warns about the plugin: {}",
        stderr(&output)
    );
}

#[test]
fn plain_binary_names_itself_for_kubectl_only_when_kubectl_calls_it() {
    let plain = Command::new(tool_bin())
        .arg("--help")
        .env_remove("KUBECTL_PLUGINS_CALLER")
        .output()
        .unwrap();
    assert!(stdout(&plain).contains("Usage: capi-conformance <COMMAND>"));
    let called = Command::new(tool_bin())
        .arg("--help")
        .env("KUBECTL_PLUGINS_CALLER", "/usr/bin/kubectl")
        .output()
        .unwrap();
    assert!(stdout(&called).contains("Usage: kubectl capi-conformance <COMMAND>"));
}

#[test]
fn kubectl_runs_rules() {
    let Some(kubectl) = Kubectl::find("kubectl_runs_rules") else {
        return;
    };
    let output = kubectl.run(&["capi-conformance", "rules", "-o", "json"]);
    if not_built(&output) {
        eprintln!(
            "skip kubectl_runs_rules: `rules` is not on main yet (kubectl reached the plugin: {})",
            stderr(&output).trim()
        );
        return;
    }
    assert!(output.status.success(), "{}", stderr(&output));
    let through_kubectl: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    let rules = through_kubectl.as_array().unwrap();
    assert!(!rules.is_empty());
    assert!(rules.iter().all(|rule| rule.get("id").is_some()));
    let direct = Command::new(tool_bin())
        .args(["rules", "-o", "json"])
        .output()
        .unwrap();
    assert_eq!(
        stdout(&output),
        stdout(&direct),
        "kubectl must change nothing"
    );

    let table = kubectl.run(&["capi-conformance", "rules"]);
    assert!(table.status.success(), "{}", stderr(&table));

    let first = rules[0]["id"].as_str().unwrap();
    let explained = kubectl.run(&["capi-conformance", "explain", first]);
    assert!(explained.status.success(), "{}", stderr(&explained));
    assert!(stdout(&explained).contains(first));
}

/// A fixture directory of a provider that conforms (lint exit 0), if main has one yet.
fn conformant_fixture() -> Option<PathBuf> {
    let fixtures = repo_root().join("fixtures");
    let mut found = Vec::new();
    let mut stack = vec![fixtures];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                let name = entry.file_name().to_string_lossy().to_lowercase();
                if name.contains("conformant") && !name.contains("non") {
                    found.push(path);
                } else {
                    stack.push(path);
                }
            }
        }
    }
    found.sort();
    found.into_iter().next()
}

#[test]
fn kubectl_runs_lint_on_a_fixture() {
    let Some(kubectl) = Kubectl::find("kubectl_runs_lint_on_a_fixture") else {
        return;
    };
    let Some(fixture) = conformant_fixture() else {
        eprintln!("skip kubectl_runs_lint_on_a_fixture: no conformant fixture under fixtures/ yet");
        return;
    };
    let fixture = fixture.to_string_lossy().into_owned();
    let output = kubectl.run(&["capi-conformance", "lint", &fixture, "-o", "json"]);
    if not_built(&output) {
        eprintln!("skip kubectl_runs_lint_on_a_fixture: `lint` is not on main yet");
        return;
    }
    assert_eq!(
        output.status.code(),
        Some(0),
        "lint {fixture}: {}\n{}",
        stdout(&output),
        stderr(&output)
    );
    let report: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert!(report.is_object(), "{report}");
}

#[test]
fn kubectl_runs_check_static_only_against_serve() {
    let Some(kubectl) = Kubectl::find("kubectl_runs_check_static_only_against_serve") else {
        return;
    };
    let test = "kubectl_runs_check_static_only_against_serve";
    let manifests = tempfile::tempdir().unwrap();
    let crds = match mock_provider_crds(manifests.path()) {
        Ok(crds) => crds,
        Err(reason) => {
            eprintln!("skip {test}: {reason}");
            return;
        }
    };
    let served = match serve(&[crds]) {
        Serve::Ready(served) => served,
        Serve::NotBuilt(reason) => {
            eprintln!("skip {test}: {reason}");
            return;
        }
    };
    let context = current_context(&served.kubeconfig).unwrap();
    let kubeconfig = served.kubeconfig.to_string_lossy().into_owned();
    let output = kubectl.run(&[
        "capi-conformance",
        "check",
        "--static-only",
        "--kubeconfig",
        &kubeconfig,
        "--context",
        &context,
        "-o",
        "json",
    ]);
    if not_built(&output) {
        eprintln!("skip kubectl_runs_check_static_only_against_serve: `check` is not on main yet");
        return;
    }
    let report: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "the mock provider is conformant: {}\n{}",
        stderr(&output),
        report["summary"]
    );
    assert_eq!(report["exit_code"], 0);
    let columns = report["columns"].as_array().unwrap();
    assert!(
        columns.iter().any(|c| c["kind"] == "MockMachine"),
        "the served CRDs were checked: {columns:?}"
    );

    let wrong = kubectl.run(&[
        "capi-conformance",
        "check",
        "--static-only",
        "--kubeconfig",
        &kubeconfig,
        "--context",
        "no-such-context",
    ]);
    assert_eq!(wrong.status.code(), Some(2), "{}", stderr(&wrong));
}

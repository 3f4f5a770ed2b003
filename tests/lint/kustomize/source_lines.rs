//! Findings at the source line through kustomize: a violation in a base file, a contract label
//! the kustomization adds, plain files, every writer, a kustomize without origin annotations,
//! and the GitLab recipe on a kubebuilder-style repository.

use super::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

#[test]
fn a_violation_in_a_base_file_is_reported_at_its_line() {
    if !kustomize_or_skip("findings at the source line") {
        return;
    }
    let d = copy_tree();
    let base = d
        .path()
        .join("config/crd/bases/infrastructure.bar.example.io_barmachines.yaml");
    // Drop `status.initialization` and make `spec.providerID` an integer.
    let text = std::fs::read_to_string(&base).unwrap();
    let text = text
        .replace(
            "              initialization:\n                properties:\n                  provisioned:\n                    type: boolean\n                type: object\n",
            "",
        )
        .replace("              providerID:\n                type: string\n", "              providerID:\n                type: integer\n");
    std::fs::write(&base, &text).unwrap();
    let config = d.path().join("config");
    let (code, report, stderr) = lint_json(&[s(&config)]);
    assert_eq!(code, 1, "{stderr}");
    let column = "infrastructure-bar/BarMachine@v1beta2";
    let source = |rule: &str| -> (String, u64, String) {
        let r = outcome(&report, rule, column).unwrap_or_else(|| panic!("{rule}"));
        assert_eq!(r["outcome"], "fail", "{rule}: {r}");
        let e = &r["evidence"][0];
        let src = &e["source"];
        let file = src["file"].as_str().unwrap().to_string();
        let line = src["line"].as_u64().unwrap();
        assert_eq!(
            e["location"].as_str().unwrap(),
            format!("{file}:{line}"),
            "location and source agree"
        );
        (file, line, e["message"].as_str().unwrap().to_string())
    };
    // Missing field: the line of its nearest existing ancestor (`status`), said as such.
    let (file, line, message) = source("infra-machine/provisioned");
    assert_eq!(file, s(&base));
    let status_line = line_of(&base, "status:", line_of(&base, "openAPIV3Schema:", 0));
    assert_eq!(line as usize, status_line, "{message}");
    assert!(
        message.contains("the line holds `status`, its nearest existing ancestor"),
        "{message}"
    );
    // Wrong type: the field's own line.
    let (file, line, message) = source("infra-machine/provider-id");
    assert_eq!(file, s(&base));
    assert_eq!(line as usize, line_of(&base, "providerID:", 0), "{message}");
    assert!(!message.contains("ancestor"), "{message}");
}

#[test]
fn a_missing_contract_label_is_reported_where_the_kustomization_labels() {
    if !kustomize_or_skip("label findings at the kustomization") {
        return;
    }
    let d = copy_tree();
    let k = d.path().join("config/crd/kustomization.yaml");
    let text = std::fs::read_to_string(&k).unwrap().replace(
        "labels:\n- pairs:\n    cluster.x-k8s.io/v1beta2: v1beta2\n",
        "",
    );
    std::fs::write(&k, text).unwrap();
    let (code, report, stderr) = lint_json(&[s(&d.path().join("config"))]);
    assert_eq!(code, 1, "{stderr}");
    let r = outcome(
        &report,
        "all/contract-label",
        "infrastructure-bar/BarMachine",
    )
    .unwrap();
    assert_eq!(r["outcome"], "fail");
    let src = &r["evidence"][0]["source"];
    assert_eq!(src["file"].as_str().unwrap(), s(&k));
    assert_eq!(
        src["line"].as_u64().unwrap() as usize,
        line_of(&k, "commonLabels:", 0)
    );
    // And where the label is set, a finding about it is reported at the label itself.
    let k = d.path().join("config/crd/kustomization.yaml");
    let text = std::fs::read_to_string(&k).unwrap().replace(
        "commonLabels:\n",
        "commonLabels:\n  cluster.x-k8s.io/v1beta1: v1beta2\n  cluster.x-k8s.io/v1beta2: v1beta2\n",
    );
    std::fs::write(&k, text).unwrap();
    let (_, report, stderr) = lint_json(&[s(&d.path().join("config"))]);
    let r = outcome(
        &report,
        "all/contract-label-unambiguous",
        "infrastructure-bar/BarMachine@v1beta2",
    )
    .unwrap_or_else(|| panic!("{stderr}"));
    assert_eq!(r["outcome"], "fail", "{r}");
    let src = &r["evidence"][0]["source"];
    assert_eq!(src["file"].as_str().unwrap(), s(&k));
    assert_eq!(
        src["line"].as_u64().unwrap() as usize,
        line_of(&k, "cluster.x-k8s.io/v1beta1:", 0)
    );
}

#[test]
fn plain_files_get_file_and_line_too() {
    let base = tree().join("config/crd/bases/infrastructure.bar.example.io_barclusters.yaml");
    let (code, report, stderr) = lint_json(&[s(&base)]);
    assert_eq!(code, 1, "{stderr}");
    let r = outcome(&report, "all/contract-label", "bar.example.io/BarCluster").unwrap();
    let src = &r["evidence"][0]["source"];
    assert_eq!(src["file"].as_str().unwrap(), s(&base));
    // No labels in the file: the line of `metadata`, their nearest ancestor (after the comment
    // lines and the document marker).
    assert_eq!(
        src["line"].as_u64().unwrap() as usize,
        line_of(&base, "metadata:", 0)
    );
}

/// Every writer shows the file and line (JSON as `source`, the others as `at file:line`).
#[test]
fn every_writer_shows_the_source_line() {
    if !kustomize_or_skip("writers show the source line") {
        return;
    }
    let d = copy_tree();
    let base = d
        .path()
        .join("config/crd/bases/infrastructure.bar.example.io_barclusters.yaml");
    let text = std::fs::read_to_string(&base)
        .unwrap()
        .replace("    categories:\n    - cluster-api\n", "");
    std::fs::write(&base, text).unwrap();
    let at = format!("{}:{}", s(&base), line_of(&base, "names:", 0));
    let out = tempfile::tempdir().unwrap();
    let file = |n: &str| out.path().join(n);
    let config = d.path().join("config");
    let (code, table, stderr) = run_bin(
        &[
            "lint",
            s(&config),
            "--junit",
            s(&file("r.xml")),
            "--markdown",
            s(&file("r.md")),
            "--html",
            s(&file("r.html")),
            "--json",
            s(&file("r.json")),
            "--fail-on",
            "never",
        ],
        None,
    );
    assert_eq!(code, 0, "{stderr}");
    // (The table wraps long evidence lines at spaces.)
    let table = table.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(table.contains(&format!("at {at}")), "table: {table}");
    let md = std::fs::read_to_string(file("r.md")).unwrap();
    assert!(md.contains(&format!("at `{at}`")), "markdown: {md}");
    let html = std::fs::read_to_string(file("r.html")).unwrap();
    assert!(html.contains(&at), "html");
    let xml = std::fs::read_to_string(file("r.xml")).unwrap();
    assert!(xml.contains(&format!("at {at}")), "junit body");
    assert!(
        xml.contains(&format!("file=\"{}\"", s(&base))),
        "junit file attribute"
    );
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(file("r.json")).unwrap()).unwrap();
    let r = outcome(
        &json,
        "all/category",
        "infrastructure-bar/BarCluster@v1beta2",
    )
    .unwrap();
    assert_eq!(
        r["evidence"][0]["source"]["file"].as_str().unwrap(),
        s(&base)
    );
}

/// A kustomize without `buildMetadata` (or one that refuses the overlay) still renders the
/// root, through the owner's plain build; the report says its findings have no source lines.
#[test]
fn a_kustomize_without_origin_annotations_falls_back_to_the_plain_build() {
    if !kustomize_or_skip("kustomize fallback") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let script = d.path().join("old-kustomize");
    std::fs::write(
        &script,
        "#!/bin/sh\n# An old kustomize: buildMetadata is an unknown field.\nshift\nfor dir; do :; done\nif grep -q buildMetadata \"$dir/kustomization.yaml\" 2>/dev/null; then echo 'Error: json: unknown field \"buildMetadata\"' >&2; exit 1; fi\nexec kubectl kustomize \"$@\"\n",
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    if !on_path("kubectl") {
        eprintln!("skipped: kustomize fallback: the stand-in needs kubectl");
        return;
    }
    let config = tree().join("config");
    let cmd = format!("{} build", s(&script));
    let (code, report, stderr) = lint_json(&["--kustomize", &cmd, s(&config)]);
    assert_eq!(code, 0, "{stderr}");
    let (_, normal, _) = lint_json(&[s(&config)]);
    assert_eq!(cells(&report), cells(&normal));
    let n = notes(&report);
    assert!(
        n.iter().any(
            |n| n.contains("rendered without kustomize's origin annotations")
                && n.contains("unknown field")
        ),
        "{n:?}"
    );
}

/// The GitLab recipe's `lint` line, run in a kubebuilder-style repository (ours): it renders
/// `config/` and passes; with a MUST broken in a base file it fails the job, and the JUnit
/// names the file to fix.
#[test]
fn the_gitlab_recipe_lints_a_kubebuilder_repository() {
    if !kustomize_or_skip("the GitLab recipe on a kubebuilder repository") {
        return;
    }
    let recipe = std::fs::read_to_string(root().join("examples/gitlab-ci.yml")).unwrap();
    let line = recipe
        .lines()
        .map(|l| l.trim().trim_start_matches("- ").trim())
        .find(|l| l.starts_with("capi-conformance lint "))
        .expect("the recipe lints");
    let argv: Vec<&str> = line.split_whitespace().skip(1).collect();
    let run = |repo: &Path| {
        std::fs::create_dir_all(repo.join("reports")).unwrap();
        Command::new(env!("CARGO_BIN_EXE_capi-conformance"))
            .args(&argv)
            .current_dir(repo)
            .output()
            .unwrap()
    };
    let good = copy_tree();
    let out = run(good.path());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{line}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bad = copy_tree();
    let base = "config/crd/bases/infrastructure.bar.example.io_barmachines.yaml";
    let text = std::fs::read_to_string(bad.path().join(base))
        .unwrap()
        .replace("scope: Namespaced", "scope: Cluster");
    std::fs::write(bad.path().join(base), text).unwrap();
    let out = run(bad.path());
    assert_eq!(out.status.code(), Some(1), "{line}");
    let junit = std::fs::read_to_string(bad.path().join("reports/junit.xml")).unwrap();
    assert!(junit.contains(&format!("file=\"{base}\"")), "{junit}");
}

//! Real provider repositories as their owners keep them (`../shared/repos`, read in place):
//! `lint <repo>/…/config` gives, cell for cell, the verdict of `kubectl kustomize <root> | lint
//! -`, and every finding names a source file and a line that holds the field it is about.

use crate::kustomize::{lint_json, on_path};
use crate::shared_data::{REQUIRE_SHARED, shared_or_skip};
use crate::support::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The repositories and their kustomize roots (from each `SOURCE`), or `None` (skip line
/// printed) without `../shared/repos` or without kubectl.
fn repos(what: &str) -> Option<Vec<(PathBuf, Vec<String>)>> {
    let dir = shared_or_skip("repos", what)?;
    if !on_path("kubectl") {
        if std::env::var(REQUIRE_SHARED).as_deref() == Ok("1") {
            panic!("{what}: kubectl is not on PATH, and {REQUIRE_SHARED}=1 requires it");
        }
        eprintln!("skipped: {what}: kubectl is not on PATH");
        return None;
    }
    let mut out = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("SOURCE").is_file())
        .collect();
    entries.sort();
    for repo in entries {
        let source = std::fs::read_to_string(repo.join("SOURCE")).unwrap();
        let roots = source
            .split_once("kustomize roots:")
            .or_else(|| source.split_once("kustomize root:"))
            .map(|(_, r)| {
                r.split(',')
                    .map(|x| x.trim().to_string())
                    .filter(|x| !x.is_empty())
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        assert!(
            !roots.is_empty(),
            "{}: SOURCE names no root",
            repo.display()
        );
        out.push((repo, roots));
    }
    assert_eq!(out.len(), 5, "the five repositories of ../shared/repos");
    Some(out)
}

/// `kubectl kustomize <root> | lint - -o json`.
fn lint_rendered(root: &Path) -> (i32, Value) {
    let out = std::process::Command::new("kubectl")
        .arg("kustomize")
        .arg(root)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "kubectl kustomize {}: {}",
        root.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let (code, stdout, stderr) = run_bin(&["lint", "-", "-o", "json"], Some(&text));
    assert_ne!(code, 2, "{}: {stderr}", root.display());
    (code, serde_json::from_str(&stdout).unwrap())
}

/// Cells with their reasons.
fn cells_with_reasons(report: &Value) -> Vec<(String, String, String, String)> {
    let mut out: Vec<_> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["rule_id"].as_str().unwrap().to_string(),
                r["column"].as_str().unwrap().to_string(),
                r["outcome"].as_str().unwrap().to_string(),
                r["reason"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn every_shared_repository_config_lints_like_its_rendered_root() {
    let Some(repos) = repos("lint <repo>/…/config against kubectl kustomize <root> | lint -")
    else {
        return;
    };
    let mut compared = 0;
    for (repo, roots) in &repos {
        let mut expected = Vec::new();
        let mut expected_code = 0;
        for root in roots {
            let root_dir = repo.join(root);
            let config = root_dir.parent().unwrap();
            let (code, report, stderr) = lint_json(&[config.to_str().unwrap()]);
            assert_ne!(code, 2, "{}: {stderr}", config.display());
            let (rendered_code, rendered) = lint_rendered(&root_dir);
            assert_eq!(code, rendered_code, "{}", config.display());
            assert_eq!(
                cells_with_reasons(&report),
                cells_with_reasons(&rendered),
                "{}: lint of the config/ tree differs from lint of the rendered root",
                config.display()
            );
            expected.extend(cells_with_reasons(&rendered));
            expected_code = expected_code.max(code);
            if repo.ends_with("capi-v1.14.0") {
                assert_eq!(code, 0, "CAPI's own {root} conforms");
            }
            compared += 1;
        }
        if roots.len() > 1 {
            // The repository root renders each root as its own provider.
            let (code, report, stderr) = lint_json(&[repo.to_str().unwrap()]);
            assert_eq!(code, expected_code, "{}: {stderr}", repo.display());
            expected.sort();
            assert_eq!(cells_with_reasons(&report), expected, "{}", repo.display());
            let notes = report["notes"].as_array().unwrap();
            for root in roots {
                assert!(
                    notes
                        .iter()
                        .any(|n| n["source"].as_str().unwrap().ends_with(root.as_str())
                            && n["message"]
                                .as_str()
                                .unwrap()
                                .starts_with("kustomize root, rendered with")),
                    "{root}: {notes:?}"
                );
            }
        }
    }
    assert_eq!(compared, 7, "seven kustomize roots");
}

/// The key a source line sets (`  - name: v1beta2` → `name`).
fn key_at(line: &str) -> &str {
    let t = line.trim_start().trim_start_matches("- ").trim_start();
    t.split(':').next().unwrap_or("").trim()
}

/// The field names a path names (`spec.versions[v1beta2].schema.openAPIV3Schema: status.ready`
/// → spec, versions, name, schema, openAPIV3Schema, status, ready, …).
fn path_keys(path: &str) -> Vec<String> {
    let mut keys = vec![
        "properties".to_string(),
        "items".into(),
        "additionalProperties".into(),
    ];
    for part in path.split([':', '.', '[', ']']) {
        let part = part.trim().trim_matches('"');
        if !part.is_empty() {
            keys.push(part.to_string());
        }
    }
    if path.contains('[') {
        keys.push("name".into());
    }
    keys
}

/// Checks that every failing cell of a report names, in each evidence, an existing file and a
/// line that holds the field the evidence is about; returns how many were checked.
fn assert_findings_located(report: &Value, what: &str) -> usize {
    let mut located = 0;
    let results = report["results"]
        .as_array()
        .unwrap_or_else(|| panic!("{what}: no report"));
    for r in results {
        if r["outcome"] != "fail" {
            continue;
        }
        let ev = r["evidence"].as_array().unwrap();
        assert!(!ev.is_empty(), "{what}: a failure without evidence: {r}");
        for e in ev {
            let src = &e["source"];
            let file = src["file"]
                .as_str()
                .unwrap_or_else(|| panic!("{what}: no source: {e}"));
            let line = src["line"].as_u64().unwrap() as usize;
            let text = std::fs::read_to_string(file)
                .unwrap_or_else(|_| panic!("{what}: {file} does not exist"));
            let at = text
                .lines()
                .nth(line - 1)
                .unwrap_or_else(|| panic!("{what}: {file} has no line {line}"));
            if r["rule_id"] == "clusterctl/components-name" {
                // The file's name is the finding: its first line.
                assert_eq!(line, 1);
                located += 1;
                continue;
            }
            let key = key_at(at);
            let path = e["path"].as_str().unwrap_or("metadata.name");
            let mut keys = path_keys(path);
            if path.starts_with("metadata.labels") {
                // In the CRD, or in the kustomization that labels it.
                keys.extend(["metadata", "labels", "commonLabels"].map(String::from));
                if key.starts_with("cluster.x-k8s.io/") {
                    keys.push(key.to_string());
                }
            }
            assert!(
                keys.iter().any(|k| k == key),
                "{what}: {file}:{line} holds `{key}`, not a field of `{path}` ({})",
                r["rule_id"]
            );
            located += 1;
        }
    }
    located
}

#[test]
fn every_finding_on_the_shared_repositories_names_a_line_holding_its_field() {
    let Some(repos) = repos("findings on ../shared/repos at their source lines") else {
        return;
    };
    let mut located = 0;
    for (repo, roots) in &repos {
        for root in roots {
            let config = repo.join(root);
            let config = config.parent().unwrap();
            let (code, report, stderr) = lint_json(&[config.to_str().unwrap()]);
            assert_ne!(code, 2, "{stderr}");
            located += assert_findings_located(&report, &config.display().to_string());
        }
    }
    // The trees have findings (CAPD's machine pools, IBM's and IONOS's categories, KubeVirt's
    // labels and failure domains): the test saw some.
    assert!(located >= 10, "only {located} findings located");
}

/// The same on the rendered release manifests of `../shared/corpus` (plain files: the line in
/// the components file).
#[test]
fn every_finding_on_the_corpus_names_a_line_holding_its_field() {
    let Some(corpus) = shared_or_skip("corpus", "findings on ../shared/corpus at their lines")
    else {
        return;
    };
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&corpus)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let mut located = 0;
    for dir in &dirs {
        let (code, report, stderr) = lint_json(&[dir.to_str().unwrap()]);
        assert_ne!(code, 2, "{stderr}");
        located += assert_findings_located(&report, &dir.display().to_string());
    }
    assert!(located >= 30, "only {located} findings located");
}

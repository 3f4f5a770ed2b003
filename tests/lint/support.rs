//! Shared helpers: paths, loading, evaluating with the embedded catalog.

use capi_conformance::checks::{LintOptions, evaluate};
use capi_conformance::inventory::{Document, SchemaForm};
use capi_conformance::report::{Matrix, Outcome, RuleResult};
use capi_conformance::source::{load_paths, load_paths_as};
use capi_conformance::suite::Catalog;
use std::path::{Path, PathBuf};
use std::process::Command;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn fixtures() -> PathBuf {
    root().join("fixtures")
}

/// The real-provider corpus (`../shared/corpus`), or `None` after the one skip line of `test`
/// (a failure under `CAPI_CONFORMANCE_REQUIRE_SHARED=1`).
pub fn corpus(test: &str) -> Option<PathBuf> {
    crate::shared_data::shared_or_skip("corpus", test)
}

/// One provider of the corpus: `None` (one skip line) without the corpus; a corpus without that
/// provider is broken data and fails the test.
pub fn corpus_provider(name: &str, test: &str) -> Option<PathBuf> {
    let dir = corpus(test)?.join(name);
    assert!(
        dir.is_dir(),
        "{test}: provider {name} missing from the corpus ({})",
        dir.display()
    );
    Some(dir)
}

pub fn catalog() -> &'static Catalog {
    Catalog::shared().unwrap()
}

pub fn load(path: &Path) -> Vec<Document> {
    load_paths(&[path.to_path_buf()], false).unwrap().documents
}

/// [`load`] with CRD schemas left in the documents' JSON (for tests that patch them).
pub fn load_whole(path: &Path) -> Vec<Document> {
    load_paths_as(&[path.to_path_buf()], false, SchemaForm::Whole)
        .unwrap()
        .documents
}

pub fn lint_docs(docs: Vec<Document>, opts: &LintOptions) -> Matrix {
    evaluate(docs, opts, catalog()).unwrap()
}

pub fn lint_dir(path: &Path) -> Matrix {
    lint_docs(load(path), &LintOptions::default())
}

/// Cells of one rule.
pub fn cells<'a>(m: &'a Matrix, rule: &str) -> Vec<&'a RuleResult> {
    m.results.iter().filter(|r| r.rule_id == rule).collect()
}

pub fn cell<'a>(m: &'a Matrix, rule: &str, kind: &str) -> Vec<&'a RuleResult> {
    m.results
        .iter()
        .filter(|r| r.rule_id == rule && r.column.kind == kind)
        .collect()
}

pub fn failures(m: &Matrix) -> Vec<String> {
    m.results
        .iter()
        .filter(|r| r.outcome == Outcome::Fail)
        .map(|r| format!("{} {} {:?}", r.rule_id, r.column.id(), r.reason))
        .collect()
}

/// Runs the binary; returns (exit code, stdout, stderr).
pub fn run_bin(args: &[&str], stdin: Option<&str>) -> (i32, String, String) {
    use std::io::Write;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_capi-conformance"));
    cmd.args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    if let Some(input) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
    } else {
        drop(child.stdin.take());
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

//! The conformant fixtures: generated from code, lint clean under both contracts.

use crate::generate::{self, C};
use crate::support::*;
use capi_conformance::contract::Level;
use capi_conformance::report::{Outcome, Verdict};
use capi_conformance::suite::RuleKind;

#[test]
fn fixtures_match_generator() {
    let regen = std::env::var_os("CAPI_CONFORMANCE_REGEN").is_some();
    for c in [C::B1, C::B2] {
        for (rel, content) in generate::files(c) {
            let path = fixtures().join(&rel);
            if regen {
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, &content).unwrap();
            }
            let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                on_disk == content,
                "{rel} is stale: run `CAPI_CONFORMANCE_REGEN=1 cargo test --test lint fixtures_match_generator`"
            );
        }
    }
}

fn check_conformant(c: C) {
    let m = lint_dir(&fixtures().join(c.dir()));
    assert_eq!(failures(&m), Vec::<String>::new(), "{}", c.dir());
    assert_eq!(m.verdict(), Verdict::Pass);
    let catalog = catalog();
    // Every static MUST/SHOULD rule is evaluated somewhere, and the only non-pass outcomes of
    // static MUST/SHOULD rules are skips whose condition does not hold / need inputs we lack.
    for r in &m.results {
        let rule = catalog.get(&r.rule_id).unwrap();
        if rule.kind != RuleKind::Static || r.level == Level::May {
            continue;
        }
        if r.outcome == Outcome::Skip {
            let reason = r.reason.clone().unwrap_or_default();
            assert!(
                reason.contains("condition does not hold")
                    || reason.contains("--help")
                    || reason.contains("not implemented (optional")
                    || reason.contains("release version unknown"),
                "{} {}: unexpected skip: {reason}",
                r.rule_id,
                r.column.id()
            );
        } else {
            assert_eq!(r.outcome, Outcome::Pass, "{} {}", r.rule_id, r.column.id());
        }
    }
    let kinds: std::collections::BTreeSet<&str> =
        m.columns.iter().map(|c| c.kind.as_str()).collect();
    assert_eq!(
        kinds.len(),
        12,
        "ten contract kinds, an IPAM pool and the provider column: {kinds:?}"
    );
}

#[test]
fn conformant_v1beta2_is_clean() {
    check_conformant(C::B2);
}

#[test]
fn conformant_v1beta1_is_clean() {
    check_conformant(C::B1);
}

#[test]
fn lint_binary_exits_zero_and_is_deterministic() {
    let dir = fixtures().join("conformant-v1beta2");
    let dir = dir.to_str().unwrap();
    let (code1, out1, err1) = run_bin(&["lint", dir, "-o", "json"], None);
    assert_eq!(code1, 0, "{err1}");
    let (code2, out2, _) = run_bin(&["lint", dir, "-o", "json"], None);
    assert_eq!(code2, 0);
    let strip = |s: &str| {
        s.lines()
            .filter(|l| !l.contains("started_at"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(strip(&out1), strip(&out2));
    let v: serde_json::Value = serde_json::from_str(&out1).unwrap();
    assert!(v.is_object());
}

#[test]
fn contract_all_adds_columns_for_both_contracts() {
    use capi_conformance::checks::LintOptions;
    use capi_conformance::cli::ContractSelection;
    let opts = LintOptions {
        contract: ContractSelection::All,
        ..LintOptions::default()
    };
    let m = lint_docs(load(&fixtures().join("conformant-v1beta2")), &opts);
    let cols: Vec<String> = m
        .columns
        .iter()
        .filter(|c| c.kind == "FooMachine")
        .map(|c| c.id())
        .collect();
    assert_eq!(
        cols,
        [
            "infrastructure-foo/FooMachine@v1beta1",
            "infrastructure-foo/FooMachine@v1beta2"
        ]
    );
    // Checked against v1beta1 without a v1beta1 label: the label rule says so.
    let r = m
        .results
        .iter()
        .find(|r| r.rule_id == "all/contract-label" && r.column.id() == cols[0])
        .unwrap();
    assert_eq!(r.outcome, Outcome::Fail);
}

#[test]
fn lint_writes_every_report_file_in_one_run() {
    let d = tempfile::tempdir().unwrap();
    let junit = d.path().join("out/junit.xml");
    let json = d.path().join("out/result.json");
    let md = d.path().join("out/summary.md");
    let dir = fixtures().join("conformant-v1beta1");
    let (code, stdout, err) = run_bin(
        &[
            "lint",
            dir.to_str().unwrap(),
            "-o",
            "table",
            "--junit",
            junit.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
            "--markdown",
            md.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(code, 0, "{err}");
    assert!(stdout.contains("FooControlPlane"));
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("<testsuite") && xml.contains("all/crd-name"));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(v.is_object());
    assert!(
        std::fs::read_to_string(&md)
            .unwrap()
            .contains("infrastructure-foo")
    );
}

#[test]
fn a_must_failure_exits_one_and_fail_on_never_exits_zero() {
    let d = tempfile::tempdir().unwrap();
    let src = std::fs::read_to_string(
        fixtures().join("conformant-v1beta2/infrastructure-components.yaml"),
    )
    .unwrap();
    let broken = src.replacen("scope: Namespaced", "scope: Cluster", 1);
    assert_ne!(src, broken);
    let f = d.path().join("infrastructure-components.yaml");
    std::fs::write(&f, broken).unwrap();
    let (code, _, _) = run_bin(&["lint", f.to_str().unwrap(), "-o", "json"], None);
    assert_eq!(code, 1);
    let (code, _, _) = run_bin(
        &[
            "lint",
            f.to_str().unwrap(),
            "-o",
            "json",
            "--fail-on",
            "never",
        ],
        None,
    );
    assert_eq!(code, 0);
}

#[test]
fn migration_adds_the_target_contract_columns() {
    let dir = fixtures().join("conformant-v1beta1");
    let (code, out, err) = run_bin(
        &[
            "lint",
            dir.to_str().unwrap(),
            "--migration",
            "v1beta2",
            "-o",
            "json",
        ],
        None,
    );
    // The v1beta1 provider does not meet v1beta2 (e.g. status.initialization.provisioned).
    assert_eq!(code, 1, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let cell = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| {
            r["rule_id"] == "infra-machine/provisioned"
                && r["column"] == "infrastructure-foo/FooMachine@v1beta2"
        })
        .expect("a v1beta2 column for the v1beta1 kind");
    assert_eq!(cell["outcome"], "fail");
    // The declared contract still passes.
    let b1 = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| {
            r["rule_id"] == "infra-machine/provisioned"
                && r["column"] == "infrastructure-foo/FooMachine@v1beta1"
        })
        .unwrap();
    assert_eq!(b1["outcome"], "pass");
}

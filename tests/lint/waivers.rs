//! Waivers (annotation, config file, clusterctl's skip annotation, `--no-waivers`), role
//! overrides, and how non-static rules appear.

use crate::support::*;
use capi_conformance::checks::{ConfigWaiver, LintOptions};
use capi_conformance::inventory::Document;
use capi_conformance::report::Outcome;

const FM: &str = "foomachines.infrastructure.foo.example.io";

fn with_crd(mut f: impl FnMut(&mut serde_json::Value)) -> Vec<Document> {
    let mut docs = load_whole(&fixtures().join("conformant-v1beta2"));
    let d = docs
        .iter_mut()
        .find(|d| d.value["metadata"]["name"] == FM)
        .unwrap();
    f(&mut d.value);
    docs
}

fn no_category(v: &mut serde_json::Value) {
    v["spec"]["names"]
        .as_object_mut()
        .unwrap()
        .remove("categories");
}

#[test]
fn annotation_waiver_turns_failure_into_waived_with_reason() {
    let docs = with_crd(|v| {
        no_category(v);
        v["metadata"]["annotations"] = serde_json::json!({
            "capi-conformance.io/waive": "all/category, all/namespaced",
            "capi-conformance.io/waive-reason": "kubectl get cluster-api is not used"
        });
    });
    let m = lint_docs(docs.clone(), &LintOptions::default());
    let r = cell(&m, "all/category", "FooMachine");
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].outcome, Outcome::Waived);
    assert!(
        r[0].reason
            .as_deref()
            .unwrap()
            .contains("kubectl get cluster-api is not used")
    );
    assert!(
        r[0].evidence[0]
            .message
            .contains("outcome without the waiver: fail")
    );
    // Waivers never hide a rule; --no-waivers restores the failure.
    let strict = LintOptions {
        no_waivers: true,
        ..LintOptions::default()
    };
    let m = lint_docs(docs, &strict);
    assert_eq!(
        cell(&m, "all/category", "FooMachine")[0].outcome,
        Outcome::Fail
    );
}

#[test]
fn config_waiver_by_rule_and_kind() {
    let docs = with_crd(no_category);
    let opts = LintOptions {
        waivers: vec![ConfigWaiver {
            rule: "all/category".into(),
            kind: Some("FooMachine".into()),
            provider: None,
            reason: "tracked in FOO-12".into(),
        }],
        ..LintOptions::default()
    };
    let m = lint_docs(docs, &opts);
    let r = cell(&m, "all/category", "FooMachine")[0];
    assert_eq!(r.outcome, Outcome::Waived);
    assert_eq!(
        r.reason.as_deref(),
        Some("waived by config: tracked in FOO-12")
    );
    assert_eq!(
        cell(&m, "all/category", "FooCluster")[0].outcome,
        Outcome::Pass
    );
}

#[test]
fn clusterctl_skip_annotation_waives_the_naming_rule() {
    let docs = with_crd(|v| {
        v["metadata"]["name"] = "foomachinez.infrastructure.foo.example.io".into();
        v["metadata"]["annotations"] =
            serde_json::json!({"clusterctl.cluster.x-k8s.io/skip-crd-name-preflight-check": ""});
    });
    let m = lint_docs(docs, &LintOptions::default());
    let r = cell(&m, "all/crd-name", "FooMachine")[0];
    assert_eq!(r.outcome, Outcome::Waived);
    assert!(
        r.reason
            .as_deref()
            .unwrap()
            .contains("skip-crd-name-preflight-check")
    );
    let pre = cells(&m, "clusterctl/crd-name-preflight");
    assert_eq!(pre[0].outcome, Outcome::Pass, "{pre:?}");
    assert!(
        pre[0]
            .evidence
            .iter()
            .any(|e| e.message.contains("foomachinez"))
    );
}

#[test]
fn config_file_from_the_command_line() {
    let d = tempfile::tempdir().unwrap();
    let cfg = d.path().join("conformance.yaml");
    std::fs::write(
        &cfg,
        "waivers:\n- rule: clusterctl/images\n  reason: internal registry\nroles:\n  FooMachine: infra-machine\n",
    )
    .unwrap();
    let dir = fixtures().join("conformant-v1beta2");
    let (code, out, err) = run_bin(
        &[
            "lint",
            dir.to_str().unwrap(),
            "--config",
            cfg.to_str().unwrap(),
            "-o",
            "json",
        ],
        None,
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("waived by config: internal registry"));
    std::fs::write(&cfg, "roles:\n  FooMachine: not-a-role\n").unwrap();
    let (code, _, err) = run_bin(
        &[
            "lint",
            dir.to_str().unwrap(),
            "--config",
            cfg.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(code, 2);
    assert!(err.contains("unknown role `not-a-role`"), "{err}");
}

#[test]
fn role_override_classifies_an_unconventional_kind() {
    let docs = load_whole(&fixtures().join("conformant-v1beta2"));
    let opts = LintOptions {
        roles: [(
            "FooIPPool".to_string(),
            capi_conformance::contract::Role::InfraMachine,
        )]
        .into(),
        ..LintOptions::default()
    };
    let m = lint_docs(docs, &opts);
    let col = m.columns.iter().find(|c| c.kind == "FooIPPool").unwrap();
    assert_eq!(col.role, capi_conformance::contract::Role::InfraMachine);
    assert_eq!(
        cell(&m, "infra-machine/provider-id", "FooIPPool")[0].outcome,
        Outcome::Fail
    );
}

#[test]
fn scenario_and_review_rules_are_skipped_with_their_reason() {
    let m = lint_dir(&fixtures().join("conformant-v1beta2"));
    let catalog = catalog();
    let mut seen_scenario = false;
    let mut seen_review = false;
    for r in &m.results {
        match catalog.get(&r.rule_id).unwrap().kind {
            capi_conformance::suite::RuleKind::Scenario => {
                seen_scenario = true;
                assert_eq!(r.outcome, Outcome::Skip);
                assert_eq!(
                    r.reason.as_deref(),
                    Some("needs a live provider (run `check`)")
                );
            }
            capi_conformance::suite::RuleKind::Review => {
                seen_review = true;
                assert_eq!(r.outcome, Outcome::Skip);
                assert_eq!(r.reason.as_deref(), Some("review only"));
            }
            capi_conformance::suite::RuleKind::Static => {}
        }
    }
    assert!(seen_scenario && seen_review);
}

#[test]
fn crd_without_contract_label_fails_label_rules_and_skips_the_rest() {
    let docs = with_crd(|v| {
        v["metadata"]["labels"]
            .as_object_mut()
            .unwrap()
            .remove("cluster.x-k8s.io/v1beta2");
    });
    let m = lint_docs(docs, &LintOptions::default());
    let col = m.columns.iter().find(|c| c.kind == "FooMachine").unwrap();
    assert_eq!(col.contract, None);
    assert_eq!(
        cell(&m, "all/contract-label", "FooMachine")[0].outcome,
        Outcome::Fail
    );
    let r = cell(&m, "infra-machine/provider-id", "FooMachine");
    assert!(r.is_empty() || r[0].outcome == Outcome::Skip);
    let ns = cell(&m, "all/namespaced", "FooMachine")[0];
    assert_eq!(ns.outcome, Outcome::Skip);
    assert!(ns.reason.as_deref().unwrap().contains("no contract label"));
}

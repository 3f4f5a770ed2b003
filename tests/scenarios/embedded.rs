//! `check --embedded` with the healthy mock as target: every scenario rule passes or is
//! skipped with a reason, for every role under both contracts.

use super::common::{embedded, lifecycle};
use capi_conformance::contract::{Contract, Role};
use capi_conformance::report::{Outcome, Verdict};
use capi_conformance::scenarios::baseline::SCENARIO_ROLES;
use std::collections::BTreeSet;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthy_mock_passes_every_scenario_rule_for_every_role_and_contract() {
    let m = embedded(&[], "").await;
    assert_eq!(m.verdict(), Verdict::Pass, "{:?}", m.summary());
    for baseline in [false, true] {
        let failed: Vec<_> = lifecycle(&m, baseline)
            .filter(|r| r.outcome == Outcome::Fail && r.rule_id != "all/rbac-aggregation")
            .map(|r| (r.column.id(), r.rule_id.clone(), r.reason.clone()))
            .collect();
        assert!(failed.is_empty(), "{failed:#?}");
    }
    let inconclusive: Vec<_> = lifecycle(&m, false)
        .filter(|r| r.outcome == Outcome::Inconclusive)
        .collect();
    assert!(inconclusive.is_empty(), "{inconclusive:#?}");
    for baseline in [false, true] {
        // A lifecycle cell, or a static rule's cell with its scenario part folded in (the
        // template roles' `template/clone-compatible`).
        let covered: BTreeSet<(Role, Option<Contract>)> = m
            .results
            .iter()
            .filter(|r| r.column.baseline == baseline && r.outcome == Outcome::Pass)
            .filter(|r| crate::cells::lifecycle_judged(r))
            .map(|r| (r.column.role, r.column.contract))
            .collect();
        for role in SCENARIO_ROLES {
            // The IPAM pool's one column has no contract (docs/contract.md §17).
            for c in capi_conformance::scenarios::baseline::mock_contracts(role) {
                assert!(
                    covered.contains(&(role, c)),
                    "no passing scenario cell for {role:?} {c:?} (baseline {baseline})"
                );
            }
        }
    }
    // Every skip says why.
    assert!(
        lifecycle(&m, false)
            .filter(|r| r.outcome == Outcome::Skip)
            .all(|r| r.reason.as_deref().is_some_and(|s| !s.is_empty()))
    );
    // Scenario records with per-step timings for target and baseline.
    assert!(m.scenarios.iter().any(|s| s.column.baseline));
    assert!(
        m.scenarios
            .iter()
            .any(|s| !s.column.baseline && s.steps.iter().all(|st| st.duration_ms.is_some()))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_runs_give_identical_matrices_without_timings() {
    let words = ["--scenarios", "SC-inframachine,SC-bootstrap,SC-template"];
    let mut a = embedded(&words, "").await.without_timings();
    let mut b = embedded(&words, "").await.without_timings();
    a.context.run_id = None;
    b.context.run_id = None;
    let only_a: Vec<_> = a
        .results
        .iter()
        .filter(|r| !b.results.contains(r))
        .collect();
    let only_b: Vec<_> = b
        .results
        .iter()
        .filter(|r| !a.results.contains(r))
        .collect();
    assert!(
        only_a.is_empty() && only_b.is_empty(),
        "first only: {only_a:#?}\nsecond only: {only_b:#?}"
    );
    assert_eq!(a.scenarios, b.scenarios);
    assert!(a == b, "matrices differ outside results and scenarios");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn report_dir_keeps_timeline_and_redacted_objects_of_every_scenario() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap().to_string();
    let m = embedded(
        &["--scenarios", "SC-bootstrap", "--report-dir", &path],
        "bootstrap/secret-label",
    )
    .await;
    // The failing target's records and the passing baseline's both keep their timeline.
    for baseline in [false, true] {
        let records: Vec<_> = m
            .scenarios
            .iter()
            .filter(|s| s.column.baseline == baseline)
            .collect();
        assert!(!records.is_empty(), "no records (baseline {baseline})");
        assert!(
            records.iter().all(|s| !s.timeline.is_empty()),
            "a record without timeline (baseline {baseline})"
        );
    }
    let kept: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    // One directory per scenario record, passing (the baseline) or failing (the target).
    assert_eq!(kept.len(), m.scenarios.len(), "{kept:#?}");
    assert!(
        kept.iter()
            .any(|p| p.to_string_lossy().contains("baseline"))
    );
    assert!(
        kept.iter()
            .any(|p| !p.to_string_lossy().contains("baseline"))
    );
    for d in kept {
        let timeline = std::fs::read_to_string(d.join("timeline.json")).unwrap();
        assert!(timeline.contains("tool: set owner") || timeline.contains("tool: create"));
        let objects = std::fs::read_to_string(d.join("objects.yaml")).unwrap();
        assert!(objects.contains("kind: Secret"), "{}", d.display());
        assert!(objects.contains("<redacted>"));
        assert!(
            !objects.contains("I2Nsb3VkLWNvbmZpZw"),
            "bootstrap payload leaked"
        );
    }
}

/// A passing `check --embedded --html --report-dir` (the binary, every
/// scenario of both contracts) keeps a timeline for every scenario, passing ones too: each
/// JSON scenario record has one; the HTML holds one SVG per target record, its provider lane
/// marking every entry of that record's timeline and its baseline lane every entry of the
/// baseline's; `--report-dir` holds one `timeline.json` per record, equal to the JSON's.
#[test]
fn passing_check_embedded_keeps_a_timeline_for_every_scenario_in_json_html_and_report_dir() {
    use capi_conformance::report::{ReportDocument, TimelineEntry};
    let dir = tempfile::tempdir().unwrap();
    let html_path = dir.path().join("report.html");
    let runs = dir.path().join("runs");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_capi-conformance"))
        .args([
            "check",
            "--embedded",
            "--progress",
            "never",
            "-o",
            "json",
            "--html",
        ])
        .arg(&html_path)
        .arg("--report-dir")
        .arg(&runs)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: ReportDocument = serde_json::from_slice(&out.stdout).unwrap();
    let baseline_ids: BTreeSet<&str> = doc
        .columns
        .iter()
        .filter(|c| c.column.baseline)
        .map(|c| c.id.as_str())
        .collect();
    let (baselines, targets): (Vec<_>, Vec<_>) = doc
        .scenarios
        .iter()
        .partition(|s| baseline_ids.contains(s.column.as_str()));
    // Every scenario role of both contracts (the IPAM pool: its one column), target and
    // baseline.
    let columns: usize = SCENARIO_ROLES
        .iter()
        .map(|r| capi_conformance::scenarios::baseline::mock_contracts(*r).len())
        .sum();
    assert!(targets.len() >= columns, "{}", targets.len());
    assert_eq!(targets.len(), baselines.len());
    // The mock answers every stimulus at once: no step of a passing run sits out a whole step
    // deadline (a step waiting for a deletion no watch can report would sit out the whole
    // deadline, and the embedded check would take seconds more).
    let deadline = capi_conformance::scenarios::Settings::EMBEDDED.step_timeout;
    for s in &doc.scenarios {
        assert!(
            !s.timeline.is_empty() && !s.steps.is_empty(),
            "{} {}: no timeline",
            s.scenario,
            s.column
        );
        for step in &s.steps {
            let took = std::time::Duration::from_millis(step.duration_ms.unwrap_or(0));
            assert!(
                took < deadline,
                "{} {}: step {:?} took {took:?}, a whole step deadline ({deadline:?})",
                s.scenario,
                s.column,
                step.name
            );
        }
    }

    // The HTML: one SVG per target record, lanes marking every entry.
    let html = std::fs::read_to_string(&html_path).unwrap();
    let svgs: Vec<&str> = html
        .split("<svg class=\"timeline\"")
        .skip(1)
        .map(|s| &s[..s.find("</svg>").unwrap()])
        .collect();
    assert_eq!(svgs.len(), targets.len());
    let mut drawn = BTreeSet::new();
    for svg in &svgs {
        let scenario = attr(svg, "data-scenario");
        let column = attr(svg, "data-column");
        let target = targets
            .iter()
            .find(|t| t.scenario == scenario && t.column == column)
            .unwrap_or_else(|| panic!("an SVG for no target record: {scenario} {column}"));
        assert!(
            drawn.insert((scenario, column)),
            "two SVGs for {scenario} {column}"
        );
        let provider = lane(svg, "provider");
        let baseline = lane(svg, "baseline");
        assert_eq!(
            marked(provider),
            target.timeline.len(),
            "{scenario} {column}"
        );
        let base_column = attr(baseline, "data-column");
        let base = baselines
            .iter()
            .find(|b| b.scenario == scenario && b.column == base_column)
            .unwrap_or_else(|| panic!("{scenario} {column}: no baseline record {base_column}"));
        assert_eq!(
            marked(baseline),
            base.timeline.len(),
            "{scenario} {base_column}"
        );
    }

    // `--report-dir`: one directory per record, passing ones too, with the record's timeline.
    let mut kept: Vec<Vec<TimelineEntry>> = std::fs::read_dir(&runs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|d| {
            serde_json::from_str(&std::fs::read_to_string(d.join("timeline.json")).unwrap())
                .unwrap()
        })
        .collect();
    let mut expected: Vec<Vec<TimelineEntry>> =
        doc.scenarios.iter().map(|s| s.timeline.clone()).collect();
    let key = |t: &Vec<TimelineEntry>| serde_json::to_string(t).unwrap();
    kept.sort_by_key(key);
    expected.sort_by_key(key);
    assert_eq!(kept.len(), doc.scenarios.len());
    assert!(
        kept == expected,
        "--report-dir timelines differ from the JSON report's"
    );
}

/// The value of attribute `name` in the first tag of `s`.
fn attr<'a>(s: &'a str, name: &str) -> &'a str {
    let tag = &s[..s.find('>').unwrap()];
    let at = tag.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
    &tag[at..at + tag[at..].find('"').unwrap()]
}

/// The lane `side` (`provider`, `baseline`) of one SVG, from its opening tag to the next lane.
fn lane<'a>(svg: &'a str, side: &str) -> &'a str {
    let start = svg
        .find(&format!("<g class=\"lane lane-{side}\""))
        .unwrap_or_else(|| panic!("no {side} lane"));
    let rest = &svg[start..];
    let end = rest[1..]
        .find("<g class=\"lane ")
        .map_or(rest.len(), |e| e + 1);
    &rest[..end]
}

/// How many timeline entries the markers of `s` stand for (close entries share a marker).
fn marked(s: &str) -> usize {
    s.split("<g class=\"event ")
        .skip(1)
        .map(|g| attr(g, "data-count").parse::<usize>().unwrap())
        .sum()
}

/// `--kinds GLOBS`: only the matching kinds get lifecycle scenarios; the others keep their
/// static cells and skip their scenario rules as not selected, which leaves the verdict PASS
/// (a stated choice, not a missing sample).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kinds_selects_the_kinds_that_get_scenarios() {
    let m = embedded(&["--kinds", "MockMachine,MockCluster"], "").await;
    let judged: BTreeSet<String> = lifecycle(&m, false)
        .filter(|r| r.outcome == Outcome::Pass)
        .map(|r| r.column.kind.to_string())
        .collect();
    assert_eq!(
        judged,
        ["MockCluster".to_string(), "MockMachine".to_string()].into(),
        "{judged:?}"
    );
    assert!(
        m.results
            .iter()
            .any(|r| r.column.kind.as_ref() == "MockControlPlane" && r.outcome == Outcome::Pass),
        "static cells of the other kinds stay"
    );
    assert_eq!(m.verdict(), Verdict::Pass);
}

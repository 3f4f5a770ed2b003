//! Odd matrices: empty, baseline only, rules missing from the catalog, and random subsets
//! of cells (proptest).

use crate::fixtures;
use crate::support::{every_output, html, render, shuffled};
use capi_conformance::cli::OutputFormat;
use capi_conformance::report::ReportDocument;

#[test]
fn empty_matrix_renders_in_every_format() {
    let mut m = fixtures::all_pass();
    m.rules.clear();
    m.columns.clear();
    m.results.clear();
    let outs = every_output(&m);
    assert!(outs[0].contains("Summary: 0 pass, 0 fail"));
    let doc: ReportDocument = serde_json::from_str(&outs[1]).unwrap();
    assert!(doc.results.is_empty());
    assert!(outs[3].contains("<testsuites"));
}

#[test]
fn baseline_only_matrix_shows_the_baseline_as_its_own_provider() {
    let mut m = fixtures::synthetic();
    m.results.retain(|r| r.column.baseline);
    m.columns.retain(|c| c.baseline);
    m.scenarios.retain(|s| s.column.baseline);
    let table = render(&m, OutputFormat::Table);
    assert!(table.contains("Provider mock (baseline)"), "{table}");
    assert!(table.contains("SC-inframachine"));
    let page = html(&m);
    assert!(page.contains("id=\"timeline-SC-inframachine\""));
}

#[test]
fn results_of_rules_missing_from_the_catalog_still_render() {
    let mut m = fixtures::synthetic();
    m.rules.retain(|r| r.id != "all/crd-contract-label");
    for out in every_output(&m) {
        assert!(out.contains("all/crd-contract-label"));
    }
    // Columns only named by results are added.
    let mut m = fixtures::synthetic();
    m.columns.clear();
    assert_eq!(
        render(&m, OutputFormat::Table),
        render(&fixtures::synthetic(), OutputFormat::Table)
    );
}

mod random {
    use super::*;
    use capi_conformance::contract::Level;
    use capi_conformance::report::{Outcome, Phase};
    use proptest::prelude::*;

    fn outcome() -> impl Strategy<Value = Outcome> {
        prop_oneof![
            Just(Outcome::Pass),
            Just(Outcome::Fail),
            Just(Outcome::Skip),
            Just(Outcome::Inconclusive),
            Just(Outcome::Waived),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Any subset of the synthetic cells, with any outcomes, phases and reasons: every
        /// writer succeeds, output is independent of input order, and JSON counts match.
        #[test]
        fn any_matrix_renders_deterministically(
            cells in proptest::collection::vec(
                (0usize..6, 0usize..6, any::<bool>(), outcome(), proptest::option::of("[a-z <>&|*`:=]{0,20}")),
                0..30,
            )
        ) {
            let base = fixtures::synthetic();
            let mut m = base.clone();
            m.results = cells
                .iter()
                .map(|(r, c, lifecycle, o, reason)| {
                    let mut res = fixtures::result(
                        &base.rules[*r].id,
                        &base.columns[*c],
                        Level::Must,
                        if *lifecycle { Phase::Lifecycle } else { Phase::Static },
                        *o,
                    );
                    res.reason = reason.clone();
                    res
                })
                .collect();
            let outs = every_output(&m);
            prop_assert_eq!(&outs, &every_output(&shuffled(&m)));
            let doc: ReportDocument = serde_json::from_str(&outs[1]).unwrap();
            prop_assert_eq!(doc.summary, m.summary());
            prop_assert_eq!(doc.exit_code, m.verdict().exit_code());
            let table_summary = format!("verdict {}", match m.verdict() {
                capi_conformance::report::Verdict::Pass => "PASS",
                capi_conformance::report::Verdict::Fail => "FAIL",
                capi_conformance::report::Verdict::InputError => "INPUT ERROR",
                capi_conformance::report::Verdict::Inconclusive => "INCONCLUSIVE",
            });
            prop_assert!(outs[0].contains(&table_summary));
        }
    }
}

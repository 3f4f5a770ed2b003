//! `--migration`: what older contract kinds must change, in every format.

use crate::fixtures;
use crate::support::{args, html, parse_junit, render};
use capi_conformance::cli::OutputFormat;
use capi_conformance::report::{self, RenderOptions, ReportDocument};

fn with_migration() -> RenderOptions {
    RenderOptions {
        migration: Some(capi_conformance::contract::Contract::V1Beta2),
        ..RenderOptions::default()
    }
}

#[test]
fn migration_lists_what_older_contract_kinds_must_change() {
    use capi_conformance::contract::{Contract, Role};
    use capi_conformance::report::Outcome;
    let mut m = fixtures::synthetic();
    // A kind checked only under v1beta1 cannot be assessed for v1beta2.
    let legacy = fixtures::col("acme", "AcmeLegacy", Role::Other, fixtures::B1, false);
    m.results.push(fixtures::result(
        "all/crd-contract-label",
        &legacy,
        capi_conformance::contract::Level::Must,
        capi_conformance::report::Phase::Static,
        Outcome::Pass,
    ));
    let mig = report::migration::migration(&m, Contract::V1Beta2);
    assert_eq!(mig.to, Contract::V1Beta2);
    let kinds: Vec<(&str, bool, usize)> = mig
        .kinds
        .iter()
        .map(|k| (k.kind.as_str(), k.checked, k.items.len()))
        .collect();
    // AcmeCluster is only on v1beta2 (nothing to migrate); the baseline never appears.
    assert_eq!(kinds, [("AcmeMachine", true, 2), ("AcmeLegacy", false, 0)]);
    let items: Vec<(&str, Option<Outcome>, Outcome)> = mig.kinds[0]
        .items
        .iter()
        .map(|i| (i.rule_id.as_str(), i.from_outcome, i.to_outcome))
        .collect();
    assert_eq!(
        items,
        [
            ("all/crd-contract-label", Some(Outcome::Pass), Outcome::Fail),
            (
                "infra-machine/provider-id",
                Some(Outcome::Skip),
                Outcome::Fail
            ),
        ]
    );
    assert_eq!(mig.changes(), 2);
    assert_eq!(mig.unchecked(), 1);
    // Nothing is older than v1beta1.
    assert!(
        report::migration::migration(&m, Contract::V1Beta1)
            .kinds
            .is_empty()
    );
}

#[test]
fn table_with_migration() {
    insta::assert_snapshot!(
        report::render(
            &fixtures::synthetic(),
            OutputFormat::Table,
            &with_migration()
        )
        .unwrap()
    );
}

#[test]
fn markdown_with_migration() {
    insta::assert_snapshot!(
        report::render(
            &fixtures::synthetic(),
            OutputFormat::Markdown,
            &with_migration()
        )
        .unwrap()
    );
}

#[test]
fn migration_is_a_section_of_every_format() {
    let m = fixtures::synthetic();
    let opts = with_migration();
    let doc: ReportDocument =
        serde_json::from_str(&report::render(&m, OutputFormat::Json, &opts).unwrap()).unwrap();
    assert_eq!(doc.migration.as_ref().unwrap().changes(), 2);
    let plain: ReportDocument = serde_json::from_str(&render(&m, OutputFormat::Json)).unwrap();
    assert!(plain.migration.is_none());
    let yaml = report::render(&m, OutputFormat::Yaml, &opts).unwrap();
    assert!(yaml.contains("migration:"));
    let suites = parse_junit(&report::render(&m, OutputFormat::Junit, &opts).unwrap());
    let mig = suites
        .iter()
        .find(|s| s.attrs["name"] == "acme/migration to v1beta2")
        .expect("migration suite");
    assert_eq!(mig.cases.len(), 1);
    assert_eq!(mig.cases[0].attrs["classname"], "acme.AcmeMachine@v1beta2");
    let (kind, a, body) = mig.cases[0].child.as_ref().unwrap();
    assert_eq!(kind, "failure");
    assert_eq!(a["message"], "2 change(s) needed for v1beta2");
    assert!(body.contains("infra-machine/provider-id [MUST]"));
    let page = report::render_html(&m, &opts);
    assert!(page.contains("<section id=\"migration\" data-to=\"v1beta2\">"));
    assert!(!html(&m).contains("id=\"migration\""));
}

#[test]
fn write_outputs_takes_the_migration_flag() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = args(dir.path());
    a.migration = Some("v1beta2".into());
    let mut stdout = Vec::new();
    report::write_outputs_to(&fixtures::synthetic(), &a.outputs(), false, &mut stdout).unwrap();
    assert!(
        String::from_utf8(stdout)
            .unwrap()
            .contains("#### Migration to `v1beta2`")
    );
    let json = std::fs::read_to_string(a.json.as_ref().unwrap()).unwrap();
    assert!(json.contains("\"migration\""));
    a.migration = Some("v2".into());
    let err =
        report::write_outputs_to(&fixtures::synthetic(), &a.outputs(), false, &mut Vec::new())
            .unwrap_err();
    assert!(format!("{err:#}").contains("--migration: unknown contract `v2`"));
}

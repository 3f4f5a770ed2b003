//! JUnit structure: the elements and attributes CI tools read, the hostname option.

use crate::fixtures;
use crate::support::{parse_junit, render};
use capi_conformance::cli::OutputFormat;
use capi_conformance::report::{self, RenderOptions};

#[test]
fn junit_has_the_elements_and_attributes_ci_tools_read() {
    let m = fixtures::synthetic();
    let suites = parse_junit(&render(&m, OutputFormat::Junit));
    let names: Vec<&str> = suites.iter().map(|s| s.attrs["name"].as_str()).collect();
    assert_eq!(
        names,
        [
            "acme/static",
            "acme/lifecycle",
            "mock (baseline)/static",
            "mock (baseline)/lifecycle"
        ]
    );
    let total: usize = suites.iter().map(|s| s.cases.len()).sum();
    assert_eq!(total, m.results.len());
    for s in &suites {
        for key in [
            "name",
            "tests",
            "failures",
            "errors",
            "timestamp",
            "hostname",
            "time",
        ] {
            assert!(
                s.attrs.contains_key(key),
                "suite lacks {key}: {:?}",
                s.attrs
            );
        }
        assert_eq!(s.attrs["timestamp"], "2026-01-02T03:04:05Z");
        assert_eq!(s.attrs["hostname"], "capi-conformance");
        assert_eq!(s.attrs["tests"], s.cases.len().to_string());
        let count = |kind: &str| {
            s.cases
                .iter()
                .filter(|c| c.child.as_ref().is_some_and(|(n, _, _)| n == kind))
                .count()
                .to_string()
        };
        assert_eq!(s.attrs["failures"], count("failure"));
        assert_eq!(s.attrs["errors"], count("error"));
        for needle in [
            "tool: capi-conformance 0.1.0",
            "command: check",
            "source: https://127.0.0.1:6443",
            "server version: v1.33.0",
            "fail-on: must",
            "contract: ",
        ] {
            assert!(
                s.system_out.contains(needle),
                "system-out lacks {needle}: {}",
                s.system_out
            );
        }
        for c in &s.cases {
            for key in ["name", "classname", "time"] {
                assert!(c.attrs.contains_key(key), "testcase lacks {key}");
            }
        }
    }
    let acme_static = &suites[0];
    let skipped: usize = suites
        .iter()
        .flat_map(|s| &s.cases)
        .filter(|c| c.child.as_ref().is_some_and(|(n, _, _)| n == "skipped"))
        .count();
    assert_eq!(skipped, 2, "one skip and one waived");
    assert!(
        acme_static
            .system_out
            .contains("contract: v1beta1, v1beta2")
    );

    let case = |name: &str, classname: &str| {
        suites
            .iter()
            .flat_map(|s| &s.cases)
            .find(|c| c.attrs["name"].starts_with(name) && c.attrs["classname"] == classname)
            .unwrap_or_else(|| panic!("no testcase {name} {classname}"))
    };
    let label = case("all/crd-contract-label ", "acme.AcmeMachine@v1beta2");
    assert_eq!(
        label.attrs["name"],
        "all/crd-contract-label CRD carries the contract label"
    );
    let (kind, a, body) = label.child.as_ref().unwrap();
    assert_eq!(kind, "failure");
    assert_eq!(a["message"], "label cluster.x-k8s.io/v1beta2 is missing");
    assert!(body.contains("at components.yaml#4"));
    assert!(body.contains("fix: Make sure that"));
    assert!(body.contains("doc: https://cluster-api.sigs.k8s.io/"));

    let pid = case("infra-machine/provider-id", "acme.AcmeMachine@v1beta2");
    assert_eq!(pid.attrs["time"], "10");
    let inc = case("all/terminal-failures", "acme.AcmeMachine@v1beta1");
    assert_eq!(inc.child.as_ref().unwrap().0, "error");
    let waived = case(
        "infra-cluster/control-plane-endpoint",
        "acme.AcmeCluster@v1beta2",
    );
    let (kind, a, _) = waived.child.as_ref().unwrap();
    assert_eq!(kind, "skipped");
    assert!(a["message"].starts_with("waived: waived by CRD annotation"));
    let skip = case("infra-machine/provider-id", "acme.AcmeMachine@v1beta1");
    assert_eq!(
        skip.child.as_ref().unwrap().1["message"],
        "needs a live provider"
    );
    case("provider/rbac-aggregation", "acme.Provider");
}

#[test]
fn junit_hostname_comes_from_the_options() {
    let opts = RenderOptions {
        hostname: "ci-runner".into(),
        ..RenderOptions::default()
    };
    let mut m = fixtures::all_pass();
    m.context.started_at = "2026-01-02T03:04:05.123456789Z".parse().unwrap();
    let xml = report::render(&m, OutputFormat::Junit, &opts).unwrap();
    let suites = parse_junit(&xml);
    assert!(suites.iter().all(|s| s.attrs["hostname"] == "ci-runner"));
    // Whole seconds only: strict readers reject fractions.
    assert!(
        suites
            .iter()
            .all(|s| s.attrs["timestamp"] == "2026-01-02T03:04:05Z")
    );
}

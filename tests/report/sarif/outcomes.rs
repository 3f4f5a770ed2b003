//! Where each outcome of a provider run goes in SARIF: results, levels, suppressions,
//! notifications.

use super::*;
use serde_json::Value;
use std::collections::BTreeMap;

#[test]
fn every_outcome_goes_where_it_belongs() {
    let m = provider_run();
    let log = sarif(&m);
    let rs = results(&log);
    let ids: Vec<(&str, &str)> = rs
        .iter()
        .map(|r| {
            (
                r["ruleId"].as_str().unwrap(),
                r["properties"]["column"].as_str().unwrap(),
            )
        })
        .collect();
    // Fails and waived failures only: no pass, skip, waived pass, inconclusive or baseline result.
    assert_eq!(
        ids,
        [
            ("infra-machine/provider-id", "foo/FooMachine@v1beta2"),
            ("all/category", "foo/FooMachine@v1beta2"),
            ("all/conditions", "foo/FooCluster@v1beta2"),
            ("all/conditions", "foo/FooMachine@v1beta2"),
            ("all/rbac-owner-finalizers", "foo/*"),
        ]
    );
    for r in &rs {
        assert_eq!(r["kind"], "fail");
        // GitHub rejects a whole log when one result has no physical location.
        assert!(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].is_string());
        assert!(r["locations"][0]["physicalLocation"]["region"]["startLine"].as_i64() >= Some(1));
        let index = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(
            run(&log)["tool"]["driver"]["rules"][index]["id"],
            r["ruleId"],
            "ruleIndex points at the rule"
        );
    }

    let waived: BTreeMap<&str, &Value> = rs
        .iter()
        .filter(|r| r["suppressions"].is_array())
        .map(|r| {
            (
                r["properties"]["column"].as_str().unwrap(),
                &r["suppressions"][0],
            )
        })
        .collect();
    assert_eq!(waived.len(), 2);
    let annotation = waived["foo/FooMachine@v1beta2"];
    assert_eq!(annotation["kind"], "inSource");
    assert_eq!(annotation["status"], "accepted");
    assert!(
        annotation["justification"]
            .as_str()
            .unwrap()
            .contains("conditions come in v1beta3")
    );
    assert_eq!(waived["foo/FooCluster@v1beta2"]["kind"], "external");
    // A waived cell without a source line sits at its document (line unknown here: 1).
    let cluster = rs
        .iter()
        .find(|r| r["properties"]["column"] == "foo/FooCluster@v1beta2")
        .unwrap();
    assert_eq!(location(cluster), ("config/default", Some("%SRCROOT%"), 1));

    // A provider-wide finding with no place of its own is anchored to the provider's first file.
    let rbac = rs
        .iter()
        .find(|r| r["ruleId"] == "all/rbac-owner-finalizers")
        .unwrap();
    assert_eq!(location(rbac), (BASES, Some("%SRCROOT%"), 1));
    assert_eq!(rbac["level"], "warning", "SHOULD → warning");

    let notes = notifications(&log);
    let texts: Vec<&str> = notes
        .iter()
        .map(|n| n["message"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(notes.len(), 3, "{texts:?}");
    assert!(
        texts
            .iter()
            .any(|t| t.contains("inconclusive: the API server dropped the watch"))
    );
    assert!(
        texts
            .iter()
            .any(|t| t.contains("the built-in mock baseline is fail"))
    );
    assert!(
        texts
            .iter()
            .any(|t| t.contains("input problem: config/broken.yaml#1"))
    );
    let inconclusive = notes
        .iter()
        .find(|n| {
            n["message"]["text"]
                .as_str()
                .unwrap()
                .contains("inconclusive")
        })
        .unwrap();
    assert_eq!(
        inconclusive["associatedRule"]["id"],
        "all/terminal-failures"
    );
    assert_eq!(inconclusive["level"], "warning");
    // An inconclusive scenario cell is reported at its kind's CRD (the first place it has).
    assert_eq!(
        inconclusive["locations"][0]["physicalLocation"]["region"]["startLine"],
        412
    );
    let problem = notes
        .iter()
        .find(|n| {
            n["message"]["text"]
                .as_str()
                .unwrap()
                .contains("input problem")
        })
        .unwrap();
    assert_eq!(problem["level"], "error");

    let invocation = &run(&log)["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], false, "input problems");
    assert_eq!(invocation["exitCode"], m.verdict().exit_code());
    assert_eq!(invocation["startTimeUtc"], "2026-01-02T03:04:05Z");
    let summary = &run(&log)["properties"]["summary"];
    assert_eq!(summary["pass"], 1);
    assert_eq!(summary["skip"], 1);
    assert_eq!(summary["fail"], 3);
    assert_eq!(summary["waived"], 3);
    assert_eq!(summary["inconclusive"], 1);
}

//! No green without a check: a provider whose kinds have no sample object
//! (no `--sample`, no template in the cluster) has every lifecycle cell skipped "no sample
//! object"; the cells stay `skip`, but the run is not PASS: exit 3, the kinds named with the
//! fix in every report, and each provider's lifecycle coverage (judged vs skipped, top skip
//! reasons) in the JSON, table, Markdown, HTML and JUnit. A run asked for no lifecycle
//! (`--scenarios none`, `--static-only`) stays 0; so does a target with its samples (the mock).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_capi-conformance")
}

/// The conformant v1beta2 fixture provider's components (its kinds: `Foo…`, no mock group).
fn components() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/conformant-v1beta2/infrastructure-components.yaml")
}

/// The mock as its own process: a controller that starts and watches (its own kinds only).
fn mock_cmd() -> String {
    format!(
        "{} mock-provider run --kubeconfig {{kubeconfig}} --watch-namespace {{namespace}}",
        bin()
    )
}

struct Run {
    code: Option<i32>,
    json: Value,
    markdown: String,
    html: String,
    junit: String,
    stderr: String,
}

/// `check --embedded <args> -o json` with every other report written beside it.
fn run(args: &[&str]) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let path = |n: &str| dir.path().join(n);
    let out = Command::new(bin())
        .args(["check", "--embedded", "--progress", "never", "-o", "json"])
        .args(args)
        .arg("--markdown")
        .arg(path("summary.md"))
        .arg("--html")
        .arg(path("report.html"))
        .arg("--junit")
        .arg(path("junit.xml"))
        .arg("--report-dir")
        .arg(path("runs"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let json: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no JSON report ({e}): {stderr}"));
    let read = |n: &str| std::fs::read_to_string(path(n)).unwrap_or_default();
    Run {
        code: out.status.code(),
        json,
        markdown: read("summary.md"),
        html: read("report.html"),
        junit: read("junit.xml"),
        stderr,
    }
}

/// The fixture's provider (its CRDs' `cluster.x-k8s.io/provider` label).
const PROVIDER: &str = "infrastructure-foo";
const KINDS: [&str; 2] = [
    "infrastructure-foo/FooCluster",
    "infrastructure-foo/FooMachine",
];

#[test]
fn a_target_without_samples_is_inconclusive_exit_3_naming_the_kinds() {
    let components = components();
    let cmd = mock_cmd();
    let r = run(&[
        "--crds",
        components.to_str().unwrap(),
        "--provider-cmd",
        &cmd,
    ]);
    let Run { json, stderr, .. } = &r;
    assert_eq!(r.code, Some(3), "{stderr}\n{:#}", json["summary"]);
    assert_eq!(json["verdict"], "inconclusive");
    assert_eq!(json["exit_code"], 3);
    assert_eq!(
        json["summary"]["gating_failures"], 0,
        "{:#}",
        json["summary"]
    );
    assert_eq!(
        json["summary"]["gating_inconclusive"], 0,
        "{:#}",
        json["summary"]
    );
    let unjudged = json["summary"]["gating_unjudged"].as_u64().unwrap_or(0);
    assert!(unjudged > 0, "{:#}", json["summary"]);
    // The cells stay skip, with the reason, and they are what gates.
    let no_sample: Vec<&Value> = json["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| {
            c["reason"]
                .as_str()
                .is_some_and(|s| s.starts_with("no sample object"))
        })
        .collect();
    assert!(!no_sample.is_empty());
    assert!(
        no_sample
            .iter()
            .all(|c| c["outcome"] == "skip" && c["phase"] == "lifecycle")
    );
    assert!(no_sample.iter().any(|c| c["gating"] == true));
    // The coverage: nothing of the provider judged, its kinds named.
    let lifecycle = json["lifecycle"].as_array().expect("a lifecycle field");
    let foo = lifecycle
        .iter()
        .find(|c| c["provider"] == PROVIDER)
        .unwrap_or_else(|| panic!("{lifecycle:#?}"));
    for k in ["pass", "fail", "inconclusive", "waived"] {
        assert_eq!(foo[k], 0, "{foo:#}");
    }
    assert!(foo["skip"].as_u64().unwrap_or(0) >= unjudged, "{foo:#}");
    let kinds: Vec<&str> = foo["kinds_without_sample"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for k in KINDS {
        let kind = k.trim_start_matches(PROVIDER).trim_start_matches('/');
        assert!(kinds.contains(&kind), "{kind} not in {kinds:?}");
    }
    assert!(
        foo["skip_reasons"][0]["reason"]
            .as_str()
            .is_some_and(|s| s.starts_with("no sample object")),
        "{foo:#}"
    );
    // Every human-readable report names the kinds and the fix.
    for (what, text) in [
        ("markdown", &r.markdown),
        ("html", &r.html),
        ("junit", &r.junit),
    ] {
        for k in KINDS {
            assert!(text.contains(k), "{what} does not name {k}");
        }
        assert!(
            text.contains("--sample FILE"),
            "{what} does not say --sample"
        );
    }
    assert!(r.markdown.contains("#### Lifecycle coverage"));
    assert!(r.markdown.contains("INCONCLUSIVE (exit 3)"));
    assert!(r.html.contains("id=\"lifecycle\"") && r.html.contains("id=\"verdict-reason\""));
    assert!(
        r.junit
            .contains("classname=\"infrastructure-foo.Lifecycle\"")
    );
    assert!(r.junit.contains("lifecycle: 0 judged"));
}

/// The table (the default output) of the same kind of run says why, at the summary.
#[test]
fn the_table_names_the_kinds_without_a_sample() {
    let components = components();
    let out = Command::new(bin())
        .args(["check", "--embedded", "--progress", "never", "--crds"])
        .arg(&components)
        .args(["--scenarios", "SC-infracluster"])
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{table}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(table.contains("Lifecycle coverage"), "{table}");
    assert!(table.contains(&format!("{PROVIDER}: 0 judged")), "{table}");
    assert!(
        table.contains(&format!(
            "Why INCONCLUSIVE: lifecycle rules not judged: no sample object for {PROVIDER}/FooCluster;"
        )),
        "{table}"
    );
    assert!(table.contains("verdict INCONCLUSIVE (exit 3)"), "{table}");
    // No empty step table for scenarios that never started.
    assert!(!table.contains("Scenario steps"), "{table}");
}

/// Asked for no lifecycle, the same components are judged statically and the run passes.
#[test]
fn no_lifecycle_asked_means_no_exit_3() {
    let components = components();
    for flag in ["--static-only", "--scenarios=none"] {
        let r = run(&["--crds", components.to_str().unwrap(), flag]);
        assert_eq!(
            r.code,
            Some(0),
            "{flag}: {}\n{:#}",
            r.stderr,
            r.json["summary"]
        );
        assert!(r.json.get("lifecycle").is_none(), "{flag}");
        assert!(r.json["summary"].get("gating_unjudged").is_none(), "{flag}");
        assert!(!r.junit.contains("Lifecycle"), "{flag}");
    }
}

/// A target with its samples (the mock's own kinds, as its own process): exit 0, every kind
/// judged, the coverage without a kind lacking a sample.
#[test]
fn a_target_with_samples_stays_green() {
    let cmd = mock_cmd();
    let r = run(&["--scenarios", "SC-inframachine", "--provider-cmd", &cmd]);
    assert_eq!(r.code, Some(0), "{}\n{:#}", r.stderr, r.json["summary"]);
    let lifecycle = r.json["lifecycle"].as_array().expect("a lifecycle field");
    assert!(!lifecycle.is_empty());
    for c in lifecycle {
        assert!(c["pass"].as_u64().unwrap_or(0) > 0, "{c:#}");
        assert!(c.get("kinds_without_sample").is_none(), "{c:#}");
    }
    assert!(!r.junit.contains("lifecycle coverage"));
    assert!(r.junit.contains("lifecycle: "));
}

//! The kopf provider under every server fault at once, and with its own faults (no finalizer, a
//! webhook that refuses dry runs): the same cells as a clean run, or exactly the rules it breaks.

use super::*;

/// Every fault the embedded server has, at once (as `tests/reliability/faults.rs`).
const ALL_FAULTS: &str = "drop-watch=2s,force-410=20,429=5%,500=5%,latency=200ms,slow-establish=1s";

/// Each cell's verdict: (rule, column, outcome), reasons and timelines left out.
fn cells(m: &Matrix) -> BTreeSet<(String, String, String)> {
    m.results
        .iter()
        .map(|r| {
            (
                r.rule_id.to_string(),
                r.column.id(),
                format!("{:?}", r.outcome),
            )
        })
        .collect()
}

/// Every scenario on a server with all six faults at once (5% of requests answered 429 with
/// `Retry-After: 1`, as kube-apiserver's max-in-flight and APF filters answer, 5% with 500,
/// every watch dropped after 2 s or expired with 410, 200 ms added to each request, CRDs
/// established 1 s late) gives the clean run's cell for every rule and column: kopf's own
/// retries, re-watches and `Retry-After` waits and the provider's requeues keep every verdict
/// (the baseline mock is under the same faults). Both runs go at once, on two servers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kopf_provider_passes_every_rule_on_a_faulty_server() {
    let test = "kopf_provider_passes_every_rule_on_a_faulty_server";
    let Some(python) = python(test) else {
        return;
    };
    let started = std::time::Instant::now();
    let (clean_dir, faulty_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let clean_server = EmbeddedServer::new(ServerOptions::default());
    let server = EmbeddedServer::new(ServerOptions::default());
    let cmd = provider_cmd(&python, "");
    let clean_words = words(&cmd, clean_dir.path().to_str().unwrap(), None);
    let mut w = words(&cmd, faulty_dir.path().to_str().unwrap(), None);
    w.extend(["--server-faults".into(), ALL_FAULTS.into()]);
    let (clean, m) = tokio::join!(check_on(&clean_server, &clean_words), check_on(&server, &w));
    println!("clean and faulty runs took {:?}", started.elapsed());
    let bad: Vec<String> = m
        .results
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Fail | Outcome::Inconclusive))
        .map(|r| {
            format!(
                "{} {} {:?}: {:?}",
                r.rule_id,
                r.column.id(),
                r.outcome,
                r.reason
            )
        })
        .collect();
    assert!(bad.is_empty(), "{bad:#?}");
    let (clean_cells, faulty_cells) = (cells(&clean), cells(&m));
    let only_clean: Vec<_> = clean_cells.difference(&faulty_cells).collect();
    let only_faulty: Vec<_> = faulty_cells.difference(&clean_cells).collect();
    assert!(
        only_clean.is_empty() && only_faulty.is_empty(),
        "cells differ under faults: clean only {only_clean:#?}, faulty only {only_faulty:#?}"
    );
    let decided = m
        .results
        .iter()
        .filter(|r| is_kopf(r) && lifecycle_judged(r) && r.outcome == Outcome::Pass)
        .count();
    assert!(decided >= 12, "only {decided} kopf lifecycle cells passed");
    let (e429, e500) = server.faults().injected_errors();
    let (expired, dropped) = server.faults().stats();
    println!(
        "faults served: {e429} 429, {e500} 500, {expired} forced 410, {dropped} dropped watches"
    );
    assert!(
        e429 > 0 && e500 > 0 && expired > 0 && dropped > 0,
        "faults not injected: {e429} 429s, {e500} 500s, {expired} 410s, {dropped} dropped watches"
    );
}

/// A broken variant of the provider (`--fault infra-cluster/finalizer`: its KopfClusters get
/// no finalizer) fails that rule and no other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kopf_provider_without_finalizer_fails_exactly_the_finalizer_rule() {
    let test = "kopf_provider_without_finalizer_fails_exactly_the_finalizer_rule";
    let Some(python) = python(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let server = EmbeddedServer::new(ServerOptions::default());
    let cmd = provider_cmd(&python, " --fault infra-cluster/finalizer");
    let m = check_on(
        &server,
        &words(&cmd, dir.path().to_str().unwrap(), Some("SC-infracluster")),
    )
    .await;
    assert_eq!(
        failed_kopf_rules(&m),
        BTreeSet::from(["infra-cluster/finalizer".to_string()])
    );
    let other: Vec<String> = m
        .results
        .iter()
        .filter(|r| {
            matches!(r.outcome, Outcome::Fail | Outcome::Inconclusive)
                && !(is_kopf(r) && r.rule_id == "infra-cluster/finalizer")
        })
        .map(|r| format!("{} {}", r.rule_id, r.column.id()))
        .collect();
    assert!(other.is_empty(), "{other:?}");
}

/// As a process: the template webhook that also rejects topology's dry-run (`--fault
/// template/ssa-dry-run`) makes `check` exit 1 with exactly the dry-run rules failed, in the
/// kopf columns only.
#[test]
fn kopf_provider_rejecting_the_dry_run_exits_1_with_exactly_the_dry_run_rules() {
    let test = "kopf_provider_rejecting_the_dry_run_exits_1_with_exactly_the_dry_run_rules";
    let Some(python) = python(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cmd = provider_cmd(&python, " --fault template/ssa-dry-run");
    let out = Command::new(env!("CARGO_BIN_EXE_capi-conformance"))
        .arg("check")
        .args(words(
            &cmd,
            dir.path().to_str().unwrap(),
            Some("SC-template"),
        ))
        .args(["-o", "json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let failed: BTreeSet<(String, String)> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["outcome"] == "fail" || r["outcome"] == "inconclusive")
        .map(|r| {
            (
                r["rule_id"].as_str().unwrap().to_string(),
                r["column"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let rules: BTreeSet<&str> = failed.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(
        rules,
        BTreeSet::from(["template/ssa-dry-run", "infra-machine-template/ssa-dry-run"]),
        "{failed:?}"
    );
    assert!(
        failed
            .iter()
            .all(|(_, c)| c.starts_with(&format!("{PROVIDER}/")) && !c.contains("baseline")),
        "{failed:?}"
    );
    // The denial is kube's text for a webhook denial, with the provider's own message.
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("admission webhook \\\"validate.kopfmachinetemplate.infrastructure.kopf.example.com\\\" denied the request: spec: Invalid value: the template spec is immutable"),
        "{text}"
    );
}

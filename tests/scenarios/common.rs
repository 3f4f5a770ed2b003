//! Helpers: run `check` in-process from command-line words.

use capi_conformance::commands::check::embedded_matrix;
use capi_conformance::report::{Matrix, Outcome, Phase, RuleResult};

pub use crate::cells::check_args;

/// `check --embedded <words>` with the target mock's provider-wide faults.
pub async fn embedded(words: &[&str], faults: &str) -> Matrix {
    let mut w = vec!["--embedded", "--progress", "never"];
    w.extend_from_slice(words);
    let args = check_args(&w);
    embedded_matrix(&args, faults).await.unwrap()
}

/// `check --embedded <words>` with the target mock reading core objects in `reads` modes
/// (`capi_conformance::mock::core::CoreReads::parse`).
pub async fn embedded_reading(words: &[&str], reads: &str) -> Matrix {
    let mut w = vec!["--embedded", "--progress", "never"];
    w.extend_from_slice(words);
    let mut opts = check_args(&w).options().unwrap();
    if let Some(e) = &mut opts.embedded {
        e.target_core_reads = capi_conformance::mock::core::CoreReads::parse(reads).unwrap();
    }
    let server = capi_conformance::apiserver::EmbeddedServer::new(Default::default());
    capi_conformance::commands::check::embedded(&server, &opts)
        .await
        .unwrap()
}

pub fn lifecycle(m: &Matrix, baseline: bool) -> impl Iterator<Item = &RuleResult> {
    m.results
        .iter()
        .filter(move |r| r.phase == Phase::Lifecycle && r.column.baseline == baseline)
}

/// Whether a scenario judged `rule` in some column of the side (`baseline` or the target) and
/// it passed: a lifecycle cell, or a static rule's cell with its scenario part folded in (one
/// verdict per rule × column: the part is named `lifecycle: …` in the evidence).
pub fn scenario_passed(m: &Matrix, baseline: bool, rule: impl AsRef<str>) -> bool {
    let rule = rule.as_ref();
    m.results.iter().any(|r| {
        r.column.baseline == baseline
            && r.rule_id == rule
            && r.outcome == Outcome::Pass
            && crate::cells::lifecycle_judged(r)
    })
}

/// Rule ids failed by target lifecycle cells (the effective-RBAC cells excluded).
pub fn failed_scenario_rules(m: &Matrix, baseline: bool) -> std::collections::BTreeSet<String> {
    lifecycle(m, baseline)
        .filter(|r| r.outcome == Outcome::Fail && r.rule_id != "all/rbac-aggregation")
        .map(|r| r.rule_id.to_string())
        .collect()
}

/// An embedded server with CAPI core (`crds`) installed and routed, plus `extra` documents.
pub async fn core_server(
    crds: capi_conformance::capi_core::crds::CoreCrds,
    extra: Vec<serde_json::Value>,
) -> (
    capi_conformance::apiserver::EmbeddedServer,
    capi_conformance::capi_core::EmbeddedCore,
) {
    use capi_conformance::apiserver::{EmbeddedServer, ServerOptions};
    let server = EmbeddedServer::new(ServerOptions::default());
    let core = capi_conformance::capi_core::EmbeddedCore::start(server.client(), crds)
        .await
        .unwrap();
    core.route(&server);
    let mut docs = capi_conformance::source::embedded::base_documents_with(&core, true).unwrap();
    docs.extend(extra);
    server.apply_documents(docs).await.unwrap();
    (server, core)
}

pub fn run_namespace() -> Vec<serde_json::Value> {
    vec![
        serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "run-ns"}}),
    ]
}

/// The scenario environment of a test on `client`: namespace `run-ns`, run `r1`, the embedded
/// timing, and `workloads` (None: as on a real cluster).
pub fn run_env(
    client: kube::Client,
    workloads: Option<capi_conformance::capi_core::workload::WorkloadClusters>,
) -> capi_conformance::scenarios::env::Env {
    capi_conformance::scenarios::env::Env {
        client,
        namespace: "run-ns".into(),
        run_id: "r1".into(),
        watch_filter: None,
        pause_core: false,
        recorder: capi_conformance::scenarios::timeline::Recorder::new(),
        guard: Default::default(),
        settings: capi_conformance::scenarios::Settings::EMBEDDED,
        round_trips: Default::default(),
        events: Default::default(),
        workloads,
        ledger: None,
        trouble: Default::default(),
        core_version: "v1beta2",
        scopes: Default::default(),
        node_writes: Default::default(),
    }
}

//! `check --static-only` on a cluster gives the same static verdicts as `lint` on the same
//! manifests.

use capi_conformance::apiserver::{EmbeddedServer, ServerOptions};
use capi_conformance::checks::{LintOptions, evaluate_rules};
use capi_conformance::commands::check::static_matrix;
use capi_conformance::inventory::parse_text;
use capi_conformance::report::{Matrix, Outcome, Phase};
use capi_conformance::suite::Catalog;
use serde_json::Value;
use std::path::PathBuf;

fn corpus(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/corpus")
        .join(name)
        .join("components.yaml")
}

/// The CRDs and ClusterRoles of a components file (what a cluster would hold).
fn cluster_objects(name: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(corpus(name)).unwrap();
    parse_text("components.yaml", &text)
        .into_iter()
        .filter_map(Result::ok)
        .map(|d| d.value)
        .filter(|v| {
            matches!(
                v.get("kind").and_then(Value::as_str),
                Some("CustomResourceDefinition" | "ClusterRole")
            )
        })
        .collect()
}

type Cell = (String, String, Phase, Outcome);

fn static_cells(m: &Matrix) -> Vec<Cell> {
    let mut cells: Vec<Cell> = m
        .results
        .iter()
        .filter(|r| r.phase == Phase::Static)
        .map(|r| (r.rule_id.clone(), r.column.id(), r.phase, r.outcome))
        .collect();
    cells.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    cells
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn static_only_on_a_cluster_matches_lint_on_the_same_manifests() {
    let catalog = Catalog::embedded().unwrap();
    let rules = catalog.rules().to_vec();
    for provider in ["capd", "capi-bootstrap-kubeadm"] {
        let objects = cluster_objects(provider);
        assert!(!objects.is_empty());
        // lint over the same objects, as one file.
        let text: String = objects
            .iter()
            .map(|o| format!("---\n{}\n", serde_json::to_string(o).unwrap()))
            .collect();
        let docs: Vec<_> = parse_text("objects.yaml", &text)
            .into_iter()
            .map(Result::unwrap)
            .collect();
        let opts = LintOptions::default();
        let lint = evaluate_rules(docs, &opts, &rules).unwrap();

        let server = EmbeddedServer::new(ServerOptions::default());
        server.apply_documents(objects).await.unwrap();
        let (check, _) = static_matrix(
            &server.client(),
            &opts,
            &rules,
            "system:serviceaccount:capi-system:capi-manager",
        )
        .await
        .unwrap();
        let (a, b) = (static_cells(&lint), static_cells(&check));
        assert!(a.len() > 20, "{provider}: too few cells");
        let only_lint: Vec<_> = a.iter().filter(|c| !b.contains(c)).collect();
        let only_check: Vec<_> = b.iter().filter(|c| !a.contains(c)).collect();
        assert!(
            only_lint.is_empty() && only_check.is_empty(),
            "{provider}: lint-only {only_lint:#?}\ncheck-only {only_check:#?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn effective_rbac_is_skipped_without_capi_core() {
    let catalog = Catalog::embedded().unwrap();
    let rules = catalog.rules().to_vec();
    let server = EmbeddedServer::new(ServerOptions::default());
    server
        .apply_documents(cluster_objects("capd"))
        .await
        .unwrap();
    let (m, _) = static_matrix(&server.client(), &LintOptions::default(), &rules, "u")
        .await
        .unwrap();
    let live: Vec<_> = m
        .results
        .iter()
        .filter(|r| r.rule_id == "all/rbac-aggregation" && r.phase == Phase::Lifecycle)
        .collect();
    assert!(!live.is_empty());
    assert!(live.iter().all(|r| {
        r.outcome == Outcome::Skip
            && r.reason
                .as_deref()
                .unwrap()
                .contains("CAPI core is not installed")
    }));
}

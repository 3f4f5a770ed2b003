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

/// `../shared/corpus/<name>/components.yaml`, or `None` after the skip line (a failure under
/// `CAPI_CONFORMANCE_REQUIRE_SHARED=1`).
fn corpus(name: &str, test: &str) -> Option<PathBuf> {
    crate::shared_data::shared_or_skip(&format!("corpus/{name}/components.yaml"), test)
}

/// The CRDs and ClusterRoles of a components file (what a cluster would hold).
fn cluster_objects(name: &str, test: &str) -> Option<Vec<Value>> {
    let text = std::fs::read_to_string(corpus(name, test)?).unwrap();
    Some(objects_of_kinds(
        &text,
        &["CustomResourceDefinition", "ClusterRole"],
    ))
}

fn objects_of_kinds(text: &str, kinds: &[&str]) -> Vec<Value> {
    parse_text("components.yaml", text)
        .into_iter()
        .filter_map(Result::ok)
        .map(|d| d.value)
        .filter(|v| {
            v.get("kind")
                .and_then(Value::as_str)
                .is_some_and(|k| kinds.contains(&k))
        })
        .collect()
}

/// Every YAML file of one of our conformant fixtures, concatenated.
fn fixture_text(name: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| format!("---\n{}\n", std::fs::read_to_string(p).unwrap()))
        .collect()
}

/// Issue 3: `check --static-only` against a server loaded with our conformant fixture (CRDs,
/// ClusterRoles, Roles and the manager Deployment) gives the same static cells as `lint` on the
/// same objects.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn static_only_on_the_conformant_fixture_matches_lint() {
    let catalog = Catalog::embedded().unwrap();
    let rules = catalog.rules().to_vec();
    for fixture in ["conformant-v1beta2", "conformant-v1beta1"] {
        let text = fixture_text(fixture);
        let kinds = [
            "CustomResourceDefinition",
            "ClusterRole",
            "Role",
            "Deployment",
        ];
        let objects = objects_of_kinds(&text, &kinds);
        assert!(
            objects
                .iter()
                .any(|o| o.get("kind").and_then(Value::as_str) == Some("Deployment")),
            "{fixture}: the fixture has a manager Deployment"
        );
        let lint_text: String = objects
            .iter()
            .map(|o| format!("---\n{}\n", serde_json::to_string(o).unwrap()))
            .collect();
        let docs: Vec<_> = parse_text("objects.yaml", &lint_text)
            .into_iter()
            .map(Result::unwrap)
            .collect();
        let opts = LintOptions::default();
        let lint = evaluate_rules(docs, &opts, &rules).unwrap();

        let server = EmbeddedServer::new(ServerOptions::default());
        let mut load = objects_of_kinds(&text, &["Namespace"]);
        load.extend(objects);
        server.apply_documents(load).await.unwrap();
        let (check, _) = static_matrix(
            &server.client(),
            &opts,
            &rules,
            "system:serviceaccount:capi-system:capi-manager",
        )
        .await
        .unwrap();
        let (a, b) = (static_cells(&lint), static_cells(&check));
        assert!(a.len() > 100, "{fixture}: too few cells");
        let only_lint: Vec<_> = a.iter().filter(|c| !b.contains(c)).collect();
        let only_check: Vec<_> = b.iter().filter(|c| !a.contains(c)).collect();
        assert!(
            only_lint.is_empty() && only_check.is_empty(),
            "{fixture}: lint-only {only_lint:#?}\ncheck-only {only_check:#?}"
        );
    }
}

type Cell = (String, String, Phase, Outcome);

fn static_cells(m: &Matrix) -> Vec<Cell> {
    let mut cells: Vec<Cell> = m
        .results
        .iter()
        .filter(|r| r.phase == Phase::Static)
        .map(|r| (r.rule_id.to_string(), r.column.id(), r.phase, r.outcome))
        .collect();
    cells.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    cells
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn static_only_on_a_cluster_matches_lint_on_the_same_manifests() {
    let catalog = Catalog::embedded().unwrap();
    let rules = catalog.rules().to_vec();
    let test = "static_only_on_a_cluster_matches_lint_on_the_same_manifests";
    if crate::shared_data::shared_or_skip("corpus", test).is_none() {
        return;
    }
    for provider in ["capd", "capi-bootstrap-kubeadm"] {
        let objects = cluster_objects(provider, test).unwrap();
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
    let Some(objects) = cluster_objects("capd", "effective_rbac_is_skipped_without_capi_core")
    else {
        return;
    };
    let server = EmbeddedServer::new(ServerOptions::default());
    server.apply_documents(objects).await.unwrap();
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn effective_rbac_flips_when_the_aggregated_cluster_role_is_deleted() {
    use capi_conformance::commands::check::embedded::base_documents;
    use k8s_openapi::api::rbac::v1::ClusterRole;
    use kube::api::{Api, DeleteParams};
    let catalog = Catalog::embedded().unwrap();
    let rules = catalog.rules().to_vec();
    let server = EmbeddedServer::new(ServerOptions::default());
    server
        .apply_documents(base_documents().unwrap())
        .await
        .unwrap();
    let user = "system:serviceaccount:capi-system:capi-manager";
    let live = |m: &Matrix| -> Vec<Outcome> {
        m.results
            .iter()
            .filter(|r| r.rule_id == "all/rbac-aggregation" && r.phase == Phase::Lifecycle)
            .map(|r| r.outcome)
            .collect()
    };
    let (before, _) = static_matrix(&server.client(), &LintOptions::default(), &rules, user)
        .await
        .unwrap();
    let b = live(&before);
    assert!(
        !b.is_empty() && b.iter().all(|o| *o == Outcome::Pass),
        "{b:?}"
    );
    let roles: Api<ClusterRole> = Api::all(server.client());
    let aggregated = capi_conformance::mock::manifests::aggregated_cluster_role();
    let name = aggregated["metadata"]["name"].as_str().unwrap().to_string();
    roles.delete(&name, &DeleteParams::default()).await.unwrap();
    // The aggregation controller drops the rules from core's manager role.
    let mut after = Vec::new();
    for _ in 0..100 {
        let (m, _) = static_matrix(&server.client(), &LintOptions::default(), &rules, user)
            .await
            .unwrap();
        after = live(&m);
        if after.iter().all(|o| *o == Outcome::Fail) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(
        !after.is_empty() && after.iter().all(|o| *o == Outcome::Fail),
        "{after:?}"
    );
}

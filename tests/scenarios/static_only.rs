//! `check --static-only` on a cluster gives the same static verdicts as `lint` on the same
//! manifests.

use super::components;
use super::shared_data::shared_or_skip;
use capi_conformance::apiserver::{EmbeddedServer, ServerOptions};
use capi_conformance::checks::{LintOptions, evaluate_rules};
use capi_conformance::client_retry::RetryingClient;
use capi_conformance::commands::check::cluster_static_matrix;
use capi_conformance::inventory::parse_text;
use capi_conformance::manifests::Variables;
use capi_conformance::report::{Matrix, Outcome, Phase};
use capi_conformance::suite::Catalog;
use serde_json::Value;
use std::path::PathBuf;

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

/// `check --static-only` against a server loaded with our conformant fixture (CRDs,
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
        let check = cluster_static_matrix(
            &server.retrying_client(),
            opts.clone(),
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

/// `check --static-only` on a server loaded with a provider's whole components file
/// (what `serve --load FILE` does: clusterctl variables substituted, every kind installed) gives
/// `lint` of the same file, cell for cell, for all twelve corpus providers; the rbac-aggregation
/// rule has one cell per column (its effective part skips: no CAPI core on that server).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn static_only_on_serve_load_equals_lint_for_every_corpus_provider() {
    let mut runs = Vec::new();
    for (p, vars) in components::CORPUS {
        let Some(path) = shared_or_skip(
            &format!("corpus/{p}/components.yaml"),
            "static_only_on_serve_load_equals_lint_for_every_corpus_provider",
        ) else {
            return;
        };
        runs.push(async move {
            let server = EmbeddedServer::new(ServerOptions::default());
            let vars: Vec<String> = vars.iter().map(|v| v.to_string()).collect();
            let vars = Variables::from_flags(&vars).unwrap();
            capi_conformance::manifests::load_and_install(
                &server.retrying_client(),
                std::slice::from_ref(&path),
                &vars,
            )
            .await
            .unwrap_or_else(|e| panic!("{p}: {e:#}"));
            let check = cluster_static_matrix(
                &server.retrying_client(),
                LintOptions::default(),
                "system:serviceaccount:capi-system:capi-manager",
            )
            .await
            .unwrap();
            (*p, path, check)
        });
    }
    for (p, path, check) in futures::future::join_all(runs).await {
        components::one_rbac_cell_per_column(&check, p);
        assert!(
            check.results.iter().all(|r| r.phase == Phase::Static),
            "{p}: a static-only run has only static cells"
        );
        let lint = components::lint(&path);
        components::assert_same_cells(p, &lint, &check);
        // Not only the lint columns: the server holds nothing else, so no other cell either.
        assert_eq!(
            components::cells(&lint).len(),
            components::cells(&check).len(),
            "{p}"
        );
    }
}

/// Without CAPI core on the cluster the effective part of `all/rbac-aggregation` cannot ask
/// about core's manager: the one cell keeps the static verdict and says so in its evidence.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn effective_rbac_is_skipped_without_capi_core() {
    let server = EmbeddedServer::new(ServerOptions::default());
    let dir = tempfile::tempdir().unwrap();
    let file = components::our_components(dir.path());
    capi_conformance::manifests::load_and_install(
        &server.retrying_client(),
        &[file],
        &Variables::only(&[("FOO_CREDENTIALS", "Zm9v")]),
    )
    .await
    .unwrap();
    let m = cluster_static_matrix(&server.retrying_client(), LintOptions::default(), "u")
        .await
        .unwrap();
    components::one_rbac_cell_per_column(&m, "without core");
    let foo: Vec<_> = m
        .results
        .iter()
        .filter(|r| r.rule_id == components::RBAC && r.column.kind != "*")
        .collect();
    assert!(!foo.is_empty());
    assert!(foo.iter().all(|r| {
        r.outcome == Outcome::Pass
            && r.evidence.iter().any(|e| {
                e.message
                    .starts_with("effective RBAC (SubjectAccessReview as u): skip")
                    && e.message.contains("CAPI core is not installed")
            })
    }));
}

/// The effective part reads the live aggregation: deleting the mock's aggregated ClusterRole
/// turns the one cell to fail once the aggregation controller drops its rules from core's
/// manager role (the SubjectAccessReview denial in the evidence).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn effective_rbac_flips_when_the_aggregated_cluster_role_is_deleted() {
    use capi_conformance::source::embedded::base_documents;
    use k8s_openapi::api::rbac::v1::ClusterRole;
    use kube::api::{Api, DeleteParams};
    let server = EmbeddedServer::new(ServerOptions::default());
    server
        .apply_documents(base_documents().unwrap())
        .await
        .unwrap();
    let user = "system:serviceaccount:capi-system:capi-manager";
    // (outcome, whether the effective part was denied) of each mock rbac-aggregation cell.
    let cells = |m: &Matrix| -> Vec<(Outcome, bool)> {
        m.results
            .iter()
            .filter(|r| r.rule_id == components::RBAC && !r.column.baseline && r.column.kind != "*")
            .filter(|r| r.column.provider.contains("mock"))
            .map(|r| {
                let denied = r
                    .evidence
                    .iter()
                    .any(|e| e.message.contains("SubjectAccessReview denied"));
                (r.outcome, denied)
            })
            .collect()
    };
    let before = cluster_static_matrix(&server.retrying_client(), LintOptions::default(), user)
        .await
        .unwrap();
    components::one_rbac_cell_per_column(&before, "before");
    let b = cells(&before);
    assert!(
        !b.is_empty() && b.iter().all(|c| *c == (Outcome::Pass, false)),
        "{b:?}"
    );
    let roles: Api<ClusterRole> = Api::all(server.retrying_client());
    let aggregated = capi_conformance::mock::manifests::aggregated_cluster_role();
    let name = aggregated["metadata"]["name"].as_str().unwrap().to_string();
    roles.delete(&name, &DeleteParams::default()).await.unwrap();
    let mut after = Vec::new();
    for _ in 0..100 {
        let m = cluster_static_matrix(&server.retrying_client(), LintOptions::default(), user)
            .await
            .unwrap();
        components::one_rbac_cell_per_column(&m, "after");
        after = cells(&m);
        if after.iter().all(|c| *c == (Outcome::Fail, true)) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(
        !after.is_empty() && after.iter().all(|c| *c == (Outcome::Fail, true)),
        "{after:?}"
    );
}

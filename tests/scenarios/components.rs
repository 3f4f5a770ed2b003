//! A provider's whole release manifest through `check --embedded
//! --crds` (every kind a components file holds, clusterctl variables, cert-manager kinds
//! skipped), and one verdict per rule and column for `all/rbac-aggregation`.

use super::common::check_args;
pub use super::components_file::{CORPUS, our_components};
use super::shared_data::shared_or_skip;
use capi_conformance::apiserver::{EmbeddedServer, ServerOptions};
use capi_conformance::cli::{Cli, Command as CliCommand};
use capi_conformance::client_retry::RetryingClient;
use capi_conformance::commands::check::embedded_matrix_on;
use capi_conformance::commands::lint::lint_matrix;
use capi_conformance::report::{Matrix, Outcome};
use capi_conformance::suite::{Catalog, RuleKind};
use clap::Parser;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

#[path = "components/rbac.rs"]
mod rbac;

pub const RBAC: &str = "all/rbac-aggregation";

/// `check --embedded <words>` in-process on a fresh server the caller may inspect afterwards.
pub async fn embedded_on(words: &[&str]) -> (EmbeddedServer, anyhow::Result<Matrix>) {
    let mut w = vec!["--embedded", "--progress", "never"];
    w.extend_from_slice(words);
    let args = check_args(&w);
    let server = EmbeddedServer::new(ServerOptions::default());
    let m = embedded_matrix_on(&server, &args, "").await;
    (server, m)
}

/// `lint FILE` in-process.
pub fn lint(file: &Path) -> Matrix {
    let argv = ["capi-conformance", "lint", file.to_str().unwrap()];
    let CliCommand::Lint(args) = Cli::try_parse_from(argv).unwrap().command else {
        unreachable!()
    };
    lint_matrix(&args, Catalog::embedded().unwrap().rules()).unwrap()
}

/// (rule, column) → outcome of every target cell of a static rule (`kind: static`; in `check`
/// a static rule with a scenario part has one cell folding both parts); panics on two cells for
/// one pair. Scenario rules have no static verdict to compare (`lint` skips them, `check`
/// judges them live). `all/rbac-aggregation` is one cell, see [`one_rbac_cell_per_column`].
pub fn cells(m: &Matrix) -> BTreeMap<(String, String), Outcome> {
    let catalog = Catalog::embedded().unwrap();
    let scenario_rules: BTreeSet<&str> = catalog
        .rules()
        .iter()
        .filter(|r| r.kind == RuleKind::Scenario)
        .map(|r| r.id.as_str())
        .collect();
    let mut out = BTreeMap::new();
    for r in m
        .results
        .iter()
        .filter(|r| !r.column.baseline && !scenario_rules.contains(r.rule_id.as_str()))
    {
        let key = (r.rule_id.to_string(), r.column.id());
        if let Some(prev) = out.insert(key.clone(), r.outcome) {
            panic!("two cells for {key:?}: {prev:?} and {:?}", r.outcome);
        }
    }
    out
}

/// Every rbac-aggregation cell is the only one of its column (CAPI core's own components have
/// no column the rule applies to; every provider has).
pub fn one_rbac_cell_per_column(m: &Matrix, what: &str) {
    let mut seen = BTreeSet::new();
    for r in m.results.iter().filter(|r| r.rule_id == RBAC) {
        assert!(
            seen.insert(r.column.id()),
            "{what}: two {RBAC} cells for {}",
            r.column.id()
        );
    }
    assert!(
        !seen.is_empty() || what == "capi-core",
        "{what}: no {RBAC} cell at all"
    );
}

/// `lint`'s cells of a file equal `check`'s cells in the same columns, cell for cell, and
/// `check` has no other cell there.
pub fn assert_same_cells(what: &str, lint: &Matrix, check: &Matrix) {
    let a = cells(lint);
    let columns: BTreeSet<&String> = a.keys().map(|(_, c)| c).collect();
    let b: BTreeMap<_, _> = cells(check)
        .into_iter()
        .filter(|((_, col), _)| columns.contains(col))
        .collect();
    let only_lint: Vec<_> = a.iter().filter(|(k, v)| b.get(*k) != Some(v)).collect();
    let only_check: Vec<_> = b.iter().filter(|(k, _)| !a.contains_key(*k)).collect();
    assert!(
        a.len() > 20 || what.contains("capi-core"),
        "{what}: only {} cells",
        a.len()
    );
    assert!(
        only_lint.is_empty() && only_check.is_empty(),
        "{what}: lint cells differing in check {only_lint:#?}\ncheck-only cells {only_check:#?}"
    );
}

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_capi-conformance")
}

/// Our own components file: every kind it holds is installed and stored, the cert-manager
/// kinds are skipped with the reason (a note, not an input problem), variables are
/// substituted, and the rbac-aggregation rule has one cell per column, combining the static
/// and the effective (SubjectAccessReview) parts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_components_file_installs_every_kind_and_skips_cert_manager() {
    use k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration;
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::{Secret, Service, ServiceAccount};
    let dir = tempfile::tempdir().unwrap();
    let file = our_components(dir.path());
    let f = file.to_str().unwrap();
    let (server, m) = embedded_on(&[
        "--crds",
        f,
        "--var",
        "FOO_CREDENTIALS=c2VjcmV0",
        "--scenarios",
        "none",
    ])
    .await;
    let m = m.unwrap();
    assert!(
        matches!(m.verdict().exit_code(), 0 | 1),
        "{:?}",
        m.summary()
    );
    assert!(m.problems.is_empty(), "{:?}", m.problems);
    let notes: Vec<&str> = m.notes.iter().map(|n| n.message.as_str()).collect();
    assert_eq!(notes.len(), 2, "{notes:#?}");
    for kind in [
        "Certificate foo-system/foo-serving-cert",
        "Issuer foo-system/foo-selfsigned-issuer",
    ] {
        assert!(
            notes
                .iter()
                .any(|n| n.contains(kind) && n.contains("cert-manager is not installed")),
            "{kind}: {notes:#?}"
        );
    }
    let client = server.retrying_client();
    let ns = |name: &str| -> kube::Api<Service> { kube::Api::namespaced(client.clone(), name) };
    let svc = ns("foo-system").get("foo-webhook-service").await.unwrap();
    let spec = svc.spec.unwrap();
    assert!(spec.cluster_ip.is_some_and(|ip| ip.starts_with("10.96.")));
    assert_eq!(spec.type_.as_deref(), Some("ClusterIP"));
    let deploys: kube::Api<Deployment> = kube::Api::namespaced(client.clone(), "foo-system");
    let d = deploys.list(&Default::default()).await.unwrap();
    assert_eq!(d.items.len(), 1);
    assert_eq!(d.items[0].spec.as_ref().unwrap().replicas, Some(1));
    let sas: kube::Api<ServiceAccount> = kube::Api::namespaced(client.clone(), "foo-system");
    assert!(
        !sas.list(&Default::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
    let vwc: kube::Api<ValidatingWebhookConfiguration> = kube::Api::all(client.clone());
    let hooks = vwc
        .get("foo-validating-webhook-configuration")
        .await
        .unwrap()
        .webhooks
        .unwrap();
    assert_eq!(hooks[0].timeout_seconds, Some(10));
    let secrets: kube::Api<Secret> = kube::Api::namespaced(client.clone(), "foo-system");
    let data = secrets
        .get("foo-manager-bootstrap-credentials")
        .await
        .unwrap()
        .data
        .unwrap();
    assert_eq!(data["credentials"].0, b"secret");
    assert_eq!(data["region"].0, b"eu-west");

    one_rbac_cell_per_column(&m, "our components");
    let foo: Vec<_> = m
        .results
        .iter()
        .filter(|r| r.rule_id == RBAC && r.column.provider.contains("foo") && r.column.kind != "*")
        .collect();
    assert!(!foo.is_empty());
    for r in &foo {
        assert_eq!(
            r.outcome,
            Outcome::Pass,
            "{}: {:?}",
            r.column.id(),
            r.reason
        );
        assert!(
            r.evidence
                .iter()
                .any(|e| e.message.starts_with("effective RBAC") && e.message.contains("allowed")),
            "{}: {:?}",
            r.column.id(),
            r.evidence
        );
    }
    // The static cells are lint's, cell for cell.
    assert_same_cells("our components", &lint(&file), &m);
}

/// Exit 2 where a components file needs it, end to end: variables without a value are one error
/// naming every one of them; cert-manager kinds and the other built-in kinds do not stop the run.
#[test]
fn unresolved_variables_are_one_error_and_cert_manager_kinds_are_no_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = our_components(dir.path());
    // A second file with two more variables without defaults.
    let more = dir.path().join("more.yaml");
    std::fs::write(
        &more,
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: more, namespace: foo-system}\ndata:\n  a: ${FOO_ZONE}\n  b: ${FOO_ACCOUNT}\n  c: ${FOO_ZONE}\n  d: ${FOO_OPTIONAL:=x}\n",
    )
    .unwrap();
    let run = |extra: &[&str]| {
        let mut c = Command::new(bin());
        c.args([
            "check",
            "--embedded",
            "--scenarios",
            "none",
            "--progress",
            "never",
        ])
        .args(["--crds"])
        .arg(&file)
        .args(extra)
        .env_remove("FOO_CREDENTIALS")
        .env_remove("FOO_ZONE")
        .env_remove("FOO_ACCOUNT");
        c.output().unwrap()
    };
    let out = run(&["--crds", more.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    for name in ["FOO_CREDENTIALS", "FOO_ZONE", "FOO_ACCOUNT"] {
        assert_eq!(lines[0].matches(name).count(), 1, "{name}: {err}");
    }
    assert!(
        !lines[0].contains("FOO_OPTIONAL") && !lines[0].contains("FOO_REGION"),
        "{err}"
    );
    assert!(lines[0].contains("--var NAME=VALUE"), "{err}");
    assert!(!err.contains("panicked"), "{err}");

    // With the values (one from --var, one from the environment): no exit 2, and the skipped
    // cert-manager objects are named on stderr.
    let out = Command::new(bin())
        .args([
            "check",
            "--embedded",
            "--scenarios",
            "none",
            "--progress",
            "never",
            "-o",
            "json",
        ])
        .arg("--crds")
        .arg(&file)
        .args(["--var", "FOO_CREDENTIALS=c2VjcmV0"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{err}");
    assert!(
        err.contains("skipped cert-manager.io/v1 Certificate foo-system/foo-serving-cert: not served: cert-manager is not installed"),
        "{err}"
    );
    assert!(
        !err.contains("c2VjcmV0") && !String::from_utf8_lossy(&out.stdout).contains("c2VjcmV0")
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        report["notes"].as_array().map(Vec::len),
        Some(2),
        "{}",
        report["notes"]
    );
    assert_eq!(report["problems"], serde_json::json!([]));

    // --crds without --embedded installs on the kubeconfig's cluster: with none to reach,
    // that is the connection error (exit 2), not a run on another server.
    let out = Command::new(bin())
        .args(["check", "--crds"])
        .arg(&file)
        .env("KUBECONFIG", dir.path().join("absent"))
        .env("HOME", dir.path())
        .env_remove("KUBERNETES_SERVICE_HOST")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no kubeconfig found"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every corpus provider's components.yaml through `check --embedded
/// --crds` exits 0, 1 or 3 (never 2, an input error; 3 where lint passes but the
/// kinds have no sample object), its static cells equal `lint` of the same file cell for cell, and `all/rbac-aggregation` has one cell per column. The twelve
/// run concurrently, in-process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corpus_components_through_check_embedded_match_lint() {
    let mut runs = Vec::new();
    for (p, vars) in CORPUS {
        let Some(path) = shared_or_skip(
            &format!("corpus/{p}/components.yaml"),
            "corpus_components_through_check_embedded_match_lint",
        ) else {
            return;
        };
        runs.push(async move {
            let f = path.to_str().unwrap().to_string();
            let mut words = vec!["--crds".to_string(), f];
            for v in *vars {
                words.push("--var".into());
                words.push(v.to_string());
            }
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            let (_server, m) = embedded_on(&words).await;
            (*p, path, m)
        });
    }
    for (p, path, m) in futures::future::join_all(runs).await {
        let m = m.unwrap_or_else(|e| panic!("{p}: check --embedded --crds failed: {e:#}"));
        assert!(
            matches!(m.verdict().exit_code(), 0 | 1 | 3),
            "{p}: exit {} {:?}",
            m.verdict().exit_code(),
            m.summary()
        );
        assert!(m.problems.is_empty(), "{p}: {:?}", m.problems);
        one_rbac_cell_per_column(&m, p);
        let l = lint(&path);
        // No `--sample` for the provider's kinds: where lint passes, check judged nothing of
        // their lifecycle and says so, inconclusive (exit 3) naming them, never PASS; a failure fails both.
        let want = match l.verdict().exit_code() {
            0 if !m.gating_kinds_without_sample().is_empty() => 3,
            code => code,
        };
        assert_eq!(
            m.verdict().exit_code(),
            want,
            "{p}: lint and check --embedded disagree on the exit code ({:?} without a sample)",
            m.gating_kinds_without_sample()
        );
        assert_same_cells(p, &l, &m);
    }
}

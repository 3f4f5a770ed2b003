//! A provider whose client stack no one here wrote. `examples/kopf-provider`
//! is a Cluster API infrastructure provider written in Python with kopf (PyPI `kopf`, with the
//! `kubernetes` client): kopf's own watches, finalizers and admission webhook server
//! (`kopf.WebhookServer` with the run's serving certificate, behind the components' Service).
//! It runs unchanged through `check --embedded --crds … --provider-cmd '…'`.
//!
//! The interpreter is `CAPI_CONFORMANCE_PYTHON` (`.ci/run` installs kopf into `target/ci-venv`);
//! without kopf a test prints one skip line, and fails under
//! `CAPI_CONFORMANCE_REQUIRE_PYTHON_TOOLS=1`.

use capi_conformance::apiserver::webhook::{CallKind, CallOutcome, WebhookCall};
use capi_conformance::apiserver::{EmbeddedServer, ServerOptions};
use capi_conformance::commands::check::embedded_matrix_on;
use capi_conformance::report::{Matrix, Outcome};
use capi_conformance::scenarios::RUN_LABEL;
use cells::{check_args, lifecycle_judged};
use kube::api::{Api, DynamicObject, ListParams};
use kube::discovery::ApiResource;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex};

#[path = "shared/cells.rs"]
mod cells;
#[path = "kopf/faults.rs"]
mod faults;
#[path = "kopf/kubectl.rs"]
mod kubectl;
#[path = "plugin/python_tools.rs"]
mod python_tools;

const GROUP: &str = "infrastructure.kopf.example.com";
const PROVIDER: &str = "infrastructure-kopf";
const KINDS: [(&str, &str); 4] = [
    ("KopfCluster", "kopfclusters"),
    ("KopfClusterTemplate", "kopfclustertemplates"),
    ("KopfMachine", "kopfmachines"),
    ("KopfMachineTemplate", "kopfmachinetemplates"),
];

fn example(file: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("examples/kopf-provider")
        .join(file)
        .display()
        .to_string()
}

/// The `--provider-cmd` of the example's README (its `cmd='…'` line), with `python` for
/// `.venv/bin/python`, the script's absolute path, and `extra` arguments.
fn provider_cmd(python: &std::path::Path, extra: &str) -> String {
    let readme = std::fs::read_to_string(example("README.md")).unwrap();
    let cmd = readme
        .lines()
        .find_map(|l| l.strip_prefix("cmd='")?.strip_suffix('\''))
        .expect("examples/kopf-provider/README.md has no cmd='…' line");
    let cmd = cmd
        .replacen(".venv/bin/python", &python.display().to_string(), 1)
        .replacen(
            "examples/kopf-provider/provider.py",
            &example("provider.py"),
            1,
        );
    assert!(cmd.contains(&example("provider.py")), "{cmd}");
    format!("{cmd}{extra}")
}

/// `check --embedded` words for the kopf provider.
fn words<'a>(cmd: &'a str, report_dir: &'a str, scenarios: Option<&'a str>) -> Vec<String> {
    let mut w: Vec<String> = [
        "--embedded",
        "--progress",
        "never",
        "--crds",
        &example("infrastructure-components.yaml"),
        "--sample",
        &example("samples.yaml"),
        "--provider-cmd",
        cmd,
        "--report-dir",
        report_dir,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if let Some(s) = scenarios {
        w.extend(["--scenarios".to_string(), s.to_string()]);
    }
    w
}

/// `check <words>` in-process on `server`.
async fn check_on(server: &EmbeddedServer, words: &[String]) -> Matrix {
    embedded_matrix_on(server, &check_args(words), "")
        .await
        .unwrap()
}

fn is_kopf(r: &capi_conformance::report::RuleResult) -> bool {
    r.column.provider == PROVIDER && !r.column.baseline
}

/// Rule ids of the kopf provider's failed lifecycle cells.
fn failed_kopf_rules(m: &Matrix) -> BTreeSet<String> {
    m.results
        .iter()
        .filter(|r| is_kopf(r) && lifecycle_judged(r) && r.outcome == Outcome::Fail)
        .map(|r| r.rule_id.to_string())
        .collect()
}

/// The interpreter with kopf and the kubernetes client, or `None` after the skip line.
fn python(test: &str) -> Option<PathBuf> {
    python_tools::python_with("kopf, kubernetes", test)
}

/// The calls seen so far.
type Calls = Arc<Mutex<Vec<Arc<WebhookCall>>>>;

/// Every webhook call the server makes from now on, until the returned task is aborted.
fn record_calls(server: &EmbeddedServer) -> (Calls, tokio::task::JoinHandle<()>) {
    let mut rx = server.webhook_calls();
    let calls = Arc::new(Mutex::new(Vec::new()));
    let sink = calls.clone();
    let task = tokio::spawn(async move {
        loop {
            match rx.recv().await {
                Ok(c) => sink.lock().unwrap().push(c),
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
            }
        }
    });
    (calls, task)
}

fn resource(group: &str, version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: group.into(),
        version: version.into(),
        api_version: format!("{group}/{version}"),
        kind: kind.into(),
        plural: plural.into(),
    }
}

/// The whole run: exit code 0; every cell of every column passes or is skipped with a reason
/// (none fails or is inconclusive); the contract's scenario rules were really decided for the
/// kopf kinds; each of the provider's eight webhooks was called through the Service route and
/// answered, the defaulting ones with a patch (the schema requires the fields they default, so
/// no object of the run could exist without them); nothing of the run is left on the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kopf_provider_passes_every_rule_through_its_own_webhooks() {
    let test = "kopf_provider_passes_every_rule_through_its_own_webhooks";
    let Some(python) = python(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let server = EmbeddedServer::new(ServerOptions::default());
    let (calls, recorder) = record_calls(&server);
    let cmd = provider_cmd(&python, "");
    let m = check_on(&server, &words(&cmd, dir.path().to_str().unwrap(), None)).await;
    recorder.abort();
    let log = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(Result::ok)
        .find(|e| e.file_name().to_string_lossy().starts_with("provider-"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .unwrap_or_default();
    let tail: String = log.lines().rev().take(40).collect::<Vec<_>>().join("\n");

    // Exit code and cells.
    let bad: Vec<String> = m
        .results
        .iter()
        .filter(|r| {
            matches!(r.outcome, Outcome::Fail | Outcome::Inconclusive)
                || (r.outcome == Outcome::Skip && r.reason.as_deref().unwrap_or("").is_empty())
        })
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
    assert!(
        bad.is_empty(),
        "{bad:#?}\nprovider log (last lines, newest first):\n{tail}"
    );
    assert_eq!(m.verdict().exit_code(), 0);
    let passed: BTreeMap<String, BTreeSet<String>> = m
        .results
        .iter()
        .filter(|r| is_kopf(r) && lifecycle_judged(r) && r.outcome == Outcome::Pass)
        .fold(BTreeMap::new(), |mut acc, r| {
            acc.entry(r.column.kind.to_string())
                .or_default()
                .insert(r.rule_id.to_string());
            acc
        });
    let want: [(&str, &[&str]); 4] = [
        (
            "KopfCluster",
            &[
                "infra-cluster/owner-gate",
                "infra-cluster/finalizer",
                "infra-cluster/provisioned",
                "infra-cluster/control-plane-endpoint",
                "infra-cluster/failure-domains",
                "infra-cluster/ready-condition",
                "infra-cluster/externally-managed",
                "infra-cluster/delete",
                "all/pause",
                "all/paused-condition",
                "all/ready-condition-lifecycle",
                "all/defaulting-admitted",
            ],
        ),
        (
            "KopfMachine",
            &[
                "infra-machine/owner-gate",
                "infra-machine/finalizer",
                "infra-machine/cluster-lookup",
                "infra-machine/cluster-infra-gate",
                "infra-machine/bootstrap-gate",
                "infra-machine/provider-id",
                "infra-machine/provider-id-before-provisioned",
                "infra-machine/provisioned",
                "infra-machine/addresses",
                "infra-machine/failure-domain-placement",
                "infra-machine/delete",
                "all/pause",
                "all/paused-condition",
                "all/defaulting-admitted",
            ],
        ),
        // No SSA dry run for an InfraClusterTemplate: CAPI's topology only clones it
        // (`template/ssa-dry-run` applies to the templates topology server-side applies).
        (
            "KopfClusterTemplate",
            &["template/clone-compatible", "all/defaulting-admitted"],
        ),
        (
            "KopfMachineTemplate",
            &[
                "template/ssa-dry-run",
                "infra-machine-template/ssa-dry-run",
                "template/clone-compatible",
                "all/defaulting-admitted",
            ],
        ),
    ];
    for (kind, rules) in want {
        let got = passed.get(kind).cloned().unwrap_or_default();
        let missing: Vec<&&str> = rules.iter().filter(|r| !got.contains(**r)).collect();
        assert!(
            missing.is_empty(),
            "{kind}: not passed: {missing:?} (passed: {got:?})"
        );
    }

    // The webhooks: called, answered, defaulting patched.
    let calls = calls.lock().unwrap().clone();
    let counters = server.webhook_counters();
    assert_eq!(counters.failed_calls, 0, "{calls:#?}");
    for (_, plural) in KINDS {
        let singular = plural.trim_end_matches('s');
        for (prefix, kind) in [
            ("default", CallKind::Mutating),
            ("validate", CallKind::Validating),
        ] {
            let name = format!("{prefix}.{singular}.{GROUP}");
            let mine: Vec<&Arc<WebhookCall>> = calls.iter().filter(|c| c.webhook == name).collect();
            assert!(!mine.is_empty(), "{name} was never called");
            assert!(mine.iter().all(|c| c.kind == kind), "{name}: {mine:#?}");
            assert!(
                mine.iter()
                    .all(|c| c.url.contains(&format!("/{prefix}-{singular}"))
                        && c.url.contains("kopf-webhook-service.kopf-system.svc")),
                "{name} not called through the Service: {mine:#?}"
            );
            if prefix == "default" {
                assert!(
                    mine.iter().any(|c| c.outcome == CallOutcome::Patched),
                    "{name} never defaulted anything: {mine:#?}"
                );
            }
        }
    }
    // The topology dry-run reached the template webhook and was admitted.
    assert!(
        calls
            .iter()
            .any(|c| c.webhook.starts_with("validate.kopfmachinetemplate.")
                && c.operation == "UPDATE"
                && c.outcome == CallOutcome::Allowed),
        "no admitted UPDATE of a KopfMachineTemplate"
    );

    // Cleanup: no object of the run left, in any kind the run touched.
    let client = server.client();
    let mut left = Vec::new();
    let mut kinds: Vec<ApiResource> = KINDS
        .iter()
        .map(|(k, p)| resource(GROUP, "v1alpha1", k, p))
        .collect();
    kinds.push(resource(
        "cluster.x-k8s.io",
        "v1beta2",
        "Cluster",
        "clusters",
    ));
    kinds.push(resource(
        "cluster.x-k8s.io",
        "v1beta2",
        "Machine",
        "machines",
    ));
    for k in &kinds {
        let api: Api<DynamicObject> = Api::all_with(client.clone(), k);
        let items = api.list(&ListParams::default()).await.unwrap().items;
        left.extend(items.into_iter().map(|o| {
            format!(
                "{} {}/{}",
                k.kind,
                o.metadata.namespace.unwrap_or_default(),
                o.metadata.name.unwrap_or_default()
            )
        }));
    }
    let secrets: Api<k8s_openapi::api::core::v1::Secret> = Api::all(client.clone());
    left.extend(
        secrets
            .list(&ListParams::default().labels(RUN_LABEL))
            .await
            .unwrap()
            .items
            .into_iter()
            .map(|s| format!("Secret {}", s.metadata.name.unwrap_or_default())),
    );
    assert!(left.is_empty(), "left after the run: {left:?}");
    // The run's private files (the provider's kubeconfig, the webhook serving key) are gone.
    let run_id = m.context.run_id.clone().expect("the run has an id");
    let private: Vec<String> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&format!("capi-conformance-{run_id}")))
        .collect();
    assert!(private.is_empty(), "left in the temp dir: {private:?}");
}

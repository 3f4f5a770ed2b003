//! A provider whose client stack no one here wrote. `examples/kopf-provider`
//! is a Cluster API infrastructure provider written in Python with kopf (PyPI `kopf`, with the
//! `kubernetes` client): kopf's own watches, finalizers and admission webhook server
//! (`kopf.WebhookServer` with the run's serving certificate, behind the components' Service).
//! It runs unchanged through `check --embedded --crds … --provider-cmd '…'`.
//!
//! The interpreter is `CAPI_CONFORMANCE_PYTHON` (`.ci/run` installs kopf into `target/ci-venv`);
//! without kopf a test prints one skip line, and fails under
//! `CAPI_CONFORMANCE_REQUIRE_PYTHON_TOOLS=1`.

#[path = "shared/cells.rs"]
mod cells;
#[path = "plugin/python_tools.rs"]
mod python_tools;

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

/// The real kubectl against the kopf provider's webhooks, served as a management cluster
/// would: the components installed with the CA injected, the Service routed to kopf's
/// `WebhookServer`. A KopfMachine without `spec.flavor` comes back defaulted; one with a flavor
/// the validating webhook refuses gets kube's denial text with kopf's message and code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_sees_the_kopf_webhooks_as_kube_apiserver_shows_them() {
    let test = "kubectl_sees_the_kopf_webhooks_as_kube_apiserver_shows_them";
    let Some(python) = python(test) else {
        return;
    };
    if Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .is_err()
    {
        println!("skipped: {test}: no kubectl on PATH");
        return;
    }
    use capi_conformance::serving::{CertDir, Plan, placeholders::free_port, ready::wait_tls};
    // Loaded as `check --crds` loads them; the cert-manager kinds are what the run plays.
    let loaded = capi_conformance::manifests::load(
        &[PathBuf::from(example("infrastructure-components.yaml"))],
        &Default::default(),
        &Default::default(),
    )
    .unwrap();
    let mut docs: Vec<Value> = loaded.into_iter().map(|d| d.value).collect();
    // The CA goes where cert-manager's injector would put it (the Certificate names the CA).
    let plan = Plan::for_components(&mut docs).unwrap();
    assert!(
        plan.injections.iter().all(|i| i.outcome == Ok(4)) && plan.injections.len() == 2,
        "{:?}",
        plan.injections
    );
    docs.retain(|d| {
        !d["apiVersion"]
            .as_str()
            .unwrap_or_default()
            .starts_with("cert-manager.io/")
    });
    let mut all = capi_conformance::mock::core_crds::core_crd_documents();
    all.extend(docs);
    let server = EmbeddedServer::new(ServerOptions::default());
    server.apply_documents(all).await.unwrap();
    let port = free_port().unwrap();
    let addr = std::net::SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, port));
    server.route_service("kopf-system", "kopf-webhook-service", 443, addr);
    let listener = server.listen("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(&kubeconfig, listener.kubeconfig_yaml()).unwrap();
    let certs = CertDir::create("capi-conformance-kopf-kubectl-", &plan.certs).unwrap();
    let cmd = provider_cmd(&python, "")
        .replace("{kubeconfig}", kubeconfig.to_str().unwrap())
        .replace("{namespace}", "default")
        .replace(" --watch-filter {watch_filter}", "")
        .replace("{webhook-cert-dir}", certs.path().to_str().unwrap())
        .replace("{webhook-port}", &port.to_string());
    let log = std::fs::File::create(dir.path().join("provider.log")).unwrap();
    let mut provider = Command::new("sh")
        .args(["-c", &format!("exec {cmd}")])
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap();
    let ready = wait_tls(
        addr,
        "kopf-webhook-service.kopf-system.svc",
        plan.certs.client_config().unwrap(),
        std::time::Duration::from_secs(60),
    )
    .await;
    let kubectl = |args: &[&str], stdin: &str| {
        let mut child = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    let machine = |name: &str, spec: &str| {
        format!(
            "apiVersion: {GROUP}/v1alpha1\nkind: KopfMachine\nmetadata:\n  name: {name}\n  namespace: default\nspec: {spec}\n"
        )
    };
    let created = kubectl(&["create", "-f", "-"], &machine("m1", "{}"));
    let denied = kubectl(&["create", "-f", "-"], &machine("m2", "{flavor: huge}"));
    let flavor = kubectl(
        &[
            "get",
            "kopfmachine",
            "m1",
            "-n",
            "default",
            "-o",
            "jsonpath={.spec.flavor}",
        ],
        "",
    );
    let _ = provider.kill();
    let _ = provider.wait();
    let log = std::fs::read_to_string(dir.path().join("provider.log")).unwrap_or_default();
    assert!(ready.is_ok(), "{ready:?}\n{log}");
    assert!(
        created.status.success(),
        "{}\n{log}",
        String::from_utf8_lossy(&created.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&flavor.stdout), "small");
    assert_eq!(denied.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&denied.stderr).trim(),
        format!(
            "Error from server: error when creating \"STDIN\": admission webhook \"validate.kopfmachine.{GROUP}\" denied the request: spec.flavor: Unsupported value: \"huge\": supported values: small, medium, large"
        )
    );
    listener.shutdown().await;
}

//! The mock in webhook mode as a provider's own process,
//! `check --embedded --crds <its components> --provider-cmd '… --webhook-cert-dir
//! {webhook-cert-dir} --webhook-port {webhook-port}'`. The run issues the serving certificate,
//! injects its CA into the components' CRDs and webhook configurations (cert-manager's
//! `inject-ca-from`), routes the webhook Service to the port, and removes the certificate
//! directory afterwards. Healthy, every target rule passes with the webhooks deciding (the
//! conversion and defaulting rules pass, not skip); each webhook fault fails exactly its rule.

use capi_conformance::mock::manifests::ManifestOptions;
use capi_conformance::mock::webhook::components::webhook_manifests;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_capi-conformance")
}

/// Lifecycle cells of the report: (rule, column, outcome, reason).
fn lifecycle(report: &Value) -> Vec<(String, String, String, String)> {
    report["results"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter(|r| r["phase"] == "lifecycle" && r["rule_id"] != "all/rbac-aggregation")
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap_or_default().to_string();
            (s("rule_id"), s("column"), s("outcome"), s("reason"))
        })
        .collect()
}

fn failed(report: &Value, baseline: bool) -> BTreeSet<String> {
    lifecycle(report)
        .into_iter()
        .filter(|(_, c, o, _)| o == "fail" && c.contains("(baseline)") == baseline)
        .map(|(r, ..)| r)
        .collect()
}

/// Runs the mock in webhook mode with `faults`; returns the report and the run id.
async fn run(dir: &Path, components: &Path, faults: &str) -> (Value, String) {
    let mut cmd = format!(
        "{} mock-provider run --kubeconfig {{kubeconfig}} --watch-namespace {{namespace}} \
         --webhook-cert-dir {{webhook-cert-dir}} --webhook-port {{webhook-port}} --webhook-host 127.0.0.1",
        bin()
    );
    if !faults.is_empty() {
        cmd.push_str(&format!(" --faults {faults}"));
    }
    let reports = dir.join(if faults.is_empty() {
        "healthy".to_string()
    } else {
        faults.replace('/', "_")
    });
    let out = tokio::process::Command::new(bin())
        .args(["check", "--embedded", "--progress", "never", "-o", "json"])
        .arg("--crds")
        .arg(components)
        .args(["--provider-cmd", &cmd])
        .arg("--report-dir")
        .arg(&reports)
        .output()
        .await
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{faults:?}: no JSON report ({e}), stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let run_id = report["context"]["run_id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    // The provider served its webhooks with the run's certificate (its log says where).
    let log = std::fs::read_to_string(reports.join(format!("provider-{run_id}.log"))).unwrap();
    assert!(
        log.contains("serving webhooks on https://127.0.0.1:"),
        "{faults:?}: {log}"
    );
    // The certificate directory (with the serving key) is gone after the run.
    let left = cert_dirs(&run_id);
    assert!(left.is_empty(), "{faults:?}: left behind: {left:?}");
    (report, run_id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mock_webhook_mode_passes_and_each_webhook_fault_fails_exactly_its_rule() {
    let dir = tempfile::tempdir().unwrap();
    let components = mock_webhook_components(dir.path());

    // Healthy: nothing fails, and the webhook rules are decided (pass), not skipped.
    let (report, _) = run(dir.path(), &components, "").await;
    let failing: Vec<_> = lifecycle(&report)
        .into_iter()
        .filter(|(_, c, o, _)| o == "fail" && !c.contains("(baseline)"))
        .collect();
    assert!(failing.is_empty(), "{failing:#?}");
    assert!(failed(&report, true).is_empty());
    let cells = lifecycle(&report);
    let target_cells = |rule: &str| -> Vec<(String, String)> {
        cells
            .iter()
            .filter(|(r, c, ..)| r == rule && !c.contains("(baseline)"))
            .map(|(_, c, o, _)| (c.clone(), o.clone()))
            .collect()
    };
    let conversion = target_cells("all/conversion-lossless");
    assert_eq!(conversion.len(), 20, "{conversion:?}");
    assert!(
        conversion.iter().all(|(_, o)| o == "pass"),
        "{conversion:?}"
    );
    let defaulting = target_cells("all/defaulting-admitted");
    assert!(
        defaulting
            .iter()
            .any(|(c, o)| c.contains("MockControlPlane@") && o == "pass"),
        "{defaulting:?}"
    );
    // The baseline (the in-process mock, whose conversion the run serves; no admission
    // webhooks) converts losslessly and skips the defaulting rule with the reason.
    let baseline = |rule: &str| {
        cells
            .iter()
            .filter(|(r, c, ..)| r == rule && c.contains("(baseline)"))
            .map(|(_, _, o, reason)| (o.clone(), reason.clone()))
            .collect::<Vec<_>>()
    };
    let conversion = baseline("all/conversion-lossless");
    assert_eq!(conversion.len(), 20, "{conversion:?}");
    assert!(
        conversion.iter().all(|(o, _)| o == "pass"),
        "{conversion:?}"
    );
    let baseline_skip = |rule: &str, why: &str| {
        baseline(rule)
            .iter()
            .all(|(o, reason)| o == "skip" && reason.contains(why))
    };
    assert!(baseline_skip(
        "all/defaulting-admitted",
        "no mutating admission webhook"
    ));

    for (fault, want) in [
        ("all/conversion-lossless", &["all/conversion-lossless"][..]),
        ("all/defaulting-admitted", &["all/defaulting-admitted"][..]),
        (
            "all/defaulting-admitted:timeout",
            &["all/defaulting-admitted"][..],
        ),
        (
            "template/ssa-dry-run",
            &[
                "template/ssa-dry-run",
                "infra-machine-template/ssa-dry-run",
                "infra-machinepool-template/ssa-dry-run",
                "bootstrap-template/ssa-dry-run",
            ][..],
        ),
    ] {
        let (report, _) = run(dir.path(), &components, fault).await;
        let want: BTreeSet<String> = want.iter().map(|s| s.to_string()).collect();
        assert_eq!(failed(&report, false), want, "{fault}");
        assert!(failed(&report, true).is_empty(), "{fault}");
        if fault == "all/defaulting-admitted:timeout" {
            // kube's calling error, after the configuration's timeoutSeconds.
            assert!(lifecycle(&report).iter().any(|(r, _, o, reason)| r
                == "all/defaulting-admitted"
                && o == "fail"
                && reason.contains("failed calling webhook")
                && reason.contains("?timeout=2s\": context deadline exceeded")));
        }
        if fault == "template/ssa-dry-run" {
            // Decided by the provider's validating webhook, with kube's message.
            assert!(lifecycle(&report).iter().any(|(r, _, o, reason)| r == fault
                && o == "fail"
                && reason.contains(
                    "admission webhook \"validation.mockmachinetemplate.infrastructure.mock.capi-conformance.io\" denied the request: MockMachineTemplate.infrastructure.mock.capi-conformance.io"
                )));
        }
    }
}

/// The certificate directory of run `run_id`, if it exists.
fn cert_dirs(run_id: &str) -> Vec<String> {
    std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with(&format!("capi-conformance-{run_id}-webhook-")))
        .collect()
}

/// Ctrl-C while the provider serves its webhooks: the run stops and the certificate directory
/// (with the serving key) and the kubeconfig (with the server's token) are gone; also when a
/// second Ctrl-C aborts the cleanup.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_removes_the_webhook_certificate_directory() {
    let dir = tempfile::tempdir().unwrap();
    let components = mock_webhook_components(dir.path());
    for interrupts in [1, 2] {
        let reports = dir.path().join(format!("reports-{interrupts}"));
        let cmd = format!(
            "{} mock-provider run --kubeconfig {{kubeconfig}} --watch-namespace {{namespace}} \
             --webhook-cert-dir {{webhook-cert-dir}} --webhook-port {{webhook-port}} --webhook-host 127.0.0.1",
            bin()
        );
        let mut check = std::process::Command::new(bin())
            .args(["check", "--embedded", "--progress", "never", "-o", "json"])
            .arg("--crds")
            .arg(&components)
            .args(["--provider-cmd", &cmd])
            .arg("--report-dir")
            .arg(&reports)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        assert!(
            crate::signals::wait_until_catching_sigint(
                check.id(),
                std::time::Duration::from_secs(60)
            ),
            "check never installed its Ctrl-C handling"
        );
        // The provider started (its log names the run) and its certificate directory exists.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let run_id = loop {
            let found = std::fs::read_dir(&reports).ok().and_then(|rd| {
                rd.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().to_string())
                    .find_map(|n| {
                        n.strip_prefix("provider-")
                            .and_then(|r| r.strip_suffix(".log"))
                            .map(str::to_string)
                    })
            });
            if let Some(id) = found.filter(|id| !cert_dirs(id).is_empty()) {
                break id;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the provider never started"
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        };
        let kubeconfig = std::env::temp_dir().join(format!("capi-conformance-{run_id}.kubeconfig"));
        assert!(kubeconfig.exists(), "{}", kubeconfig.display());
        for _ in 0..interrupts {
            crate::signals::sigint(&check);
            tokio::time::sleep(std::time::Duration::from_millis(30)).await;
        }
        let status = check.wait().unwrap();
        assert!(status.code().is_some(), "{status:?}");
        assert!(
            cert_dirs(&run_id).is_empty(),
            "{interrupts} interrupt(s): left {:?}",
            cert_dirs(&run_id)
        );
        assert!(
            !kubeconfig.exists(),
            "{interrupts} interrupt(s): left {}",
            kubeconfig.display()
        );
    }
}

/// The twelve corpus providers' release manifests as `--provider-cmd` serves their webhooks:
/// every Service their webhook configurations and webhook-converted CRDs call is found with the
/// port its Pods listen on (named ports resolved through the manager Deployment), except one a
/// release really gets wrong; the certificate names each Service, and cert-manager's CA
/// injection resolves for every configuration and webhook CRD (each names a Certificate of the
/// same components).
#[test]
fn corpus_components_get_their_webhooks_served() {
    use capi_conformance::manifests::{Variables, load};
    use capi_conformance::serving::Plan;
    let mut with_webhooks = 0;
    let mut undefined = Vec::new();
    for (p, vars) in super::components_file::CORPUS {
        let Some(path) = super::shared_data::shared_or_skip(
            &format!("corpus/{p}/components.yaml"),
            "corpus_components_get_their_webhooks_served",
        ) else {
            return;
        };
        let vars =
            Variables::from_flags(&vars.iter().map(|v| v.to_string()).collect::<Vec<_>>()).unwrap();
        let mut docs: Vec<Value> = load(&[path], &vars, &Default::default())
            .unwrap_or_else(|e| panic!("{p}: {e}"))
            .into_iter()
            .map(|d| d.value)
            .collect();
        let plan = Plan::for_components(&mut docs).unwrap();
        if plan.services.is_empty() {
            continue;
        }
        with_webhooks += 1;
        for s in &plan.services {
            let [svc, _] = s.dns_names();
            assert!(plan.certs.names.contains(&svc), "{p}: {svc}");
            if !s.defined {
                undefined.push(format!(
                    "{p}: {}/{} ({})",
                    s.namespace,
                    s.name,
                    s.used_by.join(", ")
                ));
                continue;
            }
            assert!(s.target_port.is_some(), "{p}: {s:?}");
        }
        let failed: Vec<_> = plan
            .injections
            .iter()
            .filter(|i| i.outcome.is_err())
            .collect();
        assert!(failed.is_empty(), "{p}: {failed:#?}");
        // Every webhook configuration and webhook CRD now trusts the run's CA.
        let bundle = plan.certs.ca_bundle();
        for d in &docs {
            for cc in capi_conformance::serving::components::client_configs(d) {
                assert_eq!(cc["caBundle"], bundle, "{p}: {}", d["metadata"]["name"]);
            }
        }
    }
    assert!(
        with_webhooks >= 8,
        "only {with_webhooks} corpus providers have webhooks"
    );
    // A real finding: the Talos control plane's CRD converts through `webhook-service`, but its
    // release names the Service `cacppt-webhook-service` (kustomize's namePrefix never reached the
    // CRD's conversion patch). Latent while the CRD serves one version; a conversion call would
    // fail there as on any cluster, and the run says so in the report's notes.
    assert_eq!(
        undefined,
        [
            "talos-controlplane: cacppt-system/webhook-service (CustomResourceDefinition taloscontrolplanes.controlplane.cluster.x-k8s.io)"
        ]
    );
}

/// A webhook Service the components do not define is named in the report's notes (and the
/// cert-manager kinds are noted as played by the run).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_undefined_webhook_service_is_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let components = dir.path().join("mock-webhooks.yaml");
    let docs: Vec<Value> = webhook_manifests(&ManifestOptions::default())
        .unwrap()
        .into_iter()
        .filter(|d| d["kind"] != "Service")
        .collect();
    std::fs::write(
        &components,
        serde_saphyr::to_string_multiple(&docs).unwrap(),
    )
    .unwrap();
    let (_server, m) = super::components::embedded_on(&[
        "--static-only",
        "--crds",
        components.to_str().unwrap(),
        "--provider-cmd",
        "true {webhook-cert-dir} {webhook-port}",
    ])
    .await;
    let notes: Vec<String> = m.unwrap().notes.into_iter().map(|n| n.message).collect();
    assert!(
        notes.iter().any(|n| n.contains(
            "call(s) Service capi-conformance-mock-system/capi-conformance-mock-webhook-service, which the components do not define"
        )),
        "{notes:#?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.contains("the run issued the webhook serving certificate itself")),
        "{notes:#?}"
    );
}

/// A `--sample` is validated and created at the version it is written in, and
/// the other served version is reached through the provider's conversion webhook, as
/// kube-apiserver does: a MockControlPlane written at v1beta2 (`machineTemplate.spec` with an
/// `apiGroup` reference and `deletion.nodeDrainTimeoutSeconds`) has no valid v1beta1 spelling by
/// rewriting its `apiVersion` (v1beta1 wants `machineTemplate.infrastructureRef` with
/// `apiVersion` and a duration string), yet drives both MockControlPlane columns. Before, the
/// run stopped with exit 2 "not valid for the installed CRD (…/v1beta1)". (Written at v1beta2:
/// the mock takes an object's contract from the version its creator wrote, so a v1beta1-written
/// object would make it behave as a v1beta1 provider on the v1beta2 column too.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sample_written_at_one_version_drives_both_columns_through_the_providers_conversion() {
    let dir = tempfile::tempdir().unwrap();
    let components = mock_webhook_components(dir.path());
    let sample = dir.path().join("control-plane-v1beta2.yaml");
    std::fs::write(
        &sample,
        "apiVersion: controlplane.mock.capi-conformance.io/v1beta2\n\
         kind: MockControlPlane\n\
         metadata: {name: cp}\n\
         spec:\n  replicas: 1\n  version: v1.33.0\n  machineTemplate:\n    spec:\n      deletion: {nodeDrainTimeoutSeconds: 30}\n      infrastructureRef:\n        apiGroup: infrastructure.mock.capi-conformance.io\n        kind: MockMachineTemplate\n        name: cp-machines\n\
         ---\n\
         apiVersion: infrastructure.mock.capi-conformance.io/v1beta2\n\
         kind: MockMachineTemplate\n\
         metadata: {name: cp-machines}\n\
         spec: {template: {spec: {}}}\n",
    )
    .unwrap();
    let cmd = format!(
        "{} mock-provider run --kubeconfig {{kubeconfig}} --watch-namespace {{namespace}} \
         --webhook-cert-dir {{webhook-cert-dir}} --webhook-port {{webhook-port}} --webhook-host 127.0.0.1",
        bin()
    );
    let out = tokio::process::Command::new(bin())
        .args(["check", "--embedded", "--progress", "never", "-o", "json"])
        .arg("--crds")
        .arg(&components)
        .arg("--sample")
        .arg(&sample)
        .args(["--scenarios", "SC-controlplane", "--provider-cmd", &cmd])
        .arg("--report-dir")
        .arg(dir.path().join("reports"))
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(2), "{stderr}");
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no JSON report ({e}): {stderr}"));
    let cells: Vec<_> = lifecycle(&report)
        .into_iter()
        .filter(|(_, c, ..)| c.contains("MockControlPlane@") && !c.contains("(baseline)"))
        .collect();
    for contract in ["v1beta1", "v1beta2"] {
        assert!(
            cells
                .iter()
                .any(|(r, c, o, _)| r == "control-plane/certificates"
                    && c.contains(contract)
                    && o == "pass"),
            "{contract}: {cells:#?}"
        );
    }
    // Both columns are judged: none inconclusive (the v1beta1 one reached its object through
    // the conversion webhook). Failures are asserted on the sample's own version only: the mock
    // takes an object's contract from the version its creator wrote (`object::contract_of`),
    // so on the v1beta1 column it may reconcile as a v1beta2 provider, whose status the
    // conversion does not spell with v1beta1's conditions; a real provider reconciles at its
    // hub whatever the creator's version.
    let inconclusive: Vec<_> = cells
        .iter()
        .filter(|(.., o, _)| o == "inconclusive")
        .collect();
    assert!(inconclusive.is_empty(), "{inconclusive:#?}");
    let failed: Vec<_> = cells
        .iter()
        .filter(|(_, c, o, _)| o == "fail" && c.ends_with("@v1beta2"))
        .collect();
    assert!(failed.is_empty(), "{failed:#?}");
}

/// The mock's components in webhook mode, written to `<dir>/mock-webhooks.yaml`.
fn mock_webhook_components(dir: &Path) -> std::path::PathBuf {
    let components = dir.join("mock-webhooks.yaml");
    let docs = webhook_manifests(&ManifestOptions::default()).unwrap();
    std::fs::write(
        &components,
        serde_saphyr::to_string_multiple(&docs).unwrap(),
    )
    .unwrap();
    components
}

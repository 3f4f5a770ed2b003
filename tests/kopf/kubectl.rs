//! The real kubectl against the kopf provider's webhooks, as kube-apiserver shows them.

use super::*;

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

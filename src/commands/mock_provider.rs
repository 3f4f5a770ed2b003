//! `mock-provider run|manifests`.

use crate::cli::{KubeArgs, MockManifestsArgs, MockProviderCommand, MockRunArgs};
use anyhow::Context;
use capi_mock_provider::manifests::{ManifestOptions, manifests_yaml};
use capi_mock_provider::options::DEFAULT_PROVISION_DELAY;
use capi_mock_provider::{FaultSet, MockOptions, MockProvider};
use std::time::Duration;

/// Runs `mock-provider <subcommand>`.
pub async fn run(cmd: MockProviderCommand) -> anyhow::Result<i32> {
    match cmd {
        MockProviderCommand::Manifests(args) => print_manifests(&args),
        MockProviderCommand::Run(args) => run_controllers(*args).await,
    }
}

fn print_manifests(args: &MockManifestsArgs) -> anyhow::Result<i32> {
    let opts = ManifestOptions {
        image: args.image.clone(),
        namespace: args.target_namespace.clone(),
    };
    let yaml = if args.webhooks {
        capi_mock_provider::webhook::components::webhook_manifests_yaml(&opts)
    } else {
        manifests_yaml(&opts)
    }
    .context("building the mock provider manifests")?;
    print!("{yaml}");
    Ok(0)
}

async fn run_controllers(args: MockRunArgs) -> anyhow::Result<i32> {
    // Registered before the ready line: SIGINT/SIGTERM right after it stop cleanly.
    let mut stop = crate::run::interrupt::Signals::register();
    let faults = FaultSet::parse(args.faults.as_deref().unwrap_or_default());
    let unknown = faults.unknown();
    if !unknown.is_empty() {
        anyhow::bail!(
            "unknown fault(s): {} (see `capi-conformance rules` for scenario rule ids)",
            unknown.join(", ")
        );
    }
    let provision_delay = match args.provision_delay.as_deref() {
        Some(text) => parse_provision_delay(text)
            .with_context(|| format!("invalid --provision-delay `{text}`"))?,
        None => DEFAULT_PROVISION_DELAY,
    };
    let client = client_from(&args.kube).await?;
    // Webhook mode: the server is up before anything else, so the API server can convert and
    // admit the mock's objects from the first write on.
    let webhooks = match &args.webhook_cert_dir {
        Some(dir) => {
            let server =
                capi_mock_provider::webhook::serve(capi_mock_provider::webhook::WebhookOptions {
                    cert_dir: dir.clone(),
                    addr: std::net::SocketAddr::new(args.webhook_host, args.webhook_port),
                    faults: faults.clone(),
                })
                .await
                .context("starting the webhook server")?;
            eprintln!("mock provider serving webhooks on https://{}", server.addr);
            Some(server)
        }
        None => None,
    };
    // CRD-level faults first, so they are in place before the controllers watch anything
    // (`check --embedded` waits for the provider's first watch before the target scenarios).
    // In webhook mode the template faults are the validating webhook's.
    let crd_faults = if webhooks.is_some() {
        capi_mock_provider::webhook::without_webhook_faults(&faults)
    } else {
        faults.clone()
    };
    let changed = capi_mock_provider::crd_faults::apply_crd_faults(&client, &crd_faults)
        .await
        .context("applying the CRD-level faults")?;
    if !changed.is_empty() {
        eprintln!(
            "mock provider changed CRDs for faults: {}",
            changed.join(", ")
        );
    }
    let opts = MockOptions {
        watch_namespace: args
            .watch_namespace
            .or(args.kube.namespace.clone())
            .filter(|n| !n.is_empty()),
        watch_filter: args.watch_filter.filter(|f| !f.is_empty()),
        label_selector: args.label_selector.filter(|s| !s.trim().is_empty()),
        faults,
        provision_delay,
        core: capi_mock_provider::core::CoreReads::parse(args.core_reads.as_deref().unwrap_or(""))
            .map_err(|e| anyhow::anyhow!("--core-reads: {e}"))?,
    };
    eprintln!(
        "mock provider running (namespace: {}, watch-filter: {})",
        opts.watch_namespace.as_deref().unwrap_or("all"),
        opts.watch_filter.as_deref().unwrap_or("none")
    );
    let handle = MockProvider::start(client, opts);
    stop.next().await;
    handle.shutdown().await;
    drop(webhooks);
    Ok(0)
}

/// A kube client from kubectl's connection flags (`--kubeconfig`, `--context`, `--server`,
/// `--token`, `--certificate-authority`, `--insecure-skip-tls-verify`, `--request-timeout`…),
/// resolved the way every command resolves them ([`crate::kubeconn::connect`]).
async fn client_from(kube_args: &KubeArgs) -> anyhow::Result<kube::Client> {
    crate::kubeconn::connect(&kube_args.options())
        .await?
        .client()
        .context("building the Kubernetes client")
}

/// `--provision-delay`: a duration as everywhere (`5ms`, `2s`, `1m`,
/// [`crate::kubeconn::parse_duration`]), but a bare number is milliseconds.
pub fn parse_provision_delay(text: &str) -> anyhow::Result<Duration> {
    let text = text.trim();
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(Duration::from_millis(
            text.parse().context("expected a whole number")?,
        ));
    }
    Ok(crate::kubeconn::parse_duration(text)?.unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::parse_provision_delay as parse_duration;
    use std::time::Duration;

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("5ms").unwrap(), Duration::from_millis(5));
        assert_eq!(parse_duration("7").unwrap(), Duration::from_millis(7));
        assert_eq!(parse_duration("2s").unwrap(), Duration::from_secs(2));
        assert_eq!(parse_duration("250us").unwrap(), Duration::from_micros(250));
        assert_eq!(parse_duration("1h").unwrap(), Duration::from_secs(3600));
        assert!(parse_duration("5x").is_err());
        assert!(parse_duration("ms").is_err());
    }
}

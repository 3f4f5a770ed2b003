//! `mock-provider run|manifests`.

use crate::cli::{KubeArgs, MockManifestsArgs, MockProviderCommand, MockRunArgs};
use anyhow::Context;
use capi_mock_provider::manifests::{ManifestOptions, manifests_yaml};
use capi_mock_provider::options::DEFAULT_PROVISION_DELAY;
use capi_mock_provider::{FaultSet, MockOptions, MockProvider};
use kube::config::{KubeConfigOptions, Kubeconfig};
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
    let yaml = manifests_yaml(&opts).context("building the mock provider manifests")?;
    print!("{yaml}");
    Ok(0)
}

async fn run_controllers(args: MockRunArgs) -> anyhow::Result<i32> {
    let faults = FaultSet::parse(args.faults.as_deref().unwrap_or_default());
    let unknown = faults.unknown();
    if !unknown.is_empty() {
        anyhow::bail!(
            "unknown fault(s): {} (see `capi-conformance rules` for scenario rule ids)",
            unknown.join(", ")
        );
    }
    let provision_delay = match args.provision_delay.as_deref() {
        Some(text) => {
            parse_duration(text).with_context(|| format!("invalid --provision-delay `{text}`"))?
        }
        None => DEFAULT_PROVISION_DELAY,
    };
    let client = client_from(&args.kube).await?;
    // CRD-level faults first, so they are in place before the controllers watch anything
    // (`check --embedded` waits for the provider's first watch before the target scenarios).
    let changed = capi_mock_provider::crd_faults::apply_crd_faults(&client, &faults)
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
    tokio::signal::ctrl_c()
        .await
        .context("waiting for Ctrl-C")?;
    handle.shutdown().await;
    Ok(0)
}

/// A kube client from `--kubeconfig`/`--context`/`--cluster`/`--user`, else the usual inference
/// (`$KUBECONFIG`, `~/.kube/config`, in-cluster).
async fn client_from(kube_args: &KubeArgs) -> anyhow::Result<kube::Client> {
    let options = KubeConfigOptions {
        context: kube_args.context.clone(),
        cluster: kube_args.cluster.clone(),
        user: kube_args.user.clone(),
    };
    let config = match &kube_args.kubeconfig {
        Some(path) => {
            let kubeconfig = Kubeconfig::read_from(path)
                .with_context(|| format!("reading kubeconfig {}", path.display()))?;
            kube::Config::from_custom_kubeconfig(kubeconfig, &options)
                .await
                .context("loading the kubeconfig")?
        }
        None if options.context.is_some()
            || options.cluster.is_some()
            || options.user.is_some() =>
        {
            kube::Config::from_kubeconfig(&options)
                .await
                .context("loading the kubeconfig")?
        }
        None => kube::Config::infer()
            .await
            .context("finding a kubeconfig or in-cluster config")?,
    };
    crate::client_retry::client_for_config(config, crate::client_retry::RetryPolicy::default())
        .context("building the Kubernetes client")
}

/// Parses `5ms`, `2s`, `250us`, `1m` (a bare number is milliseconds).
pub fn parse_duration(text: &str) -> anyhow::Result<Duration> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let n: u64 = number.parse().context("expected a whole number")?;
    Ok(match unit {
        "" | "ms" => Duration::from_millis(n),
        "us" => Duration::from_micros(n),
        "s" => Duration::from_secs(n),
        "m" => Duration::from_secs(n * 60),
        other => anyhow::bail!("unknown unit `{other}` (use us, ms, s or m)"),
    })
}

#[cfg(test)]
mod tests {
    use super::parse_duration;
    use std::time::Duration;

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("5ms").unwrap(), Duration::from_millis(5));
        assert_eq!(parse_duration("7").unwrap(), Duration::from_millis(7));
        assert_eq!(parse_duration("2s").unwrap(), Duration::from_secs(2));
        assert_eq!(parse_duration("250us").unwrap(), Duration::from_micros(250));
        assert!(parse_duration("5h").is_err());
        assert!(parse_duration("ms").is_err());
    }
}

//! The provider and core manager processes a run starts (`--provider-cmd`, `--core-cmd`): each
//! in its own process group, its output to a log file, killed with its group on abort; and the
//! waits that tell when one serves (its webhook server's TLS handshake, `GET /readyz`) and
//! watches (watch requests on its own listener).

use anyhow::Context;
use embedded_apiserver::Listener;
use std::process::Stdio;
use std::time::Duration;

/// A started manager process (`--provider-cmd`, `--core-cmd`), its log streamed to a file.
pub struct ProviderProcess {
    child: tokio::process::Child,
    /// Kills the provider's process group if the run is aborted before [`Self::stop`].
    _abort: Option<super::interrupt::AbortKill>,
}

impl ProviderProcess {
    /// Stops the provider and everything it started: the command runs in its own process
    /// group (`sh -c` may fork the provider instead of exec-ing it), which gets SIGTERM, then
    /// SIGKILL for whatever is still there after 3 s.
    pub async fn stop(mut self) {
        #[cfg(unix)]
        if let Some(group) = self.child.id() {
            use super::interrupt::signal_group;
            signal_group("TERM", group);
            let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
            let _ = tokio::time::timeout_at(deadline, self.child.wait()).await;
            while signal_group("0", group) && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            signal_group("KILL", group);
        }
        let _ = self.child.kill().await;
    }
}

/// Where a `--provider-cmd` provider's webhook server is expected, and how to verify it.
pub struct WebhookProbe {
    pub addr: std::net::SocketAddr,
    pub server_name: String,
    pub tls: std::sync::Arc<tokio_rustls::rustls::ClientConfig>,
}

/// Waits (at most `limit`) until the provider serves: a TLS handshake with the run's
/// certificate at every probe, else (no webhooks) `GET /readyz` 200 at `{health-addr}` when
/// the command takes it. `Err`: why not, also when the provider exits first.
pub async fn wait_until_serving(
    provider: &mut ProviderProcess,
    probes: &[WebhookProbe],
    health: Option<std::net::SocketAddr>,
    limit: Duration,
) -> Result<(), String> {
    use crate::serving::ready::{wait_readyz, wait_tls};
    if probes.is_empty() && health.is_none() {
        return Ok(());
    }
    let ready = async {
        for p in probes {
            wait_tls(p.addr, &p.server_name, p.tls.clone(), limit)
                .await
                .map_err(|e| {
                    format!(
                        "its webhook server did not come up at {} within {}s ({e})",
                        p.addr,
                        limit.as_secs()
                    )
                })?;
        }
        if probes.is_empty()
            && let Some(addr) = health
        {
            wait_readyz(addr, limit).await.map_err(|e| {
                format!(
                    "its health endpoint {addr} was not ready within {}s ({e})",
                    limit.as_secs()
                )
            })?;
        }
        Ok(())
    };
    tokio::select! {
        r = ready => r,
        status = provider.child.wait() => Err(match status {
            Ok(s) => format!("it exited ({s}) before its webhook server came up"),
            Err(e) => format!("waiting for it failed: {e}"),
        }),
    }
}

/// Waits (at most `limit`) until `providers` watch requests came through the providers'
/// listener (one each at least): the started providers watch, so whatever they do first (the
/// mock's CRD faults) is in place. Counted on their own listener, so the server's other
/// watchers (the baseline mock re-watching under `drop-watch`) cannot end or stretch the wait.
/// A provider that never watches only costs the wait.
pub async fn wait_for_watches(listener: &Listener, providers: u64, limit: Duration) {
    let deadline = tokio::time::Instant::now() + limit;
    while listener.watch_requests() < providers && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Starts `sh -c cmd` with `env` over the tool's environment (a variable the command assigns
/// itself wins, as `sh` makes it), its output to `log`.
pub fn start_provider(
    cmd: &str,
    env: &[super::manager_launch::env::EnvVar],
    log: &std::path::Path,
) -> anyhow::Result<ProviderProcess> {
    if let Some(dir) = log.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let out =
        std::fs::File::create(log).with_context(|| format!("cannot create {}", log.display()))?;
    let err = out.try_clone()?;
    let mut command = tokio::process::Command::new("sh");
    command
        .arg("-c")
        .arg(cmd)
        .envs(env.iter().map(|v| (&v.name, &v.value)))
        .stdin(Stdio::null())
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .kill_on_drop(true);
    // Its own process group, so stopping it reaches whatever the command starts.
    #[cfg(unix)]
    command.process_group(0);
    let child = command
        .spawn()
        .with_context(|| format!("cannot start --provider-cmd {cmd:?}"))?;
    // The group id is the child's pid (`process_group(0)`).
    let abort = child.id().map(super::interrupt::kill_group_on_abort);
    Ok(ProviderProcess {
        child,
        _abort: abort,
    })
}

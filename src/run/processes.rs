//! The provider and core manager processes a run starts (`--provider-cmd`, `--core-cmd`): each
//! in its own process group, its output to a log file, killed with its group on abort; and the
//! waits that tell when one serves (its webhook server's TLS handshake, `GET /readyz`) and
//! watches (watch requests on its own listener).

use anyhow::Context;
use embedded_apiserver::Listener;
use std::process::Stdio;
use std::time::Duration;

/// How often a manager that exits before it serves is started again (as kubelet restarts the
/// container of a Deployment, `restartPolicy: Always`), and the first pause before it: a Go
/// manager exits when a request of its start-up fails (a CRD lookup answered 500), which a
/// server under `--server-faults` or a real one in a rolling upgrade does. Kubelet's back-off
/// starts at 10 s; the run's at 1 s, doubling.
const STARTUP_RESTARTS: u32 = 3;
const STARTUP_BACKOFF: Duration = if cfg!(test) {
    Duration::from_millis(10)
} else {
    Duration::from_secs(1)
};

/// A started manager process (`--provider-cmd`, `--core-cmd`), its log streamed to a file.
pub struct ProviderProcess {
    child: tokio::process::Child,
    /// Kills the provider's process group if the run is aborted before [`Self::stop`].
    _abort: Option<super::interrupt::AbortKill>,
    /// How it was started (for a restart).
    cmd: String,
    env: Vec<super::manager_launch::env::EnvVar>,
    log: std::path::PathBuf,
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

    /// Starts the same command again, its output appended to the same log after a line that
    /// says why.
    async fn restart(&mut self, why: &str) -> anyhow::Result<()> {
        use std::io::Write;
        let mut out = std::fs::OpenOptions::new()
            .append(true)
            .open(&self.log)
            .with_context(|| format!("cannot open {}", self.log.display()))?;
        writeln!(out, "--- capi-conformance: {why}; started again ---")?;
        let next = spawn(&self.cmd, &self.env, &self.log, out)?;
        let old = std::mem::replace(self, next);
        old.stop().await;
        Ok(())
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

/// [`wait_until_serving`], starting the provider again when it exits first
/// ([`STARTUP_RESTARTS`] times at most, as kubelet would). `Ok`: what happened on the way, one
/// line per restart (for the report's notes); `Err`: why it does not serve.
pub async fn wait_until_serving_restarting(
    provider: &mut ProviderProcess,
    probes: &[WebhookProbe],
    health: Option<std::net::SocketAddr>,
    limit: Duration,
) -> Result<Vec<String>, String> {
    let mut notes = Vec::new();
    let mut backoff = STARTUP_BACKOFF;
    loop {
        let why = match wait_until_serving(provider, probes, health, limit).await {
            Ok(()) => return Ok(notes),
            Err(why) if why.starts_with("it exited") && notes.len() < STARTUP_RESTARTS as usize => {
                why
            }
            Err(why) => return Err(why),
        };
        notes.push(format!(
            "{why}; started again after {} s, as kubelet restarts a Deployment's container (its output: {})",
            backoff.as_secs(),
            provider.log.display()
        ));
        tokio::time::sleep(backoff).await;
        backoff *= 2;
        provider
            .restart(&why)
            .await
            .map_err(|e| format!("{why}; starting it again failed: {e:#}"))?;
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
    spawn(cmd, env, log, out)
}

/// Starts `sh -c cmd` with `env`, its output to `out` (the file at `log`).
fn spawn(
    cmd: &str,
    env: &[super::manager_launch::env::EnvVar],
    log: &std::path::Path,
    out: std::fs::File,
) -> anyhow::Result<ProviderProcess> {
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
        cmd: cmd.to_string(),
        env: env.to_vec(),
        log: log.to_path_buf(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// Answers `GET /readyz` with 200 at `listener` once `ready` exists.
    async fn readyz_once(listener: tokio::net::TcpListener, ready: std::path::PathBuf) {
        while !ready.exists() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        while let Ok((mut tcp, _)) = listener.accept().await {
            let mut buf = [0u8; 512];
            let _ = tcp.read(&mut buf).await;
            let _ = tcp
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
                .await;
        }
    }

    /// A manager that exits during start-up (its first start) is started again, as kubelet
    /// would, and the restart is told; one that keeps exiting is given up on with the reason.
    #[tokio::test]
    async fn a_manager_that_exits_during_start_up_is_started_again() {
        let dir = tempfile::tempdir().unwrap();
        let (first, second) = (dir.path().join("first"), dir.path().join("second"));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(readyz_once(listener, second.clone()));
        let cmd = format!(
            "if [ -e {f} ]; then touch {s}; exec sleep 30; else touch {f}; echo failing; exit 1; fi",
            f = first.display(),
            s = second.display()
        );
        let log = dir.path().join("provider.log");
        let mut p = start_provider(&cmd, &[], &log).unwrap();
        let notes = wait_until_serving_restarting(&mut p, &[], Some(addr), Duration::from_secs(20))
            .await
            .unwrap();
        p.stop().await;
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].starts_with(
                "it exited (exit status: 1) before its webhook server came up; started again"
            ),
            "{notes:?}"
        );
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(
            text.starts_with("failing\n--- capi-conformance: it exited"),
            "{text}"
        );

        let free = crate::serving::placeholders::free_addr().unwrap();
        let mut p = start_provider("exit 3", &[], &log).unwrap();
        let why = wait_until_serving_restarting(&mut p, &[], Some(free), Duration::from_secs(20))
            .await
            .unwrap_err();
        p.stop().await;
        assert!(why.starts_with("it exited (exit status: 3)"), "{why}");
        let text = std::fs::read_to_string(&log).unwrap();
        assert_eq!(
            text.matches("started again").count(),
            STARTUP_RESTARTS as usize,
            "{text}"
        );
    }
}

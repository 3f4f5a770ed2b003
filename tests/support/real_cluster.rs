//! A real control plane for a test: etcd, kube-apiserver and kube-controller-manager at the
//! versions pinned in `tools/kube`, built by `scripts/real-cluster/build.sh` and started on
//! loopback by `scripts/real-cluster/up.sh` as a child of the test process.
//!
//! `RealCluster::start` returns None after printing `skipped: <test>: <reason>` when the
//! binaries cannot be built here (build.sh exits 2: no Go toolchain, or the module proxy refuses
//! a module); with `CAPI_CONFORMANCE_REQUIRE_REAL_CLUSTER=1` it panics with that reason instead.
//! Any other failure panics. Dropping the value stops the cluster (SIGTERM to up.sh, which stops
//! what it started and removes its folder) and waits for it.
//!
//! Included with `#[path]` by the test binaries that need a real cluster.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long up.sh may take to print its kubeconfig line (it waits up to 120 s for readiness).
const READY_WITHIN: Duration = Duration::from_secs(180);

/// A running real cluster; stopped on drop.
pub struct RealCluster {
    child: Child,
    kubeconfig: PathBuf,
    /// up.sh's stdout lines after the kubeconfig line (`restarted: …`).
    lines: Receiver<String>,
    /// up.sh's stderr so far, for failure messages.
    stderr: Arc<Mutex<Vec<String>>>,
}

/// The repository root: the nearest ancestor of this crate's manifest folder with the scripts.
fn repository_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .find(|d| d.join("scripts/real-cluster/up.sh").is_file())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| panic!("no scripts/real-cluster/up.sh above {}", manifest.display()))
}

/// Runs build.sh: the folder with the binaries, or Err(reason) when it exits 2.
fn build(root: &Path) -> Result<PathBuf, String> {
    let out = Command::new(root.join("scripts/real-cluster/build.sh"))
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run scripts/real-cluster/build.sh: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0) => {
            let bin = String::from_utf8_lossy(&out.stdout).trim().to_string();
            assert!(
                !bin.is_empty(),
                "scripts/real-cluster/build.sh printed no folder; its stderr:\n{stderr}"
            );
            Ok(PathBuf::from(bin))
        }
        Some(2) => {
            let reason = stderr
                .lines()
                .rev()
                .find_map(|l| l.strip_prefix("error: real-cluster build: "))
                .unwrap_or("scripts/real-cluster/build.sh cannot build here (exit 2)");
            Err(reason.to_string())
        }
        _ => panic!(
            "scripts/real-cluster/build.sh failed ({}); its stderr:\n{stderr}",
            out.status
        ),
    }
}

/// Sends `signal` (a name `kill` knows: TERM, USR1, …) to `pid`.
fn signal(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .status()
        .unwrap_or_else(|e| panic!("cannot run kill: {e}"));
    assert!(status.success(), "kill -{signal} {pid}: {status}");
}

impl RealCluster {
    /// Builds (or reuses) the binaries and starts a cluster; None after the skip line when
    /// they cannot be built here.
    pub fn start(test_name: &str) -> Option<RealCluster> {
        let root = repository_root();
        let bin = match build(&root) {
            Ok(bin) => bin,
            Err(reason) => {
                if std::env::var("CAPI_CONFORMANCE_REQUIRE_REAL_CLUSTER").as_deref() == Ok("1") {
                    panic!(
                        "{test_name}: {reason} (CAPI_CONFORMANCE_REQUIRE_REAL_CLUSTER=1 requires a real cluster)"
                    );
                }
                println!("skipped: {test_name}: {reason}");
                return None;
            }
        };
        // up.sh picks free ports before the processes bind them: another process can take one
        // in between ("address already in use"); such a start is tried again.
        let mut attempt = 1;
        loop {
            match Self::up(&root, &bin) {
                Ok(cluster) => return Some(cluster),
                Err(stderr) if attempt < 3 && stderr.contains("address already in use") => {
                    eprintln!(
                        "{test_name}: a port was taken while the real cluster started; again"
                    );
                    attempt += 1;
                }
                Err(stderr) => panic!(
                    "scripts/real-cluster/up.sh exited before its kubeconfig line; its stderr:\n{stderr}"
                ),
            }
        }
    }

    /// One start of up.sh: the cluster, or up.sh's stderr when it exits first.
    fn up(root: &Path, bin: &Path) -> Result<RealCluster, String> {
        let mut child = Command::new(root.join("scripts/real-cluster/up.sh"))
            .arg("--bin")
            .arg(bin)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run scripts/real-cluster/up.sh: {e}"));
        let stderr = Arc::new(Mutex::new(Vec::new()));
        if let Some(err) = child.stderr.take() {
            let lines = Arc::clone(&stderr);
            std::thread::spawn(move || {
                for line in BufReader::new(err).lines().map_while(Result::ok) {
                    if let Ok(mut l) = lines.lock() {
                        l.push(line);
                    }
                }
            });
        }
        let (tx, rx) = channel();
        if let Some(out) = child.stdout.take() {
            std::thread::spawn(move || {
                for line in BufReader::new(out).lines().map_while(Result::ok) {
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
        }
        let mut cluster = RealCluster {
            child,
            kubeconfig: PathBuf::new(),
            lines: rx,
            stderr,
        };
        match cluster.next_line(|l| l.starts_with("kubeconfig: "), "its kubeconfig line") {
            Ok(line) => {
                cluster.kubeconfig = PathBuf::from(line.trim_start_matches("kubeconfig: ").trim());
                Ok(cluster)
            }
            Err(stderr) => Err(stderr),
        }
    }

    /// The admin kubeconfig (client certificate in `system:masters`).
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// Restarts kube-apiserver (SIGUSR1 to up.sh) and returns once it serves again.
    pub fn restart_apiserver(&self) {
        signal(self.child.id(), "USR1");
        self.wait_for_line(
            |l| l == "restarted: kube-apiserver",
            "restarted: kube-apiserver",
        );
    }

    /// Restarts etcd (SIGUSR2 to up.sh) and returns once it serves again.
    pub fn restart_etcd(&self) {
        signal(self.child.id(), "USR2");
        self.wait_for_line(|l| l == "restarted: etcd", "restarted: etcd");
    }

    /// The first stdout line of up.sh matching `wanted`; panics with up.sh's stderr when it
    /// exits or takes too long.
    fn wait_for_line(&self, wanted: impl Fn(&str) -> bool, what: &str) -> String {
        self.next_line(wanted, what).unwrap_or_else(|stderr| {
            panic!("scripts/real-cluster/up.sh exited before {what}; its stderr:\n{stderr}")
        })
    }

    /// The first stdout line of up.sh matching `wanted`, or up.sh's stderr when it exits first;
    /// panics when it takes too long.
    fn next_line(&self, wanted: impl Fn(&str) -> bool, what: &str) -> Result<String, String> {
        let deadline = Instant::now() + READY_WITHIN;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if wanted(line.trim_end()) => return Ok(line),
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => {
                    panic!(
                        "scripts/real-cluster/up.sh printed no {what} within {READY_WITHIN:?}; its stderr:\n{}",
                        self.stderr_text()
                    )
                }
                Err(RecvTimeoutError::Disconnected) => {
                    // Let the stderr reader catch up with the last lines.
                    std::thread::sleep(Duration::from_millis(200));
                    return Err(self.stderr_text());
                }
            }
        }
    }

    fn stderr_text(&self) -> String {
        self.stderr.lock().map(|l| l.join("\n")).unwrap_or_default()
    }
}

impl Drop for RealCluster {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = Command::new("kill")
                .arg("-TERM")
                .arg(self.child.id().to_string())
                .status();
        }
        let _ = self.child.wait();
    }
}

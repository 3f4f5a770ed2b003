//! A real management cluster for a test: etcd, kube-apiserver and kube-controller-manager built
//! from Go modules (`scripts/real-cluster/build.sh`, cached) and started on loopback
//! (`scripts/real-cluster/up.sh`), stopped when dropped.
//!
//! Without a Go toolchain or when the module proxy refuses what the build needs, a test prints
//! one `skipped: <test>: <reason>` line and does nothing; with
//! `CAPI_CONFORMANCE_REQUIRE_REAL_CLUSTER=1` (set by `.ci/run`) it fails instead.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::{Mutex, OnceLock};

/// Set to `1`, a missing toolchain or module fails the test instead of skipping it.
pub const REQUIRE_ENV: &str = "CAPI_CONFORMANCE_REQUIRE_REAL_CLUSTER";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The built binaries' folder, or why there are none (built once per test process).
fn binaries() -> Result<PathBuf, String> {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let out = Command::new(root().join("scripts/real-cluster/build.sh"))
                .stderr(Stdio::piped())
                .output()
                .map_err(|e| format!("cannot run scripts/real-cluster/build.sh: {e}"))?;
            let stderr = String::from_utf8_lossy(&out.stderr);
            match out.status.code() {
                Some(0) => Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())),
                // Exit 2: this machine cannot build them (no Go, the proxy refused a module).
                Some(2) => Err(stderr
                    .lines()
                    .rev()
                    .find(|l| l.starts_with("error:"))
                    .unwrap_or("scripts/real-cluster/build.sh exited 2")
                    .to_string()),
                _ => panic!(
                    "scripts/real-cluster/build.sh failed ({}):\n{stderr}",
                    out.status
                ),
            }
        })
        .clone()
}

/// A running cluster; stopped (every process of it) when dropped.
pub struct RealCluster {
    child: Child,
    stdout: Mutex<BufReader<ChildStdout>>,
    kubeconfig: PathBuf,
    dir: tempfile::TempDir,
}

/// One cluster at a time in a test process: each is three Go servers, and on a 2-core machine
/// two at once (beside the managers the tests run) slow each other past scenario windows.
pub static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

impl RealCluster {
    /// Starts a cluster (building the binaries first when needed); `None` after the skip line
    /// when this machine cannot build them and the test may skip.
    pub fn start(test: &str) -> Option<RealCluster> {
        Self::start_with(test, &[])
    }

    /// [`Self::start`] with extra kube-apiserver flags (e.g. `--min-request-timeout=5`, after
    /// which the server ends every watch within 5–10 s, as it ends them after 30–60 min by
    /// default).
    pub fn start_with(test: &str, apiserver_flags: &[&str]) -> Option<RealCluster> {
        let bin = match binaries() {
            Ok(bin) => bin,
            Err(why) => {
                if std::env::var(REQUIRE_ENV).is_ok_and(|v| v == "1") {
                    panic!("{test}: no real cluster ({REQUIRE_ENV}=1): {why}");
                }
                println!("skipped: {test}: {why}");
                return None;
            }
        };
        // up.sh picks free ports before the processes bind them: another process can take one
        // in between ("address already in use"); such a start is tried again, up to 3 times.
        let mut attempt = 1;
        loop {
            match Self::up(&bin, apiserver_flags) {
                Ok(cluster) => return Some(cluster),
                Err(why) if attempt < 3 && why.contains("address already in use") => {
                    eprintln!("{test}: a port was taken while the real cluster started; again");
                    attempt += 1;
                }
                Err(why) => panic!("{test}: the real cluster did not start: {why}"),
            }
        }
    }

    /// One start of up.sh: the cluster, or what up.sh printed when it exited first.
    fn up(bin: &Path, apiserver_flags: &[&str]) -> Result<RealCluster, String> {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let mut child = Command::new(root().join("scripts/real-cluster/up.sh"))
            .arg("--bin")
            .arg(bin)
            .arg("--dir")
            .arg(dir.path().join("cluster"))
            .arg("--")
            .args(apiserver_flags)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("scripts/real-cluster/up.sh runs");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut stdout = BufReader::new(stdout);
        let mut line = String::new();
        let read = stdout.read_line(&mut line).unwrap_or(0);
        let Some(path) = line
            .trim()
            .strip_prefix("kubeconfig: ")
            .filter(|_| read > 0)
        else {
            let status = child.wait();
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut e, &mut err);
            }
            return Err(format!("({status:?}): {line}{err}"));
        };
        Ok(RealCluster {
            kubeconfig: PathBuf::from(path),
            child,
            stdout: Mutex::new(stdout),
            dir,
        })
    }

    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// A folder of the test's own beside the cluster's.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The cluster's logs (one file per process).
    pub fn logs(&self) -> PathBuf {
        self.dir.path().join("cluster/logs")
    }

    fn restart(&self, signal: &str, name: &str) {
        let ok = Command::new("kill")
            .args([&format!("-{signal}"), &self.child.id().to_string()])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "kill -{signal} {}", self.child.id());
        let mut out = self.stdout.lock().unwrap_or_else(|p| p.into_inner());
        let mut line = String::new();
        while out.read_line(&mut line).unwrap_or(0) > 0 {
            if line.trim() == format!("restarted: {name}") {
                return;
            }
            line.clear();
        }
        panic!("{name} was not restarted (the cluster script ended)");
    }

    /// Restarts kube-apiserver; returns once it serves again.
    pub fn restart_apiserver(&self) {
        self.restart("USR1", "kube-apiserver");
    }

    /// Restarts etcd; returns once it serves again.
    pub fn restart_etcd(&self) {
        self.restart("USR2", "etcd");
    }
}

impl Drop for RealCluster {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

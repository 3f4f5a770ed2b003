//! Running a real manager of `../shared/providers` through `check --embedded`, or through
//! `check --kubeconfig` beside a real cluster (`tests/support/real_cluster.rs`).

use super::shared_data::{project_root, shared_or_skip};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Where CAPI v1.11.11's managers and components are, under `../shared`.
pub const CAPI: &str = "providers/capi-v1.11.11";

/// A manager of `../shared/providers/capi-v1.11.11`, decompressed into `dir` and made
/// executable; `None` (with the skip line) without `../shared`.
pub fn manager(dir: &Path, name: &str) -> Option<PathBuf> {
    let gz = shared_or_skip(&format!("{CAPI}/{name}.gz"), &format!("CAPI's {name}"))?;
    let out = dir.join(name);
    let bytes = std::process::Command::new("gzip")
        .arg("-dc")
        .arg(&gz)
        .output()
        .expect("gzip runs");
    assert!(bytes.status.success(), "gzip -dc {}", gz.display());
    std::fs::write(&out, bytes.stdout).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    Some(out)
}

/// `../shared/providers/capi-v1.11.11/components/<name>.yaml`.
pub fn components(name: &str) -> Option<PathBuf> {
    shared_or_skip(
        &format!("{CAPI}/components/{name}.yaml"),
        &format!("CAPI's {name} components"),
    )
}

/// Our sample file `tests/data/capi-managers/<name>`.
pub fn sample(name: &str) -> PathBuf {
    project_root().join("tests/data/capi-managers").join(name)
}

/// The command line CAPI's managers take, as a provider team writes it (docs/providers.md
/// "Your own manager: webhooks and serving certificates"): the run's kubeconfig, webhook
/// certificate and ports, health and metrics addresses.
pub fn manager_cmd(manager: &Path) -> String {
    format!(
        "{} --kubeconfig {{kubeconfig}} --webhook-cert-dir {{webhook-cert-dir}} --webhook-port {{webhook-port}} \
         --health-addr {{health-addr}} --diagnostics-address {{metrics-addr}} --insecure-diagnostics",
        manager.display()
    )
}

/// What a run left: its exit code, JSON report and the manager's log.
pub struct Run {
    pub code: Option<i32>,
    pub report: Value,
    pub log: String,
    pub stderr: String,
}

impl Run {
    /// Lifecycle cells of the target (not the baseline): (rule, column, outcome, reason).
    pub fn lifecycle(&self) -> Vec<(String, String, String, String)> {
        self.report["results"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter(|r| {
                r["phase"] == "lifecycle"
                    && !r["column"].as_str().unwrap_or("").contains("(baseline)")
            })
            .map(|r| {
                let s = |k: &str| r[k].as_str().unwrap_or_default().to_string();
                (s("rule_id"), s("column"), s("outcome"), s("reason"))
            })
            .collect()
    }

    /// The target's cells of every phase (a rule judged statically and by a scenario has one
    /// cell): (rule, column, outcome, reason).
    pub fn cells(&self) -> Vec<(String, String, String, String)> {
        self.report["results"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter(|r| !r["column"].as_str().unwrap_or("").contains("(baseline)"))
            .map(|r| {
                let s = |k: &str| r[k].as_str().unwrap_or_default().to_string();
                (s("rule_id"), s("column"), s("outcome"), s("reason"))
            })
            .collect()
    }

    /// Failing or inconclusive cells of any phase: (rule, column, outcome, level).
    pub fn problems(&self) -> Vec<(String, String, String, String)> {
        self.report["results"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter(|r| r["outcome"] == "fail" || r["outcome"] == "inconclusive")
            .map(|r| {
                let s = |k: &str| r[k].as_str().unwrap_or_default().to_string();
                (s("rule_id"), s("column"), s("outcome"), s("level"))
            })
            .collect()
    }

    /// Lines of the manager's log reporting a recovered panic.
    pub fn panics(&self) -> usize {
        self.log.matches("Observed a panic").count()
    }
}

/// One real manager at a time: each is a Go process with its own informers and webhook server
/// beside the tool's embedded server, and on a 2-core machine two of them at once slow each
/// other past the scenario windows (CAPD also binds a fixed port, :19000, for its in-memory API
/// servers).
pub static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Where a manager's verdict is given: the embedded server, or a real cluster (the managers
/// run here beside it, as `make run` runs a manager beside envtest's).
#[derive(Clone, Copy)]
pub enum Server<'a> {
    Embedded,
    Cluster(&'a Path),
}

impl Server<'_> {
    /// The arguments of `check` that choose it.
    pub fn args(&self) -> Vec<std::ffi::OsString> {
        match self {
            Server::Embedded => vec!["--embedded".into()],
            Server::Cluster(kubeconfig) => vec!["--kubeconfig".into(), kubeconfig.into()],
        }
    }
}

/// `check <server> -o json --crds <components> --provider-cmd <cmd> <extra…>` with the test
/// binary, its reports in `dir`.
pub async fn check(
    dir: &Path,
    server: Server<'_>,
    components: &Path,
    cmd: &str,
    extra: &[&str],
) -> Run {
    check_providers(dir, server, &[(components, cmd)], extra).await
}

/// [`check`] with several providers, as `clusterctl init` installs them: one `--crds` and one
/// `--provider-cmd` per provider, in the same order. [`Run::log`] holds every manager's log.
pub async fn check_providers(
    dir: &Path,
    server: Server<'_>,
    providers: &[(&Path, &str)],
    extra: &[&str],
) -> Run {
    let _one = ONE_AT_A_TIME.lock().await;
    let reports = dir.join("reports");
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_capi-conformance"));
    command.arg("check").args(server.args());
    command.args(["--progress", "never", "-o", "json"]);
    for (components, _) in providers {
        command.arg("--crds").arg(components);
    }
    for (_, cmd) in providers {
        command.args(["--provider-cmd", cmd]);
    }
    let out = command
        .args(extra)
        .arg("--report-dir")
        .arg(&reports)
        .output()
        .await
        .expect("the tool runs");
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no JSON report ({e}); stderr: {stderr}"));
    let run_id = report["context"]["run_id"].as_str().unwrap_or_default();
    // `provider-<run>.log` for one manager, `provider-<run>-<n>-<deployment>.log` for several.
    let mut logs: Vec<PathBuf> = std::fs::read_dir(&reports)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.starts_with(&format!("provider-{run_id}")) && n.ends_with(".log")
            })
        })
        .collect();
    logs.sort();
    assert_eq!(logs.len(), providers.len(), "one log per manager: {logs:?}");
    let log = logs
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n");
    Run {
        code: out.status.code(),
        report,
        log,
        stderr,
    }
}

/// Runs `judge` on a real cluster started for `test` (one cluster at a time in the process);
/// nothing, after the skip line, where none can be built.
pub async fn on_a_real_cluster<F, Fut>(test: &str, judge: F)
where
    F: FnOnce(std::path::PathBuf) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let _one = super::real_cluster::ONE_AT_A_TIME.lock().await;
    let Some(cluster) = super::real_cluster::RealCluster::start(test) else {
        return;
    };
    let before = cluster_objects(cluster.kubeconfig());
    judge(cluster.kubeconfig().to_path_buf()).await;
    // What the run installed is gone, and what was there is as it was.
    let after = cluster_objects(cluster.kubeconfig());
    let added: Vec<&String> = after.iter().filter(|o| !before.contains(o)).collect();
    let removed: Vec<&String> = before.iter().filter(|o| !after.contains(o)).collect();
    assert!(
        added.is_empty() && removed.is_empty(),
        "{test}: the cluster is not as it was: left {added:?}, gone {removed:?}"
    );
}

/// The names of the cluster-scoped objects a run installs (CRDs, RBAC, webhook configurations,
/// Namespaces).
fn cluster_objects(kubeconfig: &Path) -> Vec<String> {
    let out = std::process::Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args([
            "get",
            "customresourcedefinitions,clusterroles,clusterrolebindings,mutatingwebhookconfigurations,validatingwebhookconfigurations,namespaces",
            "-o",
            "name",
        ])
        .output()
        .expect("kubectl runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    names.sort();
    names
}

/// A provider's manager built from `tools/providers/<name>` (`scripts/providers/build.sh`,
/// cached outside the checkout, one build at a time: a build `.ci/run` started first is waited
/// for) and its module's `config/` in the Go module cache. Without Go, or when the module proxy
/// refuses a module the build needs, `None` after the usual `skipped: …` line on stderr; with
/// `CAPI_CONFORMANCE_REQUIRE_REAL_CLUSTER=1` (CI) a panic instead.
/// `skip`: [`built_provider`] builds nothing and prints its skip line.
pub const MATRIX_ENV: &str = "CAPI_CONFORMANCE_PROVIDER_MATRIX";

pub fn built_provider(name: &str) -> Option<(PathBuf, PathBuf)> {
    use std::io::Write;
    // CI leaves the matrix out unless asked (its cold build does not fit CI's time budget
    // beside the real cluster's: .ci/run, CAPI_CONFORMANCE_PROVIDERS=1).
    if std::env::var(MATRIX_ENV).is_ok_and(|v| v == "skip") {
        let _ = writeln!(
            std::io::stderr(),
            "skipped: {name}: the provider matrix is not built in this run ({MATRIX_ENV}=skip)"
        );
        return None;
    }
    let script = project_root().join("scripts/providers/build.sh");
    let out = std::process::Command::new(&script)
        .arg(name)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
    let stderr = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0) => {}
        // Exit 2: this machine cannot build it (no Go, a module the proxy refuses).
        Some(2) => {
            let why = stderr
                .lines()
                .rev()
                .find(|l| l.starts_with("error:"))
                .unwrap_or("scripts/providers/build.sh exited 2");
            let require = super::real_cluster::REQUIRE_ENV;
            if std::env::var(require).is_ok_and(|v| v == "1") {
                panic!("{name}: no manager ({require}=1): {why}\n{stderr}");
            }
            let _ = writeln!(std::io::stderr(), "skipped: {name}: {why}");
            return None;
        }
        _ => panic!(
            "scripts/providers/build.sh {name} failed ({}):\n{stderr}",
            out.status
        ),
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let field = |key: &str| {
        stdout
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                panic!("scripts/providers/build.sh {name} printed no {key}: {stdout}")
            })
    };
    let (manager, config) = (field("manager="), field("config="));
    assert!(manager.is_file(), "{}", manager.display());
    assert!(config.is_dir(), "{}", config.display());
    Some((manager, config))
}

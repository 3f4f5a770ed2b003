//! Shared helpers: the built binaries, a PATH on which kubectl finds the plugin, and the
//! "not on main yet" probe that lets a test skip (with a printed reason) until a command lands.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

/// The plain binary.
pub fn tool_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_capi-conformance"))
}

/// The kubectl plugin binary.
pub fn plugin_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_kubectl-capi_conformance"))
}

/// The repository root (fixtures, examples, plugins, scripts).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// True when the command failed only because it is not in this build yet.
pub fn not_built(output: &Output) -> bool {
    String::from_utf8_lossy(&output.stderr).contains("is not available in this build yet")
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// The real kubectl with the plugin's directory first on PATH.
pub struct Kubectl {
    kubectl: PathBuf,
    /// Holds only a symlink `kubectl-capi_conformance` → the built plugin (target/debug also
    /// holds `kubectl-capi_conformance.d`, which `kubectl plugin list` would warn about).
    plugin_dir: tempfile::TempDir,
    path: OsString,
}

impl Kubectl {
    /// None (after printing the skip reason) when kubectl is not installed.
    pub fn find(test: &str) -> Option<Self> {
        let Some(kubectl) = find_on_path("kubectl") else {
            eprintln!("skip {test}: no `kubectl` on PATH");
            return None;
        };
        let plugin_dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(
            plugin_bin(),
            plugin_dir.path().join("kubectl-capi_conformance"),
        )
        .unwrap();
        let mut dirs = vec![plugin_dir.path().to_path_buf()];
        if let Some(old) = std::env::var_os("PATH") {
            dirs.extend(std::env::split_paths(&old));
        }
        let path = std::env::join_paths(dirs).unwrap();
        Some(Self {
            kubectl,
            plugin_dir,
            path,
        })
    }

    pub fn plugin_dir(&self) -> &Path {
        self.plugin_dir.path()
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.kubectl);
        command
            .args(args)
            .env("PATH", &self.path)
            .env_remove("KUBECTL_PLUGINS_CALLER")
            .current_dir(repo_root());
        command
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }
}

/// `capi-conformance serve --write-kubeconfig`, killed on drop.
pub struct Served {
    child: Child,
    pub kubeconfig: PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub enum Serve {
    Ready(Served),
    NotBuilt(String),
}

pub fn serve(load: &[PathBuf]) -> Serve {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    let mut child = Command::new(tool_bin())
        .arg("serve")
        .args(
            load.iter()
                .flat_map(|path| [std::ffi::OsStr::new("--load"), path.as_os_str()]),
        )
        .arg("--write-kubeconfig")
        .arg(&kubeconfig)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // serve prints `serving <url> kubeconfig <path>` once the kubeconfig is written.
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        let ready = std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .any(|line| line.starts_with("serving "));
        let _ = tx.send(ready);
    });
    let ready = rx.recv_timeout(Duration::from_secs(60)).unwrap_or(false);
    if ready && is_complete_kubeconfig(&kubeconfig) {
        return Serve::Ready(Served {
            child,
            kubeconfig,
            _dir: dir,
        });
    }
    let _ = child.kill();
    let _ = child.wait();
    let mut err = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        use std::io::Read;
        let _ = pipe.read_to_string(&mut err);
    }
    if err.contains("is not available in this build yet") {
        return Serve::NotBuilt(err.trim().to_string());
    }
    panic!("serve did not get ready in 60s: {err}");
}

fn is_complete_kubeconfig(path: &Path) -> bool {
    current_context(path).is_some()
}

pub fn current_context(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let doc: serde_json::Value = serde_saphyr::from_str(&text).ok()?;
    doc.get("current-context")?.as_str().map(str::to_string)
}

/// The mock provider's CRDs and ClusterRoles (`mock-provider manifests`, the kinds `serve --load`
/// installs) written to `dir`; Err(reason) while `mock-provider` is not on main.
pub fn mock_provider_crds(dir: &Path) -> Result<PathBuf, String> {
    let output = Command::new(tool_bin())
        .args(["mock-provider", "manifests"])
        .output()
        .unwrap();
    if not_built(&output) {
        return Err(stderr(&output).trim().to_string());
    }
    assert!(output.status.success(), "{}", stderr(&output));
    let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(&stdout(&output)).unwrap();
    let wanted: Vec<_> = docs
        .into_iter()
        .filter(|doc| {
            matches!(
                doc.get("kind").and_then(serde_json::Value::as_str),
                Some("CustomResourceDefinition" | "ClusterRole")
            )
        })
        .collect();
    assert!(!wanted.is_empty(), "mock-provider manifests has no CRDs");
    let path = dir.join("mock-provider-crds.yaml");
    std::fs::write(&path, serde_saphyr::to_string_multiple(&wanted).unwrap()).unwrap();
    Ok(path)
}

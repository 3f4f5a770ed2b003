//! Shared helpers: the built binaries, a PATH on which kubectl finds the plugin, and the
//! "not on main yet" probe that lets a test skip (with a printed reason) until a command lands.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

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

//! `scripts/providers/build.sh`'s bad input and refusals: each a one-line `error:` naming what
//! to do, exit 2, nothing on stdout. These build nothing.

use super::shared_data::project_root;
use std::process::{Command, Output};

fn build(args: &[&str], env: &[(&str, &std::path::Path)]) -> Output {
    let mut cmd = Command::new(project_root().join("scripts/providers/build.sh"));
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// The last `error:` line of a failed run.
fn error_line(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .rev()
        .find(|l| l.starts_with("error:"))
        .unwrap_or_default()
        .to_string()
}

#[test]
fn an_unknown_provider_is_named_with_the_known_ones() {
    let out = build(&["no-such-provider"], &[]);
    assert_eq!(out.status.code(), Some(2));
    let line = error_line(&out);
    assert!(
        line.contains("no provider 'no-such-provider'")
            && line.contains("ipam-in-cluster-v1.0")
            && line.contains("ipam-in-cluster-v1.1"),
        "{line}"
    );
    assert!(out.stdout.is_empty());
    // `--list`: every folder of tools/providers with a go.mod, sorted, and nothing else (the
    // README is no provider).
    let list = build(&["--list"], &[]);
    let dir = project_root().join("tools/providers");
    let mut want: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("go.mod").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    want.sort();
    assert!(want.len() >= 8, "{want:?}");
    assert!(want.iter().any(|n| n == "capd-v1.13"), "{want:?}");
    let listed: Vec<&str> = std::str::from_utf8(&list.stdout).unwrap().lines().collect();
    assert_eq!(listed, want);
}

#[test]
fn without_go_it_says_to_install_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = build(
        &["ipam-in-cluster-v1.1"],
        &[
            ("GO", &dir.path().join("no-such-go")),
            ("CAPI_CONFORMANCE_CACHE", dir.path()),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let line = error_line(&out);
    assert!(
        line.contains("no Go toolchain") && line.contains("install Go"),
        "{line}"
    );
    assert!(out.stdout.is_empty());
}

/// A module the proxy does not give (here: no proxy at all and an empty module cache) is named,
/// with where to pin another version.
#[test]
fn a_refused_module_is_named() {
    if Command::new("go").arg("version").output().is_err()
        && !std::path::Path::new("/usr/local/go/bin/go").exists()
    {
        eprintln!("skipped: a_refused_module_is_named: no go");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = build(
        &["ipam-in-cluster-v1.1"],
        &[
            ("GOPROXY", std::path::Path::new("off")),
            ("GOMODCACHE", &dir.path().join("modcache")),
            ("GOCACHE", &dir.path().join("gocache")),
            ("CAPI_CONFORMANCE_CACHE", &dir.path().join("cache")),
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = error_line(&out);
    assert!(
        line.contains("refused a module")
            && line.contains("sigs.k8s.io/cluster-api-ipam-provider-in-cluster@v1.1.0")
            && line.contains("tools/providers/ipam-in-cluster-v1.1/go.mod"),
        "{line}"
    );
    assert!(out.stdout.is_empty());
}

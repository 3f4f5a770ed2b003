//! The real-cluster scripts' bad input: each a one-line error naming what to do, exit 2, never
//! a hang, and nothing left running. These need neither Go nor a built cluster.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scripts/real-cluster")
        .join(name)
}

/// The last `error:` line of a failed script run.
fn error_line(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .rev()
        .find(|l| l.starts_with("error:"))
        .unwrap_or_default()
        .to_string()
}

/// A folder of stand-in binaries: `etcd` runs `etcd_body` (a shell script), the other two exit.
fn fake_bin(dir: &Path, etcd_body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for (name, body) in [
        ("etcd", etcd_body),
        ("kube-apiserver", "exit 1"),
        ("kube-controller-manager", "exit 1"),
    ] {
        let p = bin.join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    bin
}

#[test]
fn build_without_go_says_to_install_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(script("build.sh"))
        .env("GO", dir.path().join("no-such-go"))
        .env("CAPI_CONFORMANCE_CACHE", dir.path())
        .output()
        .unwrap();
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
fn build_with_a_refused_module_names_it() {
    if Command::new("go").arg("version").output().is_err() {
        println!("skipped: build_with_a_refused_module_names_it: no go on PATH");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let out = Command::new(script("build.sh"))
        .env("GOPROXY", "off")
        .env("GOMODCACHE", dir.path().join("modcache"))
        .env("GOCACHE", dir.path().join("gocache"))
        .env("CAPI_CONFORMANCE_CACHE", dir.path().join("cache"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = error_line(&out);
    assert!(
        line.contains("refused a module")
            && line.contains("k8s.io/kubernetes@v1.36.3")
            && line.contains("tools/kube/go.mod"),
        "{line}"
    );
    assert!(started.elapsed() < Duration::from_secs(120));
}

#[test]
fn a_port_in_use_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let bin = fake_bin(dir.path(), "exit 1");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let out = Command::new(script("up.sh"))
        .args(["--bin", bin.to_str().unwrap(), "--port", &port])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let line = error_line(&out);
    assert!(
        line.contains(&format!("port {port}"))
            && line.contains("in use")
            && line.contains("--port"),
        "{line}"
    );
}

/// A cluster that never gets ready ends at the deadline with the log's end, and what it
/// started is stopped.
#[test]
fn a_cluster_that_never_gets_ready_ends_at_its_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("never-ready-{}", std::process::id());
    let bin = fake_bin(
        dir.path(),
        &format!("echo {marker} waiting for peers >&2\nwhile :; do sleep 1; done"),
    );
    let started = Instant::now();
    let out = Command::new(script("up.sh"))
        .args(["--bin", bin.to_str().unwrap(), "--ready-timeout", "2"])
        .output()
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("etcd not ready within 2s"), "{stderr}");
    assert!(stderr.contains(&marker), "the log's end is shown: {stderr}");
    let left = Command::new("pgrep")
        .args(["-f", bin.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        left.stdout.is_empty(),
        "left running: {}",
        String::from_utf8_lossy(&left.stdout)
    );
}

//! `capi-conformance serve` itself: loading manifests, SIGINT, refusing a remote bind.

use crate::support::*;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

/// `serve --load` establishes CRDs before reporting ready; SIGINT shuts it down cleanly.
#[test]
fn serve_loads_manifests_and_stops_on_interrupt() {
    let dir = tempfile::tempdir().unwrap();
    let crd = dir.path().join("crd.yaml");
    std::fs::write(&crd, CRD).unwrap();
    let cm = dir.path().join("cm.yaml");
    std::fs::write(&cm, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: loaded\n  namespace: default\ndata: {a: b}\n").unwrap();
    let kubeconfig = dir.path().join("kc");
    let mut serve = Command::new(env!("CARGO_BIN_EXE_capi-conformance"));
    serve
        .args(["serve", "--addr", "127.0.0.1:0", "--load"])
        .arg(&crd)
        .arg("--load")
        .arg(&cm)
        .arg("--write-kubeconfig")
        .arg(&kubeconfig);
    let child = started(serve);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let kc = kube::config::Kubeconfig::read_from(&kubeconfig).unwrap();
        let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default()).await.unwrap();
        let client = kube::Client::try_from(cfg).unwrap();
        let crds: kube::Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> = kube::Api::all(client.clone());
        let crd = crds.get("widgets.example.com").await.unwrap();
        let conds = crd.status.unwrap().conditions.unwrap();
        assert!(conds.iter().any(|c| c.type_ == "Established" && c.status == "True"));
        let cms: kube::Api<k8s_openapi::api::core::v1::ConfigMap> = kube::Api::default_namespaced(client);
        assert!(cms.get("loaded").await.is_ok());
    });
    stops_cleanly_on_sigint(child);
}

/// SIGINT sent the moment the ready line is read stops `serve` cleanly: the handler is in place
/// before the line is printed (a signal in between would otherwise kill it with status 2).
#[test]
fn serve_stops_on_interrupt_right_after_the_ready_line() {
    for _ in 0..5 {
        let mut serve = Command::new(env!("CARGO_BIN_EXE_capi-conformance"));
        serve.args(["serve", "--addr", "127.0.0.1:0"]);
        stops_cleanly_on_sigint(started(serve));
    }
}

/// `serve` started from `command`, once it has printed its ready line.
fn started(mut command: Command) -> std::process::Child {
    let mut child = command.stdout(Stdio::piped()).spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.starts_with("serving https://"), "{line}");
    child
}

/// Sends SIGINT to `child` and asserts it exits with status 0 within 10 s.
fn stops_cleanly_on_sigint(mut child: std::process::Child) {
    send_sigint(child.id());
    let start = std::time::Instant::now();
    let code = loop {
        if let Some(code) = child.try_wait().unwrap() {
            break code;
        }
        if start.elapsed() >= Duration::from_secs(10) {
            let _ = child.kill();
            panic!("serve did not stop on SIGINT");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(code.success(), "{code:?}");
}

fn send_sigint(pid: u32) {
    let status = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn serve_refuses_remote_bind_without_flag() {
    let out = Command::new(env!("CARGO_BIN_EXE_capi-conformance"))
        .args(["serve", "--addr", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--allow-remote"));
    let out = Command::new(env!("CARGO_BIN_EXE_capi-conformance"))
        .args(["serve", "--faults", "bogus"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

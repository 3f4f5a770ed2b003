//! A `serve` child process with CAPI core and mock CRDs, and the mock as its own process.

use super::common::bin;
use crate::manifests::write_docs;
use capi_conformance::mock::core_crds::core_crd_documents;
use capi_conformance::mock::crds::mock_crds;
use capi_conformance::mock::manifests::{aggregated_cluster_role, manager_cluster_role};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// `serve` plus an out-of-process mock provider; both killed on drop.
pub struct Served {
    serve: Child,
    provider: Child,
    pub kubeconfig: PathBuf,
}

impl Drop for Served {
    fn drop(&mut self) {
        for c in [&mut self.provider, &mut self.serve] {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

pub fn start(dir: &Path) -> Served {
    start_with_faults(dir, None)
}

/// [`start`] with `serve --faults SPEC`.
pub fn start_with_faults(dir: &Path, faults: Option<&str>) -> Served {
    let mut docs: Vec<Value> = mock_crds()
        .unwrap()
        .into_iter()
        .map(|c| serde_json::to_value(c).unwrap())
        .collect();
    docs.push(aggregated_cluster_role());
    docs.push(manager_cluster_role());
    let mock = write_docs(dir, "mock.yaml", &docs);
    let core = write_docs(dir, "core.yaml", &core_crd_documents());
    let kubeconfig = dir.join("kubeconfig");
    let mut serve = Command::new(bin())
        .arg("serve")
        .arg("--write-kubeconfig")
        .arg(&kubeconfig)
        .arg("--load")
        .arg(&mock)
        .arg("--load")
        .arg(&core)
        .args(faults.map(|f| ["--faults", f]).into_iter().flatten())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = serve.stdout.take().unwrap();
    let mut line = String::new();
    BufReader::new(out).read_line(&mut line).unwrap();
    assert!(line.starts_with("serving"), "serve said {line:?}");
    let provider = Command::new(bin())
        .args(["mock-provider", "run", "--kubeconfig"])
        .arg(&kubeconfig)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    Served {
        serve,
        provider,
        kubeconfig,
    }
}

pub async fn client(kubeconfig: &Path) -> kube::Client {
    let kc = kube::config::Kubeconfig::read_from(kubeconfig).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    kube::Client::try_from(config).unwrap()
}

/// `check` (not embedded) against the served cluster: three scenarios, short deadlines.
pub fn spawn_check(kubeconfig: &Path) -> Child {
    Command::new(bin())
        .args(["check", "--progress", "never", "-o", "json"])
        .args(["--timeout", "3s", "--quiet-window", "300ms"])
        .args([
            "--scenarios",
            "SC-infracluster,SC-inframachine,SC-bootstrap",
        ])
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

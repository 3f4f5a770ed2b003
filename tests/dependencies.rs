//! The workspace's architecture, from `cargo metadata`: which of our crates may depend on which
//! (README "How it works"), and what the pure contract crate must never pull in.
//!
//! - `kube-version-order`: no dependency at all.
//! - `embedded-apiserver`: none of our crates but `kube-version-order` (no Cluster API).
//! - `capi-contract`: none of our crates but `kube-version-order`, and nothing async, networked
//!   or command-line in its whole normal dependency tree.
//! - `capi-mock-provider`: `capi-contract` only (never the CLI or the server).
//! - `capi-report` (the report writers): `capi-contract` only, and nothing async, networked or
//!   command-line in its whole normal dependency tree.
//! - `capi-lifecycle` (the lifecycle engine): `capi-contract`, `capi-mock-provider`,
//!   `embedded-apiserver` and `kube-version-order`; never the report writers.
//! - nothing depends on the CLI crate `capi-conformance`.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// The host's target triple, as the cargo that runs the tests names it (`cargo -vV`).
fn host_triple() -> String {
    let out = Command::new(env!("CARGO"))
        .arg("-vV")
        .output()
        .expect("running cargo -vV");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("cargo -vV names the host")
        .trim()
        .to_string()
}

/// `cargo metadata` of this workspace, for the host platform: offline, so only the packages a
/// build here downloaded are needed (a Windows-only crate of the lock file never is).
fn metadata() -> Value {
    let out = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--offline"])
        .args(["--filter-platform", &host_triple()])
        .arg("--manifest-path")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
        .output()
        .expect("running cargo metadata");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON")
}

struct Workspace {
    /// Package id → name, for every package of the resolved graph.
    names: BTreeMap<String, String>,
    /// Names of the workspace members.
    members: BTreeSet<String>,
    /// Package id → ids of its normal (and build) dependencies: what it is built with.
    normal_deps: BTreeMap<String, Vec<String>>,
}

impl Workspace {
    fn read() -> Workspace {
        let m = metadata();
        let names: BTreeMap<String, String> = m["packages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["id"].as_str().unwrap().to_string(),
                    p["name"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let members = m["workspace_members"]
            .as_array()
            .unwrap()
            .iter()
            .map(|id| names[id.as_str().unwrap()].clone())
            .collect();
        let normal_deps = m["resolve"]["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| {
                let deps = n["deps"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|d| {
                        d["dep_kinds"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .any(|k| k["kind"].is_null() || k["kind"] == "build")
                    })
                    .map(|d| d["pkg"].as_str().unwrap().to_string())
                    .collect();
                (n["id"].as_str().unwrap().to_string(), deps)
            })
            .collect();
        Workspace {
            names,
            members,
            normal_deps,
        }
    }

    fn id(&self, name: &str) -> &str {
        self.names
            .iter()
            .find(|(_, n)| n.as_str() == name)
            .map(|(id, _)| id.as_str())
            .unwrap_or_else(|| panic!("{name} is not in the workspace"))
    }

    /// The names of `name`'s direct normal dependencies.
    fn direct(&self, name: &str) -> BTreeSet<String> {
        self.normal_deps[self.id(name)]
            .iter()
            .map(|id| self.names[id].clone())
            .collect()
    }

    /// Our crates `name` depends on directly.
    fn ours(&self, name: &str) -> BTreeSet<String> {
        self.direct(name)
            .into_iter()
            .filter(|d| self.members.contains(d))
            .collect()
    }

    /// Every package in `name`'s normal dependency tree (itself excluded).
    fn tree(&self, name: &str) -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![self.id(name).to_string()];
        while let Some(id) = stack.pop() {
            for d in &self.normal_deps[&id] {
                if seen.insert(d.clone()) {
                    stack.push(d.clone());
                }
            }
        }
        seen.into_iter().map(|id| self.names[&id].clone()).collect()
    }
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

#[test]
fn the_crates_depend_on_each_other_only_downwards() {
    let ws = Workspace::read();
    assert_eq!(
        ws.members,
        set(&[
            "capi-conformance",
            "capi-contract",
            "capi-lifecycle",
            "capi-mock-provider",
            "capi-report",
            "embedded-apiserver",
            "kube-version-order",
        ]),
        "a crate was added or renamed: give it its rule here and in README \"How it works\""
    );
    assert!(ws.direct("kube-version-order").is_empty());
    assert_eq!(ws.ours("embedded-apiserver"), set(&["kube-version-order"]));
    assert_eq!(ws.ours("capi-contract"), set(&["kube-version-order"]));
    assert_eq!(ws.ours("capi-mock-provider"), set(&["capi-contract"]));
    assert_eq!(ws.ours("capi-report"), set(&["capi-contract"]));
    assert_eq!(
        ws.ours("capi-lifecycle"),
        set(&[
            "capi-contract",
            "capi-mock-provider",
            "embedded-apiserver",
            "kube-version-order",
        ])
    );
    assert!(
        !ws.tree("capi-lifecycle").contains("capi-report"),
        "capi-lifecycle depends on the report writers"
    );
    for member in &ws.members {
        assert!(
            !ws.tree(member).contains("capi-conformance"),
            "{member} depends on the CLI crate"
        );
    }
    // The server knows nothing of Cluster API, not even through another crate.
    let server = ws.tree("embedded-apiserver");
    for ours in [
        "capi-contract",
        "capi-mock-provider",
        "capi-lifecycle",
        "capi-report",
        "capi-conformance",
    ] {
        assert!(
            !server.contains(ours),
            "embedded-apiserver depends on {ours}"
        );
    }
}

/// What a pure crate (no async runtime, no network, no Kubernetes client, no command-line
/// parser) must not have in its normal dependency tree.
const IMPURE: [&str; 15] = [
    "tokio",
    "mio",
    "futures",
    "hyper",
    "axum",
    "tower",
    "http",
    "reqwest",
    "kube",
    "kube-client",
    "kube-core",
    "k8s-openapi",
    "rustls",
    "clap",
    "clap_builder",
];

fn impure_in(ws: &Workspace, name: &str) -> (BTreeSet<String>, Vec<&'static str>) {
    let tree = ws.tree(name);
    let found = IMPURE
        .iter()
        .copied()
        .filter(|f| tree.contains(*f))
        .collect();
    (tree, found)
}

#[test]
fn the_contract_crate_is_pure() {
    let ws = Workspace::read();
    let (tree, found) = impure_in(&ws, "capi-contract");
    assert!(
        found.is_empty(),
        "capi-contract pulls in {found:?} (its tree: {tree:?})"
    );
    // It is checked against something: its tree is not empty.
    assert!(tree.contains("serde_json") && tree.contains("kube-version-order"));
}

#[test]
fn the_report_writers_are_pure() {
    let ws = Workspace::read();
    let (tree, found) = impure_in(&ws, "capi-report");
    assert!(
        found.is_empty(),
        "capi-report pulls in {found:?} (its tree: {tree:?})"
    );
    assert!(tree.contains("capi-contract") && tree.contains("comfy-table"));
}

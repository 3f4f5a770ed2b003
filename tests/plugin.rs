//! The tool as users meet it outside `cargo run`: the kubectl plugin (run by the real kubectl),
//! its krew manifest, the GitHub Action (`action.yml`), the CI recipes in `examples/`, and the RBAC
//! it asks a cluster for.

#[path = "plugin/action.rs"]
mod action;
#[path = "plugin/bench_script.rs"]
mod bench_script;
#[path = "plugin/dockerfile.rs"]
mod dockerfile;
#[path = "plugin/examples.rs"]
mod examples;
#[path = "plugin/in_cluster.rs"]
mod in_cluster;
#[path = "plugin/krew.rs"]
mod krew;
#[path = "plugin/kubectl.rs"]
mod kubectl;
#[path = "plugin/least_privilege.rs"]
mod least_privilege;
#[path = "shared/manifests.rs"]
mod manifests;
#[path = "plugin/python_tools.rs"]
mod python_tools;
#[path = "plugin/rbac.rs"]
mod rbac;
#[path = "plugin/sonobuoy.rs"]
mod sonobuoy;
#[path = "plugin/support.rs"]
mod support;

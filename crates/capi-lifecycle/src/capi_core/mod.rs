//! The parts of CAPI core the scenarios' core simulator ([`crate::core_sim`]) builds on
//! (docs/core-simulation.md):
//!
//! - [`conversion`]: `cluster.x-k8s.io` v1beta1 ↔ v1beta2 for Cluster, Machine, MachinePool, as
//!   core's conversion webhook converts;
//! - [`pki`]: the certificates and Secrets an initialized control plane leaves;
//! - [`workload`]: the workload clusters `<cluster>-kubeconfig` points at.

pub mod conversion;
pub mod pki;
pub mod workload;

//! The built-in mock provider: every CAPI provider role for contracts v1beta1 and v1beta2, in its
//! own API groups. CRDs are generated from Rust types; reconcilers are kube-runtime controllers
//! that follow the contract's workflows; each behavioural rule has a named fault. `check` runs it
//! first as the baseline; `mock-provider run` runs it as a controller on a cluster.
//!
//! **Never depends on** the CLI (commands, scenarios, report writers) or the embedded API server:
//! it is a provider, talking to whatever API server its `kube::Client` reaches. It may use the
//! contract crate (roles, contracts, rule ids for its faults).
//!
//! Layout: [`api`] (one Rust type per kind × version) → [`crds`] (kube-derive, both versions
//! merged, `v1beta2` stored) → [`manifests`] (CRDs + RBAC + Deployment); [`core_crds`] (minimal
//! Cluster/Machine/MachinePool for clusters without CAPI); [`reconcile`] (one file per role, common
//! gates in `reconcile/mod.rs`); [`provider`] (the controllers); [`faults`] (fault table).
//!
//! Decisions:
//! - **Which contract an object uses.** Both versions share one storage with conversion `None`,
//!   so a watch cannot tell which version an object was written at. Each controller watches its
//!   kind once (at `v1beta2`) and reads the contract per object from the annotation
//!   `mock.capi-conformance.io/contract: v1beta1|v1beta2`, else from the apiVersion of the
//!   creator's `managedFields` entry, else `v1beta2`. It then reads and writes the object at that
//!   version with that contract's paths only (each version's schema holds only its own contract's
//!   status shape, so writes at the other version would be pruned).
//! - **Core objects** (Cluster, Machine, MachinePool) are read at `cluster.x-k8s.io/v1beta2`,
//!   accepting both spellings of the cluster-infrastructure gate
//!   (`status.initialization.infrastructureProvisioned` or `status.infrastructureReady`).
//! - **Infrastructure** is simulated in memory ([`infra`]): an instance is ready after the
//!   provisioning delay (default 5 ms). The control plane adds one instance per reconcile until
//!   `status.replicas` reaches `spec.replicas`; the machine pool follows the owning MachinePool's
//!   `spec.replicas`.
//! - **Bootstrap** has no finalizer: its Secret carries a controller owner reference, so garbage
//!   collection removes it with the config.
//! - **IPAM**: two pool kinds ([`kinds::IP_POOLS`]: `MockIPPool`, namespaced, and
//!   `MockGlobalIPPool`, cluster-scoped; one version, CRDs from [`crds::mock_ipam_crds`]) and a
//!   controller for CAPI core's IPAddressClaims naming either ([`reconcile::ipam`], addresses
//!   from [`ip_pool`]). Core's IPAM CRDs, for clusters without CAPI, are
//!   [`core_crds::ipam_crd_documents`].
//! - **Faults** are named by rule id ([`FAULTS`]); scenario rules the mock cannot break are listed
//!   in [`faults::NOT_APPLICABLE`] with the reason.

pub mod api;
pub mod backoff;
pub mod cluster_cache;
pub mod conditions;
pub mod core;
pub mod core_crds;
pub mod core_rbac;
pub mod crd_faults;
pub mod crds;
pub mod faults;
pub mod infra;
pub mod ip_pool;
pub mod kinds;
pub mod kubeconfig;
pub mod manifests;
pub mod object;
pub mod options;
pub mod provider;
mod provider_ipam;
pub mod reconcile;
pub mod serving;
mod watching;
pub mod webhook;

pub use faults::{FAULTS, FaultSet};
pub use options::MockOptions;
pub use provider::{MockHandle, MockProvider};

//! The built-in mock provider: every CAPI provider role for contracts v1beta1 and v1beta2, in its
//! own API groups. CRDs are generated from Rust types; reconcilers are kube-runtime controllers
//! that follow the contract's workflows; each behavioural rule has a named fault.

pub mod api;
pub mod conditions;
pub mod core;
pub mod core_crds;
pub mod crds;
pub mod faults;
pub mod infra;
pub mod kinds;
pub mod manifests;
pub mod object;
pub mod options;
pub mod provider;
pub mod reconcile;

pub use faults::{FAULTS, FaultSet};
pub use options::MockOptions;
pub use provider::{MockHandle, MockProvider};

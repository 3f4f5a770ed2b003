//! The mock provider's API types, one Rust type per kind and served version. The CRDs are
//! generated from these with kube-derive (see [`super::crds`]).

// kube-derive takes one `printcolumn(...)` per column; clippy reads the repeated keys as
// duplicated attributes.
#[allow(clippy::duplicated_attributes)]
pub mod bootstrap;
pub mod common;
#[allow(clippy::duplicated_attributes)]
pub mod controlplane;
#[allow(clippy::duplicated_attributes)]
pub mod infrastructure_v1beta1;
#[allow(clippy::duplicated_attributes)]
pub mod infrastructure_v1beta2;
#[allow(clippy::duplicated_attributes)]
pub mod ipam;

/// Infrastructure API group of the mock.
pub const INFRASTRUCTURE_GROUP: &str = "infrastructure.mock.capi-conformance.io";
/// Bootstrap API group of the mock.
pub const BOOTSTRAP_GROUP: &str = "bootstrap.mock.capi-conformance.io";
/// Control plane API group of the mock.
pub const CONTROLPLANE_GROUP: &str = "controlplane.mock.capi-conformance.io";
/// IPAM API group of the mock (its IP pool kind).
pub const IPAM_GROUP: &str = "ipam.mock.capi-conformance.io";
/// The only version of the mock's IPAM group.
pub const IPAM_VERSION: &str = "v1alpha1";

//! The built-in mock provider: manifests, CRDs, and (against the embedded API server) its
//! reconcilers per role × contract and per fault.

mod mock {
    pub mod harness;
    pub mod infra_cluster;
    pub mod infra_machine;
    pub mod manifests;
}

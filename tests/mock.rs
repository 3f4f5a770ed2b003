//! The built-in mock provider: manifests, CRDs, and (against the embedded API server) its
//! reconcilers per role × contract and per fault.

mod mock {
    pub mod bootstrap;
    pub mod catalog;
    pub mod control_plane;
    pub mod faults_bootstrap;
    pub mod faults_control_plane;
    pub mod faults_infra_cluster;
    pub mod faults_infra_machine;
    pub mod faults_machine_pool;
    pub mod faults_templates;
    pub mod harness;
    pub mod infra_cluster;
    pub mod infra_machine;
    pub mod ipam;
    pub mod isolation;
    pub mod machine_pool;
    pub mod manifests;
    pub mod process;
}

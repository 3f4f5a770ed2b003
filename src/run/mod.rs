//! The run stage: executes a plan on a cluster or on the embedded server.

pub mod access;
pub mod cluster;
pub mod cluster_baseline;
pub mod embedded;
pub mod interrupt;
pub mod private_file;
pub mod progress;

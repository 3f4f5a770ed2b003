//! CAPI's own managers (v1.11.11, `../shared/providers/capi-v1.11.11`), run unchanged through
//! `check --embedded --crds <their components> --provider-cmd '<manager> …'`: the verdicts a
//! provider team gets for a real Go manager. Each test decompresses its manager into
//! a temporary directory, and prints the usual skip line without `../shared`.

#[path = "shared/shared_data.rs"]
mod shared_data;

#[path = "managers/support.rs"]
mod support;

#[path = "support/real_cluster.rs"]
mod real_cluster;

#[path = "managers/cabpk.rs"]
mod cabpk;
#[path = "managers/capd.rs"]
mod capd;
#[path = "managers/core_reference.rs"]
mod core_reference;
#[path = "managers/ipam_in_cluster.rs"]
mod ipam_in_cluster;
#[path = "managers/kcp.rs"]
mod kcp;
#[path = "managers/providers_build.rs"]
mod providers_build;
#[path = "managers/rke2.rs"]
mod rke2;

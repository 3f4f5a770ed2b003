//! `check` against a real management cluster (kube-apiserver, etcd and kube-controller-manager
//! built from Go modules, `tests/support/real_cluster.rs`), as a provider team runs it:
//! `check --kubeconfig … --crds … --provider-cmd '…'`. Each test prints its skip line on a
//! machine without Go or the module proxy, and fails there with
//! `CAPI_CONFORMANCE_REQUIRE_REAL_CLUSTER=1` (set by `.ci/run`).

#[path = "support/real_cluster.rs"]
mod cluster;

#[path = "real_cluster/support.rs"]
mod support;

#[path = "real_cluster/differential.rs"]
mod differential;
#[path = "real_cluster/mock.rs"]
mod mock;
#[path = "real_cluster/reliability.rs"]
mod reliability;
#[path = "real_cluster/scripts.rs"]
mod scripts;

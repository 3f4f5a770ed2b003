//! `ipam.mock.capi-conformance.io/v1alpha1`: the mock's IP address pools (CAPI's IPAM provider
//! contract): `MockIPPool`, namespaced, and `MockGlobalIPPool`, cluster-scoped (as the in-cluster
//! IPAM provider's `GlobalInClusterIPPool`: claims of any namespace take addresses from it). One
//! version only: the IPAM contract has no versioned shapes, and real IPAM CRDs carry no
//! `cluster.x-k8s.io/<contract>` labels.

use super::common::ConditionV1Beta2;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Desired state of a MockIPPool: the addresses it hands out to IPAddressClaims.
#[derive(CustomResource, Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "ipam.mock.capi-conformance.io",
    version = "v1alpha1",
    kind = "MockIPPool",
    plural = "mockippools",
    namespaced,
    status = "MockIPPoolStatus",
    category = "cluster-api",
    printcolumn(
        name = "Total",
        type_ = "integer",
        json_path = ".status.ipAddresses.total"
    ),
    printcolumn(
        name = "Free",
        type_ = "integer",
        json_path = ".status.ipAddresses.free"
    ),
    printcolumn(
        name = "Used",
        type_ = "integer",
        json_path = ".status.ipAddresses.used"
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct MockIPPoolSpec {
    /// Addresses of the pool: single IPs, ranges `a-b` or CIDRs, IPv4 or IPv6 (one family).
    #[serde(default)]
    pub addresses: Vec<String>,
    /// Prefix length of the network the addresses belong to.
    #[schemars(range(min = 0, max = 128))]
    pub prefix: i32,
    /// Gateway of that network (never handed out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway: Option<String>,
}

/// Observed state of a MockIPPool.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MockIPPoolStatus {
    /// metav1 conditions; `Ready` summarises whether the spec is usable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<ConditionV1Beta2>>,
    /// Address counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip_addresses: Option<MockIPPoolAddresses>,
}

/// How many addresses a MockIPPool has, hands out and has left.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MockIPPoolAddresses {
    /// Addresses of the pool (the gateway excluded).
    pub total: i64,
    /// Addresses held by an IPAddress of the pool.
    pub used: i64,
    /// `total - used`.
    pub free: i64,
}

/// Desired state of a MockGlobalIPPool: a cluster-scoped pool, the same fields as a MockIPPool's
/// (the IPAM contract allows pools of either scope).
#[derive(CustomResource, Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "ipam.mock.capi-conformance.io",
    version = "v1alpha1",
    kind = "MockGlobalIPPool",
    plural = "mockglobalippools",
    status = "MockIPPoolStatus",
    category = "cluster-api",
    printcolumn(
        name = "Total",
        type_ = "integer",
        json_path = ".status.ipAddresses.total"
    ),
    printcolumn(
        name = "Free",
        type_ = "integer",
        json_path = ".status.ipAddresses.free"
    ),
    printcolumn(
        name = "Used",
        type_ = "integer",
        json_path = ".status.ipAddresses.used"
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct MockGlobalIPPoolSpec {
    /// Addresses of the pool: single IPs, ranges `a-b` or CIDRs, IPv4 or IPv6 (one family).
    #[serde(default)]
    pub addresses: Vec<String>,
    /// Prefix length of the network the addresses belong to.
    #[schemars(range(min = 0, max = 128))]
    pub prefix: i32,
    /// Gateway of that network (never handed out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway: Option<String>,
}

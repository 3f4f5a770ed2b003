//! `infrastructure.mock.capi-conformance.io/v1beta2`: contract v1beta2 shapes.
//!
//! Mirrors `infrastructure_v1beta1.rs` on purpose: each contract's shapes are spelt out whole, as
//! a provider's Go types are, so the two read side by side (the duplication is the point).

use super::common::{
    ApiEndpointV1Beta2, ConditionV1Beta2, FailureDomainV1Beta2, InfrastructureInitialization,
    IpPoolReference, MachineAddress, TemplateMeta,
};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Desired state of a MockCluster.
#[derive(CustomResource, Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "infrastructure.mock.capi-conformance.io",
    version = "v1beta2",
    kind = "MockCluster",
    namespaced,
    status = "MockClusterStatus",
    category = "cluster-api",
    printcolumn(
        name = "Cluster",
        type_ = "string",
        json_path = ".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']"
    ),
    printcolumn(
        name = "Provisioned",
        type_ = "boolean",
        json_path = ".status.initialization.provisioned"
    ),
    printcolumn(
        name = "Endpoint",
        type_ = "string",
        json_path = ".spec.controlPlaneEndpoint.host"
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct MockClusterSpec {
    /// Endpoint of the workload cluster's API server (set by the mock when empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_plane_endpoint: Option<ApiEndpointV1Beta2>,
}

/// Observed state of a MockCluster (contract v1beta2).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MockClusterStatus {
    /// Initialization progress; `provisioned` is the contract's ready signal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initialization: Option<InfrastructureInitialization>,
    /// Failure domains.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    pub failure_domains: Option<Vec<FailureDomainV1Beta2>>,
    /// metav1 conditions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<ConditionV1Beta2>>,
}

/// Desired state of a MockClusterTemplate.
#[derive(CustomResource, Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "infrastructure.mock.capi-conformance.io",
    version = "v1beta2",
    kind = "MockClusterTemplate",
    namespaced,
    category = "cluster-api",
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
pub struct MockClusterTemplateSpec {
    /// The object cloned into a MockCluster.
    pub template: MockClusterTemplateResource,
}

/// Template body of a MockClusterTemplate.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MockClusterTemplateResource {
    /// Metadata for the cloned object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<TemplateMeta>,
    /// Spec of the cloned object.
    pub spec: MockClusterSpec,
}

/// Desired state of a MockMachine.
#[derive(CustomResource, Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "infrastructure.mock.capi-conformance.io",
    version = "v1beta2",
    kind = "MockMachine",
    namespaced,
    status = "MockMachineStatus",
    category = "cluster-api",
    printcolumn(
        name = "Cluster",
        type_ = "string",
        json_path = ".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']"
    ),
    printcolumn(name = "ProviderID", type_ = "string", json_path = ".spec.providerID"),
    printcolumn(
        name = "Provisioned",
        type_ = "boolean",
        json_path = ".status.initialization.provisioned"
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct MockMachineSpec {
    /// Identifier of the simulated instance, `mock://<namespace>/<name>/<uid-prefix>`.
    #[serde(
        default,
        rename = "providerID",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(length(min = 1, max = 512))]
    pub provider_id: Option<String>,
    /// Pools to claim one address each from (an IPAddressClaim per pool, owned by the
    /// machine); provisioning waits until every claim has its address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 8))]
    pub addresses_from_pools: Option<Vec<IpPoolReference>>,
}

/// Observed state of a MockMachine (contract v1beta2).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MockMachineStatus {
    /// Initialization progress; `provisioned` is the contract's ready signal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initialization: Option<InfrastructureInitialization>,
    /// Addresses of the instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 256))]
    pub addresses: Option<Vec<MachineAddress>>,
    /// Failure domain the instance was placed in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 256))]
    pub failure_domain: Option<String>,
    /// metav1 conditions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<ConditionV1Beta2>>,
}

/// Desired state of a MockMachineTemplate.
#[derive(CustomResource, Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "infrastructure.mock.capi-conformance.io",
    version = "v1beta2",
    kind = "MockMachineTemplate",
    namespaced,
    category = "cluster-api",
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
pub struct MockMachineTemplateSpec {
    /// The object cloned into a MockMachine.
    pub template: MockMachineTemplateResource,
}

/// Template body of a MockMachineTemplate.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MockMachineTemplateResource {
    /// Metadata for the cloned object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<TemplateMeta>,
    /// Spec of the cloned object.
    pub spec: MockMachineSpec,
}

/// Desired state of a MockMachinePool.
#[derive(CustomResource, Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "infrastructure.mock.capi-conformance.io",
    version = "v1beta2",
    kind = "MockMachinePool",
    namespaced,
    status = "MockMachinePoolStatus",
    category = "cluster-api",
    scale(
        spec_replicas_path = ".spec.replicas",
        status_replicas_path = ".status.replicas",
        label_selector_path = ".status.selector"
    ),
    printcolumn(
        name = "Cluster",
        type_ = "string",
        json_path = ".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']"
    ),
    printcolumn(name = "Replicas", type_ = "integer", json_path = ".status.replicas"),
    printcolumn(name = "Ready", type_ = "boolean", json_path = ".status.ready"),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct MockMachinePoolSpec {
    /// Identifier of the simulated pool.
    #[serde(
        default,
        rename = "providerID",
        skip_serializing_if = "Option::is_none"
    )]
    pub provider_id: Option<String>,
    /// Provider IDs of the pool's instances.
    #[serde(
        default,
        rename = "providerIDList",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(length(max = 10000))]
    pub provider_id_list: Option<Vec<String>>,
    /// Instance count when the owning MachinePool does not set one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Create one MockMachine per instance (MachinePool Machines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_pool_machines: Option<bool>,
}

/// Observed state of a MockMachinePool (contract v1beta2).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MockMachinePoolStatus {
    /// True once the pool's instances are provisioned (what core reads for machine pools).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<bool>,
    /// Initialization progress; `provisioned` is the contract's ready signal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initialization: Option<InfrastructureInitialization>,
    /// Observed instance count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Label selector of the pool's instances (scale subresource).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    /// Kind of the per-instance objects (MachinePool Machines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub infrastructure_machine_kind: Option<String>,
    /// metav1 conditions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<ConditionV1Beta2>>,
}

/// Desired state of a MockMachinePoolTemplate.
#[derive(CustomResource, Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "infrastructure.mock.capi-conformance.io",
    version = "v1beta2",
    kind = "MockMachinePoolTemplate",
    namespaced,
    category = "cluster-api",
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
pub struct MockMachinePoolTemplateSpec {
    /// The object cloned into a MockMachinePool.
    pub template: MockMachinePoolTemplateResource,
}

/// Template body of a MockMachinePoolTemplate.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MockMachinePoolTemplateResource {
    /// Metadata for the cloned object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<TemplateMeta>,
    /// Spec of the cloned object.
    pub spec: MockMachinePoolSpec,
}

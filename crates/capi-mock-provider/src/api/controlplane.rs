//! `controlplane.mock.capi-conformance.io`: MockControlPlane and MockControlPlaneTemplate at both
//! served versions.
//!
//! Its `v1beta1` and `v1beta2` modules mirror each other (and the other kinds' modules) on
//! purpose: each contract's shapes are spelt out whole, as a provider's Go types are.

/// Contract v1beta1 shapes.
pub mod v1beta1 {
    use crate::api::common::{ApiEndpointV1Beta1, ConditionV1Beta1, TemplateMeta};
    use kube::CustomResource;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    /// Desired state of a MockControlPlane.
    #[derive(
        CustomResource, Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema,
    )]
    #[kube(
        group = "controlplane.mock.capi-conformance.io",
        version = "v1beta1",
        kind = "MockControlPlane",
        namespaced,
        status = "MockControlPlaneStatus",
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
        printcolumn(
            name = "Initialized",
            type_ = "boolean",
            json_path = ".status.initialized"
        ),
        printcolumn(name = "Replicas", type_ = "integer", json_path = ".status.replicas"),
        printcolumn(name = "Version", type_ = "string", json_path = ".spec.version"),
        printcolumn(
            name = "Age",
            type_ = "date",
            json_path = ".metadata.creationTimestamp"
        )
    )]
    #[serde(rename_all = "camelCase")]
    pub struct MockControlPlaneSpec {
        /// Desired number of control plane instances.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub replicas: Option<i32>,
        /// Kubernetes version, semver with a leading `v`.
        pub version: String,
        /// Endpoint of the workload cluster's API server (set by the mock when empty).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub control_plane_endpoint: Option<ApiEndpointV1Beta1>,
        /// Template for control plane machines.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub machine_template: Option<MockControlPlaneMachineTemplate>,
    }

    /// Contract v1beta1 `spec.machineTemplate`.
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "camelCase")]
    pub struct MockControlPlaneMachineTemplate {
        /// Metadata propagated to control plane machines.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub metadata: Option<TemplateMeta>,
        /// Infrastructure template the machines are cloned from.
        pub infrastructure_ref: ObjectReference,
        /// Drain timeout (duration string).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub node_drain_timeout: Option<String>,
        /// Volume detach timeout (duration string).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub node_volume_detach_timeout: Option<String>,
        /// Node deletion timeout (duration string).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub node_deletion_timeout: Option<String>,
    }

    /// A v1beta1 object reference.
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "camelCase")]
    pub struct ObjectReference {
        /// API version of the referent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub api_version: Option<String>,
        /// Kind of the referent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub kind: Option<String>,
        /// Name of the referent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub name: Option<String>,
        /// Namespace of the referent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub namespace: Option<String>,
    }

    /// Observed state of a MockControlPlane (contract v1beta1).
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "camelCase")]
    pub struct MockControlPlaneStatus {
        /// True once the API server accepts requests.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub initialized: Option<bool>,
        /// True once the control plane is fully operational.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub ready: Option<bool>,
        /// Observed number of instances.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub replicas: Option<i32>,
        /// Instances at the desired spec.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub updated_replicas: Option<i32>,
        /// Ready instances.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub ready_replicas: Option<i32>,
        /// Unavailable instances.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub unavailable_replicas: Option<i32>,
        /// Label selector of the instances (scale subresource).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub selector: Option<String>,
        /// Lowest Kubernetes version running.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub version: Option<String>,
        /// True when the control plane has no Nodes.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub external_managed_control_plane: Option<bool>,
        /// Terminal failure reason.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub failure_reason: Option<String>,
        /// Terminal failure message.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub failure_message: Option<String>,
        /// CAPI v1beta1 conditions.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub conditions: Option<Vec<ConditionV1Beta1>>,
    }

    /// Desired state of a MockControlPlaneTemplate.
    #[derive(
        CustomResource, Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema,
    )]
    #[kube(
        group = "controlplane.mock.capi-conformance.io",
        version = "v1beta1",
        kind = "MockControlPlaneTemplate",
        namespaced,
        category = "cluster-api",
        printcolumn(
            name = "Age",
            type_ = "date",
            json_path = ".metadata.creationTimestamp"
        )
    )]
    pub struct MockControlPlaneTemplateSpec {
        /// The object cloned into a MockControlPlane.
        pub template: MockControlPlaneTemplateResource,
    }

    /// Template body of a MockControlPlaneTemplate.
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
    pub struct MockControlPlaneTemplateResource {
        /// Metadata for the cloned object.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub metadata: Option<TemplateMeta>,
        /// Spec of the cloned object.
        pub spec: MockControlPlaneSpec,
    }
}

/// Contract v1beta2 shapes.
pub mod v1beta2 {
    use crate::api::common::{ApiEndpointV1Beta2, ConditionV1Beta2, TemplateMeta};
    use kube::CustomResource;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    /// Desired state of a MockControlPlane.
    #[derive(
        CustomResource, Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema,
    )]
    #[kube(
        group = "controlplane.mock.capi-conformance.io",
        version = "v1beta2",
        kind = "MockControlPlane",
        namespaced,
        status = "MockControlPlaneStatus",
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
        printcolumn(
            name = "Initialized",
            type_ = "boolean",
            json_path = ".status.initialization.controlPlaneInitialized"
        ),
        printcolumn(name = "Replicas", type_ = "integer", json_path = ".status.replicas"),
        printcolumn(name = "Version", type_ = "string", json_path = ".spec.version"),
        printcolumn(
            name = "Age",
            type_ = "date",
            json_path = ".metadata.creationTimestamp"
        )
    )]
    #[serde(rename_all = "camelCase")]
    pub struct MockControlPlaneSpec {
        /// Desired number of control plane instances.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub replicas: Option<i32>,
        /// Kubernetes version, semver with a leading `v`.
        #[schemars(length(min = 1, max = 256))]
        pub version: String,
        /// Endpoint of the workload cluster's API server (set by the mock when empty).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub control_plane_endpoint: Option<ApiEndpointV1Beta2>,
        /// Template for control plane machines.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub machine_template: Option<MockControlPlaneMachineTemplate>,
    }

    /// Contract v1beta2 `spec.machineTemplate`.
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
    pub struct MockControlPlaneMachineTemplate {
        /// Metadata propagated to control plane machines.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub metadata: Option<TemplateMeta>,
        /// Machine spec fields owned by the control plane.
        pub spec: MockControlPlaneMachineTemplateSpec,
    }

    /// Contract v1beta2 `spec.machineTemplate.spec`.
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "camelCase")]
    pub struct MockControlPlaneMachineTemplateSpec {
        /// Infrastructure template the machines are cloned from.
        pub infrastructure_ref: ContractVersionedObjectReference,
        /// Deletion timeouts.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub deletion: Option<MachineDeletionSpec>,
    }

    /// A v1beta2 reference by API group, kind and name.
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "camelCase")]
    pub struct ContractVersionedObjectReference {
        /// API group of the referent.
        pub api_group: String,
        /// Kind of the referent.
        pub kind: String,
        /// Name of the referent.
        pub name: String,
    }

    /// Contract v1beta2 machine deletion timeouts.
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "camelCase")]
    pub struct MachineDeletionSpec {
        /// Drain timeout in seconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(range(min = 0))]
        pub node_drain_timeout_seconds: Option<i32>,
        /// Volume detach timeout in seconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(range(min = 0))]
        pub node_volume_detach_timeout_seconds: Option<i32>,
        /// Node deletion timeout in seconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(range(min = 0))]
        pub node_deletion_timeout_seconds: Option<i32>,
    }

    /// Contract v1beta2 `status.initialization` of a control plane.
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "camelCase")]
    #[schemars(extend("minProperties" = 1))]
    pub struct MockControlPlaneInitialization {
        /// True once the API server accepts requests.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub control_plane_initialized: Option<bool>,
    }

    /// One entry of `status.versions` (oldest first).
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
    pub struct StatusVersion {
        /// Kubernetes version.
        #[schemars(length(min = 1, max = 256))]
        pub version: String,
        /// Instances running this version.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(range(min = 1))]
        pub replicas: Option<i32>,
    }

    /// Observed state of a MockControlPlane (contract v1beta2).
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "camelCase")]
    pub struct MockControlPlaneStatus {
        /// Initialization progress.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub initialization: Option<MockControlPlaneInitialization>,
        /// Observed number of instances.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub replicas: Option<i32>,
        /// Instances with Ready=True.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub ready_replicas: Option<i32>,
        /// Instances with Available=True.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub available_replicas: Option<i32>,
        /// Instances with UpToDate=True.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub up_to_date_replicas: Option<i32>,
        /// Label selector of the instances (scale subresource).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub selector: Option<String>,
        /// Kubernetes versions running, oldest first.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub versions: Option<Vec<StatusVersion>>,
        /// True when the control plane has no Nodes.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub external_managed_control_plane: Option<bool>,
        /// metav1 conditions.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub conditions: Option<Vec<ConditionV1Beta2>>,
    }

    /// Desired state of a MockControlPlaneTemplate.
    #[derive(
        CustomResource, Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema,
    )]
    #[kube(
        group = "controlplane.mock.capi-conformance.io",
        version = "v1beta2",
        kind = "MockControlPlaneTemplate",
        namespaced,
        category = "cluster-api",
        printcolumn(
            name = "Age",
            type_ = "date",
            json_path = ".metadata.creationTimestamp"
        )
    )]
    pub struct MockControlPlaneTemplateSpec {
        /// The object cloned into a MockControlPlane.
        pub template: MockControlPlaneTemplateResource,
    }

    /// Template body of a MockControlPlaneTemplate.
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
    pub struct MockControlPlaneTemplateResource {
        /// Metadata for the cloned object.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub metadata: Option<TemplateMeta>,
        /// Spec of the cloned object.
        pub spec: MockControlPlaneSpec,
    }
}

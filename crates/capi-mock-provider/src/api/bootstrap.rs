//! `bootstrap.mock.capi-conformance.io`: MockConfig and MockConfigTemplate at both served versions.
//!
//! Its `v1beta1` and `v1beta2` modules mirror each other (and the other kinds' modules) on
//! purpose: each contract's shapes are spelt out whole, as a provider's Go types are.

/// Contract v1beta1 shapes.
pub mod v1beta1 {
    use crate::api::common::{ConditionV1Beta1, TemplateMeta};
    use kube::CustomResource;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    /// Desired state of a MockConfig.
    #[derive(
        CustomResource, Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema,
    )]
    #[kube(
        group = "bootstrap.mock.capi-conformance.io",
        version = "v1beta1",
        kind = "MockConfig",
        namespaced,
        status = "MockConfigStatus",
        category = "cluster-api",
        printcolumn(
            name = "Cluster",
            type_ = "string",
            json_path = ".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']"
        ),
        printcolumn(
            name = "DataSecretName",
            type_ = "string",
            json_path = ".status.dataSecretName"
        ),
        printcolumn(name = "Ready", type_ = "boolean", json_path = ".status.ready"),
        printcolumn(
            name = "Age",
            type_ = "date",
            json_path = ".metadata.creationTimestamp"
        )
    )]
    pub struct MockConfigSpec {
        /// Bootstrap payload written to the data Secret (a default script when empty).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub payload: Option<String>,
    }

    /// Observed state of a MockConfig (contract v1beta1).
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "camelCase")]
    pub struct MockConfigStatus {
        /// True once the data Secret exists.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub ready: Option<bool>,
        /// Name of the Secret holding the bootstrap data.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub data_secret_name: Option<String>,
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

    /// Desired state of a MockConfigTemplate.
    #[derive(
        CustomResource, Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema,
    )]
    #[kube(
        group = "bootstrap.mock.capi-conformance.io",
        version = "v1beta1",
        kind = "MockConfigTemplate",
        namespaced,
        category = "cluster-api",
        printcolumn(
            name = "Age",
            type_ = "date",
            json_path = ".metadata.creationTimestamp"
        )
    )]
    pub struct MockConfigTemplateSpec {
        /// The object cloned into a MockConfig.
        pub template: MockConfigTemplateResource,
    }

    /// Template body of a MockConfigTemplate.
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
    pub struct MockConfigTemplateResource {
        /// Metadata for the cloned object.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub metadata: Option<TemplateMeta>,
        /// Spec of the cloned object.
        pub spec: MockConfigSpec,
    }
}

/// Contract v1beta2 shapes.
pub mod v1beta2 {
    use crate::api::common::{ConditionV1Beta2, TemplateMeta};
    use kube::CustomResource;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    /// Desired state of a MockConfig.
    #[derive(
        CustomResource, Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema,
    )]
    #[kube(
        group = "bootstrap.mock.capi-conformance.io",
        version = "v1beta2",
        kind = "MockConfig",
        namespaced,
        status = "MockConfigStatus",
        category = "cluster-api",
        printcolumn(
            name = "Cluster",
            type_ = "string",
            json_path = ".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']"
        ),
        printcolumn(
            name = "DataSecretName",
            type_ = "string",
            json_path = ".status.dataSecretName"
        ),
        printcolumn(
            name = "Created",
            type_ = "boolean",
            json_path = ".status.initialization.dataSecretCreated"
        ),
        printcolumn(
            name = "Age",
            type_ = "date",
            json_path = ".metadata.creationTimestamp"
        )
    )]
    pub struct MockConfigSpec {
        /// Bootstrap payload written to the data Secret (a default script when empty).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub payload: Option<String>,
    }

    /// Contract v1beta2 `status.initialization` of a bootstrap config.
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "camelCase")]
    #[schemars(extend("minProperties" = 1))]
    pub struct MockConfigInitialization {
        /// True once the data Secret exists.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub data_secret_created: Option<bool>,
    }

    /// Observed state of a MockConfig (contract v1beta2).
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "camelCase")]
    pub struct MockConfigStatus {
        /// Initialization progress; `dataSecretCreated` is the contract's ready signal.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub initialization: Option<MockConfigInitialization>,
        /// Name of the Secret holding the bootstrap data.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(length(min = 1, max = 253))]
        pub data_secret_name: Option<String>,
        /// metav1 conditions.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub conditions: Option<Vec<ConditionV1Beta2>>,
    }

    /// Desired state of a MockConfigTemplate.
    #[derive(
        CustomResource, Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema,
    )]
    #[kube(
        group = "bootstrap.mock.capi-conformance.io",
        version = "v1beta2",
        kind = "MockConfigTemplate",
        namespaced,
        category = "cluster-api",
        printcolumn(
            name = "Age",
            type_ = "date",
            json_path = ".metadata.creationTimestamp"
        )
    )]
    pub struct MockConfigTemplateSpec {
        /// The object cloned into a MockConfig.
        pub template: MockConfigTemplateResource,
    }

    /// Template body of a MockConfigTemplate.
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
    pub struct MockConfigTemplateResource {
        /// Metadata for the cloned object.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub metadata: Option<TemplateMeta>,
        /// Spec of the cloned object.
        pub spec: MockConfigSpec,
    }
}

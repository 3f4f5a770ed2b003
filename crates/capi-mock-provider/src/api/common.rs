//! Field shapes shared by the mock's kinds, one type per contract shape.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Contract v1beta1 `spec.controlPlaneEndpoint`: both keys always serialised.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ApiEndpointV1Beta1 {
    /// Host name or IP of the control plane endpoint.
    pub host: String,
    /// Port of the control plane endpoint.
    pub port: i32,
}

/// Contract v1beta2 `spec.controlPlaneEndpoint`: omitempty, at least one key.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(extend("minProperties" = 1))]
pub struct ApiEndpointV1Beta2 {
    /// Host name or IP of the control plane endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
    pub host: Option<String>,
    /// Port of the control plane endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 65535))]
    pub port: Option<i32>,
}

/// CAPI v1beta1 condition (with severity, no observedGeneration).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConditionV1Beta1 {
    /// Condition type, e.g. `Ready`.
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// `Error`, `Warning` or `Info` (only when status is False).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<String>,
    /// RFC 3339 time of the last status change.
    pub last_transition_time: String,
    /// CamelCase reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Human-readable message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// `metav1.Condition`, as used by contract v1beta2.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConditionV1Beta2 {
    /// Condition type, e.g. `Ready`.
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// Generation the condition was computed for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// RFC 3339 time of the last status change.
    pub last_transition_time: String,
    /// CamelCase reason.
    pub reason: String,
    /// Human-readable message.
    pub message: String,
}

/// Labels and annotations copied onto objects cloned from a template.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TemplateMeta {
    /// Labels for the cloned object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    /// Annotations for the cloned object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
}

/// Kinds of machine address (the Machine schema's enum).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum MachineAddressType {
    Hostname,
    ExternalIP,
    InternalIP,
    ExternalDNS,
    InternalDNS,
}

/// One address of a machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MachineAddress {
    /// Kind of address.
    #[serde(rename = "type")]
    pub type_: MachineAddressType,
    /// The address.
    #[schemars(length(min = 1, max = 256))]
    pub address: String,
}

/// An IP address pool an InfraMachine claims an address from (the IPAM contract's
/// infrastructure side: the claim's `spec.poolRef`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IpPoolReference {
    /// API group of the pool kind.
    #[schemars(length(min = 1, max = 253))]
    pub api_group: String,
    /// Kind of the pool.
    #[schemars(length(min = 1, max = 63))]
    pub kind: String,
    /// Name of the pool, in the machine's namespace.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
}

/// Contract v1beta1 failure domain (value of the `status.failureDomains` map).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FailureDomainSpecV1Beta1 {
    /// Whether control-plane machines may be placed here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_plane: Option<bool>,
    /// Free-form attributes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attributes: Option<BTreeMap<String, String>>,
}

/// Contract v1beta2 failure domain (item of the `status.failureDomains` array).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FailureDomainV1Beta2 {
    /// Unique name of the failure domain.
    #[schemars(length(min = 1, max = 256))]
    pub name: String,
    /// Whether control-plane machines may be placed here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_plane: Option<bool>,
    /// Free-form attributes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attributes: Option<BTreeMap<String, String>>,
}

/// Contract v1beta2 `status.initialization` of infrastructure kinds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(extend("minProperties" = 1))]
pub struct InfrastructureInitialization {
    /// True once the infrastructure is provisioned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provisioned: Option<bool>,
}

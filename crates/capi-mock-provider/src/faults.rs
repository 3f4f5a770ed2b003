//! Named faults: each makes the mock break exactly one behavioural (scenario) rule. A fault is
//! named by the id of the rule it breaks and is switched on per object with the annotation
//! [`FAULT_ANNOTATION`] (comma-separated) or provider-wide with `--faults`.

use capi_contract::rule_ids::{self as id, RuleId};
use kube::core::DynamicObject;
use std::collections::BTreeSet;

/// Annotation listing the faults for one object.
pub const FAULT_ANNOTATION: &str = "mock.capi-conformance.io/fault";

/// Every fault: (rule id, what the mock does wrong). The template admission faults live in the
/// CRDs ([`super::crd_faults`]): provider-wide only.
pub const FAULTS: &[(RuleId, &str)] = &[
    (
        id::all::CONVERSION_LOSSLESS,
        "webhook mode: conversion keeps nothing of what the other version cannot say, so a round trip loses it",
    ),
    (
        id::all::DEFAULTING_ADMITTED,
        "webhook mode: defaults a MockControlPlane's spec.replicas to 0, which its own validation rejects",
    ),
    (
        id::all::PAUSE,
        "keeps reconciling (provisions, patches status) while the Cluster or the object is paused",
    ),
    (
        id::all::PAUSED_CONDITION,
        "never writes the Paused condition (contract v1beta2)",
    ),
    (
        id::all::READY_CONDITION_LIFECYCLE,
        "drops the Ready condition when deletion starts (bootstrap: first status write has no Ready)",
    ),
    (
        id::infra_cluster::OWNER_GATE,
        "reconciles the MockCluster before it has a Cluster owner reference",
    ),
    (id::infra_cluster::FINALIZER, "never adds its finalizer"),
    (
        id::infra_cluster::PROVISIONED,
        "never sets the provisioned flag (b1 status.ready, b2 status.initialization.provisioned)",
    ),
    (
        id::infra_cluster::PROVISIONED_STICKY,
        "flips the provisioned flag back to false on the reconcile after setting it",
    ),
    (
        id::infra_cluster::CONTROL_PLANE_ENDPOINT,
        "reports provisioned without ever setting spec.controlPlaneEndpoint",
    ),
    (
        id::infra_cluster::FAILURE_DOMAINS,
        "reports failure domains with duplicate names (b2 array) or an empty map (b1)",
    ),
    (
        id::infra_cluster::READY_CONDITION,
        "never writes the Ready condition",
    ),
    (
        id::infra_cluster::EXTERNALLY_MANAGED,
        "reconciles objects annotated cluster.x-k8s.io/managed-by",
    ),
    (
        id::infra_cluster::DELETE,
        "never removes its finalizer, so deletion never completes",
    ),
    (
        id::infra_machine::OWNER_GATE,
        "reconciles the MockMachine before it has a Machine controller owner reference",
    ),
    (id::infra_machine::FINALIZER, "never adds its finalizer"),
    (
        id::infra_machine::CLUSTER_LOOKUP,
        "provisions even when the Cluster named by cluster.x-k8s.io/cluster-name does not exist",
    ),
    (
        id::infra_machine::CLUSTER_INFRA_GATE,
        "provisions before the Cluster's infrastructure is provisioned",
    ),
    (
        id::infra_machine::BOOTSTRAP_GATE,
        "provisions before the Machine's spec.bootstrap.dataSecretName is set",
    ),
    (
        id::infra_machine::FAILURE_GATE,
        "keeps provisioning after status.failureReason/failureMessage is set (contract v1beta1)",
    ),
    (
        id::infra_machine::PROVIDER_ID,
        "reports provisioned but never sets spec.providerID",
    ),
    (
        id::infra_machine::PROVISIONED,
        "sets spec.providerID but never the provisioned flag",
    ),
    (
        id::infra_machine::PROVIDER_ID_BEFORE_PROVISIONED,
        "sets the provisioned flag first and spec.providerID only in a later write",
    ),
    (
        id::infra_machine::PROVISIONED_STICKY,
        "flips the provisioned flag back to false on the reconcile after setting it",
    ),
    (
        id::infra_machine::ADDRESSES,
        "reports status.addresses with an address type CAPI does not know (PrivateIP)",
    ),
    (
        id::infra_machine::FAILURE_DOMAIN_PLACEMENT,
        "places the instance in a failure domain other than Machine.spec.failureDomain",
    ),
    (
        id::infra_machine::READY_CONDITION,
        "never writes the Ready condition",
    ),
    (
        id::infra_machine::DELETE,
        "never removes its finalizer, so deletion never completes",
    ),
    (
        id::infra_machinepool::OWNER_GATE,
        "reconciles the MockMachinePool before it has a MachinePool controller owner reference",
    ),
    (
        id::infra_machinepool::PAUSE,
        "keeps reconciling the MockMachinePool while paused",
    ),
    (
        id::infra_machinepool::PROVIDER_ID_LIST,
        "keeps spec.providerIDList one entry short of the instances",
    ),
    (
        id::infra_machinepool::REPLICAS,
        "keeps status.replicas at the first observed count when the MachinePool's replicas change",
    ),
    (
        id::infra_machinepool::LIST_REPLICAS_CONSISTENCY,
        "reports status.replicas > 0 with an empty spec.providerIDList",
    ),
    (
        id::infra_machinepool::READY,
        "never sets status.ready (nor v1beta2 status.initialization.provisioned)",
    ),
    (
        id::infra_machinepool::MPM_KIND,
        "reports status.infrastructureMachineKind of a kind that is not served",
    ),
    (
        id::infra_machinepool::MPM_OBJECTS,
        "creates MachinePool Machines without the cluster.x-k8s.io/pool-name label",
    ),
    (
        id::infra_machinepool::CONDITIONS,
        "never writes the Ready condition",
    ),
    (
        id::bootstrap::OWNER_GATE,
        "creates the data Secret before the MockConfig has a Machine/MachinePool controller owner",
    ),
    (
        id::bootstrap::CLUSTER_LOOKUP,
        "creates the data Secret even when the Cluster does not exist",
    ),
    (
        id::bootstrap::FAILURE_GATE,
        "keeps creating the data Secret after status.failureReason/failureMessage is set (contract v1beta1)",
    ),
    (
        id::bootstrap::DATA_SECRET_NAME,
        "sets the created flag but never status.dataSecretName",
    ),
    (
        id::bootstrap::DATA_SECRET_CREATED,
        "sets status.dataSecretName but never the created flag (b1 status.ready, b2 initialization.dataSecretCreated)",
    ),
    (
        id::bootstrap::SECRET_NAME,
        "reports a status.dataSecretName that differs from the Secret it created",
    ),
    (
        id::bootstrap::SECRET_LABEL,
        "creates the data Secret without the cluster.x-k8s.io/cluster-name label",
    ),
    (
        id::bootstrap::SECRET_OWNER,
        "creates the data Secret without a controller owner reference to the config",
    ),
    (
        id::bootstrap::SECRET_VALUE,
        "stores the bootstrap data under key `data` instead of `value`",
    ),
    (
        id::bootstrap::SECRET_TYPE,
        "creates the data Secret with type Opaque",
    ),
    (
        id::bootstrap::DETERMINISTIC_NAME,
        "names the data Secret randomly, so a status wipe creates a second Secret",
    ),
    (
        id::bootstrap::STATUS_AFTER_SECRET,
        "writes dataSecretName and the created flag before creating the Secret",
    ),
    (
        id::bootstrap::READY_CONDITION,
        "never writes the Ready condition",
    ),
    (
        id::control_plane::PAUSE,
        "keeps reconciling the MockControlPlane while paused",
    ),
    (
        id::control_plane::MACHINE_LABEL,
        "creates its Machines without the cluster.x-k8s.io/control-plane label",
    ),
    (
        id::control_plane::IN_PLACE_PROPAGATION,
        "never writes changed machineTemplate metadata onto its existing Machines",
    ),
    (
        id::control_plane::ENDPOINT_WAIT,
        "takes its endpoint from the Cluster instead of making one, and makes its kubeconfig and instances without waiting for the Cluster to have one",
    ),
    (
        id::control_plane::PLACEMENT,
        "puts every Machine in the first of the Cluster's control plane failure domains",
    ),
    (
        id::control_plane::MIN_READY_UPTODATE,
        "never sets its Machines' UpToDate condition (contract v1beta2)",
    ),
    (
        id::control_plane::KUBECONFIG_ROTATION,
        "never renews the kubeconfig's client certificate, however close its expiry",
    ),
    (
        id::control_plane::KUBECONFIG_SECRET,
        "stores the kubeconfig under key `kubeconfig` instead of `value`",
    ),
    (
        id::control_plane::CERTIFICATES,
        "creates the <cluster>-ca/-etcd/-proxy/-sa Secrets without the cluster-name label",
    ),
    (
        id::control_plane::INITIALIZED,
        "never sets the initialized flag (b1 status.initialized, b2 initialization.controlPlaneInitialized)",
    ),
    (
        id::control_plane::READY,
        "never sets status.ready (contract v1beta1)",
    ),
    (
        id::control_plane::ENDPOINT,
        "reports initialized without ever setting spec.controlPlaneEndpoint",
    ),
    (
        id::control_plane::SCALE_SUBRESOURCE,
        "ignores spec.replicas changes after the first instance: scale never converges",
    ),
    (
        id::control_plane::STATUS_REPLICAS,
        "reports status.replicas but leaves the ready/available/up-to-date counters at 0",
    ),
    (
        id::control_plane::STATUS_VERSION,
        "never reports status.version (b1) / status.versions (b2)",
    ),
    (
        id::control_plane::CONDITIONS,
        "never writes the Ready (b1) / Available and Ready (b2) conditions",
    ),
    (
        id::template::SSA_DRY_RUN,
        "every template CRD makes spec immutable with a CEL rule, rejecting dry-run applies with the topology dry-run annotation (CRD fault)",
    ),
    (
        id::infra_machine_template::SSA_DRY_RUN,
        "the MockMachineTemplate CRD makes spec immutable, rejecting dry-run applies with the topology dry-run annotation (CRD fault)",
    ),
    (
        id::infra_machinepool_template::SSA_DRY_RUN,
        "the MockMachinePoolTemplate CRD makes spec immutable, rejecting dry-run applies with the topology dry-run annotation (CRD fault)",
    ),
    (
        id::bootstrap_template::SSA_DRY_RUN,
        "the MockConfigTemplate CRD makes spec immutable, rejecting dry-run applies with the topology dry-run annotation (CRD fault)",
    ),
    (
        id::ipam::CLAIM_FILTER,
        "also handles IPAddressClaims whose spec.poolRef names another group or kind, allocating from the MockIPPool of the same name",
    ),
    (
        id::ipam::PAUSED,
        "handles IPAddressClaims (create and delete) whose Cluster is paused or missing",
    ),
    (
        id::ipam::CLAIM_FINALIZER,
        "adds no finalizer to IPAddressClaims (the IPAddress of a vanished claim is still released)",
    ),
    (
        id::ipam::ADDRESS_OBJECT,
        "allocates an address outside the pool (after the pool's last address)",
    ),
    (
        id::ipam::ADDRESS_OWNERS,
        "the IPAddress's owner reference to the pool has no blockOwnerDeletion",
    ),
    (
        id::ipam::ADDRESS_FINALIZER,
        "creates IPAddresses without the ipam.cluster.x-k8s.io/protect-address finalizer",
    ),
    (
        id::ipam::ADDRESS_REF,
        "never sets the IPAddressClaim's status.addressRef",
    ),
    (
        id::ipam::DELETE,
        "on claim deletion removes the claim's finalizer but leaves the IPAddress (and its finalizer)",
    ),
    (
        id::ipam::POOL_MOVE_LABEL,
        "removes the cluster.x-k8s.io/cluster-name label from the pools (MockIPPool, MockGlobalIPPool) it reconciles",
    ),
    (
        id::ipam::POOL_READY_CONDITION,
        "never sets a Ready condition on its pools (MockIPPool, MockGlobalIPPool)",
    ),
    (
        id::ipam::CONSUMER_CLAIM,
        "the MockMachine's IPAddressClaims name it in an owner reference that is not the controller's",
    ),
    (
        id::template::CLONE_COMPATIBLE,
        "template CRDs default spec.template.spec.flavor to a value the base kinds reject (CRD fault)",
    ),
];

/// Scenario rules of the mock's roles that have no fault, and why (the mock does not implement
/// the behaviour the rule is about, so there is nothing to break).
pub const NOT_APPLICABLE: &[(RuleId, &str)] = &[
    (
        id::infra_cluster::ENDPOINT_WAIT,
        "the mock creates its own control plane endpoint",
    ),
    (
        id::infra_machine::IN_PLACE,
        "the mock has no admission webhooks and no in-place update support",
    ),
    (
        id::bootstrap::IN_PLACE,
        "the mock has no admission webhooks and no in-place update support",
    ),
    (
        id::infra_machinepool::EXTERNAL_AUTOSCALER,
        "the mock does not support cluster.x-k8s.io/replicas-managed-by",
    ),
    (
        id::control_plane::IN_PLACE_UPDATES,
        "needs the Runtime SDK, which the mock does not use",
    ),
];

/// Variant of `ipam/paused`: claims whose Cluster has `spec.paused` are handled.
pub const PAUSED_SPEC_FAULT: &str = "ipam/paused:spec";
/// Variant of `ipam/paused`: claims whose Cluster (or themselves) carry the paused annotation
/// are handled.
pub const PAUSED_ANNOTATION_FAULT: &str = "ipam/paused:annotation";
/// Variant of `ipam/paused`: claims whose Cluster does not exist are handled.
pub const MISSING_CLUSTER_FAULT: &str = "ipam/paused:missing-cluster";

/// Variant of `all/pause`: the mock acts while its object carries the paused annotation (it
/// honours a paused Cluster), on every change of the object.
pub const PAUSE_BY_ANNOTATION_FAULT: &str = "all/pause:annotation";

/// Second faults of a rule: (name, the rule it breaks, what the mock does wrong). Named
/// `<rule id>:<variant>`; the rule's own fault is in [`FAULTS`].
pub const FAULT_VARIANTS: &[(&str, RuleId, &str)] = &[
    (
        "all/defaulting-admitted:timeout",
        id::all::DEFAULTING_ADMITTED,
        "webhook mode: the defaulting webhook, when it has a default to fill in on a dry run, answers only after its timeoutSeconds (as one that looks its defaults up somewhere slow when it may not write)",
    ),
    (
        PAUSE_BY_ANNOTATION_FAULT,
        id::all::PAUSE,
        "acts while its object carries the cluster.x-k8s.io/paused annotation, on every change of it (it honours a paused Cluster)",
    ),
    (
        PAUSED_SPEC_FAULT,
        id::ipam::PAUSED,
        "fulfils claims whose Cluster has spec.paused (it honours the paused annotation and a missing Cluster)",
    ),
    (
        PAUSED_ANNOTATION_FAULT,
        id::ipam::PAUSED,
        "fulfils claims whose Cluster carries the cluster.x-k8s.io/paused annotation (it honours spec.paused and a missing Cluster)",
    ),
    (
        MISSING_CLUSTER_FAULT,
        id::ipam::PAUSED,
        "fulfils claims whose Cluster does not exist (it honours both ways of pausing)",
    ),
];

/// The fault that makes the mock break `rule_id`, if there is one.
pub fn fault_for(rule_id: &str) -> Option<&'static str> {
    FAULTS
        .iter()
        .find(|(id, _)| *id == rule_id)
        .map(|(id, _)| id.as_str())
}

/// Whether `name` is a known fault.
pub fn is_known(name: &str) -> bool {
    FAULTS.iter().any(|(id, _)| *id == name) || FAULT_VARIANTS.iter().any(|(n, ..)| *n == name)
}

/// The faults active for one object: provider-wide ones plus the object's annotation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaultSet(BTreeSet<String>);

impl FaultSet {
    /// Parses a comma-separated list (unknown names are kept: they simply match nothing).
    pub fn parse(list: impl AsRef<str>) -> FaultSet {
        FaultSet(
            list.as_ref()
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect(),
        )
    }

    /// Provider-wide faults merged with the object's annotation.
    pub fn for_object(provider_wide: &FaultSet, obj: &DynamicObject) -> FaultSet {
        let mut set = provider_wide.0.clone();
        if let Some(list) = obj
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(FAULT_ANNOTATION))
        {
            set.extend(FaultSet::parse(list).0);
        }
        FaultSet(set)
    }

    /// This set plus the faults of `obj`'s annotation (for the IPAM controller, whose faults
    /// may sit on the claim, on its pool or on the IPAddress).
    pub fn with_object(mut self, obj: &DynamicObject) -> FaultSet {
        let theirs = FaultSet::for_object(&FaultSet::default(), obj);
        self.0.extend(theirs.0);
        self
    }

    /// Whether the fault of the rule `rule` is on.
    pub fn has(&self, rule: RuleId) -> bool {
        self.0.contains(rule.as_str())
    }

    /// Whether the fault named `name` is on: a variant (`<rule id>:<variant>`,
    /// [`FAULT_VARIANTS`]) or a rule id spelt out of its parts.
    pub fn has_named(&self, name: &str) -> bool {
        self.0.contains(name)
    }

    /// Names that are not in [`FAULTS`].
    pub fn unknown(&self) -> Vec<String> {
        self.0.iter().filter(|f| !is_known(f)).cloned().collect()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The names in the set.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(String::as_str)
    }
}

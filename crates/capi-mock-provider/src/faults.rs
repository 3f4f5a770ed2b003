//! Named faults: each makes the mock break exactly one behavioural (scenario) rule. A fault is
//! named by the id of the rule it breaks and is switched on per object with the annotation
//! [`FAULT_ANNOTATION`] (comma-separated) or provider-wide with `--faults`.

use kube::core::DynamicObject;
use std::collections::BTreeSet;

/// Annotation listing the faults for one object.
pub const FAULT_ANNOTATION: &str = "mock.capi-conformance.io/fault";

/// Every fault: (rule id, what the mock does wrong). The template admission faults live in the
/// CRDs ([`super::crd_faults`]): provider-wide only.
pub const FAULTS: &[(&str, &str)] = &[
    (
        "all/conversion-lossless",
        "webhook mode: conversion keeps nothing of what the other version cannot say, so a round trip loses it",
    ),
    (
        "all/defaulting-admitted",
        "webhook mode: defaults a MockControlPlane's spec.replicas to 0, which its own validation rejects",
    ),
    (
        "all/pause",
        "keeps reconciling (provisions, patches status) while the Cluster or the object is paused",
    ),
    (
        "all/paused-condition",
        "never writes the Paused condition (contract v1beta2)",
    ),
    (
        "all/ready-condition-lifecycle",
        "drops the Ready condition when deletion starts (bootstrap: first status write has no Ready)",
    ),
    (
        "infra-cluster/owner-gate",
        "reconciles the MockCluster before it has a Cluster owner reference",
    ),
    ("infra-cluster/finalizer", "never adds its finalizer"),
    (
        "infra-cluster/provisioned",
        "never sets the provisioned flag (b1 status.ready, b2 status.initialization.provisioned)",
    ),
    (
        "infra-cluster/provisioned-sticky",
        "flips the provisioned flag back to false on the reconcile after setting it",
    ),
    (
        "infra-cluster/control-plane-endpoint",
        "reports provisioned without ever setting spec.controlPlaneEndpoint",
    ),
    (
        "infra-cluster/failure-domains",
        "reports failure domains with duplicate names (b2 array) or an empty map (b1)",
    ),
    (
        "infra-cluster/ready-condition",
        "never writes the Ready condition",
    ),
    (
        "infra-cluster/externally-managed",
        "reconciles objects annotated cluster.x-k8s.io/managed-by",
    ),
    (
        "infra-cluster/delete",
        "never removes its finalizer, so deletion never completes",
    ),
    (
        "infra-machine/owner-gate",
        "reconciles the MockMachine before it has a Machine controller owner reference",
    ),
    ("infra-machine/finalizer", "never adds its finalizer"),
    (
        "infra-machine/cluster-lookup",
        "provisions even when the Cluster named by cluster.x-k8s.io/cluster-name does not exist",
    ),
    (
        "infra-machine/cluster-infra-gate",
        "provisions before the Cluster's infrastructure is provisioned",
    ),
    (
        "infra-machine/bootstrap-gate",
        "provisions before the Machine's spec.bootstrap.dataSecretName is set",
    ),
    (
        "infra-machine/failure-gate",
        "keeps provisioning after status.failureReason/failureMessage is set (contract v1beta1)",
    ),
    (
        "infra-machine/provider-id",
        "reports provisioned but never sets spec.providerID",
    ),
    (
        "infra-machine/provisioned",
        "sets spec.providerID but never the provisioned flag",
    ),
    (
        "infra-machine/provider-id-before-provisioned",
        "sets the provisioned flag first and spec.providerID only in a later write",
    ),
    (
        "infra-machine/provisioned-sticky",
        "flips the provisioned flag back to false on the reconcile after setting it",
    ),
    (
        "infra-machine/addresses",
        "reports provisioned without status.addresses",
    ),
    (
        "infra-machine/failure-domain-placement",
        "places the instance in a failure domain other than Machine.spec.failureDomain",
    ),
    (
        "infra-machine/ready-condition",
        "never writes the Ready condition",
    ),
    (
        "infra-machine/delete",
        "never removes its finalizer, so deletion never completes",
    ),
    (
        "infra-machinepool/owner-gate",
        "reconciles the MockMachinePool before it has a MachinePool controller owner reference",
    ),
    (
        "infra-machinepool/pause",
        "keeps reconciling the MockMachinePool while paused",
    ),
    (
        "infra-machinepool/provider-id-list",
        "keeps spec.providerIDList one entry short of the instances",
    ),
    (
        "infra-machinepool/replicas",
        "keeps status.replicas at the first observed count when the MachinePool's replicas change",
    ),
    (
        "infra-machinepool/list-replicas-consistency",
        "reports status.replicas > 0 with an empty spec.providerIDList",
    ),
    (
        "infra-machinepool/ready",
        "never sets status.ready (nor v1beta2 status.initialization.provisioned)",
    ),
    (
        "infra-machinepool/mpm-kind",
        "reports status.infrastructureMachineKind of a kind that is not served",
    ),
    (
        "infra-machinepool/mpm-objects",
        "creates MachinePool Machines without the cluster.x-k8s.io/pool-name label",
    ),
    (
        "infra-machinepool/conditions",
        "never writes the Ready condition",
    ),
    (
        "bootstrap/owner-gate",
        "creates the data Secret before the MockConfig has a Machine/MachinePool controller owner",
    ),
    (
        "bootstrap/cluster-lookup",
        "creates the data Secret even when the Cluster does not exist",
    ),
    (
        "bootstrap/failure-gate",
        "keeps creating the data Secret after status.failureReason/failureMessage is set (contract v1beta1)",
    ),
    (
        "bootstrap/data-secret-name",
        "sets the created flag but never status.dataSecretName",
    ),
    (
        "bootstrap/data-secret-created",
        "sets status.dataSecretName but never the created flag (b1 status.ready, b2 initialization.dataSecretCreated)",
    ),
    (
        "bootstrap/secret-name",
        "reports a status.dataSecretName that differs from the Secret it created",
    ),
    (
        "bootstrap/secret-label",
        "creates the data Secret without the cluster.x-k8s.io/cluster-name label",
    ),
    (
        "bootstrap/secret-owner",
        "creates the data Secret without a controller owner reference to the config",
    ),
    (
        "bootstrap/secret-value",
        "stores the bootstrap data under key `data` instead of `value`",
    ),
    (
        "bootstrap/secret-type",
        "creates the data Secret with type Opaque",
    ),
    (
        "bootstrap/deterministic-name",
        "names the data Secret randomly, so a status wipe creates a second Secret",
    ),
    (
        "bootstrap/status-after-secret",
        "writes dataSecretName and the created flag before creating the Secret",
    ),
    (
        "bootstrap/ready-condition",
        "never writes the Ready condition",
    ),
    (
        "control-plane/pause",
        "keeps reconciling the MockControlPlane while paused",
    ),
    (
        "control-plane/kubeconfig-secret",
        "stores the kubeconfig under key `kubeconfig` instead of `value`",
    ),
    (
        "control-plane/certificates",
        "creates the <cluster>-ca/-etcd/-proxy/-sa Secrets without the cluster-name label",
    ),
    (
        "control-plane/initialized",
        "never sets the initialized flag (b1 status.initialized, b2 initialization.controlPlaneInitialized)",
    ),
    (
        "control-plane/ready",
        "never sets status.ready (contract v1beta1)",
    ),
    (
        "control-plane/endpoint",
        "reports initialized without ever setting spec.controlPlaneEndpoint",
    ),
    (
        "control-plane/scale-subresource",
        "ignores spec.replicas changes after the first instance: scale never converges",
    ),
    (
        "control-plane/status-replicas",
        "reports status.replicas but leaves the ready/available/up-to-date counters at 0",
    ),
    (
        "control-plane/status-version",
        "never reports status.version (b1) / status.versions (b2)",
    ),
    (
        "control-plane/conditions",
        "never writes the Ready (b1) / Available and Ready (b2) conditions",
    ),
    (
        "template/ssa-dry-run",
        "every template CRD makes spec immutable with a CEL rule, rejecting dry-run applies with the topology dry-run annotation (CRD fault)",
    ),
    (
        "infra-machine-template/ssa-dry-run",
        "the MockMachineTemplate CRD makes spec immutable, rejecting dry-run applies with the topology dry-run annotation (CRD fault)",
    ),
    (
        "infra-machinepool-template/ssa-dry-run",
        "the MockMachinePoolTemplate CRD makes spec immutable, rejecting dry-run applies with the topology dry-run annotation (CRD fault)",
    ),
    (
        "bootstrap-template/ssa-dry-run",
        "the MockConfigTemplate CRD makes spec immutable, rejecting dry-run applies with the topology dry-run annotation (CRD fault)",
    ),
    (
        "template/clone-compatible",
        "template CRDs default spec.template.spec.flavor to a value the base kinds reject (CRD fault)",
    ),
];

/// Scenario rules of the mock's roles that have no fault, and why (the mock does not implement
/// the behaviour the rule is about, so there is nothing to break).
pub const NOT_APPLICABLE: &[(&str, &str)] = &[
    (
        "infra-cluster/endpoint-wait",
        "the mock creates its own control plane endpoint",
    ),
    (
        "control-plane/endpoint-wait",
        "the mock creates its own control plane endpoint",
    ),
    (
        "infra-machine/in-place",
        "the mock has no admission webhooks and no in-place update support",
    ),
    (
        "bootstrap/in-place",
        "the mock has no admission webhooks and no in-place update support",
    ),
    (
        "infra-machinepool/external-autoscaler",
        "the mock does not support cluster.x-k8s.io/replicas-managed-by",
    ),
    (
        "control-plane/machine-label",
        "the mock's control plane instances are simulated, not CAPI Machines",
    ),
    (
        "control-plane/in-place-propagation",
        "the mock's control plane instances are simulated, not CAPI Machines",
    ),
    (
        "control-plane/placement",
        "the mock's control plane instances are simulated, not CAPI Machines",
    ),
    (
        "control-plane/min-ready-uptodate",
        "the mock's control plane instances are simulated, not CAPI Machines",
    ),
    (
        "control-plane/in-place-updates",
        "needs the Runtime SDK, which the mock does not use",
    ),
    (
        "control-plane/kubeconfig-rotation",
        "the mock's kubeconfig uses a token, not a client certificate",
    ),
    ("ipam/consumer-claim", "the mock does not use IPAM"),
];

/// Second faults of a rule: (name, the rule it breaks, what the mock does wrong). Named
/// `<rule id>:<variant>`; the rule's own fault is in [`FAULTS`].
pub const FAULT_VARIANTS: &[(&str, &str, &str)] = &[(
    "all/defaulting-admitted:timeout",
    "all/defaulting-admitted",
    "webhook mode: the defaulting webhook, when it has a default to fill in on a dry run, answers only after its timeoutSeconds (as one that looks its defaults up somewhere slow when it may not write)",
)];

/// The fault that makes the mock break `rule_id`, if there is one.
pub fn fault_for(rule_id: &str) -> Option<&'static str> {
    FAULTS
        .iter()
        .find(|(id, _)| *id == rule_id)
        .map(|(id, _)| *id)
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
    pub fn parse(list: &str) -> FaultSet {
        FaultSet(
            list.split(',')
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

    /// Whether the fault named by `rule_id` is on.
    pub fn has(&self, rule_id: &str) -> bool {
        self.0.contains(rule_id)
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

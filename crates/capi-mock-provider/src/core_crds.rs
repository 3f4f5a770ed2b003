//! Minimal CAPI core CRDs (Cluster, Machine, MachinePool, and MachineSet and MachineDeployment
//! in `cluster.x-k8s.io`; IPAddressClaim, IPAddress in `ipam.cluster.x-k8s.io`, as CAPI core's
//! components carry them) for clusters
//! without CAPI installed (the embedded server, bare clusters). Spec and status are open
//! (`x-kubernetes-preserve-unknown-fields`), so the tool can play CAPI core with either
//! contract's field spellings; conversion is None (the embedded run points it at the tool's
//! conversion webhook).

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::{Value, json};

/// CAPI core's API group.
pub const CORE_GROUP: &str = "cluster.x-k8s.io";
/// The version the tool and the mock read core objects at.
pub const CORE_VERSION: &str = "v1beta2";

/// The core kinds no scenario creates, installed so that a manager that maps them when it
/// starts can start: CAPI v1.13's kubeadm managers ask for MachineSet's REST mapping in
/// `ctrl.NewManager` (and exit 1 without it). No object of these kinds exists in a run, so the
/// tool's conversion webhook does not convert them (their CRDs keep conversion None).
pub const UNCONVERTED_KINDS: [&str; 2] = ["MachineSet", "MachineDeployment"];

/// The core CRDs as JSON documents: Cluster, Machine, MachinePool, MachineSet,
/// MachineDeployment, then the IPAM kinds ([`ipam_crd_documents`]).
pub fn core_crd_documents() -> Vec<Value> {
    let mut docs = vec![
        core_crd("Cluster", "clusters", &["cl"], false),
        core_crd("Machine", "machines", &["ma"], false),
        core_crd("MachinePool", "machinepools", &["mp"], true),
        core_crd("MachineSet", "machinesets", &["ms"], true),
        core_crd("MachineDeployment", "machinedeployments", &["md"], true),
    ];
    docs.extend(ipam_crd_documents());
    docs
}

/// The core CRDs, typed.
pub fn core_crds() -> Result<Vec<CustomResourceDefinition>, serde_json::Error> {
    core_crd_documents()
        .into_iter()
        .map(serde_json::from_value)
        .collect()
}

fn core_crd(kind: &str, plural: &str, short: &[&str], scale: bool) -> Value {
    let open = json!({ "type": "object", "x-kubernetes-preserve-unknown-fields": true });
    let schema = json!({
        "openAPIV3Schema": {
            "type": "object",
            "properties": {
                "apiVersion": { "type": "string" },
                "kind": { "type": "string" },
                "metadata": { "type": "object" },
                "spec": open,
                "status": open,
            },
        }
    });
    let mut subresources = json!({ "status": {} });
    if scale {
        subresources["scale"] = json!({
            "specReplicasPath": ".spec.replicas",
            "statusReplicasPath": ".status.replicas",
            "labelSelectorPath": ".status.selector",
        });
    }
    let version = |name: &str, storage: bool| {
        json!({
            "name": name,
            "served": true,
            "storage": storage,
            "schema": schema,
            "subresources": subresources,
            "additionalPrinterColumns": [
                { "name": "Cluster", "type": "string", "jsonPath": ".spec.clusterName" },
                { "name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp" },
            ],
        })
    };
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": format!("{plural}.{CORE_GROUP}"),
            "labels": {
                "cluster.x-k8s.io/provider": "cluster-api",
                "capi-conformance.io/core-crd": "minimal",
            },
        },
        "spec": {
            "group": CORE_GROUP,
            "scope": "Namespaced",
            "names": {
                "kind": kind,
                "listKind": format!("{kind}List"),
                "plural": plural,
                "singular": kind.to_lowercase(),
                "shortNames": short,
                "categories": ["cluster-api"],
            },
            "versions": [version(CORE_VERSION, true), version("v1beta1", false)],
        },
    })
}

/// CAPI core's IPAM API group (IPAddressClaim, IPAddress).
pub const IPAM_CORE_GROUP: &str = "ipam.cluster.x-k8s.io";
/// The version the mock reads and writes IPAddressClaims and IPAddresses at.
pub const IPAM_CORE_VERSION: &str = "v1beta2";

/// CAPI core's two IPAM CRDs (IPAddressClaim with a status subresource, IPAddress without),
/// minimal like the others: open spec and status, stored at [`IPAM_CORE_VERSION`], also served
/// at v1beta1 (what providers of the v1beta1 contract read). CAPI v1.11 serves v1alpha1 too;
/// these do not.
pub fn ipam_crd_documents() -> Vec<Value> {
    vec![
        ipam_crd("IPAddressClaim", "ipaddressclaims", true),
        ipam_crd("IPAddress", "ipaddresses", false),
    ]
}

fn ipam_crd(kind: &str, plural: &str, status: bool) -> Value {
    let open = json!({ "type": "object", "x-kubernetes-preserve-unknown-fields": true });
    let mut properties = json!({
        "apiVersion": { "type": "string" },
        "kind": { "type": "string" },
        "metadata": { "type": "object" },
        "spec": open,
    });
    if status {
        properties["status"] = open.clone();
    }
    let version = |name: &str, storage: bool| {
        let mut version = json!({
            "name": name,
            "served": true,
            "storage": storage,
            "schema": { "openAPIV3Schema": { "type": "object", "properties": properties } },
            "additionalPrinterColumns": [
                { "name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp" },
            ],
        });
        if status {
            version["subresources"] = json!({ "status": {} });
        }
        version
    };
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": format!("{plural}.{IPAM_CORE_GROUP}"),
            "labels": {
                "cluster.x-k8s.io/provider": "cluster-api",
                "capi-conformance.io/core-crd": "minimal",
            },
        },
        "spec": {
            "group": IPAM_CORE_GROUP,
            "scope": "Namespaced",
            "names": {
                "kind": kind,
                "listKind": format!("{kind}List"),
                "plural": plural,
                "singular": kind.to_lowercase(),
                "categories": ["cluster-api"],
            },
            "versions": [version(IPAM_CORE_VERSION, true), version("v1beta1", false)],
        },
    })
}

//! Round trips and CAPI-shaped output of the conversion.

use super::machine::parse_duration_seconds;
use super::*;

/// Versions by group from fixed labels (`infrastructure.foo.io` → v1beta1 contract with
/// v1alpha3_v1beta1; `bootstrap.foo.io` → v1beta2 contract).
struct Fixed;

impl VersionLookup for Fixed {
    fn api_version(&self, group: &str, kind: &str) -> Result<String, ConvertError> {
        let mut labels = Map::new();
        match group {
            "infrastructure.foo.io" => {
                labels.insert(format!("{GROUP}/v1beta1"), json!("v1alpha3_v1beta1"));
            }
            "bootstrap.foo.io" => {
                labels.insert(format!("{GROUP}/v1beta1"), json!("v1beta1"));
                labels.insert(format!("{GROUP}/v1beta2"), json!("v1beta2"));
            }
            _ => {}
        }
        api_version_from_labels(group, kind, &format!("x.{group}"), &labels)
    }
}

fn cluster_b2() -> Value {
    json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "Cluster",
        "metadata": {"name": "c1", "namespace": "ns", "labels": {"cluster.x-k8s.io/cluster-name": "c1"}},
        "spec": {
            "paused": false,
            "infrastructureRef": {"apiGroup": "infrastructure.foo.io", "kind": "FooCluster", "name": "c1"},
            "controlPlaneRef": {"apiGroup": "bootstrap.foo.io", "kind": "FooControlPlane", "name": "c1-cp"},
            "controlPlaneEndpoint": {"host": "10.0.0.10", "port": 6443},
            "clusterNetwork": {"pods": {"cidrBlocks": ["192.168.0.0/16"]}},
        },
        "status": {
            "initialization": {"infrastructureProvisioned": true, "controlPlaneInitialized": false},
            "conditions": [{"type": "ControlPlaneInitialized", "status": "True", "reason": "Initialized", "message": "", "lastTransitionTime": "2025-01-01T00:00:00Z", "observedGeneration": 1}],
            "deprecated": {"v1beta1": {"conditions": [{"type": "ControlPlaneInitialized", "status": "True", "lastTransitionTime": "2025-01-01T00:00:00Z"}], "failureReason": "x"}},
            "failureDomains": [{"name": "fd2", "controlPlane": false}, {"name": "fd1", "controlPlane": true, "attributes": {"zone": "a"}}],
            "phase": "Provisioned",
        }
    })
}

#[test]
fn cluster_down_then_up_is_lossless_and_down_is_capi_shaped() {
    let hub = cluster_b2();
    let b1 = convert(&hub, "cluster.x-k8s.io/v1beta1", &Fixed).unwrap();
    assert_eq!(
        b1.pointer("/spec/infrastructureRef").unwrap(),
        &json!({"apiVersion": "infrastructure.foo.io/v1beta1", "kind": "FooCluster", "name": "c1", "namespace": "ns"})
    );
    assert_eq!(
        b1.pointer("/spec/controlPlaneRef/apiVersion").unwrap(),
        "bootstrap.foo.io/v1beta2"
    );
    assert!(b1.pointer("/spec/paused").is_none());
    assert_eq!(b1.pointer("/status/infrastructureReady").unwrap(), true);
    assert_eq!(b1.pointer("/status/controlPlaneReady").unwrap(), false);
    assert_eq!(
        b1.pointer("/status/conditions/0/type").unwrap(),
        "ControlPlaneInitialized"
    );
    assert!(b1.pointer("/status/conditions/0/reason").is_none());
    assert_eq!(
        b1.pointer("/status/v1beta2/conditions/0/reason").unwrap(),
        "Initialized"
    );
    assert_eq!(b1.pointer("/status/failureReason").unwrap(), "x");
    assert_eq!(
        b1.pointer("/status/failureDomains/fd1").unwrap(),
        &json!({"controlPlane": true, "attributes": {"zone": "a"}})
    );
    assert!(b1.pointer("/status/initialization").is_none());
    assert!(
        b1.pointer("/metadata/annotations")
            .and_then(|a| a.get(DATA_ANNOTATION))
            .is_some()
    );
    let back = convert(&b1, "cluster.x-k8s.io/v1beta2", &Fixed).unwrap();
    let mut want = hub.clone();
    // Lists come back sorted by name.
    want["status"]["failureDomains"] = json!([
        {"name": "fd1", "controlPlane": true, "attributes": {"zone": "a"}},
        {"name": "fd2", "controlPlane": false},
    ]);
    assert_eq!(back, want);
}

#[test]
fn cluster_up_then_down_is_lossless() {
    let b1 = json!({
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "Cluster",
        "metadata": {"name": "c1", "namespace": "ns"},
        "spec": {
            "paused": true,
            "infrastructureRef": {"apiVersion": "infrastructure.foo.io/v1beta1", "kind": "FooCluster", "name": "c1", "namespace": "ns"},
            "controlPlaneEndpoint": {"host": "", "port": 0},
        },
        "status": {"infrastructureReady": true, "controlPlaneReady": false,
                   "failureDomains": {"a": {"controlPlane": true}}},
    });
    let hub = convert(&b1, "cluster.x-k8s.io/v1beta2", &Fixed).unwrap();
    assert_eq!(
        hub.pointer("/spec/infrastructureRef").unwrap(),
        &json!({"apiGroup": "infrastructure.foo.io", "kind": "FooCluster", "name": "c1"})
    );
    assert!(hub.pointer("/spec/controlPlaneEndpoint").is_none());
    assert_eq!(
        hub.pointer("/status/initialization").unwrap(),
        &json!({"infrastructureProvisioned": true})
    );
    let mut again = convert(&hub, "cluster.x-k8s.io/v1beta1", &Fixed).unwrap();
    again["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("annotations");
    assert_eq!(again, b1);
}

#[test]
fn machine_round_trip_keeps_hub_only_fields() {
    let hub = json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "Machine",
        "metadata": {"name": "m1", "namespace": "ns"},
        "spec": {
            "clusterName": "c1",
            "version": "v1.31.0",
            "bootstrap": {"configRef": {"apiGroup": "bootstrap.foo.io", "kind": "FooConfig", "name": "m1"}},
            "infrastructureRef": {"apiGroup": "infrastructure.foo.io", "kind": "FooMachine", "name": "m1"},
            "failureDomain": "fd1",
            "minReadySeconds": 5,
            "deletion": {"nodeDrainTimeoutSeconds": 90},
        },
        "status": {
            "initialization": {"bootstrapDataSecretCreated": true, "infrastructureProvisioned": false},
            "nodeRef": {"name": "node-1"},
            "phase": "Updating",
            "failureDomain": "fd1",
        }
    });
    let b1 = convert(&hub, "cluster.x-k8s.io/v1beta1", &Fixed).unwrap();
    assert_eq!(
        b1.pointer("/spec/bootstrap/configRef/apiVersion").unwrap(),
        "bootstrap.foo.io/v1beta2"
    );
    assert_eq!(
        b1.pointer("/spec/infrastructureRef/namespace").unwrap(),
        "ns"
    );
    assert_eq!(b1.pointer("/spec/nodeDrainTimeout").unwrap(), "90s");
    assert!(b1.pointer("/spec/minReadySeconds").is_none());
    assert_eq!(b1.pointer("/status/bootstrapReady").unwrap(), true);
    assert_eq!(b1.pointer("/status/phase").unwrap(), "Running");
    assert_eq!(
        b1.pointer("/status/nodeRef").unwrap(),
        &json!({"apiVersion": "v1", "kind": "Node", "name": "node-1"})
    );
    let back = convert(&b1, "cluster.x-k8s.io/v1beta2", &Fixed).unwrap();
    assert_eq!(back, hub);
}

#[test]
fn machine_pool_round_trip() {
    let hub = json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "MachinePool",
        "metadata": {"name": "p", "namespace": "ns"},
        "spec": {"clusterName": "c1", "replicas": 2, "template": {"spec": {
            "clusterName": "c1", "minReadySeconds": 3,
            "bootstrap": {"dataSecretName": "boot"},
            "infrastructureRef": {"apiGroup": "infrastructure.foo.io", "kind": "FooMachinePool", "name": "p"}}}},
        "status": {"replicas": 2, "readyReplicas": 1, "upToDateReplicas": 2,
                   "initialization": {"infrastructureProvisioned": true},
                   "deprecated": {"v1beta1": {"readyReplicas": 1, "unavailableReplicas": 1}}}
    });
    let b1 = convert(&hub, "cluster.x-k8s.io/v1beta1", &Fixed).unwrap();
    assert_eq!(b1.pointer("/spec/minReadySeconds").unwrap(), 3);
    assert_eq!(
        b1.pointer("/spec/template/spec/infrastructureRef/apiVersion")
            .unwrap(),
        "infrastructure.foo.io/v1beta1"
    );
    assert_eq!(b1.pointer("/status/v1beta2/upToDateReplicas").unwrap(), 2);
    assert_eq!(b1.pointer("/status/unavailableReplicas").unwrap(), 1);
    assert_eq!(b1.pointer("/status/infrastructureReady").unwrap(), true);
    let back = convert(&b1, "cluster.x-k8s.io/v1beta2", &Fixed).unwrap();
    assert_eq!(back, hub);
}

#[test]
fn a_ref_to_a_kind_without_contract_labels_fails_as_core_fails() {
    let mut hub = cluster_b2();
    hub["spec"]["infrastructureRef"]["apiGroup"] = json!("infrastructure.bar.io");
    let err = convert(&hub, "cluster.x-k8s.io/v1beta1", &Fixed).unwrap_err();
    assert!(
        err.to_string()
            .contains("contract version label(s) are either missing or empty"),
        "{err}"
    );
    assert!(matches!(
        convert(
            &json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineSet"}),
            "cluster.x-k8s.io/v1beta1",
            &Fixed
        ),
        Err(ConvertError::UnknownKind(_))
    ));
}

#[test]
fn newest_contract_then_newest_version() {
    let mut labels = Map::new();
    labels.insert(format!("{GROUP}/v1beta1"), json!("v1beta1_v1alpha4"));
    assert_eq!(
        api_version_from_labels("g.io", "K", "ks.g.io", &labels).unwrap(),
        "g.io/v1beta1"
    );
    labels.insert(format!("{GROUP}/v1beta2"), json!("v1beta2"));
    assert_eq!(
        api_version_from_labels("g.io", "K", "ks.g.io", &labels).unwrap(),
        "g.io/v1beta2"
    );
    assert_eq!(parse_duration_seconds("1m30s"), Some(90));
    assert_eq!(parse_duration_seconds("500ms"), Some(0));
    assert_eq!(parse_duration_seconds("x"), None);
}

/// IPAM kinds as CAPI's `api/ipam/v1beta1/conversion.go` converts them: conditions swap
/// places, the v1beta1 claim always has `addressRef`, an IPAddress's prefix is always set;
/// no conversion-data annotation; a round trip gives the hub back; v1alpha1 is refused.
#[test]
fn ipam_claims_and_addresses_convert_like_capis_webhook() {
    let claim = json!({
        "apiVersion": "ipam.cluster.x-k8s.io/v1beta2",
        "kind": "IPAddressClaim",
        "metadata": {"name": "c", "namespace": "ns"},
        "spec": {"clusterName": "cl", "poolRef": {"apiGroup": "ipam.foo.io", "kind": "FooPool", "name": "p"}},
        "status": {
            "conditions": [{"type": "Ready", "status": "True", "reason": "Ready"}],
            "deprecated": {"v1beta1": {"conditions": [{"type": "Ready", "status": "True"}]}},
        },
    });
    let down = convert(&claim, "ipam.cluster.x-k8s.io/v1beta1", &Fixed).unwrap();
    assert_eq!(down["apiVersion"], "ipam.cluster.x-k8s.io/v1beta1");
    assert_eq!(down["status"]["conditions"][0]["type"], "Ready");
    assert!(down["status"]["conditions"][0].get("reason").is_none());
    assert_eq!(
        down["status"]["v1beta2"]["conditions"][0]["reason"],
        "Ready"
    );
    assert_eq!(down["status"]["addressRef"], json!({}));
    assert!(down.pointer("/metadata/annotations").is_none());
    assert_eq!(down["spec"], claim["spec"]);
    let up = convert(&down, "ipam.cluster.x-k8s.io/v1beta2", &Fixed).unwrap();
    assert_eq!(up, claim);

    let address = json!({
        "apiVersion": "ipam.cluster.x-k8s.io/v1beta2",
        "kind": "IPAddress",
        "metadata": {"name": "c", "namespace": "ns"},
        "spec": {"address": "192.0.2.10", "claimRef": {"name": "c"},
                 "poolRef": {"apiGroup": "ipam.foo.io", "kind": "FooPool", "name": "p"}},
    });
    let down = convert(&address, "ipam.cluster.x-k8s.io/v1beta1", &Fixed).unwrap();
    assert_eq!(down["spec"]["prefix"], 0);
    let up = convert(&down, "ipam.cluster.x-k8s.io/v1beta2", &Fixed).unwrap();
    assert_eq!(up["spec"]["prefix"], 0);
    assert!(matches!(
        convert(&address, "ipam.cluster.x-k8s.io/v1alpha1", &Fixed),
        Err(ConvertError::UnknownVersion(_))
    ));
    // A core kind is not converted to an IPAM version, nor the reverse.
    assert!(convert(&address, "cluster.x-k8s.io/v1beta1", &Fixed).is_err());
}

//! The core simulator: plays CAPI core (docs/contract.md §4). It creates Cluster / Machine /
//! MachinePool objects (v1beta2 core API), sets owner references and the cluster-name label the
//! way core does, and opens/closes the gates providers wait for.

use super::env::{Env, EnvError};
use kube::discovery::ApiResource;
use serde_json::{Value, json};

pub const CORE_GROUP: &str = "cluster.x-k8s.io";
pub const CORE_VERSION: &str = "v1beta2";
pub const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";
pub const CONTROL_PLANE_LABEL: &str = "cluster.x-k8s.io/control-plane";
pub const PAUSED_ANNOTATION: &str = "cluster.x-k8s.io/paused";

fn core(kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: CORE_GROUP.into(),
        version: CORE_VERSION.into(),
        api_version: format!("{CORE_GROUP}/{CORE_VERSION}"),
        kind: kind.into(),
        plural: plural.into(),
    }
}

pub fn cluster_resource() -> ApiResource {
    core("Cluster", "clusters")
}
pub fn machine_resource() -> ApiResource {
    core("Machine", "machines")
}
pub fn machine_pool_resource() -> ApiResource {
    core("MachinePool", "machinepools")
}
pub fn secret_resource() -> ApiResource {
    ApiResource {
        group: String::new(),
        version: "v1".into(),
        api_version: "v1".into(),
        kind: "Secret".into(),
        plural: "secrets".into(),
    }
}

/// A v1beta2 contract reference `{apiGroup, kind, name}`.
pub fn contract_ref(resource: &ApiResource, name: &str) -> Value {
    json!({"apiGroup": resource.group, "kind": resource.kind, "name": name})
}

/// Owner reference core puts on InfraCluster / ControlPlane: plain (controller unset, no topology).
pub fn cluster_owner_ref(cluster: &Value) -> Value {
    json!({
        "apiVersion": format!("{CORE_GROUP}/{CORE_VERSION}"),
        "kind": "Cluster",
        "name": cluster.pointer("/metadata/name").cloned().unwrap_or(Value::Null),
        "uid": cluster.pointer("/metadata/uid").cloned().unwrap_or(Value::Null),
    })
}

/// Controller owner reference of a Machine or MachinePool (InfraMachine, BootstrapConfig, …).
pub fn controller_owner_ref(owner: &Value) -> Value {
    json!({
        "apiVersion": owner.get("apiVersion").cloned().unwrap_or(Value::Null),
        "kind": owner.get("kind").cloned().unwrap_or(Value::Null),
        "name": owner.pointer("/metadata/name").cloned().unwrap_or(Value::Null),
        "uid": owner.pointer("/metadata/uid").cloned().unwrap_or(Value::Null),
        "controller": true,
        "blockOwnerDeletion": true,
    })
}

/// What the simulated Cluster references.
#[derive(Default)]
pub struct ClusterSpec<'a> {
    pub infrastructure: Option<(&'a ApiResource, &'a str)>,
    pub control_plane: Option<(&'a ApiResource, &'a str)>,
    pub endpoint: Option<(&'a str, i64)>,
}

impl Env {
    fn core_meta(&self, name: &str, cluster: Option<&str>) -> Value {
        let mut meta = json!({"name": name, "labels": {}});
        if let Some(c) = cluster {
            meta["labels"][CLUSTER_NAME_LABEL] = json!(c);
        }
        if self.pause_core {
            meta["annotations"] = json!({PAUSED_ANNOTATION: ""});
        }
        meta
    }

    /// Creates a Cluster.
    pub async fn create_cluster(
        &self,
        name: &str,
        spec: ClusterSpec<'_>,
    ) -> Result<Value, EnvError> {
        let mut s = json!({});
        if let Some((r, n)) = spec.infrastructure {
            s["infrastructureRef"] = contract_ref(r, n);
        }
        if let Some((r, n)) = spec.control_plane {
            s["controlPlaneRef"] = contract_ref(r, n);
        }
        if let Some((host, port)) = spec.endpoint {
            s["controlPlaneEndpoint"] = json!({"host": host, "port": port});
        }
        let obj = json!({"metadata": self.core_meta(name, Some(name)), "spec": s});
        self.create(&cluster_resource(), obj).await
    }

    /// Sets the Cluster's infrastructure-provisioned gate (v1beta2 path, plus the v1beta1 spelling
    /// for providers that still read it).
    pub async fn set_infra_provisioned(
        &self,
        cluster: &str,
        value: bool,
    ) -> Result<Value, EnvError> {
        self.patch_status(
            &cluster_resource(),
            cluster,
            json!({"status": {"initialization": {"infrastructureProvisioned": value},
                              "infrastructureReady": value}}),
            if value {
                "open gate: infrastructure provisioned"
            } else {
                "close gate: infrastructure provisioned"
            },
        )
        .await
    }

    /// Marks the control plane initialized on the Cluster (status flag + condition).
    pub async fn set_control_plane_initialized(&self, cluster: &str) -> Result<Value, EnvError> {
        let now = jiff::Timestamp::now().to_string();
        self.patch_status(
            &cluster_resource(),
            cluster,
            json!({"status": {
                "initialization": {"infrastructureProvisioned": true, "controlPlaneInitialized": true},
                "infrastructureReady": true,
                "controlPlaneReady": true,
                "conditions": [{"type": "ControlPlaneInitialized", "status": "True", "reason": "Initialized",
                                "message": "", "lastTransitionTime": now}]}}),
            "open gate: control plane initialized",
        )
        .await
    }

    pub async fn set_cluster_endpoint(
        &self,
        cluster: &str,
        host: &str,
        port: i64,
    ) -> Result<Value, EnvError> {
        self.merge_patch(
            &cluster_resource(),
            cluster,
            json!({"spec": {"controlPlaneEndpoint": {"host": host, "port": port}}}),
            "set cluster endpoint",
        )
        .await
    }

    /// `Cluster.spec.paused`.
    pub async fn set_cluster_paused(&self, cluster: &str, paused: bool) -> Result<Value, EnvError> {
        let value = if paused { json!(true) } else { Value::Null };
        self.merge_patch(
            &cluster_resource(),
            cluster,
            json!({"spec": {"paused": value}}),
            if paused {
                "pause cluster"
            } else {
                "unpause cluster"
            },
        )
        .await
    }

    /// Creates a Machine of `cluster` referencing `infra` (and a bootstrap config or data secret).
    pub async fn create_machine(
        &self,
        name: &str,
        cluster: &str,
        infra: (&ApiResource, &str),
        bootstrap_config: Option<(&ApiResource, &str)>,
        data_secret: Option<&str>,
        failure_domain: Option<&str>,
    ) -> Result<Value, EnvError> {
        let mut bootstrap = json!({});
        if let Some((r, n)) = bootstrap_config {
            bootstrap["configRef"] = contract_ref(r, n);
        }
        if let Some(s) = data_secret {
            bootstrap["dataSecretName"] = json!(s);
        }
        let mut spec = json!({
            "clusterName": cluster,
            "bootstrap": bootstrap,
            "infrastructureRef": contract_ref(infra.0, infra.1),
        });
        if let Some(fd) = failure_domain {
            spec["failureDomain"] = json!(fd);
        }
        let obj = json!({"metadata": self.core_meta(name, Some(cluster)), "spec": spec});
        self.create(&machine_resource(), obj).await
    }

    /// Opens the bootstrap gate: `Machine.spec.bootstrap.dataSecretName`.
    pub async fn set_data_secret_name(
        &self,
        machine: &str,
        secret: &str,
    ) -> Result<Value, EnvError> {
        self.merge_patch(
            &machine_resource(),
            machine,
            json!({"spec": {"bootstrap": {"dataSecretName": secret}}}),
            "open gate: bootstrap dataSecretName",
        )
        .await
    }

    /// Creates a MachinePool of `cluster` with `replicas` referencing `infra`.
    pub async fn create_machine_pool(
        &self,
        name: &str,
        cluster: &str,
        replicas: i64,
        infra: (&ApiResource, &str),
        data_secret: &str,
    ) -> Result<Value, EnvError> {
        let obj = json!({
            "metadata": self.core_meta(name, Some(cluster)),
            "spec": {
                "clusterName": cluster,
                "replicas": replicas,
                "template": {"spec": {
                    "clusterName": cluster,
                    "bootstrap": {"dataSecretName": data_secret},
                    "infrastructureRef": contract_ref(infra.0, infra.1),
                }},
            },
        });
        self.create(&machine_pool_resource(), obj).await
    }

    /// Creates a Secret the way a bootstrap provider would (used to open the bootstrap gate).
    pub async fn create_bootstrap_secret(
        &self,
        name: &str,
        cluster: &str,
    ) -> Result<Value, EnvError> {
        let obj = json!({
            "metadata": {"name": name, "labels": {CLUSTER_NAME_LABEL: cluster}},
            "type": "cluster.x-k8s.io/secret",
            "stringData": {"value": "#cloud-config\n"},
        });
        self.create(&secret_resource(), obj).await
    }

    /// Adds an owner reference and the cluster-name label (JSON merge patch on metadata, as core does).
    pub async fn adopt(
        &self,
        resource: &ApiResource,
        name: &str,
        owner_ref: Value,
        cluster: &str,
    ) -> Result<Value, EnvError> {
        self.merge_patch(
            resource,
            name,
            json!({"metadata": {"ownerReferences": [owner_ref], "labels": {CLUSTER_NAME_LABEL: cluster}}}),
            "set owner",
        )
        .await
    }

    /// Sets or removes the `cluster.x-k8s.io/paused` annotation on an object.
    pub async fn set_paused_annotation(
        &self,
        resource: &ApiResource,
        name: &str,
        paused: bool,
    ) -> Result<Value, EnvError> {
        let value = if paused { json!("") } else { Value::Null };
        self.merge_patch(
            resource,
            name,
            json!({"metadata": {"annotations": {PAUSED_ANNOTATION: value}}}),
            if paused {
                "add paused annotation"
            } else {
                "remove paused annotation"
            },
        )
        .await
    }
}

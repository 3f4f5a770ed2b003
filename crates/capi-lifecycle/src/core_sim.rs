//! The core simulator: plays CAPI core (docs/contract.md §4). It creates Cluster / Machine /
//! MachinePool objects (v1beta2 core API), sets owner references and the cluster-name label the
//! way core does, and opens/closes the gates providers wait for.

mod copies;
mod initialized;
mod machine_objects;
mod machines;
pub mod node_agent;
mod sample_refs;

pub use copies::failure_domains_v1beta2;
pub use machines::{MACHINE_FINALIZER, MachineController, MachineProgress};
pub use sample_refs::{
    Referenced, plan_sample_references, referenced_kinds, referenced_objects, truncate_name,
};

use super::Subject;
use super::env::{Env, EnvError};
use capi_contract::contract::{Contract, Role};
use kube::discovery::ApiResource;
use serde_json::{Value, json};

/// The mock's kind for `role` under `contract` (its cluster-scoped kind with `cluster_scoped`)
/// and its default sample.
pub(super) fn mock_companion(
    role: Role,
    contract: Contract,
    cluster_scoped: bool,
) -> Result<(ApiResource, Value), EnvError> {
    // The IPAM pool, judged without a contract, has one version whatever the contract.
    let contract = (role != Role::IpamPool).then_some(contract);
    let s = super::baseline::mock_subject_scoped(
        role,
        contract,
        super::baseline::BASELINE_PROVIDER,
        false,
        cluster_scoped,
    )
    .ok_or_else(|| EnvError::Invalid(format!("the mock has no {role:?} kind")))?;
    Ok((
        s.resource,
        super::baseline::companion_sample(role, contract),
    ))
}

/// An object named `name` from a sample (`spec`, `metadata.labels/annotations`, and the
/// `apiVersion` it is written in, if it names one: [`super::env::Env::create`] creates it at
/// that version).
pub fn sample_object(sample: &Value, name: &str) -> Value {
    let mut obj = json!({"metadata": {"name": name, "labels": {}}, "spec": sample.get("spec").cloned().unwrap_or(json!({}))});
    for field in ["labels", "annotations"] {
        if let Some(m) = sample
            .pointer(&format!("/metadata/{field}"))
            .filter(|m| m.is_object())
        {
            obj["metadata"][field] = m.clone();
        }
    }
    if let Some(av) = sample.get("apiVersion").filter(|v| v.is_string()) {
        obj["apiVersion"] = av.clone();
    }
    obj
}

/// `cluster.x-k8s.io/cloned-from-name`: the template an object was cloned from.
pub const CLONED_FROM_NAME: &str = "cluster.x-k8s.io/cloned-from-name";
/// `cluster.x-k8s.io/cloned-from-groupkind`: that template's `Kind.group`.
pub const CLONED_FROM_GROUPKIND: &str = "cluster.x-k8s.io/cloned-from-groupkind";

/// Core's clone annotations on an InfraMachine, BootstrapConfig, InfraCluster or
/// InfraMachinePool: CAPI creates those from the provider's `<Kind>Template`
/// (`external.GenerateTemplate`, called by MachineSet, KCP, MachineHealthCheck and the topology
/// controller), which always sets both annotations, so their `metadata.annotations` is never
/// empty. The template is named `<name>-template` (the tool does not create it); a sample's own
/// annotations of the same keys win.
pub fn clone_annotations(obj: &mut Value, role: Role, resource: &ApiResource) {
    let cloned = matches!(
        role,
        Role::InfraMachine | Role::BootstrapConfig | Role::InfraCluster | Role::InfraMachinePool
    );
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .map(str::to_string);
    let (true, Some(name), Some(meta)) = (
        cloned,
        name,
        obj.get_mut("metadata").and_then(Value::as_object_mut),
    ) else {
        return;
    };
    let annotations = meta.entry("annotations").or_insert_with(|| json!({}));
    if let Some(a) = annotations.as_object_mut() {
        a.entry(CLONED_FROM_NAME)
            .or_insert_with(|| json!(format!("{name}-template")));
        a.entry(CLONED_FROM_GROUPKIND)
            .or_insert_with(|| json!(format!("{}Template.{}", resource.kind, resource.group)));
    }
}

pub const CORE_GROUP: &str = "cluster.x-k8s.io";
pub const CORE_VERSION: &str = "v1beta2";
pub const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";
pub const CONTROL_PLANE_LABEL: &str = "cluster.x-k8s.io/control-plane";
pub const PAUSED_ANNOTATION: &str = "cluster.x-k8s.io/paused";
/// The control plane endpoint host of Clusters on a real cluster (RFC 2606 `.invalid`).
pub const UNREACHABLE_ENDPOINT_HOST: &str = "cp.capi-conformance.invalid";
/// Its port (kube-apiserver's default).
pub const CONTROL_PLANE_ENDPOINT_PORT: i64 = 6443;

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

/// Why the in-place update rules (control-plane/in-place-updates, infra-machine/in-place,
/// bootstrap/in-place) are not judged: the mechanism they name is not in the core this run
/// plays (CAPI v1.11 has only its proposal), so no provider of that contract supports it.
pub const IN_PLACE_NOT_IN_CORE: &str = "in-place updates (the CanUpdateMachine/UpdateMachine hooks of a Runtime SDK extension, the update-in-progress annotation) are not part of CAPI v1.11's core, whose contract this run plays: v1.11 has only the proposal (docs/proposals/20240807-in-place-updates.md); no extension is registered here";

/// Owner reference core puts on InfraCluster / ControlPlane: a controller reference with
/// `blockOwnerDeletion`, with or without topology (CAPI `ensureOwnerRefAndLabel` calls
/// `controllerutil.SetControllerReference`; the book's owner-reference table says the same).
pub fn cluster_owner_ref(cluster: &Value) -> Value {
    json!({
        "apiVersion": format!("{CORE_GROUP}/{CORE_VERSION}"),
        "kind": "Cluster",
        "name": cluster.pointer("/metadata/name").cloned().unwrap_or(Value::Null),
        "uid": cluster.pointer("/metadata/uid").cloned().unwrap_or(Value::Null),
        "controller": true,
        "blockOwnerDeletion": true,
    })
}

/// The Kubernetes version of the tool's Machines (`spec.version`: KCP, MachineSets and topology
/// always set it; CABPK cannot work without it) and of the workload clusters.
pub const MACHINE_VERSION: &str = crate::capi_core::workload::WORKLOAD_KUBERNETES_VERSION;

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

/// What a Machine the tool creates carries besides its InfraMachine reference.
#[derive(Default, Clone, Copy)]
pub struct MachineSpec<'a> {
    /// `spec.bootstrap.configRef`.
    pub bootstrap_config: Option<(&'a ApiResource, &'a str)>,
    /// `spec.bootstrap.dataSecretName`.
    pub data_secret: Option<&'a str>,
    pub failure_domain: Option<&'a str>,
    /// A control-plane Machine (label [`CONTROL_PLANE_LABEL`]); else a worker.
    pub control_plane: bool,
}

/// What the simulated Cluster references.
#[derive(Default)]
pub struct ClusterSpec<'a> {
    pub infrastructure: Option<(&'a ApiResource, &'a str)>,
    pub control_plane: Option<(&'a ApiResource, &'a str)>,
    pub endpoint: Option<(&'a str, i64)>,
}

impl Env {
    /// Waits until a watch on `Cluster/<cluster>` (served from the API server's watch cache,
    /// where a provider's informer reads) shows a state satisfying `pred`, then gives the
    /// provider [`Settings::propagation`] to see it in its own cache: after this, a provider
    /// that has not seen the change is not one the tool can fairly judge by it.
    pub async fn await_cluster_propagated(
        &self,
        cluster: &str,
        what: &'static str,
        pred: impl Fn(&Value) -> bool,
    ) -> Result<(), EnvError> {
        use futures::StreamExt;
        use kube::runtime::{WatchStreamExt, watcher};
        let api = self.api(&cluster_resource());
        let config = watcher::Config::default()
            .fields(&format!("metadata.name={cluster}"))
            .any_semantic();
        let mut seen = watcher::watcher(api, config).applied_objects().boxed();
        let timeout = self.settings.step_timeout;
        let shown = tokio::time::timeout(timeout, async {
            while let Some(item) = seen.next().await {
                match item {
                    Ok(obj) if serde_json::to_value(&obj).is_ok_and(|v| pred(&v)) => return,
                    Ok(_) => {}
                    // The watcher retries by itself on the next poll.
                    Err(_) => tokio::time::sleep(std::time::Duration::from_millis(50)).await,
                }
            }
        })
        .await;
        if shown.is_err() {
            return Err(EnvError::NotSeen {
                object: format!("Cluster/{cluster}"),
                what,
                secs: timeout.as_secs(),
            });
        }
        self.allow_propagation().await;
        Ok(())
    }

    /// Gives the provider [`Settings::propagation`] (stretched to three round trips on a slow
    /// server) to see the tool's last change in its own caches, counted as held time.
    pub async fn allow_propagation(&self) {
        let allowance = self.round_trips.stretch(self.settings.propagation);
        self.recorder.hold(allowance);
        tokio::time::sleep(allowance).await;
    }

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

    /// Creates a Cluster as the subject's scenarios need it: unless `spec` names the
    /// InfraCluster already, the Cluster references one that exists, created here in the run
    /// namespace with the Cluster's name, owned by the Cluster (controller reference) and
    /// labelled, as core leaves it: the provider's own InfraCluster kind under the subject's
    /// contract with its sample, else the mock's MockCluster (CAPI's InfraMachine controllers
    /// dereference `Cluster.spec.infrastructureRef`; providers are woken through it).
    /// The Cluster `name` as JSON (None when it does not exist).
    pub async fn cluster_opt(&self, name: &str) -> Result<Option<Value>, EnvError> {
        let c = self
            .api(&cluster_resource())
            .get_opt(name)
            .await
            .map_err(|source| EnvError::Api {
                action: "read",
                object: format!("Cluster/{name}"),
                source,
            })?;
        c.map(|c| serde_json::to_value(c).map_err(|e| EnvError::Invalid(e.to_string())))
            .transpose()
    }

    /// The Cluster `name` as JSON; its absence is an error.
    pub async fn cluster(&self, name: &str) -> Result<Value, EnvError> {
        self.cluster_opt(name)
            .await?
            .ok_or_else(|| EnvError::Invalid(format!("Cluster {name} does not exist")))
    }

    pub async fn create_cluster_of(
        &self,
        subject: &Subject,
        name: &str,
        spec: ClusterSpec<'_>,
    ) -> Result<Value, EnvError> {
        if spec.infrastructure.is_some() {
            return self.create_cluster(name, spec).await;
        }
        let contract = subject.column.contract.unwrap_or(Contract::V1Beta2);
        let (resource, sample) = match &subject.companions.infra_cluster {
            Some((r, s)) => (r.clone(), s.clone()),
            None => mock_companion(Role::InfraCluster, contract, false)?,
        };
        if !self.serves(&resource).await {
            // A cluster without the mock's CRDs and a provider without an InfraCluster kind:
            // nothing to reference (the Cluster is made as before, without the reference).
            return self.create_cluster(name, spec).await;
        }
        // Named as the Cluster (a cluster-scoped kind's name tagged for the side).
        let infra_name = self.scopes.name(&resource.group, &resource.kind, name);
        let cluster = self
            .create_cluster(
                name,
                ClusterSpec {
                    infrastructure: Some((&resource, &infra_name)),
                    control_plane: spec.control_plane,
                    endpoint: spec.endpoint,
                },
            )
            .await?;
        self.create_owned_infra_cluster(&cluster, &resource, &sample)
            .await?;
        Ok(cluster)
    }

    /// Creates `cluster`'s InfraCluster of `resource` from `sample`, named as the Cluster (a
    /// cluster-scoped kind's name tagged for the side, [`super::scope::Scopes::name`]), as core
    /// leaves it: cloned (its annotations), owned by the Cluster (controller reference),
    /// labelled with the cluster's name (`ensureOwnerRefAndLabel`).
    pub async fn create_owned_infra_cluster(
        &self,
        cluster: &Value,
        resource: &ApiResource,
        sample: &Value,
    ) -> Result<Value, EnvError> {
        let name = cluster
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let own_name = self.scopes.name(&resource.group, &resource.kind, name);
        let mut obj = sample_object(sample, &own_name);
        clone_annotations(&mut obj, Role::InfraCluster, resource);
        obj["metadata"]["ownerReferences"] = json!([cluster_owner_ref(cluster)]);
        obj["metadata"]["labels"][CLUSTER_NAME_LABEL] = json!(name);
        self.create(resource, obj).await
    }

    /// Creates the InfraMachine a Machine of a non-infrastructure scenario references: the
    /// mock's MockMachine under `contract`, named `name`, labelled with the cluster; the
    /// Machine controller's owner reference is added by [`Self::own_infra_machine`].
    pub async fn create_infra_machine(
        &self,
        contract: Contract,
        name: &str,
        cluster: &str,
    ) -> Result<ApiResource, EnvError> {
        let (resource, sample) = mock_companion(Role::InfraMachine, contract, false)?;
        if !self.serves(&resource).await {
            // Without the mock's CRDs the Machine references an object that does not exist.
            return Ok(resource);
        }
        let mut obj = sample_object(&sample, name);
        clone_annotations(&mut obj, Role::InfraMachine, &resource);
        obj["metadata"]["labels"][CLUSTER_NAME_LABEL] = json!(cluster);
        self.create(&resource, obj).await?;
        Ok(resource)
    }

    /// Whether the server serves `resource` in the run namespace (a list of at most one
    /// object answers; 404: the kind is not installed).
    async fn serves(&self, resource: &ApiResource) -> bool {
        !matches!(
            self.api(resource)
                .list_metadata(&kube::api::ListParams::default().limit(1))
                .await,
            Err(kube::Error::Api(s)) if s.code == 404
        )
    }

    /// The Machine controller's controller reference on its InfraMachine.
    pub async fn own_infra_machine(
        &self,
        resource: &ApiResource,
        name: &str,
        machine: &Value,
        cluster: &str,
    ) -> Result<Value, EnvError> {
        if !self.serves(resource).await {
            return Ok(Value::Null);
        }
        self.adopt(resource, name, controller_owner_ref(machine), cluster)
            .await
    }

    /// Sets the Cluster's infrastructure-provisioned gate at its v1beta2 path
    /// (`status.initialization.infrastructureProvisioned`); a provider reading at v1beta1 sees
    /// `status.infrastructureReady` through core's conversion.
    pub async fn set_infra_provisioned(
        &self,
        cluster: &str,
        value: bool,
    ) -> Result<Value, EnvError> {
        self.patch_status(
            &cluster_resource(),
            cluster,
            json!({"status": {"initialization": {"infrastructureProvisioned": value}}}),
            if value {
                "open gate: infrastructure provisioned"
            } else {
                "close gate: infrastructure provisioned"
            },
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

//! The core simulator: plays CAPI core (docs/contract.md §4). It creates Cluster / Machine /
//! MachinePool objects (v1beta2 core API), sets owner references and the cluster-name label the
//! way core does, and opens/closes the gates providers wait for.

use super::Subject;
use super::env::{Env, EnvError};
use capi_contract::contract::{Contract, Role};
use kube::discovery::ApiResource;
use serde_json::{Value, json};

/// The mock's kind for `role` under `contract` and its default sample.
fn mock_companion(role: Role, contract: Contract) -> Result<(ApiResource, Value), EnvError> {
    let s =
        super::baseline::mock_subject(role, contract, super::baseline::BASELINE_PROVIDER, false)
            .ok_or_else(|| EnvError::Invalid(format!("the mock has no {role:?} kind")))?;
    let sample = s.sample.unwrap_or_else(|| json!({}));
    Ok((s.resource, sample))
}

/// An object named `name` from a sample (`spec`, `metadata.labels/annotations`).
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
    obj
}

pub const CORE_GROUP: &str = "cluster.x-k8s.io";
pub const CORE_VERSION: &str = "v1beta2";
pub const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";
pub const CONTROL_PLANE_LABEL: &str = "cluster.x-k8s.io/control-plane";
pub const PAUSED_ANNOTATION: &str = "cluster.x-k8s.io/paused";
/// The control plane endpoint host of Clusters on a real cluster (RFC 2606 `.invalid`).
pub const UNREACHABLE_ENDPOINT_HOST: &str = "cp.capi-conformance.invalid";

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
            None => mock_companion(Role::InfraCluster, contract)?,
        };
        if !self.serves(&resource).await {
            // A cluster without the mock's CRDs and a provider without an InfraCluster kind:
            // nothing to reference (the Cluster is made as before, without the reference).
            return self.create_cluster(name, spec).await;
        }
        let cluster = self
            .create_cluster(
                name,
                ClusterSpec {
                    infrastructure: Some((&resource, name)),
                    control_plane: spec.control_plane,
                    endpoint: spec.endpoint,
                },
            )
            .await?;
        let mut obj = sample_object(&sample, name);
        obj["metadata"]["ownerReferences"] = json!([cluster_owner_ref(&cluster)]);
        obj["metadata"]["labels"][CLUSTER_NAME_LABEL] = json!(name);
        self.create(&resource, obj).await?;
        Ok(cluster)
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
        let (resource, sample) = mock_companion(Role::InfraMachine, contract)?;
        if !self.serves(&resource).await {
            // Without the mock's CRDs the Machine references an object that does not exist.
            return Ok(resource);
        }
        let mut obj = sample_object(&sample, name);
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

    /// What an initialized control plane leaves (CAPI `util/secret`, `util/kubeconfig`): the
    /// certificate Secrets `<cluster>-ca`, `-etcd`, `-proxy`, `-sa` (`tls.crt`/`tls.key`, type
    /// `cluster.x-k8s.io/secret`, cluster-name label) and, on an embedded run,
    /// `<cluster>-kubeconfig` (key `value`) for the workload cluster started for it, whose
    /// serving certificate `<cluster>-ca` signed. Owned by the Cluster (a plain reference, as
    /// the Cluster controller owns the kubeconfig it makes), so they go with it. Not recorded
    /// in the timeline: their contents never reach a report.
    pub async fn create_cluster_secrets(&self, cluster: &str) -> Result<(), EnvError> {
        use crate::capi_core::pki;
        let owner = self
            .api(&cluster_resource())
            .get(cluster)
            .await
            .map_err(|source| EnvError::Api {
                action: "get",
                object: format!("Cluster/{cluster}"),
                source,
            })?;
        let owner = serde_json::to_value(&owner).map_err(|e| EnvError::Invalid(e.to_string()))?;
        let mut owner_ref = cluster_owner_ref(&owner);
        if let Some(o) = owner_ref.as_object_mut() {
            o.remove("controller");
            o.remove("blockOwnerDeletion");
        }
        let pki_err =
            |e: pki::PkiError| EnvError::Invalid(format!("cluster certificates of {cluster}: {e}"));
        let mut secrets = Vec::new();
        match &self.workloads {
            Some(w) => {
                let ca = match self.existing_cluster_ca(cluster).await? {
                    Some(ca) => ca,
                    None => pki::Authority::new("kubernetes").map_err(pki_err)?,
                };
                let wc = w
                    .start(&self.namespace, cluster, ca)
                    .await
                    .map_err(|e| EnvError::Invalid(e.to_string()))?;
                secrets.extend(pki::certificate_secrets(cluster, &wc.ca).map_err(pki_err)?);
                let text = pki::kubeconfig(cluster, wc.url(), &wc.ca, Some(wc.token()))
                    .map_err(pki_err)?;
                secrets.push(pki::kubeconfig_secret(cluster, &text));
            }
            None => {
                let ca = pki::Authority::new("kubernetes").map_err(pki_err)?;
                secrets.extend(pki::certificate_secrets(cluster, &ca).map_err(pki_err)?);
            }
        }
        for mut secret in secrets {
            let name = secret
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            secret["metadata"]["namespace"] = json!(self.namespace);
            secret["metadata"]["ownerReferences"] = json!([owner_ref.clone()]);
            if let Some(labels) = secret["metadata"]["labels"].as_object_mut() {
                labels.extend(self.run_labels());
            }
            let typed: k8s_openapi::api::core::v1::Secret = serde_json::from_value(secret)
                .map_err(|e| EnvError::Invalid(format!("Secret {name}: {e}")))?;
            let api: kube::Api<k8s_openapi::api::core::v1::Secret> =
                kube::Api::namespaced(self.client.clone(), &self.namespace);
            match api.create(&kube::api::PostParams::default(), &typed).await {
                Ok(_) => self
                    .guard
                    .track(&secret_resource(), Some(&self.namespace), &name),
                // A second gate opening on the same Cluster keeps the first Secrets.
                Err(kube::Error::Api(s)) if s.code == 409 => {}
                Err(source) => {
                    return Err(EnvError::Api {
                        action: "create",
                        object: format!("Secret/{name}"),
                        source,
                    });
                }
            }
        }
        Ok(())
    }

    /// The CA of `<cluster>-ca` when that Secret exists with a certificate and key the tool can
    /// sign with (a provider's own: KCP and CABPK generate it when absent,
    /// `LookupOrGenerateCached`); `None` otherwise.
    async fn existing_cluster_ca(
        &self,
        cluster: &str,
    ) -> Result<Option<crate::capi_core::pki::Authority>, EnvError> {
        let api: kube::Api<k8s_openapi::api::core::v1::Secret> =
            kube::Api::namespaced(self.client.clone(), &self.namespace);
        let name = format!("{cluster}-ca");
        let secret = api.get_opt(&name).await.map_err(|source| EnvError::Api {
            action: "get",
            object: format!("Secret/{name}"),
            source,
        })?;
        let data = |key: &str| {
            secret
                .as_ref()
                .and_then(|s| s.data.as_ref())
                .and_then(|d| d.get(key))
                .map(|b| String::from_utf8_lossy(&b.0).to_string())
        };
        Ok(match (data("tls.crt"), data("tls.key")) {
            (Some(crt), Some(key)) => crate::capi_core::pki::Authority::from_pem(&crt, &key).ok(),
            _ => None,
        })
    }

    /// The Cluster's `spec.controlPlaneEndpoint`: on an embedded run the address its workload
    /// cluster will serve on (reserved now, served once the control plane is initialized, so
    /// a kubeconfig a provider builds from endpoint and `<cluster>-ca` reaches it); on a real
    /// cluster a name that resolves nowhere (nothing of the tool's is reachable from there).
    pub fn control_plane_endpoint(&self, cluster: &str) -> Result<(String, i64), EnvError> {
        match &self.workloads {
            Some(w) => {
                let addr = w
                    .reserve(&self.namespace, cluster)
                    .map_err(|e| EnvError::Invalid(e.to_string()))?;
                Ok((addr.ip().to_string(), i64::from(addr.port())))
            }
            None => Ok((UNREACHABLE_ENDPOINT_HOST.to_string(), 6443)),
        }
    }

    /// Starts the workload cluster of `cluster` on its reserved endpoint once the provider's
    /// `<cluster>-ca` exists (a control plane provider generates it, then writes
    /// `<cluster>-kubeconfig` from the endpoint and that CA and connects to find
    /// `kube-system/kubeadm-config`, as KCP does); `Ok(false)` when there is no such CA the
    /// tool can sign with, or no workload clusters (a real cluster).
    pub async fn start_workload_on_provider_ca(&self, cluster: &str) -> Result<bool, EnvError> {
        let Some(w) = &self.workloads else {
            return Ok(false);
        };
        let Some(ca) = self.existing_cluster_ca(cluster).await? else {
            return Ok(false);
        };
        w.start(&self.namespace, cluster, ca)
            .await
            .map_err(|e| EnvError::Invalid(e.to_string()))?;
        Ok(true)
    }

    /// Marks the control plane initialized on the Cluster (status flag + conditions), after
    /// creating what an initialized control plane leaves ([`Self::create_cluster_secrets`]).
    pub async fn set_control_plane_initialized(&self, cluster: &str) -> Result<Value, EnvError> {
        self.create_cluster_secrets(cluster).await?;
        let now = jiff::Timestamp::now()
            .strftime("%Y-%m-%dT%H:%M:%SZ")
            .to_string();
        // v1beta2: `initialization.controlPlaneInitialized` and the metav1 condition in
        // `status.conditions`; the v1beta1 condition (no reason needed) where core v1.11 keeps
        // it, `status.deprecated.v1beta1.conditions`, which a v1beta1 reader sees as its
        // `status.conditions` through conversion.
        self.patch_status(
            &cluster_resource(),
            cluster,
            json!({"status": {
                "initialization": {"infrastructureProvisioned": true, "controlPlaneInitialized": true},
                "conditions": [{"type": "ControlPlaneInitialized", "status": "True", "reason": "Initialized",
                                "message": "", "lastTransitionTime": now}],
                "deprecated": {"v1beta1": {"conditions": [
                    {"type": "ControlPlaneInitialized", "status": "True", "lastTransitionTime": now}]}}}}),
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

    /// Creates a Machine of `cluster` referencing `infra` and what `m` names.
    pub async fn create_machine(
        &self,
        name: &str,
        cluster: &str,
        infra: (&ApiResource, &str),
        m: MachineSpec<'_>,
    ) -> Result<Value, EnvError> {
        let MachineSpec {
            bootstrap_config,
            data_secret,
            failure_domain,
            control_plane,
        } = m;
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
        spec["version"] = json!(MACHINE_VERSION);
        let mut meta = self.core_meta(name, Some(cluster));
        if control_plane {
            // A control-plane Machine as its owner labels it (KCP adds `control-plane-name` too;
            // a stand-alone one has the key alone): CABPK tells init / join-control-plane from a
            // worker join by the key's presence (`util.IsControlPlaneMachine`).
            meta["labels"][CONTROL_PLANE_LABEL] = json!("");
        }
        let obj = json!({"metadata": meta, "spec": spec});
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
                    "version": MACHINE_VERSION,
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

/// An object a sample refers to, to create before the scenario (see
/// [`Env::resolve_sample_references`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Referenced {
    /// `<group>/<version>` and kind of the object.
    pub api_version: String,
    pub kind: String,
    /// The object to create (`metadata.name` already the run's name).
    pub object: Value,
}

/// The group of a reference: v1beta2 `apiGroup`, or the group of a v1beta1 `apiVersion`.
fn reference_group(r: &serde_json::Map<String, Value>) -> Option<String> {
    if let Some(g) = r.get("apiGroup").and_then(Value::as_str) {
        return Some(g.to_string());
    }
    let av = r.get("apiVersion").and_then(Value::as_str)?;
    Some(av.split_once('/').map_or("", |(g, _)| g).to_string())
}

/// The object references in a sample's `spec` (any mapping with `kind`, `name` and `apiGroup`
/// or `apiVersion`, e.g. a control plane's `machineTemplate.infrastructureRef`) that resolve:
/// to a `--sample` document of that group, kind and name, or to the mock's default object of a
/// mock kind. Returns the sample with those references renamed to `<prefix>-<name>` (and a
/// v1beta1 `namespace` set to the run's), and the objects to create.
pub fn plan_sample_references(
    sample: &Value,
    documents: &[Value],
    contract: Contract,
    prefix: &str,
    namespace: &str,
) -> (Value, Vec<Referenced>) {
    let mut sample = sample.clone();
    let mut out: Vec<Referenced> = Vec::new();
    if let Some(spec) = sample.get_mut("spec") {
        walk_references(spec, &mut |r| {
            let (Some(group), Some(kind), Some(name)) = (
                reference_group(r),
                r.get("kind").and_then(Value::as_str).map(str::to_string),
                r.get("name").and_then(Value::as_str).map(str::to_string),
            ) else {
                return;
            };
            let new_name = truncate_name(&format!("{prefix}-{name}"));
            let from_docs = documents.iter().find(|d| {
                let av = d
                    .get("apiVersion")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                av.split_once('/').map(|(g, _)| g) == Some(group.as_str())
                    && d.get("kind").and_then(Value::as_str) == Some(kind.as_str())
                    && d.pointer("/metadata/name").and_then(Value::as_str) == Some(name.as_str())
            });
            let found = match from_docs {
                Some(d) => {
                    let mut obj = sample_object(d, &new_name);
                    if let Some(extra) = d.as_object() {
                        // Kinds without `spec` (ConfigMaps, Secrets) keep their top-level data.
                        for (k, v) in extra {
                            if !["apiVersion", "kind", "metadata", "spec", "status"]
                                .contains(&k.as_str())
                            {
                                obj[k] = v.clone();
                            }
                        }
                    }
                    d.get("apiVersion")
                        .and_then(Value::as_str)
                        .map(|av| (av.to_string(), obj))
                }
                None if group.ends_with(crate::plan::subjects::MOCK_GROUP_SUFFIX) => {
                    super::baseline::SCENARIO_ROLES
                        .iter()
                        .find(|role| {
                            super::baseline::mock_kind(**role)
                                .is_some_and(|(g, k)| g == group && k == kind)
                        })
                        .and_then(|role| mock_companion(*role, contract).ok())
                        .map(|(res, s)| (res.api_version, sample_object(&s, &new_name)))
                }
                None => None,
            };
            let Some((api_version, object)) = found else {
                return;
            };
            r.insert("name".into(), json!(new_name));
            if r.contains_key("namespace") {
                r.insert("namespace".into(), json!(namespace));
            }
            if !out.iter().any(|o| {
                o.object.pointer("/metadata/name") == object.pointer("/metadata/name")
                    && o.kind == kind
            }) {
                out.push(Referenced {
                    api_version,
                    kind,
                    object,
                });
            }
        });
    }
    (sample, out)
}

fn walk_references(v: &mut Value, f: &mut dyn FnMut(&mut serde_json::Map<String, Value>)) {
    match v {
        Value::Object(m) => {
            let is_ref = m.get("kind").is_some_and(Value::is_string)
                && m.get("name").is_some_and(Value::is_string)
                && (m.get("apiGroup").is_some_and(Value::is_string)
                    || m.get("apiVersion").is_some_and(Value::is_string));
            if is_ref {
                f(m);
                return;
            }
            for child in m.values_mut() {
                walk_references(child, f);
            }
        }
        Value::Array(items) => {
            for child in items {
                walk_references(child, f);
            }
        }
        _ => {}
    }
}

fn truncate_name(name: &str) -> String {
    let cut: String = name.chars().take(63).collect();
    cut.trim_end_matches(['-', '.']).to_string()
}

impl Env {
    /// Creates the objects `subject`'s sample refers to ([`plan_sample_references`]) in the run
    /// namespace and returns the subject with its sample's references rewritten to them
    /// (`None`: nothing to resolve).
    pub async fn resolve_sample_references(
        &self,
        subject: &Subject,
    ) -> Result<Option<Subject>, EnvError> {
        let Some(sample) = &subject.sample else {
            return Ok(None);
        };
        let contract = subject.column.contract.unwrap_or(Contract::V1Beta2);
        let prefix = format!(
            "{}-{}-ref",
            subject.resource.kind.to_lowercase(),
            contract.short()
        );
        let (rewritten, referenced) = plan_sample_references(
            sample,
            &subject.companions.sample_documents,
            contract,
            &prefix,
            &self.namespace,
        );
        if referenced.is_empty() {
            return Ok(None);
        }
        for r in referenced {
            let (group, version) = r
                .api_version
                .split_once('/')
                .unwrap_or(("", r.api_version.as_str()));
            let gvk = kube::api::GroupVersionKind::gvk(group, version, &r.kind);
            let (resource, _) = kube::discovery::pinned_kind(&self.client, &gvk)
                .await
                .map_err(|source| EnvError::Api {
                    action: "discover",
                    object: format!(
                        "{} (referenced by the {} sample)",
                        r.kind, subject.resource.kind
                    ),
                    source,
                })?;
            self.create(&resource, r.object).await?;
        }
        let mut resolved = subject.clone();
        resolved.sample = Some(rewritten);
        Ok(Some(resolved))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_samples_references_resolve_to_sample_documents_or_mock_defaults() {
        let sample = json!({"spec": {
            "machineTemplate": {"infrastructureRef": {"apiGroup": "infrastructure.mock.capi-conformance.io", "kind": "MockMachineTemplate", "name": "tmpl"}},
            "other": {"apiVersion": "infrastructure.foo.io/v1beta1", "kind": "FooTemplate", "name": "foo", "namespace": "default"},
            "unknown": {"apiGroup": "x.io", "kind": "X", "name": "x"},
            "replicas": 1,
        }});
        let docs = vec![
            json!({"apiVersion": "infrastructure.foo.io/v1beta1", "kind": "FooTemplate",
                               "metadata": {"name": "foo", "namespace": "elsewhere"}, "spec": {"template": {"spec": {"size": 2}}}}),
        ];
        let (rewritten, objs) =
            plan_sample_references(&sample, &docs, Contract::V1Beta1, "kcp-b1-ref", "run-ns");
        assert_eq!(
            rewritten
                .pointer("/spec/machineTemplate/infrastructureRef/name")
                .unwrap(),
            "kcp-b1-ref-tmpl"
        );
        assert_eq!(
            rewritten.pointer("/spec/other/name").unwrap(),
            "kcp-b1-ref-foo"
        );
        assert_eq!(
            rewritten.pointer("/spec/other/namespace").unwrap(),
            "run-ns"
        );
        assert_eq!(rewritten.pointer("/spec/unknown/name").unwrap(), "x");
        assert_eq!(objs.len(), 2);
        assert_eq!(objs[0].kind, "MockMachineTemplate");
        assert_eq!(
            objs[0].api_version,
            "infrastructure.mock.capi-conformance.io/v1beta1"
        );
        assert!(objs[0].object.pointer("/spec/template/spec").is_some());
        assert_eq!(objs[1].api_version, "infrastructure.foo.io/v1beta1");
        assert_eq!(
            objs[1].object.pointer("/spec/template/spec/size").unwrap(),
            2
        );
        assert_eq!(
            objs[1].object.pointer("/metadata/name").unwrap(),
            "kcp-b1-ref-foo"
        );
        assert!(objs[1].object.pointer("/metadata/namespace").is_none());
    }
}

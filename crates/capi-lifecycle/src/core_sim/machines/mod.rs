//! CAPI core's Machine controller for the Machines a control plane provider creates (KCP clones
//! an InfraMachine and a BootstrapConfig for each, owns them "on create", and waits for core),
//! and the Cluster controller's copy of the control plane's initialized flag. Mirrors CAPI
//! v1.11 `internal/controllers/machine` (docs/core-simulation.md "Machines a control plane
//! creates"):
//!
//! - `ensureExternalOwnershipAndWatch`: on the referenced bootstrap config and InfraMachine,
//!   the control plane's (and MachineSet's) on-create owner references are removed, the Machine
//!   becomes the controller (`SetControllerReference`: `blockOwnerDeletion`) and the
//!   cluster-name label is set; the finalizer `machine.cluster.x-k8s.io` goes on the Machine;
//! - `reconcileBootstrap` / `reconcileInfrastructure`: the copies of [`super::copies`];
//! - `reconcileNode`: the Node of the Machine's `spec.providerID` in the workload cluster
//!   (`<cluster>-kubeconfig`) becomes `status.nodeRef`;
//! - `updateStatus`: `BootstrapConfigReady`, `InfrastructureReady`, `NodeReady`, `NodeHealthy`,
//!   `Deleting`, the `Ready` summary over them and the Machine's `spec.readinessGates`, then
//!   `Available` (`Ready` for `minReadySeconds`), and `status.phase`;
//! - `reconcileDelete`: wait for the pre-drain and pre-terminate hooks' annotations to go, delete
//!   the InfraMachine and the bootstrap config, wait until both are gone, remove the finalizer.
//!   (No drain: a control plane's workload Nodes are the infrastructure provider's to remove.)
//!
//! Woken by watches (the Machines, each referenced kind, the workload cluster's Nodes), with a
//! short requeue while something is pending, as a controller requeues.

mod references;
mod status;
mod v1beta1;
mod workload;

use super::copies::valid_endpoint;
use workload::NoNode;

use super::{
    CLUSTER_NAME_LABEL, CORE_GROUP, PAUSED_ANNOTATION, cluster_resource, machine_resource,
};
use crate::env::{Env, EnvError, key};
use futures::StreamExt;
use kube::api::{Api, ListParams};
use kube::discovery::ApiResource;
use kube::runtime::watcher;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

/// Core's Machine finalizer (`clusterv1.MachineFinalizer`).
pub const MACHINE_FINALIZER: &str = "machine.cluster.x-k8s.io";
const PRE_DRAIN_HOOK: &str = "pre-drain.delete.hook.machine.cluster.x-k8s.io";
const PRE_TERMINATE_HOOK: &str = "pre-terminate.delete.hook.machine.cluster.x-k8s.io";
/// How soon a reconcile that is waiting for something no watch reports runs again.
const REQUEUE: Duration = Duration::from_millis(500);
/// How long one attempt to reach the workload cluster may take, and the pause after one failed.
const WORKLOAD_RETRY: Duration = Duration::from_secs(2);

/// What the simulated Machine controller has seen so far.
#[derive(Debug, Default, Clone)]
pub struct MachineProgress {
    /// Machines of the control plane not being deleted.
    pub machines: usize,
    /// Of those, the ones whose Node was found in the workload cluster (`status.nodeRef`).
    pub with_node: usize,
    /// The last reason a Machine could not get its Node (no kubeconfig, no such Node, …).
    pub waiting_for_node: Option<String>,
    /// Whether the workload cluster answered a list of its Nodes (so a missing Node is known
    /// to be missing, not merely unseen).
    pub workload_listed: bool,
    /// Why the last attempt to play a control-plane node's agent (`--workload-object`) failed;
    /// None once its writes are in the workload cluster, or while none was attempted.
    pub node_agent_failed: Option<String>,
}

/// The running controller; stops when dropped (call [`Self::stop`] to release what it holds).
pub struct MachineController {
    task: JoinHandle<()>,
    progress: Arc<Mutex<MachineProgress>>,
    env: Env,
    cluster: String,
}

impl Drop for MachineController {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl MachineController {
    pub fn progress(&self) -> MachineProgress {
        self.progress.lock().map(|p| p.clone()).unwrap_or_default()
    }

    /// Stops the controller and takes its finalizer off every Machine of the cluster still
    /// present (a scenario that ended early: nothing of the tool's may keep an object).
    pub async fn stop(self) {
        self.task.abort();
        let api = self.env.api(&machine_resource());
        let params =
            ListParams::default().labels(&format!("{CLUSTER_NAME_LABEL}={}", self.cluster));
        let Ok(list) = api.list(&params).await else {
            return;
        };
        for m in list.items {
            let fins = m.metadata.finalizers.clone().unwrap_or_default();
            if !fins.iter().any(|f| f == MACHINE_FINALIZER) {
                continue;
            }
            let rest: Vec<&String> = fins.iter().filter(|f| *f != MACHINE_FINALIZER).collect();
            let name = m.metadata.name.clone().unwrap_or_default();
            let _ = self
                .env
                .merge_patch(
                    &machine_resource(),
                    &name,
                    json!({"metadata": {"finalizers": rest, "resourceVersion": m.metadata.resource_version}}),
                    "remove finalizer (core simulation stopped)",
                )
                .await;
        }
    }
}

impl Env {
    /// Starts core's Machine controller for the Machines of `cluster` that `control_plane`
    /// (the Cluster's `controlPlaneRef` kind) creates, and the Cluster controller's copy of that
    /// control plane's initialized flag.
    pub fn start_machine_controller(
        &self,
        cluster: &str,
        control_plane: &ApiResource,
        control_plane_name: &str,
    ) -> MachineController {
        let progress = Arc::new(Mutex::new(MachineProgress::default()));
        // Core's acts happen in the background at the pace of core and provider, not as the
        // scenario's steps: not in the scenario's timeline, which stays the same run after run.
        let mut env = self.clone();
        env.recorder = crate::timeline::Recorder::new();
        let sim = Sim {
            env,
            cluster: cluster.to_string(),
            control_plane: control_plane.clone(),
            control_plane_name: control_plane_name.to_string(),
            wake: Arc::new(Notify::new()),
            progress: progress.clone(),
            resources: HashMap::new(),
            watches: Vec::new(),
            workload: None,
            nodes_watched: false,
            workload_retry_at: None,
            node_writes_done: false,
        };
        MachineController {
            task: tokio::spawn(sim.run()),
            progress,
            env: self.clone(),
            cluster: cluster.to_string(),
        }
    }
}

struct Sim {
    env: Env,
    cluster: String,
    control_plane: ApiResource,
    control_plane_name: String,
    wake: Arc<Notify>,
    progress: Arc<Mutex<MachineProgress>>,
    /// `(group, kind)` → the resource read at the version core's contract names.
    resources: HashMap<(String, String), ApiResource>,
    watches: Vec<AbortOnDrop>,
    /// The workload cluster's client (from `<cluster>-kubeconfig`) once it connects.
    workload: Option<kube::Client>,
    /// Whether its Nodes are watched (from the first list that worked).
    nodes_watched: bool,
    /// No new attempt to reach the workload cluster before this (after one failed).
    workload_retry_at: Option<tokio::time::Instant>,
    /// Whether what the control-plane node's agent writes (`--workload-object`) is in this
    /// Sim's Cluster's workload cluster ([`crate::core_sim::node_agent`]); a Sim serves one
    /// Cluster (`cluster`), so the flag is kept per Cluster.
    node_writes_done: bool,
}

struct AbortOnDrop(JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Wakes `wake` on every event of `api` (filtered by `config`).
fn wake_on<K>(api: Api<K>, config: watcher::Config, wake: Arc<Notify>) -> AbortOnDrop
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug + Send + 'static,
{
    AbortOnDrop(tokio::spawn(async move {
        let mut stream = watcher::watcher(api, config).boxed();
        while let Some(item) = stream.next().await {
            if item.is_err() {
                // The watcher retries by itself on the next poll; not at once.
                tokio::time::sleep(REQUEUE).await;
            }
            wake.notify_one();
        }
    }))
}

/// What one pass found still to do.
#[derive(Default)]
struct Pass {
    pending: bool,
    machines: usize,
    with_node: usize,
    waiting_for_node: Option<String>,
}

impl Sim {
    fn selector(&self) -> String {
        format!("{CLUSTER_NAME_LABEL}={}", self.cluster)
    }

    async fn run(mut self) {
        let machines = self.env.api(&machine_resource());
        self.watches.push(wake_on(
            machines,
            watcher::Config::default().labels(&self.selector()),
            self.wake.clone(),
        ));
        self.watches.push(wake_on(
            self.env.api(&self.control_plane),
            watcher::Config::default()
                .fields(&format!("metadata.name={}", self.control_plane_name)),
            self.wake.clone(),
        ));
        loop {
            let pass = self.reconcile_all().await;
            if let Ok(mut p) = self.progress.lock() {
                p.machines = pass.machines;
                p.with_node = pass.with_node;
                p.workload_listed |= self.nodes_watched;
                if pass.waiting_for_node.is_some() {
                    p.waiting_for_node = pass.waiting_for_node;
                }
            }
            if pass.pending {
                let _ = tokio::time::timeout(REQUEUE, self.wake.notified()).await;
            } else {
                self.wake.notified().await;
            }
        }
    }

    async fn reconcile_all(&mut self) -> Pass {
        let mut pass = Pass::default();
        let cluster = match self
            .env
            .api(&cluster_resource())
            .get_opt(&self.cluster)
            .await
        {
            Ok(Some(c)) => serde_json::to_value(c).unwrap_or(Value::Null),
            // No Cluster (yet, or any more): core's Machine controller waits for it.
            Ok(None) | Err(_) => {
                pass.pending = true;
                return pass;
            }
        };
        // The Cluster controller does nothing for a paused Cluster (`spec.paused`, or the
        // paused annotation on the Cluster itself: `paused.EnsurePausedCondition`).
        let cluster_paused = get_bool(&cluster, "/spec/paused") || paused_annotation(&cluster);
        if !cluster_paused && self.copy_control_plane_initialized(&cluster).await.is_err() {
            pass.pending = true;
        }
        let api = self.env.api(&machine_resource());
        let Ok(list) = api
            .list(&ListParams::default().labels(&self.selector()))
            .await
        else {
            pass.pending = true;
            return pass;
        };
        for m in list.items {
            let Ok(m) = serde_json::to_value(&m) else {
                continue;
            };
            if !self.is_ours(&m) {
                continue;
            }
            // `paused.EnsurePausedCondition`: a paused Machine (its Cluster's `spec.paused`, or
            // its own paused annotation) gets `Paused` True and nothing else, deletion
            // included.
            let paused = get_bool(&cluster, "/spec/paused") || paused_annotation(&m);
            if paused {
                if self.set_paused(&m).await.is_err() {
                    pass.pending = true;
                }
                continue;
            }
            let deleting = m.pointer("/metadata/deletionTimestamp").is_some();
            let done = if deleting {
                self.reconcile_delete(&m).await
            } else {
                pass.machines += 1;
                let r = self.reconcile_normal(&m, &cluster).await;
                match &r {
                    Ok(Step::Node) => pass.with_node += 1,
                    Ok(Step::NoNode(why)) => pass.waiting_for_node = Some(why.clone()),
                    _ => {}
                }
                r.map(|s| matches!(s, Step::Node))
            };
            if !matches!(done, Ok(true)) {
                pass.pending = true;
            }
        }
        pass
    }

    /// A Machine of the control plane under test (its owner, as KCP creates them).
    fn is_ours(&self, m: &Value) -> bool {
        m.pointer("/metadata/ownerReferences")
            .and_then(Value::as_array)
            .is_some_and(|refs| {
                refs.iter().any(|o| {
                    o.get("kind").and_then(Value::as_str) == Some(self.control_plane.kind.as_str())
                        && o.get("name").and_then(Value::as_str)
                            == Some(self.control_plane_name.as_str())
                })
            })
    }

    /// The Cluster controller's `reconcileControlPlane`: the control plane's initialized flag
    /// (v1beta2 `status.initialization.controlPlaneInitialized`, v1beta1 `status.initialized`)
    /// onto the Cluster, with its `ControlPlaneInitialized` conditions (what CABPK waits for
    /// before it joins another control plane Machine); then, while the Cluster's
    /// `spec.controlPlaneEndpoint` is not valid (no host or no port), the control plane's.
    async fn copy_control_plane_initialized(&self, cluster: &Value) -> Result<(), EnvError> {
        let cp = self
            .env
            .api(&self.control_plane)
            .get_opt(&self.control_plane_name)
            .await
            .map_err(|source| EnvError::Api {
                action: "read",
                object: key(&self.control_plane, &self.control_plane_name),
                source,
            })?;
        let Some(cp) = cp.and_then(|c| serde_json::to_value(c).ok()) else {
            return Ok(());
        };
        if cp.pointer("/metadata/deletionTimestamp").is_some() {
            return Ok(());
        }
        let initialized = get_bool(&cp, "/status/initialization/controlPlaneInitialized")
            || get_bool(&cp, "/status/initialized");
        let was = get_bool(cluster, "/status/initialization/controlPlaneInitialized");
        if !initialized && !was {
            return Ok(());
        }
        if !valid_endpoint(cluster.pointer("/spec/controlPlaneEndpoint"))
            && let Some(endpoint) = cp.pointer("/spec/controlPlaneEndpoint")
        {
            self.env
                .merge_patch(
                    &cluster_resource(),
                    &self.cluster,
                    json!({"spec": {"controlPlaneEndpoint": endpoint}}),
                    "copy control plane endpoint",
                )
                .await?;
        }
        if was {
            return Ok(());
        }
        self.env
            .mark_control_plane_initialized(&self.cluster, "copy control plane initialized")
            .await
            .map(|_| ())
    }

    async fn reconcile_normal(&mut self, m: &Value, cluster: &Value) -> Result<Step, EnvError> {
        let name = name_of(m).to_string();
        let finalizers = finalizers_of(m);
        if !finalizers.iter().any(|f| f == MACHINE_FINALIZER) {
            let mut fins = finalizers.clone();
            fins.push(json!(MACHINE_FINALIZER));
            self.set_finalizers(m, fins, "add finalizer (core's Machine controller)")
                .await?;
            return Ok(Step::Pending);
        }
        let (bootstrap, infra) = self.references(m).await?;
        for (resource, n, obj) in [&bootstrap, &infra].into_iter().flatten() {
            if let Some(obj) = obj {
                self.own(m, resource, n, obj).await?;
            }
        }
        let bootstrap_ready = match &bootstrap {
            None => true,
            Some((_, _, Some(c))) => {
                ready(c, "dataSecretCreated")
                    && c.pointer("/status/dataSecretName")
                        .and_then(Value::as_str)
                        .is_some()
            }
            Some(_) => false,
        };
        let infra_ready = matches!(&infra, Some((_, _, Some(i))) if ready(i, "provisioned")
            && i.pointer("/spec/providerID").and_then(Value::as_str).is_some_and(|s| !s.is_empty()));
        if bootstrap_ready
            && let Some((resource, n, Some(_))) = &bootstrap
            && !(m.pointer("/spec/bootstrap/dataSecretName").is_some()
                && init(m, "bootstrapDataSecretCreated"))
        {
            self.env.copy_machine_bootstrap(&name, resource, n).await?;
            return Ok(Step::Pending);
        }
        if infra_ready
            && let Some((resource, n, Some(i))) = &infra
            && (!init(m, "infrastructureProvisioned")
                || m.pointer("/spec/providerID") != i.pointer("/spec/providerID"))
        {
            self.env
                .copy_machine_infrastructure(&name, resource, n)
                .await?;
            return Ok(Step::Pending);
        }
        let provider_id = m
            .pointer("/spec/providerID")
            .and_then(Value::as_str)
            .map(str::to_string);
        let node = match &provider_id {
            Some(id) => self.node_of(id).await,
            // Not asked: core's ClusterCache state is what it is, but no Node can match yet.
            None => Err(NoNode {
                connected: self.workload.is_some(),
                why: "the Machine has no spec.providerID yet".to_string(),
            }),
        };
        let mut step = match &node {
            Ok(_) => Step::Node,
            Err(n) => Step::NoNode(n.why.clone()),
        };
        self.update_status(m, cluster, &bootstrap, &infra, &node)
            .await?;
        // The Node is there, so its agent runs: what it writes into the workload cluster.
        if node.is_ok()
            && !self.node_writes_done
            && !self.env.node_writes.is_empty()
            && let Some(client) = self.workload.clone()
        {
            let failed = match self.env.node_writes.write(&client).await {
                Ok(_) => {
                    self.node_writes_done = true;
                    None
                }
                Err(e) => {
                    let why = format!("playing the node's agent: {e}");
                    step = Step::NoNode(why.clone());
                    Some(why)
                }
            };
            if let Ok(mut p) = self.progress.lock() {
                p.node_agent_failed = failed;
            }
        }
        Ok(step)
    }

    /// Writes Machine `m`'s finalizers, under the resourceVersion it was read at.
    async fn set_finalizers(
        &self,
        m: &Value,
        finalizers: Vec<Value>,
        action: &str,
    ) -> Result<(), EnvError> {
        self.env
            .merge_patch(
                &machine_resource(),
                name_of(m),
                json!({"metadata": {"finalizers": finalizers, "resourceVersion": m.pointer("/metadata/resourceVersion")}}),
                action,
            )
            .await
            .map(|_| ())
    }

    /// `reconcileDelete`: `Ok(true)` once the finalizer is off.
    async fn reconcile_delete(&mut self, m: &Value) -> Result<bool, EnvError> {
        let finalizers = finalizers_of(m);
        if !finalizers.iter().any(|f| f == MACHINE_FINALIZER) {
            return Ok(true);
        }
        let hook = |prefix: &str| {
            m.pointer("/metadata/annotations")
                .and_then(Value::as_object)
                .is_some_and(|a| a.keys().any(|k| k.starts_with(prefix)))
        };
        let waiting = if hook(PRE_DRAIN_HOOK) {
            Some("WaitingForPreDrainHook")
        } else if hook(PRE_TERMINATE_HOOK) {
            Some("WaitingForPreTerminateHook")
        } else {
            None
        };
        if let Some(reason) = waiting {
            self.set_deleting(m, reason).await?;
            return Ok(false);
        }
        let (bootstrap, infra) = self.references(m).await?;
        let mut present = false;
        for (resource, n, obj) in [&infra, &bootstrap].into_iter().flatten() {
            if let Some(obj) = obj {
                present = true;
                if obj.pointer("/metadata/deletionTimestamp").is_none() {
                    self.env.delete(resource, n).await?;
                }
            }
        }
        if present {
            let reason = if infra.as_ref().is_some_and(|(_, _, o)| o.is_some()) {
                "WaitingForInfrastructureDeletion"
            } else {
                "WaitingForBootstrapDeletion"
            };
            self.set_deleting(m, reason).await?;
            return Ok(false);
        }
        let rest: Vec<Value> = finalizers
            .into_iter()
            .filter(|f| f != MACHINE_FINALIZER)
            .collect();
        self.set_finalizers(m, rest, "remove finalizer (core's Machine controller)")
            .await?;
        Ok(true)
    }
}

/// A Machine's (or any object's) name.
fn name_of(m: &Value) -> &str {
    m.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn finalizers_of(m: &Value) -> Vec<Value> {
    m.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// A referenced object: its resource, its name and the object (`None`: it does not exist).
type Referenced = Option<(ApiResource, String, Option<Value>)>;

enum Step {
    /// Waiting for a write of the tool's to be seen, or for a provider.
    Pending,
    /// The Machine has its Node.
    Node,
    /// Everything but the Node (why not).
    NoNode(String),
}

/// A provider object's readiness at the v1beta2 contract path
/// (`status.initialization.<field>`) or the v1beta1 one (`status.ready`).
fn ready(obj: &Value, field: &str) -> bool {
    obj.pointer(&format!("/status/initialization/{field}"))
        .or_else(|| obj.pointer("/status/ready"))
        .and_then(Value::as_bool)
        == Some(true)
}

/// Whether `obj` carries `cluster.x-k8s.io/paused` (`annotations.HasPaused`).
fn paused_annotation(obj: &Value) -> bool {
    obj.pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .is_some_and(|a| a.contains_key(PAUSED_ANNOTATION))
}

fn get_bool(v: &Value, pointer: &str) -> bool {
    v.pointer(pointer).and_then(Value::as_bool) == Some(true)
}

fn init(m: &Value, field: &str) -> bool {
    m.pointer(&format!("/status/initialization/{field}"))
        .and_then(Value::as_bool)
        == Some(true)
}

fn now() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

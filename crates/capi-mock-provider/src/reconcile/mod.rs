//! Reconcilers, one file per role, sharing the contract's common steps: owner gate, cluster
//! lookup, pause (with the v1beta2 Paused condition) and finalizer handling.

pub mod bootstrap_config;
pub mod control_plane;
pub mod cp_machines;
pub mod infra_cluster;
pub mod infra_machine;
pub mod infra_machine_pool;
pub mod ipam;
pub mod secrets;
pub mod worker_join;

use super::conditions::{self, Wanted};
use super::core::{self, CoreKind};
use super::faults::{FaultSet, PAUSE_BY_ANNOTATION_FAULT};
use super::infra::SimulatedInfra;
use super::kinds::MockKind;
use super::object::{self, CLUSTER_NAME_LABEL, FIELD_MANAGER, PAUSED_ANNOTATION};
use super::options::MockOptions;
use capi_contract::contract::{Contract, Role};
use capi_contract::rule_ids as id;
use kube::api::{Api, Patch, PatchParams};
use kube::core::DynamicObject;
use kube::runtime::controller::Action;
use kube::runtime::finalizer;
use kube::{Client, ResourceExt};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Shared state of all reconcilers.
pub struct Ctx {
    pub client: Client,
    pub opts: MockOptions,
    pub infra: SimulatedInfra,
    /// Clusters as a lagging informer shows them (informer-lag mode), else read from the server.
    pub clusters: Option<crate::cluster_cache::LaggingClusters>,
    /// Retries of failed reconciles (workqueue-backoff mode).
    pub rate_limiter: crate::backoff::RateLimiter,
}

impl Ctx {
    /// How to wait for something no watch reports: a fixed recheck, or, in workqueue-backoff
    /// mode, an error retried with the workqueue's backoff (as CAPI's providers return one).
    pub fn recheck(&self, why: &'static str) -> Result<Action> {
        if self.opts.core.workqueue_backoff {
            Err(ReconcileError::Waiting(why))
        } else {
            Ok(Action::requeue(RECHECK))
        }
    }

    /// The Cluster `name`: from the lagging cache in informer-lag mode, else from the server.
    pub async fn cluster(
        &self,
        namespace: &str,
        name: &str,
    ) -> kube::Result<Option<DynamicObject>> {
        match &self.clusters {
            Some(cache) => Ok(cache.get(namespace, name)),
            None => {
                core::get(
                    &self.client,
                    self.opts.core,
                    CoreKind::Cluster,
                    namespace,
                    name,
                )
                .await
            }
        }
    }
}

/// Why a reconcile failed (retried by the controller's error policy).
#[derive(Debug, thiserror::Error)]
pub enum ReconcileError {
    #[error("API request failed: {0}")]
    Kube(#[from] kube::Error),
    #[error("finalizer handling failed: {0}")]
    Finalizer(#[source] Box<finalizer::Error<ReconcileError>>),
    #[error("object has no namespace")]
    NoNamespace,
    #[error("could not build an object: {0}")]
    Invalid(String),
    /// Workqueue-backoff mode: what CAPI's providers return as an error while they wait.
    #[error("waiting: {0}")]
    Waiting(&'static str),
}

pub type Result<T, E = ReconcileError> = std::result::Result<T, E>;

/// How long to wait before looking again when waiting on something no watch reports.
pub const RECHECK: Duration = Duration::from_secs(2);

/// The object under reconciliation, with what every step needs.
pub struct Subject {
    /// The object as the watch delivered it.
    pub obj: Arc<DynamicObject>,
    /// The object as last returned by one of this reconcile's writes.
    latest: Mutex<Arc<DynamicObject>>,
    pub kind: MockKind,
    pub contract: Contract,
    pub faults: FaultSet,
    pub api: Api<DynamicObject>,
    pub namespace: String,
    pub name: String,
}

impl Subject {
    pub fn new(obj: Arc<DynamicObject>, kind: MockKind, ctx: &Ctx) -> Result<Subject> {
        let namespace = obj.namespace().ok_or(ReconcileError::NoNamespace)?;
        let contract = object::contract_of(&obj);
        let api =
            Api::namespaced_with(ctx.client.clone(), &namespace, &kind.api_resource(contract));
        Ok(Subject {
            faults: FaultSet::for_object(&ctx.opts.faults, &obj),
            name: obj.name_any(),
            latest: Mutex::new(obj.clone()),
            obj,
            kind,
            contract,
            api,
            namespace,
        })
    }

    /// Whether the fault breaking `<role prefix>/<rule>` is on.
    pub fn fault(&self, rule: &str) -> bool {
        self.faults
            .has_named(&format!("{}/{rule}", rule_prefix(self.kind.role)))
    }

    pub fn is_b1(&self) -> bool {
        self.contract == Contract::V1Beta1
    }

    /// The mock's finalizer for this kind, e.g. `infrastructure.mock.capi-conformance.io/mockcluster`.
    pub fn finalizer(&self) -> String {
        format!("{}/{}", self.kind.group, self.kind.kind.to_lowercase())
    }

    /// Stable id of the simulated infrastructure of this object.
    pub fn infra_id(&self) -> String {
        format!(
            "{}/",
            self.obj
                .uid()
                .unwrap_or_else(|| format!("{}/{}", self.namespace, self.name))
        )
    }

    /// `mock://<namespace>/<name>/<uid prefix>` (+ `/<index>` for pool instances); ≤ 512 chars.
    pub fn provider_id(&self, index: Option<usize>) -> String {
        let uid = self.obj.uid().unwrap_or_default();
        let prefix: String = uid.chars().take(8).collect();
        let mut id = format!("mock://{}/{}/{}", self.namespace, self.name, prefix);
        if let Some(i) = index {
            id.push_str(&format!("/{i}"));
        }
        id.chars().take(512).collect()
    }

    /// The freshest copy of the object this reconcile has seen.
    pub fn latest(&self) -> Arc<DynamicObject> {
        self.latest
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn remember(&self, obj: DynamicObject) -> Arc<DynamicObject> {
        let obj = Arc::new(obj);
        *self.latest.lock().unwrap_or_else(|p| p.into_inner()) = obj.clone();
        obj
    }

    pub fn params() -> PatchParams {
        PatchParams {
            field_manager: Some(FIELD_MANAGER.into()),
            ..Default::default()
        }
    }

    /// Merge-patches `status` through the status subresource at the object's contract version,
    /// on the condition that the object is still the one it was computed from.
    pub async fn patch_status(&self, status: Value) -> Result<Arc<DynamicObject>> {
        let body = self.on_latest(json!({ "status": status }));
        let obj = self
            .api
            .patch_status(&self.name, &Self::params(), &Patch::Merge(&body))
            .await?;
        Ok(self.remember(obj))
    }

    /// `body` with the resourceVersion of the freshest copy this reconcile has seen, so the
    /// server refuses the write (409 Conflict, retried after a fresh read) when the object
    /// changed meanwhile: the mock never writes what it worked out from a stale cache, e.g.
    /// status from a copy that does not show the paused annotation yet.
    fn on_latest(&self, mut body: Value) -> Value {
        if let (Some(rv), Some(o)) = (
            self.latest().metadata.resource_version.clone(),
            body.as_object_mut(),
        ) {
            let meta = o.entry("metadata").or_insert_with(|| json!({}));
            if let Some(m) = meta.as_object_mut() {
                m.insert("resourceVersion".into(), Value::String(rv));
            }
        }
        body
    }

    /// [`Self::patch_status`] unless the current status already holds every value of `status`.
    pub async fn patch_status_if_changed(&self, status: Value) -> Result<Arc<DynamicObject>> {
        let latest = self.latest();
        let current = latest.data.get("status").cloned().unwrap_or(Value::Null);
        if contains(&current, &status) {
            return Ok(latest);
        }
        self.patch_status(status).await
    }

    /// Merge-patches the main resource (spec, metadata) at the object's contract version, on the
    /// condition that the object is still the one it was computed from.
    pub async fn patch(&self, body: Value) -> Result<Arc<DynamicObject>> {
        let body = self.on_latest(body);
        let obj = self
            .api
            .patch(&self.name, &Self::params(), &Patch::Merge(&body))
            .await?;
        Ok(self.remember(obj))
    }

    /// Conditions of the current object with `wanted` set, in this contract's shape.
    pub fn conditions(&self, wanted: &[Wanted<'_>], removed: &[&str]) -> Vec<Value> {
        let latest = self.latest();
        conditions::merged(
            object::field(&latest, "status.conditions"),
            wanted,
            removed,
            self.contract,
            self.obj.metadata.generation,
            &conditions::now_rfc3339(),
        )
    }

    /// Runs `apply` / `cleanup` through kube-runtime's finalizer helper (adds the finalizer first,
    /// removes it after a successful cleanup).
    pub async fn with_finalizer<A, C>(&self, apply: A, cleanup: C) -> Result<Action>
    where
        A: Future<Output = Result<Action>>,
        C: Future<Output = Result<Action>>,
    {
        let fin = self.finalizer();
        finalizer(&self.api, &fin, self.obj.clone(), |event| async move {
            match event {
                finalizer::Event::Apply(_) => apply.await,
                finalizer::Event::Cleanup(_) => cleanup.await,
            }
        })
        .await
        .map_err(|e| ReconcileError::Finalizer(Box::new(e)))
    }
}

/// Whether `have` already holds every value of `want` (objects compared key by key).
pub fn contains(have: &Value, want: &Value) -> bool {
    match (have, want) {
        (Value::Object(h), Value::Object(w)) => w.iter().all(|(k, wv)| {
            h.get(k).is_some_and(|hv| contains(hv, wv)) || (wv.is_null() && !h.contains_key(k))
        }),
        _ => have == want,
    }
}

/// v1beta1 terminal failure: `status.failureReason` or `status.failureMessage` set (in the
/// `v1beta2` view of a webhook-converted object, under `status.deprecated.v1beta1`, where the
/// mock's conversion keeps them, as CAPI's does).
pub fn has_failure(obj: &DynamicObject) -> bool {
    [
        "status.failureReason",
        "status.failureMessage",
        "status.deprecated.v1beta1.failureReason",
        "status.deprecated.v1beta1.failureMessage",
    ]
    .iter()
    .any(|p| object::string_field(obj, p).is_some())
}

/// The `status` of condition `type_` on `obj`, if present.
pub fn condition_status<'a>(obj: &'a DynamicObject, type_: &str) -> Option<&'a str> {
    object::field(obj, "status.conditions")?
        .as_array()?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(type_))?
        .get("status")?
        .as_str()
}

/// Deletion under the `all/ready-condition-lifecycle` fault: drop the Ready condition first and
/// keep it dropped long enough to be observed.
pub async fn drop_ready_on_delete(s: &Subject, ctx: &Ctx) -> Result<()> {
    if !s.faults.has(id::all::READY_CONDITION_LIFECYCLE) {
        return Ok(());
    }
    let conds = s.conditions(&[], &["Ready"]);
    s.patch_status(json!({ "conditions": conds })).await?;
    tokio::time::sleep(observable_gap(ctx)).await;
    Ok(())
}

/// How long faults that reorder writes keep the wrong intermediate state (long enough for a
/// watch or a poll to see it).
pub fn observable_gap(ctx: &Ctx) -> Duration {
    ctx.opts.provision_delay.max(Duration::from_millis(100))
}

/// The rule-id prefix of a role (`infra-cluster`, `bootstrap`, …).
pub fn rule_prefix(role: Role) -> &'static str {
    match role {
        Role::InfraCluster => "infra-cluster",
        Role::InfraMachine => "infra-machine",
        Role::InfraMachinePool => "infra-machinepool",
        Role::BootstrapConfig => "bootstrap",
        Role::ControlPlane => "control-plane",
        _ => "all",
    }
}

/// Outcome of the common gates.
pub enum Gates {
    /// Stop here with this action.
    Stop(Action),
    /// Go on; the owning Cluster when it was found.
    Go(Option<Box<DynamicObject>>),
}

/// Owner gate, cluster lookup and pause, in the contract's order.
pub async fn common_gates(
    s: &Subject,
    ctx: &Ctx,
    owners: &[CoreKind],
    controller_only: bool,
) -> Result<Gates> {
    if ctx.opts.core.finalizer_first
        && s.kind.role != Role::BootstrapConfig
        && !s.fault("finalizer")
        && !object::has_finalizer(&s.obj, &s.finalizer())
    {
        let mut finalizers: Vec<String> = s.obj.metadata.finalizers.clone().unwrap_or_default();
        finalizers.push(s.finalizer());
        s.patch(json!({ "metadata": { "finalizers": finalizers } }))
            .await?;
        return Ok(Gates::Stop(Action::await_change()));
    }
    let owner_ref = owners
        .iter()
        .find_map(|k| object::core_owner(&s.obj, k.kind(), controller_only).map(|o| (*k, o)));
    let owner = owner_ref.map(|(k, _)| k);
    let owner_ref = owner_ref.map(|(_, o)| o);
    if owner_ref.is_none() && !s.fault("owner-gate") {
        return Ok(Gates::Stop(Action::await_change()));
    }
    if let Some(o) = owner_ref.filter(|_| ctx.opts.core.owner_version) {
        let known = format!(
            "{}/{}",
            crate::core_crds::CORE_GROUP,
            ctx.opts.core.version()
        );
        if o.api_version != known {
            return Err(ReconcileError::Invalid(format!(
                "failed to get owner: no kind {} is registered for version {} in scheme",
                o.kind, o.api_version
            )));
        }
    }
    if ctx.opts.core.annotations_unguarded
        && matches!(s.kind.role, Role::InfraCluster | Role::InfraMachine)
        && s.obj.metadata.annotations.is_none()
    {
        return Err(ReconcileError::Invalid(
            "Observed a panic: assignment to entry in nil map (metadata.annotations)".into(),
        ));
    }
    let cluster_name = object::label(&s.obj, CLUSTER_NAME_LABEL)
        .map(str::to_string)
        .or_else(|| {
            owner_ref
                .filter(|_| owner == Some(CoreKind::Cluster))
                .map(|o| o.name.clone())
        });
    let cluster = match &cluster_name {
        Some(name) => ctx.cluster(&s.namespace, name).await?,
        None => None,
    };
    // The owner-gate fault acts on an object no owner points at: without a cluster-name label
    // there is no Cluster to look up, so that fault must go on without one. A label naming a
    // missing Cluster is the cluster-lookup rule's business and stops the mock unless that
    // rule's own fault is set.
    let unowned_without_label = s.fault("owner-gate") && cluster_name.is_none();
    if cluster.is_none() && !s.fault("cluster-lookup") && !unowned_without_label {
        return ctx
            .recheck("the Cluster named by the object was not found")
            .map(Gates::Stop);
    }
    let cluster_paused = cluster.as_ref().is_some_and(core::cluster_paused);
    let own_paused = object::annotation(&s.obj, PAUSED_ANNOTATION).is_some();
    let paused = cluster_paused || own_paused;
    sync_paused_condition(s, paused).await?;
    let acts_paused = s.faults.has(id::all::PAUSE)
        || s.fault("pause")
        || (own_paused && !cluster_paused && s.faults.has_named(PAUSE_BY_ANNOTATION_FAULT));
    if paused && !acts_paused {
        return Ok(Gates::Stop(Action::await_change()));
    }
    mark_reconciled_while_paused(s, paused && acts_paused).await?;
    Ok(Gates::Go(cluster.map(Box::new)))
}

/// Annotation the pause faults stamp on an object they reconcile while paused.
pub const RECONCILED_WHILE_PAUSED: &str = "mock.capi-conformance.io/reconciled-while-paused";

/// Under a pause fault the mock acts while paused on every change of the object's annotations
/// (the annotation [`RECONCILED_WHILE_PAUSED`], valued by a fingerprint of the others), not
/// only through whatever later reconciles write: a finalizer alone is not acting (CAPI's
/// controllers add theirs before the pause check), and the fault must fail its rule however
/// slowly the next reconcile comes, and on each touch of the paused object (the scenarios
/// touch twice when they cannot tell a late write from an act). The stamp is removed once the
/// object is no longer paused.
async fn mark_reconciled_while_paused(s: &Subject, stamp: bool) -> Result<()> {
    let has = object::annotation(&s.obj, RECONCILED_WHILE_PAUSED);
    if stamp {
        let print = annotations_fingerprint(&s.obj);
        if has != Some(print.as_str()) {
            s.patch(json!({ "metadata": { "annotations": { RECONCILED_WHILE_PAUSED: print } } }))
                .await?;
        }
    } else if has.is_some() {
        s.patch(json!({ "metadata": { "annotations": { RECONCILED_WHILE_PAUSED: null } } }))
            .await?;
    }
    Ok(())
}

/// A fingerprint of the object's annotations other than [`RECONCILED_WHILE_PAUSED`] (sorted
/// keys and values, hashed): it changes when another annotation does, and not by the stamp.
fn annotations_fingerprint(obj: &DynamicObject) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for (k, v) in obj
        .metadata
        .annotations
        .iter()
        .flatten()
        .filter(|(k, _)| k.as_str() != RECONCILED_WHILE_PAUSED)
    {
        (k, v).hash(&mut h);
    }
    format!("{:016x}", h.finish())
}

/// Contract v1beta2: `Paused` True/Paused while paused, False/NotPaused otherwise; written only
/// when it changes.
async fn sync_paused_condition(s: &Subject, paused: bool) -> Result<()> {
    if s.is_b1() || s.faults.has(id::all::PAUSED_CONDITION) {
        return Ok(());
    }
    let status = if paused { "True" } else { "False" };
    let current = object::field(&s.obj, "status.conditions")
        .and_then(Value::as_array)
        .and_then(|cs| {
            cs.iter()
                .find(|c| c.get("type").and_then(Value::as_str) == Some("Paused"))
        })
        .and_then(|c| c.get("status"))
        .and_then(Value::as_str);
    if current == Some(status) {
        return Ok(());
    }
    let reason = if paused { "Paused" } else { "NotPaused" };
    let conds = s.conditions(&[Wanted::new("Paused", paused, reason, "")], &[]);
    s.patch_status(json!({ "conditions": conds })).await?;
    Ok(())
}

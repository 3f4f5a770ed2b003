//! The environment one scenario runs in: its namespace, labels, recorder and cleanup guard, and
//! the tool's writes (each recorded in the timeline as a tool action). The core simulator's
//! objects are built in [`super::core_sim`].

use super::cleanup::CleanupGuard;
use super::round_trips::RoundTrips;
use super::timeline::Recorder;
use super::{RUN_LABEL, Settings, WATCH_FILTER_LABEL};
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kube::discovery::ApiResource;
use serde_json::{Value, json};

/// Why a tool action failed: the environment, not the provider.
#[derive(Debug, thiserror::Error)]
pub enum EnvError {
    #[error("{action} {object}: {source}")]
    Api {
        action: &'static str,
        object: String,
        #[source]
        source: kube::Error,
    },
    #[error("{0}")]
    Invalid(String),
    #[error("{object}: {what} not visible through a watch within {secs}s")]
    NotSeen {
        object: String,
        what: &'static str,
        secs: u64,
    },
}

/// One scenario's environment.
#[derive(Clone)]
pub struct Env {
    pub client: kube::Client,
    pub namespace: String,
    pub run_id: String,
    /// `cluster.x-k8s.io/watch-filter` value put on every object (mock instances filter on it).
    pub watch_filter: Option<String>,
    /// Annotate the tool's own core objects with `cluster.x-k8s.io/paused` (real CAPI core runs).
    pub pause_core: bool,
    pub recorder: Recorder,
    pub guard: CleanupGuard,
    pub settings: Settings,
    /// Round trips of the tool's writes (see [`RoundTrips`]).
    pub round_trips: RoundTrips,
    /// Where the scenario tells the steps it reaches.
    pub events: crate::events::Events,
    /// The workload clusters `<cluster>-kubeconfig` points at; `None` on a real cluster (no
    /// kubeconfig Secret is made there, docs/core-simulation.md).
    pub workloads: Option<crate::capi_core::workload::WorkloadClusters>,
    /// The writes the embedded server refused with an injected fault (`--server-faults`) and
    /// the states it stored: a state a provider's half-refused write left is not what it meant
    /// ([`super::script::ScriptRun::meant_states`]).
    pub ledger: Option<embedded_apiserver::Ledger>,
    /// What a control-plane node's agent writes into its workload cluster once the node is
    /// there (`--workload-object`): written by core's Machine controller of the simulation
    /// ([`crate::core_sim::node_agent`]).
    pub node_writes: crate::core_sim::node_agent::NodeWrites,
    /// The run's record of server faults its requests met: a step waits longer for a provider
    /// whose watches the server keeps failing ([`super::Settings::fault_allowance`]).
    pub trouble: crate::client_retry::TroubleLog,
    /// The `cluster.x-k8s.io` version the tool's owner references to core objects name: the
    /// core of the subject provider's CAPI line ([`super::Subject::core_version`]).
    pub core_version: &'static str,
    /// Which kinds are cluster-scoped (from their CRDs): their objects are written, read,
    /// watched and deleted without a namespace, named per side ([`super::scope`]).
    pub scopes: super::scope::Scopes,
}

/// The resource an object is written at: `resource` at the version of `api_version` when that
/// names another version of the same group (a sample written at its own version), else
/// `resource` itself.
pub fn written_at(api_version: Option<&Value>, resource: &ApiResource) -> ApiResource {
    match api_version
        .and_then(Value::as_str)
        .and_then(|av| av.split_once('/'))
    {
        Some((group, version)) if group == resource.group && version != resource.version => {
            ApiResource {
                version: version.to_string(),
                api_version: format!("{group}/{version}"),
                ..resource.clone()
            }
        }
        _ => resource.clone(),
    }
}

/// Owner references to CAPI core objects name `cluster.x-k8s.io/<core_version>`: a core of
/// the provider's CAPI line writes them at the version it runs (v1.9/v1.10: v1beta1, v1.11+:
/// v1beta2), and a provider resolves its owner from that apiVersion in its scheme, which knows
/// only its own line's core version (docs/core-simulation.md "Core as the provider's line
/// writes it"). Owner references are not converted by the API server.
pub fn set_core_owner_version(meta: &mut serde_json::Map<String, Value>, core_version: &str) {
    let Some(refs) = meta
        .get_mut("ownerReferences")
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for r in refs.iter_mut() {
        let Some(av) = r.get("apiVersion").and_then(Value::as_str) else {
            continue;
        };
        if av.split_once('/').map(|(g, _)| g) == Some(crate::capi_core::conversion::GROUP) {
            r["apiVersion"] = json!(format!(
                "{}/{core_version}",
                crate::capi_core::conversion::GROUP
            ));
        }
    }
}

pub fn key(resource: &ApiResource, name: &str) -> String {
    format!("{}/{name}", resource.kind)
}

impl Env {
    /// The API of `resource`: in the run namespace, or at the cluster level for a
    /// cluster-scoped kind.
    pub fn api(&self, resource: &ApiResource) -> Api<DynamicObject> {
        match self.namespace_of(resource) {
            Some(ns) => Api::namespaced_with(self.client.clone(), ns, resource),
            None => Api::all_with(self.client.clone(), resource),
        }
    }

    /// The namespace objects of `resource` live in: the run's, or `None` for a cluster-scoped
    /// kind.
    pub fn namespace_of(&self, resource: &ApiResource) -> Option<&str> {
        self.scopes.namespace_of(resource, &self.namespace)
    }

    /// The deadline of a step waiting for the provider now ([`Settings::step_deadline`]).
    pub fn step_deadline(&self) -> std::time::Duration {
        self.settings.step_deadline(
            self.recorder.held(),
            super::server_trouble::recent_faults(&self.trouble),
        )
    }

    /// Waits (watching, at most `timeout`) until `name` of `resource` exists and satisfies
    /// `pred`; returns it as then seen. A watch error (a 410 Expired, a dropped connection, a
    /// fault `--server-faults` injects) ends kube's `await_condition`: it watches again, as an
    /// informer would, until the deadline.
    pub async fn await_object(
        &self,
        resource: &ApiResource,
        name: &str,
        timeout: std::time::Duration,
        pred: impl Fn(&Value) -> bool,
    ) -> Option<Value> {
        let api = self.api(resource);
        let seen = async {
            loop {
                let cond = |o: Option<&DynamicObject>| {
                    o.and_then(|o| serde_json::to_value(o).ok())
                        .is_some_and(|v| pred(&v))
                };
                match kube::runtime::wait::await_condition(api.clone(), name, cond).await {
                    Ok(Some(o)) => return serde_json::to_value(o).ok(),
                    Ok(None) => return None,
                    Err(_) => tokio::time::sleep(std::time::Duration::from_millis(50)).await,
                }
            }
        };
        tokio::time::timeout(timeout, seen).await.ok().flatten()
    }

    /// How long a "must not act" assertion watches: the quiet window, or three round trips of
    /// the tool's recent writes when the server is that slow.
    pub fn quiet_window(&self) -> std::time::Duration {
        self.round_trips.stretch(self.settings.quiet_window)
    }

    /// The labels every object of the run carries.
    pub fn run_labels(&self) -> serde_json::Map<String, Value> {
        let mut m = serde_json::Map::new();
        m.insert(RUN_LABEL.into(), Value::String(self.run_id.clone()));
        if let Some(f) = &self.watch_filter {
            m.insert(WATCH_FILTER_LABEL.into(), Value::String(f.clone()));
        }
        m
    }

    /// Creates `object` (apiVersion/kind set from `resource`) in the run namespace (without a
    /// namespace for a cluster-scoped kind) with the run labels added; tracks it for cleanup
    /// and records the write.
    pub async fn create(
        &self,
        resource: &ApiResource,
        mut object: Value,
    ) -> Result<Value, EnvError> {
        let name = object
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                EnvError::Invalid(format!("{} object without metadata.name", resource.kind))
            })?
            .to_string();
        let Some(obj) = object.as_object_mut() else {
            return Err(EnvError::Invalid(format!(
                "{} object is not a mapping",
                resource.kind
            )));
        };
        // An object written at another version of the same kind (a `--sample` as its author
        // wrote it) is created at that version: the server converts it to the stored one
        // through the provider's conversion, as kube-apiserver does for a user's `kubectl
        // apply`; the tool then reads it at `resource`'s version, the one it judges.
        let written = written_at(obj.get("apiVersion"), resource);
        obj.insert(
            "apiVersion".into(),
            Value::String(written.api_version.clone()),
        );
        obj.insert("kind".into(), Value::String(resource.kind.clone()));
        let namespace = self.namespace_of(resource).map(str::to_string);
        let meta = obj.entry("metadata").or_insert_with(|| json!({}));
        if let Some(meta) = meta.as_object_mut() {
            match &namespace {
                Some(ns) => meta.insert("namespace".into(), Value::String(ns.clone())),
                None => meta.remove("namespace"),
            };
            let labels = meta.entry("labels").or_insert_with(|| json!({}));
            if let Some(labels) = labels.as_object_mut() {
                labels.extend(self.run_labels());
            }
            set_core_owner_version(meta, self.core_version);
        }
        let dynamic: DynamicObject = serde_json::from_value(object)
            .map_err(|e| EnvError::Invalid(format!("{} {name}: {e}", resource.kind)))?;
        let started = std::time::Instant::now();
        let created = self
            .api(&written)
            .create(&PostParams::default(), &dynamic)
            .await
            .map_err(|source| EnvError::Api {
                action: "create",
                object: key(resource, &name),
                source,
            })?;
        self.round_trips.record(started.elapsed());
        self.guard.track(resource, namespace.as_deref(), &name);
        // The write is the create (its resourceVersion is the tool's, whatever the provider
        // writes next); the caller gets the object at the version it judges.
        self.record(resource, &name, &created, "create");
        self.settle(resource, &name, &created).await;
        if written.version == resource.version {
            return to_value(created);
        }
        let read = self
            .api(resource)
            .get(&name)
            .await
            .map_err(|source| EnvError::Api {
                action: "read back",
                object: key(resource, &name),
                source,
            })?;
        to_value(read)
    }

    /// JSON merge patch on the object (metadata/spec).
    pub async fn merge_patch(
        &self,
        resource: &ApiResource,
        name: &str,
        patch: Value,
        action: &str,
    ) -> Result<Value, EnvError> {
        self.patch_with(resource, name, patch, action, false).await
    }

    /// JSON merge patch through the status subresource.
    pub async fn patch_status(
        &self,
        resource: &ApiResource,
        name: &str,
        patch: Value,
        action: &str,
    ) -> Result<Value, EnvError> {
        self.patch_with(resource, name, patch, action, true).await
    }

    /// A merge patch (of the status subresource with `status`), timed, recorded and settled.
    async fn patch_with(
        &self,
        resource: &ApiResource,
        name: &str,
        patch: Value,
        action: &str,
        status: bool,
    ) -> Result<Value, EnvError> {
        let mut patch = patch;
        if let Some(meta) = patch.get_mut("metadata").and_then(Value::as_object_mut) {
            set_core_owner_version(meta, self.core_version);
        }
        let started = std::time::Instant::now();
        let (api, params, body) = (
            self.api(resource),
            PatchParams::default(),
            Patch::Merge(&patch),
        );
        let out = if status {
            api.patch_status(name, &params, &body).await
        } else {
            api.patch(name, &params, &body).await
        }
        .map_err(|source| EnvError::Api {
            action: if status { "patch status of" } else { "patch" },
            object: key(resource, name),
            source,
        })?;
        self.round_trips.record(started.elapsed());
        self.record(resource, name, &out, action);
        self.settle(resource, name, &out).await;
        to_value(out)
    }

    pub async fn delete(&self, resource: &ApiResource, name: &str) -> Result<(), EnvError> {
        let started = std::time::Instant::now();
        let deleted = self
            .api(resource)
            .delete(name, &DeleteParams::background())
            .await;
        self.round_trips.record(started.elapsed());
        match deleted {
            Ok(outcome) => {
                match outcome.left() {
                    // Finalizers keep it: the response is the object, marked for deletion.
                    Some(obj) => {
                        self.record(resource, name, &obj, "delete");
                        self.settle(resource, name, &obj).await;
                    }
                    // Gone at once: the response is a Status, without a version.
                    None => {
                        let k = key(resource, name);
                        self.recorder.tool_write(&k, "", "delete", None);
                        if self.recorder.is_watched(&k) {
                            self.recorder.wait_gone(&k, self.step_deadline()).await;
                        }
                    }
                }
                Ok(())
            }
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
            Err(source) => Err(EnvError::Api {
                action: "delete",
                object: key(resource, name),
                source,
            }),
        }
    }

    fn record(&self, resource: &ApiResource, name: &str, obj: &DynamicObject, action: &str) {
        let rv = obj.metadata.resource_version.clone().unwrap_or_default();
        let state = serde_json::to_value(obj).ok();
        self.recorder
            .tool_write(&key(resource, name), &rv, action, state);
    }

    /// After a tool write on a watched object: wait until the watch has delivered it.
    async fn settle(&self, resource: &ApiResource, name: &str, obj: &DynamicObject) {
        let k = key(resource, name);
        if let Some(rv) = &obj.metadata.resource_version
            && self.recorder.is_watched(&k)
        {
            self.recorder
                .wait_seen(&k, rv, self.settings.step_timeout)
                .await;
        }
    }
}

fn to_value(obj: DynamicObject) -> Result<Value, EnvError> {
    serde_json::to_value(obj).map_err(|e| EnvError::Invalid(e.to_string()))
}

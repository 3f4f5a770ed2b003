//! Test harness: an embedded API server with the core and mock CRDs, the mock running
//! in-process, and helpers that play CAPI core (docs/contract.md §4).

use capi_conformance::apiserver::{EmbeddedServer, ServerOptions};
use capi_conformance::client_retry::RetryingClient;
use capi_conformance::contract::Contract;
use capi_conformance::mock::kinds::MockKind;
use capi_conformance::mock::{FaultSet, MockHandle, MockOptions, MockProvider};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

pub const NS: &str = "mock-test";
pub const DEADLINE: Duration = Duration::from_secs(10);
pub const QUIET: Duration = Duration::from_millis(300);

pub struct Env {
    /// The in-process server (`None` when talking to another process).
    pub server: Option<EmbeddedServer>,
    pub client: Client,
    pub mock: Option<MockHandle>,
    /// Kept alive for the test: the conversion webhook of the core and mock CRDs (their two
    /// versions differ in shape,
    /// and an API server prunes what the other version's schema lacks): as a run serves it.
    pub _conversion: Option<capi_conformance::capi_core::EmbeddedCore>,
}

/// A server with the CRDs installed (converted through the run's webhook, as every run
/// installs them) and a namespace, without a mock running.
pub async fn server_only() -> Env {
    let server = EmbeddedServer::new(ServerOptions::default());
    let core = capi_conformance::capi_core::EmbeddedCore::start(
        server.client(),
        capi_conformance::capi_core::crds::CoreCrds::Minimal,
    )
    .await
    .unwrap();
    core.route(&server);
    let mut docs = capi_conformance::source::embedded::base_documents_with(&core, true).unwrap();
    docs.push(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}));
    server.apply_documents(docs).await.unwrap();
    let client = server.retrying_client();
    Env {
        server: Some(server),
        client,
        mock: None,
        _conversion: Some(core),
    }
}

/// A server with the mock running in-process (provider-wide faults from `faults`).
pub async fn with_mock(faults: &str) -> Env {
    let mut env = server_only().await;
    let opts = MockOptions {
        faults: FaultSet::parse(faults),
        ..MockOptions::default()
    };
    env.mock = Some(MockProvider::start(env.client.clone(), opts));
    env
}

impl Env {
    pub async fn stop(self) {
        if let Some(m) = self.mock {
            m.shutdown().await;
        }
    }

    pub fn core(&self, kind: &str) -> Api<DynamicObject> {
        let plural = format!("{}s", kind.to_lowercase());
        let gvk = GroupVersionKind::gvk("cluster.x-k8s.io", "v1beta2", kind);
        Api::namespaced_with(
            self.client.clone(),
            NS,
            &ApiResource::from_gvk_with_plural(&gvk, &plural),
        )
    }

    pub fn mock_api(&self, kind: MockKind, contract: Contract) -> Api<DynamicObject> {
        Api::namespaced_with(self.client.clone(), NS, &kind.api_resource(contract))
    }

    pub fn secrets(&self) -> Api<k8s_openapi::api::core::v1::Secret> {
        Api::namespaced(self.client.clone(), NS)
    }

    /// Creates a core object from its body (`spec`, optional labels/annotations).
    pub async fn create_core(
        &self,
        kind: &str,
        name: &str,
        labels: Value,
        spec: Value,
    ) -> DynamicObject {
        let obj: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2",
            "kind": kind,
            "metadata": {"name": name, "namespace": NS, "labels": labels},
            "spec": spec,
        }))
        .unwrap();
        self.core(kind)
            .create(&PostParams::default(), &obj)
            .await
            .unwrap()
    }

    /// A Cluster `name` (infrastructure provisioned per `infra_ready`).
    pub async fn cluster(&self, name: &str, infra_ready: bool) -> DynamicObject {
        let c = self
            .create_core("Cluster", name, json!({}), json!({"clusterName": name}))
            .await;
        self.set_cluster_infra(name, infra_ready).await;
        c
    }

    pub async fn set_cluster_infra(&self, name: &str, ready: bool) {
        let body = json!({"status": {"initialization": {"infrastructureProvisioned": ready}}});
        self.core("Cluster")
            .patch_status(name, &PatchParams::default(), &Patch::Merge(&body))
            .await
            .unwrap();
    }

    pub async fn patch_core(&self, kind: &str, name: &str, body: Value) {
        self.core(kind)
            .patch(name, &PatchParams::default(), &Patch::Merge(&body))
            .await
            .unwrap();
    }

    /// Creates a mock object at `contract`'s version (with the contract annotation).
    pub async fn create_mock(
        &self,
        kind: MockKind,
        contract: Contract,
        name: &str,
        annotations: Value,
        spec: Value,
    ) -> DynamicObject {
        let ar = kind.api_resource(contract);
        let mut ann = annotations.as_object().cloned().unwrap_or_default();
        ann.insert(
            "mock.capi-conformance.io/contract".into(),
            json!(contract.as_str()),
        );
        let obj: DynamicObject = serde_json::from_value(json!({
            "apiVersion": ar.api_version,
            "kind": ar.kind,
            "metadata": {"name": name, "namespace": NS, "annotations": ann},
            "spec": spec,
        }))
        .unwrap();
        self.mock_api(kind, contract)
            .create(&PostParams::default(), &obj)
            .await
            .unwrap()
    }

    /// What CAPI core does: owner reference (controller for Machine/MachinePool) + cluster-name label.
    pub async fn own(
        &self,
        kind: MockKind,
        contract: Contract,
        name: &str,
        owner: &DynamicObject,
        cluster: &str,
    ) {
        let controller = owner.types.as_ref().is_some_and(|t| t.kind != "Cluster");
        let mut reference = json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2",
            "kind": owner.types.as_ref().unwrap().kind,
            "name": owner.name_any(),
            "uid": owner.uid().unwrap(),
        });
        if controller {
            reference["controller"] = json!(true);
            reference["blockOwnerDeletion"] = json!(true);
        }
        let body = json!({"metadata": {
            "ownerReferences": [reference],
            "labels": {"cluster.x-k8s.io/cluster-name": cluster},
        }});
        self.mock_api(kind, contract)
            .patch(name, &PatchParams::default(), &Patch::Merge(&body))
            .await
            .unwrap();
    }

    pub async fn patch_mock(&self, kind: MockKind, contract: Contract, name: &str, body: Value) {
        self.mock_api(kind, contract)
            .patch(name, &PatchParams::default(), &Patch::Merge(&body))
            .await
            .unwrap();
    }

    pub async fn delete_mock(&self, kind: MockKind, contract: Contract, name: &str) {
        self.mock_api(kind, contract)
            .delete(name, &DeleteParams::default())
            .await
            .unwrap();
    }
}

/// Polls `api` until `name` satisfies `pred`; panics with the last state after the deadline.
pub async fn wait_for(
    api: &Api<DynamicObject>,
    name: &str,
    what: &str,
    pred: impl Fn(&DynamicObject) -> bool,
) -> DynamicObject {
    let start = Instant::now();
    loop {
        let current = api.get_opt(name).await.unwrap();
        if let Some(obj) = &current
            && pred(obj)
        {
            return obj.clone();
        }
        if start.elapsed() > DEADLINE {
            panic!(
                "timed out waiting for {name}: {what}; last state: {}",
                serde_json::to_string_pretty(&current).unwrap()
            );
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Polls until `name` is gone.
pub async fn wait_gone(api: &Api<DynamicObject>, name: &str) {
    let start = Instant::now();
    while api.get_opt(name).await.unwrap().is_some() {
        assert!(start.elapsed() < DEADLINE, "{name} was not deleted");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Asserts that `pred` stays false for the quiet window.
pub async fn stays(
    api: &Api<DynamicObject>,
    name: &str,
    what: &str,
    pred: impl Fn(&DynamicObject) -> bool,
) -> DynamicObject {
    let start = Instant::now();
    loop {
        let obj = api.get(name).await.unwrap();
        assert!(
            pred(&obj),
            "{name}: expected {what} during the quiet window, got {}",
            serde_json::to_string_pretty(&obj).unwrap()
        );
        if start.elapsed() > QUIET {
            return obj;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A value at a dotted path.
pub fn at<'a>(obj: &'a DynamicObject, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(&obj.data, |v, k| v.get(k))
}

pub fn flag(obj: &DynamicObject, path: &str) -> bool {
    at(obj, path).and_then(Value::as_bool).unwrap_or(false)
}

pub fn condition<'a>(obj: &'a DynamicObject, type_: &str) -> Option<&'a Value> {
    at(obj, "status.conditions")?
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
}

pub fn has_finalizer(obj: &DynamicObject) -> bool {
    !obj.finalizers().is_empty()
}

/// The contract's ready path for infrastructure kinds.
pub fn provisioned_path(contract: Contract) -> &'static str {
    match contract {
        Contract::V1Beta1 => "status.ready",
        Contract::V1Beta2 => "status.initialization.provisioned",
    }
}

/// all/pause: with the Cluster paused (then with the object's annotation), a wiped status is not
/// restored (b2: Paused=True is written); after unpausing it is.
pub async fn assert_pause_honoured(
    env: &Env,
    kind: MockKind,
    contract: Contract,
    name: &str,
    cluster: &str,
    wipe: Value,
    restored: impl Fn(&DynamicObject) -> bool,
) {
    let api = env.mock_api(kind, contract);
    for trigger in ["cluster", "annotation"] {
        match trigger {
            "cluster" => {
                env.patch_core("Cluster", cluster, json!({"spec": {"paused": true}}))
                    .await
            }
            _ => {
                env.patch_mock(
                    kind,
                    contract,
                    name,
                    json!({"metadata": {"annotations": {"cluster.x-k8s.io/paused": ""}}}),
                )
                .await
            }
        }
        if contract == Contract::V1Beta2 {
            wait_for(&api, name, "Paused=True", |o| {
                condition(o, "Paused")
                    .is_some_and(|c| c["status"] == "True" && c["reason"] == "Paused")
            })
            .await;
        } else {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        api.patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(&json!({"status": wipe})),
        )
        .await
        .unwrap();
        stays(
            &api,
            name,
            &format!("no progress while paused by {trigger}"),
            |o| !restored(o),
        )
        .await;
        match trigger {
            "cluster" => {
                env.patch_core("Cluster", cluster, json!({"spec": {"paused": false}}))
                    .await
            }
            _ => {
                env.patch_mock(
                    kind,
                    contract,
                    name,
                    json!({"metadata": {"annotations": {"cluster.x-k8s.io/paused": null}}}),
                )
                .await
            }
        }
        wait_for(
            &api,
            name,
            &format!("progress after unpausing ({trigger})"),
            &restored,
        )
        .await;
        if contract == Contract::V1Beta2 {
            wait_for(&api, name, "Paused=False", |o| {
                condition(o, "Paused")
                    .is_some_and(|c| c["status"] == "False" && c["reason"] == "NotPaused")
            })
            .await;
        }
    }
}

/// Every state of one object seen through a watch (the scenario timeline, simplified).
pub struct Recorder {
    states: std::sync::Arc<std::sync::Mutex<Vec<DynamicObject>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Recorder {
    pub fn start(api: &Api<DynamicObject>, name: &str) -> Recorder {
        use futures::StreamExt;
        use kube::runtime::{WatchStreamExt, watcher};
        let states = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = states.clone();
        let cfg = watcher::Config::default().fields(&format!("metadata.name={name}"));
        let stream = watcher(api.clone(), cfg).applied_objects();
        let task = tokio::spawn(async move {
            let mut stream = std::pin::pin!(stream);
            while let Some(Ok(obj)) = stream.next().await {
                sink.lock().unwrap().push(obj);
            }
        });
        Recorder { states, task }
    }

    pub fn states(&self) -> Vec<DynamicObject> {
        self.states.lock().unwrap().clone()
    }

    /// Waits until some recorded state satisfies `pred`.
    pub async fn wait_any(
        &self,
        what: &str,
        pred: impl Fn(&DynamicObject) -> bool,
    ) -> DynamicObject {
        let start = Instant::now();
        loop {
            if let Some(s) = self.states().into_iter().find(|s| pred(s)) {
                return s;
            }
            assert!(start.elapsed() < DEADLINE, "no recorded state: {what}");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The annotation that switches faults on for one object.
pub fn fault(name: &str) -> Value {
    json!({"mock.capi-conformance.io/fault": name})
}

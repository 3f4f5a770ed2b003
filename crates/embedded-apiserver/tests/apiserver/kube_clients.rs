//! Real kube-rs / kube-runtime clients against the server, in-process and over TCP.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use embedded_apiserver::{EmbeddedServer, ServerOptions};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use kube::discovery::Discovery;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::finalizer::{Event as FinalizerEvent, finalizer};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, CustomResource, ResourceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::common::*;

#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(
    group = "example.com",
    version = "v1",
    kind = "Widget",
    namespaced,
    status = "WidgetStatus"
)]
pub struct WidgetSpec {
    pub size: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
}

#[derive(Deserialize, Serialize, Clone, Debug, Default, JsonSchema)]
pub struct WidgetStatus {
    pub ready: bool,
}

fn widget(name: &str) -> Widget {
    Widget::new(
        name,
        WidgetSpec {
            size: "small".into(),
            replicas: None,
            mode: None,
        },
    )
}

async fn installed(opts: ServerOptions) -> EmbeddedServer {
    let server = EmbeddedServer::new(opts);
    server.apply_documents(vec![widget_crd()]).await.unwrap();
    server
}

fn widget_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("example.com", "v1", "Widget"),
        "widgets",
    )
}

async fn dynamic_crud(client: Client) {
    let api: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), "default", &widget_resource());
    let obj: DynamicObject = serde_json::from_value(json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "d1"}, "spec": {"size": "small"}})).unwrap();
    let created = api.create(&PostParams::default(), &obj).await.unwrap();
    assert_eq!(created.data["spec"]["mode"], "auto");
    let got = api.get("d1").await.unwrap();
    assert_eq!(got.uid(), created.uid());
    assert!(api.get_opt("nope").await.unwrap().is_none());
    let err = api.create(&PostParams::default(), &obj).await.unwrap_err();
    assert!(
        matches!(err, kube::Error::Api(ref s) if s.code == 409),
        "{err:?}"
    );
    let patched = api
        .patch(
            "d1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"size": "large"}})),
        )
        .await
        .unwrap();
    assert_eq!(patched.data["spec"]["size"], "large");
    let list = api.list(&ListParams::default()).await.unwrap();
    assert_eq!(list.items.len(), 1);
    assert!(list.metadata.resource_version.is_some());
    let metas = api.list_metadata(&ListParams::default()).await.unwrap();
    assert_eq!(metas.items[0].metadata.name.as_deref(), Some("d1"));
    let deleted = api.delete("d1", &DeleteParams::default()).await.unwrap();
    assert!(deleted.is_right(), "immediate delete returns a Status");
    // Typed built-ins and discovery.
    let cms: Api<ConfigMap> = Api::default_namespaced(client.clone());
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("c".into());
    cms.create(&PostParams::default(), &cm).await.unwrap();
    let nss: Api<Namespace> = Api::all(client.clone());
    assert!(nss.get("kube-system").await.is_ok());
    let discovery = Discovery::new(client.clone()).run().await.unwrap();
    assert!(discovery.groups().any(|g| g.name() == "example.com"));
    let aggregated = Discovery::new(client.clone())
        .run_aggregated()
        .await
        .unwrap();
    assert!(aggregated.groups().any(|g| g.name() == "example.com"));
    let v = client.apiserver_version().await.unwrap();
    assert_eq!(v.major, "1");
}

#[tokio::test]
async fn kube_rs_dynamic_api_in_process() {
    let server = installed(ServerOptions::default()).await;
    dynamic_crud(server.client()).await;
}

#[tokio::test]
async fn kube_rs_dynamic_api_over_tcp() {
    let server = installed(ServerOptions::default()).await;
    let listener = server.listen("127.0.0.1:0".parse().unwrap()).await.unwrap();
    dynamic_crud(listener.client().unwrap()).await;
    listener.shutdown().await;
}

#[tokio::test]
async fn tcp_listener_requires_the_token_and_loopback() {
    let server = EmbeddedServer::new(ServerOptions::default());
    assert!(server.listen("0.0.0.0:0".parse().unwrap()).await.is_err());
    let listener = server.listen("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let mut config = listener.config().unwrap();
    config.auth_info.token = Some("wrong".to_string().into());
    let bad = Client::try_from(config).unwrap();
    let nss: Api<Namespace> = Api::all(bad);
    let err = nss.list(&ListParams::default()).await.unwrap_err();
    assert!(
        matches!(err, kube::Error::Api(ref s) if s.code == 401),
        "{err:?}"
    );
    let yaml = listener.kubeconfig_yaml();
    assert!(yaml.contains(&listener.url) && yaml.contains(&listener.token));
    let kc: kube::config::Kubeconfig = serde_yaml_from(&yaml);
    let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    let good: Api<Namespace> = Api::all(Client::try_from(cfg).unwrap());
    assert_eq!(
        good.list(&ListParams::default()).await.unwrap().items.len(),
        4
    );
    listener.shutdown().await;
}

fn serde_yaml_from(yaml: &str) -> kube::config::Kubeconfig {
    kube::config::Kubeconfig::from_yaml(yaml).unwrap()
}

struct Ctx {
    client: Client,
    cleaned: AtomicUsize,
}

async fn reconcile(
    w: Arc<Widget>,
    ctx: Arc<Ctx>,
) -> Result<Action, kube::runtime::finalizer::Error<kube::Error>> {
    let api: Api<Widget> = Api::namespaced(ctx.client.clone(), &w.namespace().unwrap_or_default());
    finalizer(&api, "example.com/cleanup", w, |event| async {
        match event {
            FinalizerEvent::Apply(w) => {
                if w.status.as_ref().is_none_or(|s| !s.ready) {
                    api.patch_status(
                        &w.name_any(),
                        &PatchParams::default(),
                        &Patch::Merge(json!({"status": {"ready": true}})),
                    )
                    .await?;
                }
                Ok(Action::await_change())
            }
            FinalizerEvent::Cleanup(_) => {
                ctx.cleaned.fetch_add(1, Ordering::SeqCst);
                Ok(Action::await_change())
            }
        }
    })
    .await
}

fn error_policy(
    _: Arc<Widget>,
    _: &kube::runtime::finalizer::Error<kube::Error>,
    _: Arc<Ctx>,
) -> Action {
    Action::requeue(Duration::from_millis(50))
}

async fn controller_with_finalizer(client: Client) {
    let api: Api<Widget> = Api::default_namespaced(client.clone());
    let ctx = Arc::new(Ctx {
        client: client.clone(),
        cleaned: AtomicUsize::new(0),
    });
    let run = Controller::new(api.clone(), watcher::Config::default())
        .run(reconcile, error_policy, ctx.clone())
        .for_each(|_| async {});
    let handle = tokio::spawn(run);
    api.create(&PostParams::default(), &widget("c1"))
        .await
        .unwrap();
    let mut ready = false;
    for _ in 0..300 {
        let w = api.get("c1").await.unwrap();
        if w.status.as_ref().is_some_and(|s| s.ready)
            && w.finalizers().contains(&"example.com/cleanup".to_string())
        {
            ready = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(ready, "controller added its finalizer and set status");
    let d = api.delete("c1", &DeleteParams::default()).await.unwrap();
    assert!(d.is_left(), "deferred by the finalizer");
    let mut gone = false;
    for _ in 0..300 {
        if api.get_opt("c1").await.unwrap().is_none() {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(gone, "finalizer removed after cleanup");
    assert_eq!(ctx.cleaned.load(Ordering::SeqCst), 1);
    handle.abort();
}

#[tokio::test]
async fn kube_runtime_controller_with_finalizer_in_process() {
    let server = installed(ServerOptions::default()).await;
    controller_with_finalizer(server.client()).await;
}

#[tokio::test]
async fn kube_runtime_controller_with_finalizer_over_tcp() {
    let server = installed(ServerOptions::default()).await;
    let listener = server.listen("127.0.0.1:0".parse().unwrap()).await.unwrap();
    controller_with_finalizer(listener.client().unwrap()).await;
    listener.shutdown().await;
}

async fn streaming_watcher(client: Client) {
    let api: Api<Widget> = Api::default_namespaced(client);
    api.create(&PostParams::default(), &widget("s1"))
        .await
        .unwrap();
    let mut events = watcher(api.clone(), watcher::Config::default().streaming_lists()).boxed();
    let mut seen = Vec::new();
    loop {
        match tokio::time::timeout(Duration::from_secs(5), events.try_next())
            .await
            .unwrap()
            .unwrap()
            .unwrap()
        {
            watcher::Event::Init => seen.push("Init".to_string()),
            watcher::Event::InitApply(w) => seen.push(format!("InitApply {}", w.name_any())),
            watcher::Event::InitDone => {
                seen.push("InitDone".into());
                break;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(seen, ["Init", "InitApply s1", "InitDone"]);
    api.create(&PostParams::default(), &widget("s2"))
        .await
        .unwrap();
    match tokio::time::timeout(Duration::from_secs(5), events.try_next())
        .await
        .unwrap()
        .unwrap()
        .unwrap()
    {
        watcher::Event::Apply(w) => assert_eq!(w.name_any(), "s2"),
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test]
async fn kube_runtime_streaming_list_watcher_in_process() {
    let server = installed(ServerOptions::default()).await;
    streaming_watcher(server.client()).await;
}

#[tokio::test]
async fn kube_runtime_streaming_list_watcher_over_tcp() {
    let server = installed(ServerOptions::default()).await;
    let listener = server.listen("127.0.0.1:0".parse().unwrap()).await.unwrap();
    streaming_watcher(listener.client().unwrap()).await;
    listener.shutdown().await;
}

/// Creates `n` widgets while faults are active and checks the watcher saw every one.
async fn watcher_sees_all(server: &EmbeddedServer, n: usize) -> BTreeSet<String> {
    let api: Api<Widget> = Api::default_namespaced(server.client());
    let stream = watcher(api.clone(), watcher::Config::default())
        .default_backoff()
        .applied_objects();
    let seen = Arc::new(std::sync::Mutex::new(BTreeSet::new()));
    let sink = seen.clone();
    let handle = tokio::spawn(async move {
        let mut s = stream.boxed();
        while let Some(ev) = s.next().await {
            if let Ok(w) = ev {
                sink.lock().unwrap().insert(w.name_any());
            }
        }
    });
    for i in 0..n {
        api.create(&PostParams::default(), &widget(&format!("f{i}")))
            .await
            .unwrap();
        if i % 5 == 0 {
            server.faults().expire_next_watches(1);
        }
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    for _ in 0..500 {
        if seen.lock().unwrap().len() >= n {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    handle.abort();
    seen.lock().unwrap().clone()
}

#[tokio::test]
async fn kube_runtime_watcher_recovers_from_forced_410_and_dropped_streams() {
    let server = installed(ServerOptions::default()).await;
    server
        .faults()
        .set_drop_watch_after(Some(Duration::from_millis(150)));
    let seen = watcher_sees_all(&server, 30).await;
    let expected: BTreeSet<String> = (0..30).map(|i| format!("f{i}")).collect();
    assert_eq!(seen, expected, "no event lost");
    let (expired, dropped) = server.faults().stats();
    assert!(expired >= 1, "a forced 410 was served");
    assert!(dropped >= 1, "streams were dropped: {expired} {dropped}");
}

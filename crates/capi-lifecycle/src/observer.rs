//! Watches feeding a [`Recorder`]: one watch per object under test (field selector on the name),
//! or one per kind in the run namespace for objects whose names the provider chooses (Secrets).

use super::timeline::Recorder;
use futures::StreamExt;
use kube::api::{Api, DynamicObject};
use kube::discovery::ApiResource;
use kube::runtime::watcher::{self, Event};
use std::time::Duration;
use tokio::sync::watch as signal;
use tokio::task::JoinHandle;

/// A running watch; stops when dropped.
pub struct Observer {
    task: JoinHandle<()>,
    ready: signal::Receiver<bool>,
}

impl Drop for Observer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Observer {
    /// Waits until the initial list is done (later writes are then seen as events), at most `timeout`.
    pub async fn ready(&mut self, timeout: Duration) -> bool {
        tokio::time::timeout(timeout, self.ready.wait_for(|r| *r))
            .await
            .is_ok_and(|r| r.is_ok())
    }
}

/// Watches one named object of `resource` in `namespace` (`None`: a cluster-scoped kind).
pub fn watch_object(
    client: kube::Client,
    resource: &ApiResource,
    namespace: Option<&str>,
    name: &str,
    recorder: Recorder,
) -> Observer {
    recorder.register(&format!("{}/{name}", resource.kind));
    let api: Api<DynamicObject> = match namespace {
        Some(ns) => Api::namespaced_with(client, ns, resource),
        None => Api::all_with(client, resource),
    };
    let config = watcher::Config::default().fields(&format!("metadata.name={name}"));
    spawn(api, config, resource.kind.clone(), recorder)
}

/// Watches every object of `resource` in `namespace`.
pub fn watch_all(
    client: kube::Client,
    resource: &ApiResource,
    namespace: &str,
    recorder: Recorder,
) -> Observer {
    let api: Api<DynamicObject> = Api::namespaced_with(client, namespace, resource);
    spawn(
        api,
        watcher::Config::default(),
        resource.kind.clone(),
        recorder,
    )
}

fn spawn(
    api: Api<DynamicObject>,
    config: watcher::Config,
    kind: String,
    recorder: Recorder,
) -> Observer {
    let (tx, rx) = signal::channel(false);
    let task = tokio::spawn(async move {
        let mut stream = watcher::watcher(api, config).boxed();
        while let Some(item) = stream.next().await {
            let Ok(event) = item else {
                // The watcher retries by itself on the next poll; back off a little.
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            };
            match event {
                Event::Apply(obj) | Event::InitApply(obj) => record(&recorder, &kind, obj, false),
                Event::Delete(obj) => record(&recorder, &kind, obj, true),
                Event::InitDone => {
                    let _ = tx.send(true);
                }
                Event::Init => {}
            }
        }
    });
    Observer { task, ready: rx }
}

fn record(recorder: &Recorder, kind: &str, obj: DynamicObject, deleted: bool) {
    let name = obj.metadata.name.clone().unwrap_or_default();
    if let Ok(value) = serde_json::to_value(&obj) {
        recorder.observe(&format!("{kind}/{name}"), deleted, value);
    }
}

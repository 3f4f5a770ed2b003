//! An informer-like view of Clusters that lags the server: the informer-lag mode of
//! [`super::core::CoreReads`]. A controller-runtime provider reads the Cluster from its cache,
//! fed by a watch on Clusters that is independent of the watch on its own kind; each event
//! reaches that cache (and, after it, the event handlers that enqueue the provider's objects)
//! some time after the server committed it. So a provider can see a change of its own object
//! (an owner reference) before it sees an earlier change of the Cluster (a pause), and act on a
//! Cluster it legitimately still believes unpaused. This cache delays every Cluster event by a
//! fixed lag, keeping their order, and tells the controllers after each applied event (as
//! controller-runtime's handlers run after the cache is updated).

use kube::api::Api;
use kube::core::{ApiResource, DynamicObject};
use kube::runtime::watcher::{self, Event};
use kube::{Client, ResourceExt};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

type Key = (String, String);

/// The lagging Cluster cache shared by the controllers.
#[derive(Clone)]
pub struct LaggingClusters {
    store: Arc<RwLock<BTreeMap<Key, DynamicObject>>>,
    applied: watch::Receiver<u64>,
}

impl LaggingClusters {
    /// Starts watching Clusters (`resource`, in `namespace` or all namespaces), applying each
    /// event `lag` after it arrived, until `stopped` turns true.
    pub fn start(
        client: Client,
        resource: &ApiResource,
        namespace: Option<&str>,
        lag: Duration,
        mut stopped: watch::Receiver<bool>,
    ) -> (LaggingClusters, JoinHandle<()>) {
        let api: Api<DynamicObject> = match namespace {
            Some(ns) => Api::namespaced_with(client, ns, resource),
            None => Api::all_with(client, resource),
        };
        let store: Arc<RwLock<BTreeMap<Key, DynamicObject>>> = Arc::default();
        let (tell, applied) = watch::channel(0u64);
        let (tx, rx) = mpsc::unbounded_channel();
        let feed = feed(api, lag, tx);
        let apply = apply(rx, store.clone(), tell);
        let task = tokio::spawn(async move {
            tokio::select! {
                _ = feed => {}
                _ = apply => {}
                _ = stopped.wait_for(|s| *s) => {}
            }
        });
        (LaggingClusters { store, applied }, task)
    }

    /// The Cluster as the cache shows it now.
    pub fn get(&self, namespace: &str, name: &str) -> Option<DynamicObject> {
        self.store
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&(namespace.to_string(), name.to_string()))
            .cloned()
    }

    /// A stream yielding once after each event the cache applied (for
    /// `Controller::reconcile_all_on`).
    pub fn applied(&self) -> impl futures::Stream<Item = ()> + Send + 'static {
        futures::stream::unfold(self.applied.clone(), |mut rx| async move {
            rx.changed().await.ok()?;
            Some(((), rx))
        })
    }
}

/// Forwards each watch event with the instant it is due.
async fn feed(
    api: Api<DynamicObject>,
    lag: Duration,
    tx: mpsc::UnboundedSender<(tokio::time::Instant, Event<DynamicObject>)>,
) {
    use futures::StreamExt;
    let mut events = watcher::watcher(api, watcher::Config::default().any_semantic()).boxed();
    while let Some(event) = events.next().await {
        match event {
            Ok(e) => {
                if tx.send((tokio::time::Instant::now() + lag, e)).is_err() {
                    return;
                }
            }
            // The watcher retries by itself on the next poll.
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

/// Applies each event when it is due, in order, as a reflector does.
async fn apply(
    mut rx: mpsc::UnboundedReceiver<(tokio::time::Instant, Event<DynamicObject>)>,
    store: Arc<RwLock<BTreeMap<Key, DynamicObject>>>,
    tell: watch::Sender<u64>,
) {
    let mut relisted: Option<BTreeSet<Key>> = None;
    while let Some((due, event)) = rx.recv().await {
        tokio::time::sleep_until(due).await;
        {
            let mut st = store
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            match event {
                Event::Init => relisted = Some(BTreeSet::new()),
                Event::InitApply(o) => {
                    let k = key(&o);
                    if let Some(seen) = relisted.as_mut() {
                        seen.insert(k.clone());
                    }
                    st.insert(k, o);
                }
                Event::InitDone => {
                    if let Some(seen) = relisted.take() {
                        st.retain(|k, _| seen.contains(k));
                    }
                }
                Event::Apply(o) => {
                    st.insert(key(&o), o);
                }
                Event::Delete(o) => {
                    st.remove(&key(&o));
                }
            }
        }
        tell.send_modify(|n| *n = n.wrapping_add(1));
    }
}

fn key(o: &DynamicObject) -> Key {
    (o.namespace().unwrap_or_default(), o.name_any())
}

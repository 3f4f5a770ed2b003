//! What a run installed on a cluster it does not own, and putting it back afterwards.
//!
//! On the embedded server the run owns the whole server and throws it away. On a real cluster
//! (`check --kubeconfig … --crds …`) every object the installer creates carries the run label
//! and is deleted after the run; every object that existed and was merge-patched (as
//! `clusterctl init` patches) is put back as it was before the run's first change to it. The
//! webhook routes of a run (a Service's client configs rewritten to a URL of this machine,
//! [`Installation::route_service`]) are changes like any other and go with the rest.

use crate::scenarios::RUN_LABEL;
use kube::api::{Api, DeleteParams, DynamicObject, PostParams};
use kube::discovery::ApiResource;
use serde_json::Value;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// One object a run changed.
#[derive(Debug, Clone)]
struct Change {
    resource: ApiResource,
    namespace: Option<String>,
    name: String,
    /// The object as it was before the run's first change; `None`: the run created it.
    before: Option<Value>,
}

impl Change {
    fn api(&self, client: &kube::Client) -> Api<DynamicObject> {
        match &self.namespace {
            Some(ns) => Api::namespaced_with(client.clone(), ns, &self.resource),
            None => Api::all_with(client.clone(), &self.resource),
        }
    }

    fn describe(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{} {ns}/{}", self.resource.kind, self.name),
            None => format!("{} {}", self.resource.kind, self.name),
        }
    }
}

/// A Service (`namespace`, `name`, `port`) the run routes to an address of this machine.
type Route = ((String, String, u16), SocketAddr);

/// The changes of one run to a cluster (shared by every installer of the run).
#[derive(Debug, Clone)]
pub struct Installation {
    run_id: String,
    changes: Arc<Mutex<Vec<Change>>>,
    /// The Services routed so far: what the run installs after a route is pointed at it too.
    routes: Arc<Mutex<Vec<Route>>>,
}

/// Why an object could not be put back.
#[derive(Debug, thiserror::Error)]
#[error("{object}: {message}")]
pub struct RestoreError {
    pub object: String,
    pub message: String,
}

impl Installation {
    pub fn new(run_id: &str) -> Self {
        Installation {
            run_id: run_id.to_string(),
            changes: Arc::default(),
            routes: Arc::default(),
        }
    }

    /// The run whose label created objects carry.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Change>> {
        self.changes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn find(&self, resource: &ApiResource, namespace: Option<&str>, name: &str) -> bool {
        self.lock().iter().any(|c| {
            c.resource == *resource && c.namespace.as_deref() == namespace && c.name == name
        })
    }

    /// Adds the run label to an object about to be created.
    pub fn label(&self, value: &mut Value) {
        if let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut) {
            let labels = meta
                .entry("labels")
                .or_insert_with(|| Value::Object(Default::default()));
            if let Some(l) = labels.as_object_mut() {
                l.insert(RUN_LABEL.into(), Value::String(self.run_id.clone()));
            }
        }
    }

    /// Records an object the run is about to create (recorded first: a create interrupted by
    /// Ctrl-C may still have happened; restoring deletes only objects carrying the run label).
    /// `false`: the run changed or created it before (that record stands).
    pub fn created(&self, resource: &ApiResource, namespace: Option<&str>, name: &str) -> bool {
        if self.find(resource, namespace, name) {
            return false;
        }
        self.lock().push(Change {
            resource: resource.clone(),
            namespace: namespace.map(str::to_string),
            name: name.to_string(),
            before: None,
        });
        true
    }

    /// Forgets a create that found the object there already (someone else's); only for a
    /// record [`Self::created`] just added.
    pub fn not_created(&self, resource: &ApiResource, namespace: Option<&str>, name: &str) {
        self.lock().retain(|c| {
            !(c.before.is_none()
                && c.resource == *resource
                && c.namespace.as_deref() == namespace
                && c.name == name)
        });
    }

    /// Records the state of an existing object before the run changes it (only its first
    /// change counts: that is the state to put back).
    pub fn changing(&self, resource: &ApiResource, namespace: Option<&str>, before: &Value) {
        let name = before
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if self.find(resource, namespace, name) {
            return;
        }
        self.lock().push(Change {
            resource: resource.clone(),
            namespace: namespace.map(str::to_string),
            name: name.to_string(),
            before: Some(before.clone()),
        });
    }

    /// The names of the cluster-scoped objects of `kind` the run created or changed.
    pub fn names_of(&self, kind: &str) -> Vec<String> {
        self.lock()
            .iter()
            .filter(|c| c.resource.kind == kind && c.namespace.is_none())
            .map(|c| c.name.clone())
            .collect()
    }

    /// How many objects the run created and changed.
    pub fn counts(&self) -> (usize, usize) {
        let changes = self.lock();
        let created = changes.iter().filter(|c| c.before.is_none()).count();
        (created, changes.len() - created)
    }

    /// Points the client configs of `value` (an object about to be installed) at the Services'
    /// routes so far; for a merge patch (`merge`) the other way of naming the webhook is set to
    /// null, so the patch replaces it instead of adding a second one.
    pub fn rewrite(&self, value: &mut Value, merge: bool) {
        let routes = self
            .routes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        for ((ns, name, port), addr) in &routes {
            route_client_configs(value, (ns, name, *port), *addr);
        }
        if merge {
            for config in client_configs(value) {
                if let Some(m) = config.as_object_mut() {
                    let other = if m.contains_key("url") {
                        "service"
                    } else {
                        "url"
                    };
                    m.entry(other).or_insert(Value::Null);
                }
            }
        }
    }

    /// Points every webhook client config of the objects this run installed that calls Service
    /// `namespace/name:port` at `https://<addr><path>` instead (the API server calls this
    /// machine, as envtest points webhooks at a local manager). Returns how many client configs
    /// changed.
    pub async fn route_service(
        &self,
        client: &kube::Client,
        service: (&str, &str, u16),
        addr: SocketAddr,
    ) -> Result<usize, RestoreError> {
        // A Service routed before (to the run's own webhook, then to the provider's) is
        // pointed from its old address to the new one.
        let previous = {
            let mut routes = self.routes.lock().unwrap_or_else(PoisonError::into_inner);
            let key = (service.0.to_string(), service.1.to_string(), service.2);
            match routes.iter().position(|(k, _)| *k == key) {
                Some(i) => Some(std::mem::replace(&mut routes[i].1, addr)),
                None => {
                    routes.push((key, addr));
                    None
                }
            }
        };
        let hooked: Vec<Change> = self
            .lock()
            .iter()
            .filter(|c| {
                matches!(
                    c.resource.kind.as_str(),
                    "CustomResourceDefinition"
                        | "MutatingWebhookConfiguration"
                        | "ValidatingWebhookConfiguration"
                )
            })
            .cloned()
            .collect();
        let mut changed = 0;
        for c in hooked {
            let api = c.api(client);
            let err = |e: kube::Error| RestoreError {
                object: c.describe(),
                message: e.to_string(),
            };
            let Some(obj) = api.get_opt(&c.name).await.map_err(err)? else {
                continue;
            };
            let mut value = serde_json::to_value(&obj).map_err(|e| RestoreError {
                object: c.describe(),
                message: e.to_string(),
            })?;
            let mut n = route_client_configs(&mut value, service, addr);
            if let Some(previous) = previous {
                n += reroute_urls(&mut value, previous, addr);
            }
            if n == 0 {
                continue;
            }
            let updated: DynamicObject =
                serde_json::from_value(value).map_err(|e| RestoreError {
                    object: c.describe(),
                    message: e.to_string(),
                })?;
            api.replace(&c.name, &PostParams::default(), &updated)
                .await
                .map_err(err)?;
            changed += n;
        }
        Ok(changed)
    }

    /// Puts the cluster back: deletes what the run created (newest first, each only while it
    /// carries the run label) and restores what it changed, then waits up to `wait` for the
    /// deleted objects to be gone. Returns what could not be put back.
    pub async fn restore(&self, client: &kube::Client, wait: Duration) -> Vec<String> {
        let mut changes = std::mem::take(&mut *self.lock());
        changes.reverse();
        let mut left = Vec::new();
        // Webhook configurations first (nothing the rest's deletion does is intercepted by a
        // manager that no longer runs), Namespaces last (they hold the rest).
        changes.sort_by_key(|c| match c.resource.kind.as_str() {
            "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration" => 0,
            "Namespace" => 3,
            "CustomResourceDefinition" => 2,
            _ => 1,
        });
        let mut deleted = Vec::new();
        for c in changes {
            let api = c.api(client);
            let current = match api.get_opt(&c.name).await {
                Ok(o) => o,
                Err(e) => {
                    left.push(format!("{}: {e}", c.describe()));
                    continue;
                }
            };
            match (&c.before, current) {
                (_, None) => {}
                (None, Some(o)) => {
                    let ours = o
                        .metadata
                        .labels
                        .as_ref()
                        .and_then(|l| l.get(RUN_LABEL))
                        .is_some_and(|v| *v == self.run_id);
                    if !ours {
                        continue;
                    }
                    match api.delete(&c.name, &DeleteParams::background()).await {
                        Ok(_) => deleted.push(c),
                        Err(kube::Error::Api(s)) if s.code == 404 => {}
                        Err(e) => left.push(format!("{}: {e}", c.describe())),
                    }
                }
                (Some(before), Some(now)) => {
                    if let Err(e) = put_back(&api, &c.name, before, &now).await {
                        left.push(format!("{} (not restored): {e}", c.describe()));
                    }
                }
            }
        }
        let deadline = tokio::time::Instant::now() + wait;
        while !deleted.is_empty() {
            let mut still = Vec::new();
            for c in deleted {
                if matches!(c.api(client).get_opt(&c.name).await, Ok(Some(_))) {
                    still.push(c);
                }
            }
            deleted = still;
            if deleted.is_empty() || tokio::time::Instant::now() >= deadline {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        left.extend(
            deleted
                .iter()
                .map(|c| format!("{} (still deleting)", c.describe())),
        );
        left
    }
}

/// Replaces the object with its state before the run, at its current resourceVersion.
async fn put_back(
    api: &Api<DynamicObject>,
    name: &str,
    before: &Value,
    now: &DynamicObject,
) -> Result<(), kube::Error> {
    let mut value = before.clone();
    if let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
        meta.insert(
            "resourceVersion".into(),
            now.metadata
                .resource_version
                .clone()
                .map_or(Value::Null, Value::String),
        );
    }
    let obj: DynamicObject = serde_json::from_value(value).map_err(kube::Error::SerdeError)?;
    api.replace(name, &PostParams::default(), &obj).await?;
    Ok(())
}

/// The client configs in `value`: a CRD's conversion webhook's, or a webhook configuration's
/// webhooks'.
fn client_configs(value: &mut Value) -> Vec<&mut Value> {
    if value
        .pointer("/spec/conversion/webhook/clientConfig")
        .is_some()
    {
        value
            .pointer_mut("/spec/conversion/webhook/clientConfig")
            .into_iter()
            .collect()
    } else {
        value
            .get_mut("webhooks")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
            .filter_map(|h| h.get_mut("clientConfig"))
            .collect()
    }
}

/// Rewrites the client configs in `value` (a CRD's conversion webhook, a webhook
/// configuration's webhooks) that call Service `namespace/name:port` into
/// `url: https://<addr><path>`; returns how many.
pub fn route_client_configs(
    value: &mut Value,
    service: (&str, &str, u16),
    addr: SocketAddr,
) -> usize {
    let (namespace, name, port) = service;
    let mut n = 0;
    for config in client_configs(value) {
        let Some(svc) = config.get("service") else {
            continue;
        };
        let s = |k: &str| svc.get(k).and_then(Value::as_str).unwrap_or_default();
        let svc_port = svc.get("port").and_then(Value::as_u64).unwrap_or(443);
        if s("namespace") != namespace || s("name") != name || svc_port != u64::from(port) {
            continue;
        }
        let path = s("path").to_string();
        let url = format!("https://{addr}{path}");
        if let Some(obj) = config.as_object_mut() {
            obj.remove("service");
            obj.insert("url".into(), Value::String(url));
            n += 1;
        }
    }
    n
}

/// Rewrites the client-config URLs of `value` that call `from` to call `to`; returns how many.
fn reroute_urls(value: &mut Value, from: SocketAddr, to: SocketAddr) -> usize {
    let old = format!("https://{from}/");
    let mut n = 0;
    for config in client_configs(value) {
        let Some(url) = config.get("url").and_then(Value::as_str) else {
            continue;
        };
        if let Some(path) = url.strip_prefix(&old) {
            config["url"] = Value::String(format!("https://{to}/{path}"));
            n += 1;
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_the_services_client_configs_become_urls() {
        let addr: SocketAddr = "127.0.0.1:9443".parse().unwrap();
        let mut vwc = json!({"webhooks": [
            {"name": "a", "clientConfig": {"caBundle": "Q0E=", "service": {"namespace": "p-system", "name": "p-webhook", "path": "/validate-x"}}},
            {"name": "b", "clientConfig": {"service": {"namespace": "p-system", "name": "other", "path": "/v"}}},
            {"name": "c", "clientConfig": {"service": {"namespace": "p-system", "name": "p-webhook", "port": 8443, "path": "/v"}}},
        ]});
        assert_eq!(
            route_client_configs(&mut vwc, ("p-system", "p-webhook", 443), addr),
            1
        );
        assert_eq!(
            vwc["webhooks"][0]["clientConfig"],
            json!({"caBundle": "Q0E=", "url": "https://127.0.0.1:9443/validate-x"})
        );
        assert!(vwc["webhooks"][1]["clientConfig"].get("service").is_some());
        assert!(vwc["webhooks"][2]["clientConfig"].get("service").is_some());
        let mut crd = json!({"spec": {"conversion": {"strategy": "Webhook", "webhook": {"clientConfig":
            {"service": {"namespace": "p-system", "name": "p-webhook", "port": 8443, "path": "/convert"}}}}}});
        assert_eq!(
            route_client_configs(&mut crd, ("p-system", "p-webhook", 8443), addr),
            1
        );
        assert_eq!(
            crd["spec"]["conversion"]["webhook"]["clientConfig"]["url"],
            "https://127.0.0.1:9443/convert"
        );
        let later: SocketAddr = "127.0.0.1:9555".parse().unwrap();
        assert_eq!(reroute_urls(&mut crd, addr, later), 1);
        assert_eq!(
            crd["spec"]["conversion"]["webhook"]["clientConfig"]["url"],
            "https://127.0.0.1:9555/convert"
        );
    }

    #[test]
    fn the_first_change_is_the_state_to_put_back() {
        let i = Installation::new("r1");
        let ar = ApiResource {
            group: String::new(),
            version: "v1".into(),
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            plural: "configmaps".into(),
        };
        i.changing(
            &ar,
            Some("ns"),
            &json!({"metadata": {"name": "c"}, "data": {"a": "1"}}),
        );
        i.changing(
            &ar,
            Some("ns"),
            &json!({"metadata": {"name": "c"}, "data": {"a": "2"}}),
        );
        assert!(i.created(&ar, Some("ns"), "d"));
        assert!(!i.created(&ar, Some("ns"), "d"), "recorded once");
        assert!(i.created(&ar, Some("ns"), "e"));
        i.not_created(&ar, Some("ns"), "e");
        assert_eq!(i.counts(), (1, 1));
        let changes = i.lock();
        assert_eq!(changes[0].before.as_ref().unwrap()["data"]["a"], "1");
        let mut v = json!({"metadata": {"name": "x"}});
        drop(changes);
        i.label(&mut v);
        assert_eq!(v["metadata"]["labels"][RUN_LABEL], "r1");
    }
}

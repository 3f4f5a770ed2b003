//! The controllers a test cluster runs beside the apiserver (docs/embedded-apiserver.md M10, S4): CRD
//! establishing and cleanup, namespace deletion, garbage collection, ClusterRole aggregation.
//! They consume the store's event stream and write through the same pipeline as clients.

use std::collections::BTreeMap;
use std::sync::{Arc, Weak};

use serde_json::{Value, json};
use tokio::sync::broadcast::error::{RecvError, TryRecvError};

use super::crd;
use super::error::ApiError;
use super::meta;
use super::ops::{self, DeleteOpts, Target, UpdateKind, WriteOpts};
use super::state::{EmbeddedServer, Inner};
use super::store::{EventType, Store, StoreEvent};

mod garbage_collector;
use garbage_collector::{deletions_matter, garbage_collect, has_finalizer, owner_uids};

const CRD_GROUP: &str = "apiextensions.k8s.io";
const CRDS: &str = "customresourcedefinitions";
const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

pub fn spawn_all(server: &EmbeddedServer) {
    let weak = Arc::downgrade(&server.inner);
    let rx = server.lock().subscribe();
    tokio::spawn(run(weak, rx));
}

async fn run(weak: Weak<Inner>, mut rx: tokio::sync::broadcast::Receiver<Arc<StoreEvent>>) {
    loop {
        // Every event already sent is handled in one batch: the sweeps that read the whole
        // store (namespace deletion, garbage collection, aggregation) run once per batch, not
        // once per event (a run's cleanup deletes hundreds of objects at once).
        let mut batch = Vec::new();
        let mut lagged = false;
        match rx.recv().await {
            Ok(ev) => batch.push(ev),
            Err(RecvError::Lagged(_)) => lagged = true,
            Err(RecvError::Closed) => break,
        }
        loop {
            match rx.try_recv() {
                Ok(ev) => batch.push(ev),
                Err(TryRecvError::Lagged(_)) => lagged = true,
                Err(TryRecvError::Empty | TryRecvError::Closed) => break,
            }
        }
        let Some(inner) = weak.upgrade() else { break };
        let server = EmbeddedServer { inner };
        if lagged {
            resync(&server);
        } else {
            handle(&server, &batch);
        }
    }
}

fn target(
    store: &Store,
    group: &str,
    resource: &str,
    namespace: &str,
    name: &str,
) -> Option<Target> {
    let rt = store.registry.get(group, resource)?;
    let version = rt.storage_version()?.name.clone();
    Some(Target {
        rt,
        version,
        namespace: namespace.to_string(),
        name: name.to_string(),
        subresource: None,
    })
}

fn key(group: &str, resource: &str, ns: &str, name: &str) -> (String, String, String, String) {
    (group.into(), resource.into(), ns.into(), name.into())
}

/// What a batch of events asks the controllers to do, each sweep once.
#[derive(Default)]
struct Work {
    crds: Vec<String>,
    namespaces: Vec<String>,
    garbage_collect: bool,
    /// Deleted objects: (uid, the uids of their owners).
    deleted: Vec<(String, Vec<String>)>,
    aggregate: bool,
}

impl Work {
    fn crd(&mut self, name: String) {
        if !self.crds.contains(&name) {
            self.crds.push(name);
        }
    }

    fn namespace(&mut self, name: String) {
        if !self.namespaces.contains(&name) {
            self.namespaces.push(name);
        }
    }
}

fn handle(server: &EmbeddedServer, batch: &[Arc<StoreEvent>]) {
    let mut work = Work::default();
    for ev in batch {
        let (g, r) = (ev.group.as_str(), ev.resource.as_str());
        if g == CRD_GROUP && r == CRDS && ev.type_ != EventType::Deleted {
            work.crd(meta::name(&ev.object).to_string());
        }
        // The type check first: looking up the CRD takes the store lock.
        if ev.type_ == EventType::Deleted
            && let Some(crd_name) = crd_of_custom(server, g, r)
        {
            work.crd(crd_name);
        }
        let ns = meta::namespace(&ev.object);
        if g.is_empty() && r == "namespaces" && meta::is_deleting(&ev.object) {
            work.namespace(meta::name(&ev.object).to_string());
        } else if !ns.is_empty() && ev.type_ == EventType::Deleted {
            work.namespace(ns.to_string());
        }
        // The collector acts when an owner is gone, or is being deleted in the foreground or
        // with orphaning (its dependents go first, or lose the reference); a deletion that
        // waits on other finalizers leaves the dependents as they are until it ends.
        if server.options().garbage_collector {
            if ev.type_ == EventType::Deleted {
                work.deleted.push((
                    meta::uid(&ev.object).to_string(),
                    owner_uids(&ev.object).map(|(u, _)| u.to_string()).collect(),
                ));
            } else if meta::is_deleting(&ev.object)
                && (has_finalizer(&ev.object, "foregroundDeletion")
                    || has_finalizer(&ev.object, "orphan"))
            {
                work.garbage_collect = true;
            }
        }
        work.aggregate |=
            server.options().aggregation_controller && g == RBAC_GROUP && r == "clusterroles";
    }
    for name in &work.crds {
        crd_changed(server, name);
    }
    for ns in &work.namespaces {
        namespace_sweep(server, ns);
    }
    if work.garbage_collect || deletions_matter(server, &work.deleted) {
        garbage_collect(server);
    }
    if work.aggregate {
        aggregate(server);
    }
}

fn resync(server: &EmbeddedServer) {
    let crds: Vec<String> = {
        let store = server.lock();
        store
            .objects_of(CRD_GROUP, CRDS, None)
            .map(|o| meta::name(o).to_string())
            .collect()
    };
    for c in crds {
        crd_changed(server, &c);
    }
    let namespaces: Vec<String> = {
        let store = server.lock();
        store
            .objects_of("", "namespaces", None)
            .filter(|o| meta::is_deleting(o))
            .map(|o| meta::name(o).to_string())
            .collect()
    };
    for ns in namespaces {
        namespace_sweep(server, &ns);
    }
    if server.options().garbage_collector {
        garbage_collect(server);
    }
    if server.options().aggregation_controller {
        aggregate(server);
    }
}

fn crd_of_custom(server: &EmbeddedServer, group: &str, resource: &str) -> Option<String> {
    let store = server.lock();
    let rt = store.registry.get(group, resource)?;
    rt.custom.then(|| format!("{resource}.{group}"))
}

fn crd_changed(server: &EmbeddedServer, name: &str) {
    let delay = server.faults().crd_delay();
    let establish_now = {
        let store = server.lock();
        let Some(obj) = store.objects.get(&key(CRD_GROUP, CRDS, "", name)) else {
            return;
        };
        !meta::is_deleting(obj) && crd::established_status(obj).is_some()
    };
    if establish_now {
        if delay.is_zero() {
            establish(server, name);
        } else {
            let s = server.clone();
            let n = name.to_string();
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                establish(&s, &n);
            });
        }
        return;
    }
    cleanup_crd(server, name);
}

fn establish(server: &EmbeddedServer, name: &str) {
    let mut store = server.lock();
    let Some(obj) = store
        .objects
        .get(&key(CRD_GROUP, CRDS, "", name))
        .map(|o| (**o).clone())
    else {
        return;
    };
    if meta::is_deleting(&obj) {
        return;
    }
    let Some(status) = crd::established_status(&obj) else {
        return;
    };
    let Some(mut t) = target(&store, CRD_GROUP, CRDS, "", name) else {
        return;
    };
    t.subresource = Some("status".into());
    let mut new = obj;
    new["status"] = status;
    let _ = patch_as_controller(&mut store, &t, new);
}

fn cleanup_crd(server: &EmbeddedServer, name: &str) {
    let mut store = server.lock();
    let Some(obj) = store
        .objects
        .get(&key(CRD_GROUP, CRDS, "", name))
        .map(|o| (**o).clone())
    else {
        return;
    };
    if !meta::is_deleting(&obj)
        || !meta::finalizers(&obj)
            .iter()
            .any(|f| f == crd::CLEANUP_FINALIZER)
    {
        return;
    }
    let group = meta::str_at(&obj, "/spec/group").to_string();
    let plural = meta::str_at(&obj, "/spec/names/plural").to_string();
    let instances: Vec<(String, String, bool)> = store
        .objects_of(&group, &plural, None)
        .map(|o| {
            (
                meta::namespace(o).to_string(),
                meta::name(o).to_string(),
                meta::is_deleting(o),
            )
        })
        .collect();
    for (ns, n, deleting) in &instances {
        if *deleting {
            continue;
        }
        if let Some(t) = target(&store, &group, &plural, ns, n) {
            let _ = ops::delete(&mut store, &t, &DeleteOpts::default());
        }
    }
    let remaining = store.objects_of(&group, &plural, None).count();
    let Some(mut t) = target(&store, CRD_GROUP, CRDS, "", name) else {
        return;
    };
    let Some(current) = store
        .objects
        .get(&key(CRD_GROUP, CRDS, "", name))
        .map(|o| (**o).clone())
    else {
        return;
    };
    let mut new = current.clone();
    new["status"] = crd::terminating_status(&current, remaining);
    t.subresource = Some("status".into());
    let _ = patch_as_controller(&mut store, &t, new);
    if remaining == 0 {
        t.subresource = None;
        if let Some(current) = store
            .objects
            .get(&key(CRD_GROUP, CRDS, "", name))
            .map(|o| (**o).clone())
        {
            let mut new = current;
            let left: Vec<String> = meta::finalizers(&new)
                .into_iter()
                .filter(|f| f != crd::CLEANUP_FINALIZER)
                .collect();
            meta::set_finalizers(&mut new, &left);
            let _ = patch_as_controller(&mut store, &t, new);
        }
    }
}

fn namespace_sweep(server: &EmbeddedServer, ns: &str) {
    if !server.options().namespace_controller {
        return;
    }
    let mut store = server.lock();
    let Some(ns_obj) = store
        .objects
        .get(&key("", "namespaces", "", ns))
        .map(|o| (**o).clone())
    else {
        return;
    };
    if !meta::is_deleting(&ns_obj) {
        return;
    }
    let content: Vec<(String, String, String, bool)> = store
        .objects
        .iter()
        .filter(|((_, _, n, _), _)| n == ns)
        .map(|((g, r, _, name), o)| (g.clone(), r.clone(), name.clone(), meta::is_deleting(o)))
        .collect();
    for (g, r, name, deleting) in &content {
        if *deleting {
            continue;
        }
        if let Some(t) = target(&store, g, r, ns, name) {
            let _ = ops::delete(&mut store, &t, &DeleteOpts::default());
        }
    }
    let left: Vec<(String, Vec<String>)> = store
        .objects
        .iter()
        .filter(|((_, _, n, _), _)| n == ns)
        .map(|((g, r, _, _), o)| (format!("{r}.{g}"), meta::finalizers(o)))
        .collect();
    let Some(mut t) = target(&store, "", "namespaces", "", ns) else {
        return;
    };
    if left.is_empty() {
        let mut new = ns_obj;
        new["spec"] = json!({});
        let _ = patch_as_controller(&mut store, &t, new);
        return;
    }
    // What is left, as kube's namespace deleter reports it in the namespace's conditions.
    let mut new = ns_obj.clone();
    let mut status = new.get("status").cloned().unwrap_or_else(|| json!({}));
    namespace_conditions(&mut status, &left);
    if new.get("status") != Some(&status) {
        new["status"] = status;
        t.subresource = Some("status".into());
        let _ = patch_as_controller(&mut store, &t, new);
    }
}

/// The conditions kube's namespace deleter keeps while content remains
/// (`status_condition_utils.go`): the failures it did not meet as False with their ok
/// reasons, what remains and the finalizers holding it as True.
fn namespace_conditions(status: &mut Value, left: &[(String, Vec<String>)]) {
    let mut by_resource: BTreeMap<&str, usize> = BTreeMap::new();
    let mut by_finalizer: BTreeMap<&str, usize> = BTreeMap::new();
    for (resource, finalizers) in left {
        *by_resource.entry(resource).or_default() += 1;
        for f in finalizers {
            *by_finalizer.entry(f).or_default() += 1;
        }
    }
    let join = |m: &BTreeMap<&str, usize>, f: &dyn Fn(&str, usize) -> String| {
        let mut parts: Vec<String> = m.iter().map(|(k, n)| f(k, *n)).collect();
        parts.sort();
        parts.join(", ")
    };
    let remaining = join(&by_resource, &|r, n| {
        format!("{r} has {n} resource instances")
    });
    let held = join(&by_finalizer, &|f, n| {
        format!("{f} in {n} resource instances")
    });
    let wanted = [
        (
            "NamespaceDeletionDiscoveryFailure",
            "False",
            "ResourcesDiscovered",
            "All resources successfully discovered".to_string(),
        ),
        (
            "NamespaceDeletionGroupVersionParsingFailure",
            "False",
            "ParsedGroupVersions",
            "All legacy kube types successfully parsed".to_string(),
        ),
        (
            "NamespaceDeletionContentFailure",
            "False",
            "ContentDeleted",
            "All content successfully deleted, may be waiting on finalization".to_string(),
        ),
        (
            "NamespaceContentRemaining",
            "True",
            "SomeResourcesRemain",
            format!("Some resources are remaining: {remaining}"),
        ),
        if by_finalizer.is_empty() {
            (
                "NamespaceFinalizersRemaining",
                "False",
                "ContentHasNoFinalizers",
                "All content-preserving finalizers finished".to_string(),
            )
        } else {
            (
                "NamespaceFinalizersRemaining",
                "True",
                "SomeFinalizersRemain",
                format!("Some content in the namespace has finalizers remaining: {held}"),
            )
        },
    ];
    let now = meta::now_rfc3339();
    for (type_, st, reason, message) in wanted {
        crd::set_condition(
            status,
            json!({"type": type_, "status": st, "lastTransitionTime": now,
                "reason": reason, "message": message}),
        );
    }
}

impl EmbeddedServer {
    /// Clears the finalizers of every object being deleted in `namespace`, as an embedder may
    /// do on a server it owns when the controllers that set them are gone (a provider that
    /// crashed): the objects go, and with them a namespace being deleted. Returns how many.
    pub fn release_finalizers_in(&self, namespace: &str) -> usize {
        let mut store = self.lock();
        let held: Vec<(String, String, String, Value)> = store
            .objects
            .iter()
            .filter(|((_, _, ns, _), o)| {
                ns == namespace && meta::is_deleting(o) && !meta::finalizers(o).is_empty()
            })
            .map(|((g, r, _, name), o)| (g.clone(), r.clone(), name.clone(), (**o).clone()))
            .collect();
        let mut released = 0;
        for (g, r, name, mut obj) in held {
            if let Some(t) = target(&store, &g, &r, namespace, &name) {
                meta::set_finalizers(&mut obj, &[]);
                released += usize::from(patch_as_controller(&mut store, &t, obj).is_ok());
            }
        }
        released
    }
}

/// ClusterRole aggregation: `aggregationRule.clusterRoleSelectors` → union of matching roles' rules.
fn aggregate(server: &EmbeddedServer) {
    let mut store = server.lock();
    let roles: Vec<Value> = store
        .objects_of(RBAC_GROUP, "clusterroles", None)
        .cloned()
        .collect();
    for (name, rules) in super::rbac::aggregate_cluster_roles(&roles) {
        let Some(role) = roles.iter().find(|r| meta::name(r) == name) else {
            continue;
        };
        let new_rules = Value::Array(rules);
        if role.get("rules").unwrap_or(&Value::Array(Vec::new())) == &new_rules {
            continue;
        }
        let Some(t) = target(&store, RBAC_GROUP, "clusterroles", "", &name) else {
            continue;
        };
        let mut new = role.clone();
        new["rules"] = new_rules;
        let _ = patch_as_controller(&mut store, &t, new);
    }
}

/// A controller's write of `new` (the whole object) over the stored one.
/// A controller's write, with managedFields kept as kube's controllers leave them: an Update
/// entry of the writer (`kube-apiserver` for the CRD controllers inside kube-apiserver,
/// `kube-controller-manager` for the garbage collector and the namespace controller), and the
/// fields it removes leaving every manager.
fn patch_as_controller(
    store: &mut Store,
    t: &Target,
    new: Value,
) -> Result<ops::Written, ApiError> {
    let manager = if t.rt.group == CRD_GROUP && t.rt.resource == CRDS {
        "kube-apiserver"
    } else {
        "kube-controller-manager"
    };
    let opts = WriteOpts {
        update_manager: Some(manager.to_string()),
        ..WriteOpts::default()
    };
    ops::update(store, t, new, UpdateKind::Patch, &opts)
}

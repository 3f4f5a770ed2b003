//! The cleanup guard: remembers everything a run created and removes it on success, failure,
//! timeout and Ctrl-C; reports leftovers by name; with `force`, strips finalizers a broken
//! provider never removes. Never touches an object without the run label.

use super::RUN_LABEL;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams};
use kube::discovery::ApiResource;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Debug, Clone)]
struct Created {
    resource: ApiResource,
    namespace: Option<String>,
    name: String,
}

/// Tracks the objects of one run.
#[derive(Clone, Default)]
pub struct CleanupGuard {
    created: Arc<Mutex<Vec<Created>>>,
    /// On a server the run owns (`check --embedded`): releases what still holds a namespace of
    /// the run after its own objects are gone and their finalizers stripped (objects a crashed
    /// provider left finalizing there).
    release_namespace: Option<ReleaseNamespace>,
    /// On a cluster the run installed its providers on and runs their managers beside: with
    /// `force`, what still holds a namespace of the run after the wait (objects the managers
    /// made for the run's objects and left finalizing, e.g. an InfraMachine whose provider waits
    /// for an owner Machine that is gone) gets its finalizers stripped. Only in the run's own
    /// namespaces (created by the run, carrying its label): everything there exists because of
    /// the run.
    release_on_cluster: bool,
}

/// Releases what holds a namespace of the run ([`CleanupGuard::owning_the_server`]).
type ReleaseNamespace = Arc<dyn Fn(&str) + Send + Sync>;

/// What cleanup could not remove (`Kind namespace/name (finalizers: …)`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Leftovers(pub Vec<String>);

impl CleanupGuard {
    /// A guard for a run on a server it owns: with `force`, a namespace of the run still there
    /// after the wait is handed to `release` (e.g.
    /// `embedded_apiserver::EmbeddedServer::release_finalizers_in`), then waited for again.
    pub fn owning_the_server(release: impl Fn(&str) + Send + Sync + 'static) -> Self {
        CleanupGuard {
            created: Arc::default(),
            release_namespace: Some(Arc::new(release)),
            release_on_cluster: false,
        }
    }

    /// A guard for a run whose managers run beside a cluster (see the field's doc).
    pub fn releasing_its_namespaces() -> Self {
        CleanupGuard {
            release_on_cluster: true,
            ..CleanupGuard::default()
        }
    }

    pub fn track(&self, resource: &ApiResource, namespace: Option<&str>, name: &str) {
        let mut c = self
            .created
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !c.iter().any(|x| {
            x.resource == *resource && x.namespace.as_deref() == namespace && x.name == name
        }) {
            c.push(Created {
                resource: resource.clone(),
                namespace: namespace.map(str::to_string),
                name: name.to_string(),
            });
        }
    }

    /// What the guard tracks, described as cleanup reports it (`Kind namespace/name`), sorted.
    pub fn tracked(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .created
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .map(|c| describe(c, &[]))
            .collect();
        out.sort();
        out
    }

    /// Forgets an object tracked before its create returned, when the create said it exists
    /// already (someone else's).
    pub fn untrack(&self, resource: &ApiResource, namespace: Option<&str>, name: &str) {
        self.created
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .retain(|x| {
                !(x.resource == *resource && x.namespace.as_deref() == namespace && x.name == name)
            });
    }

    fn take(&self) -> Vec<Created> {
        std::mem::take(
            &mut *self
                .created
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// Deletes everything tracked (newest first) and waits up to `wait` for it to disappear:
    /// namespaced objects first, then (once they are gone or the wait is over) the namespaces
    /// and cluster-scoped objects (those not carrying the run label are left alone),
    /// so the provider can still finalize its objects and the tool keeps the access it holds
    /// inside its namespaces (a RoleBinding there) while it waits. With `force`, finalizers still
    /// blocking after the wait are stripped.
    pub async fn cleanup(&self, client: &kube::Client, wait: Duration, force: bool) -> Leftovers {
        let mut items = self.take();
        items.reverse();
        let (namespaced, namespaces): (Vec<Created>, Vec<Created>) =
            items.into_iter().partition(|c| c.namespace.is_some());
        let mut remaining = remove(client, namespaced, wait, force).await;
        let mut left_namespaces = remove(client, namespaces, wait, force).await;
        if force
            && !left_namespaces.is_empty()
            && let Some(release) = &self.release_namespace
        {
            for ns in &left_namespaces {
                release(&ns.name);
            }
            left_namespaces = wait_gone(client, left_namespaces, wait).await;
        } else if force && !left_namespaces.is_empty() && self.release_on_cluster {
            for ns in &left_namespaces {
                if carries_run_label(client, ns).await {
                    release_finalizers_in(client, &ns.name).await;
                }
            }
            left_namespaces = wait_gone(client, left_namespaces, wait).await;
        }
        remaining.extend(left_namespaces);
        let mut names = Vec::new();
        for c in &remaining {
            let fins = match api_for(client, c).get_opt(&c.name).await {
                Ok(Some(o)) => o.metadata.finalizers.unwrap_or_default(),
                _ => Vec::new(),
            };
            names.push(describe(c, &fins));
        }
        names.sort();
        Leftovers(names)
    }
}

/// Deletes `items`, waits up to `wait` for them to disappear (then strips finalizers and waits
/// again with `force`); returns what is still there.
async fn remove(
    client: &kube::Client,
    items: Vec<Created>,
    wait: Duration,
    force: bool,
) -> Vec<Created> {
    use futures::StreamExt;
    // One round trip each, at most CONCURRENT at once (nothing waits between the deletes:
    // each only starts the object's deletion), in the order given.
    let ours: Vec<Created> = futures::stream::iter(items)
        .map(|c| async move {
            // Cluster-scoped objects (namespaces, CRDs) are tracked before their create
            // returns, so an interrupted create is not left behind; one that turned out to be
            // someone else's (no run label, or gone) is not touched.
            if c.namespace.is_none() && !carries_run_label(client, &c).await {
                return None;
            }
            let _ = api_for(client, &c)
                .delete(&c.name, &DeleteParams::background())
                .await;
            Some(c)
        })
        .buffered(CONCURRENT)
        .filter_map(std::future::ready)
        .collect()
        .await;
    let mut remaining = wait_gone(client, ours, wait).await;
    if force && !remaining.is_empty() {
        futures::future::join_all(remaining.iter().map(|c| strip_finalizers(client, c))).await;
        remaining = wait_gone(client, remaining, wait).await;
    }
    remaining
}

/// Waits up to `wait` for `items` to disappear; returns those still there.
async fn wait_gone(client: &kube::Client, items: Vec<Created>, wait: Duration) -> Vec<Created> {
    let deadline = tokio::time::Instant::now() + wait;
    let mut remaining = items;
    loop {
        remaining = still_present(client, remaining).await;
        if remaining.is_empty() || tokio::time::Instant::now() >= deadline {
            return remaining;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

fn api_for(client: &kube::Client, c: &Created) -> Api<DynamicObject> {
    match &c.namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &c.resource),
        None => Api::all_with(client.clone(), &c.resource),
    }
}

/// How many cleanup requests are in flight at once.
const CONCURRENT: usize = 16;

async fn still_present(client: &kube::Client, items: Vec<Created>) -> Vec<Created> {
    use futures::StreamExt;
    futures::stream::iter(items)
        .map(|c| async move {
            matches!(api_for(client, &c).get_opt(&c.name).await, Ok(Some(_))).then_some(c)
        })
        .buffered(CONCURRENT)
        .filter_map(std::future::ready)
        .collect()
        .await
}

async fn carries_run_label(client: &kube::Client, c: &Created) -> bool {
    matches!(api_for(client, c).get_opt(&c.name).await, Ok(Some(o))
        if o.metadata.labels.as_ref().is_some_and(|l| l.contains_key(RUN_LABEL)))
}

async fn strip_finalizers(client: &kube::Client, c: &Created) {
    let api = api_for(client, c);
    if carries_run_label(client, c).await {
        let patch = serde_json::json!({"metadata": {"finalizers": null}});
        let _ = api
            .patch(&c.name, &PatchParams::default(), &Patch::Merge(&patch))
            .await;
    }
}

/// Strips the finalizers of every object in namespace `ns` (every namespaced kind the cluster
/// serves that can be listed and patched).
async fn release_finalizers_in(client: &kube::Client, ns: &str) {
    use kube::discovery::{Discovery, Scope, verbs};
    let Ok(discovery) = Discovery::new(client.clone()).run_aggregated().await else {
        return;
    };
    let patch = serde_json::json!({"metadata": {"finalizers": null}});
    for group in discovery.groups() {
        for (ar, caps) in group.recommended_resources() {
            if caps.scope != Scope::Namespaced
                || !caps.supports_operation(verbs::LIST)
                || !caps.supports_operation(verbs::PATCH)
            {
                continue;
            }
            let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), ns, &ar);
            let Ok(list) = api.list(&ListParams::default()).await else {
                continue;
            };
            for o in list.items {
                let held = o
                    .metadata
                    .finalizers
                    .as_ref()
                    .is_some_and(|f| !f.is_empty());
                if let (true, Some(name)) = (held, o.metadata.name.as_deref()) {
                    let _ = api
                        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
                        .await;
                }
            }
        }
    }
}

fn describe(c: &Created, finalizers: &[String]) -> String {
    let mut s = match &c.namespace {
        Some(ns) => format!("{} {ns}/{}", c.resource.kind, c.name),
        None => format!("{} {}", c.resource.kind, c.name),
    };
    if !finalizers.is_empty() {
        s.push_str(&format!(" (finalizers: {})", finalizers.join(", ")));
    }
    s
}

/// What [`cleanup_runs`] did: the objects it removed and those it could not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CleanupReport {
    /// `Kind namespace/name` of every removed object, sorted.
    pub removed: Vec<String>,
    pub leftovers: Leftovers,
}

/// Removes what earlier runs left: every namespace labelled with the run label (value `run`, or
/// any value when `None`), after deleting the labelled objects of `resources` (namespaced
/// kinds) in it, the labelled objects of `cluster_scoped` (cluster-scoped kinds), and the
/// labelled cluster-scoped objects a run installed (CRDs, RBAC, webhook configurations).
pub async fn cleanup_runs(
    client: &kube::Client,
    run: Option<&str>,
    (resources, cluster_scoped): (&[ApiResource], &[ApiResource]),
    wait: Duration,
    force: bool,
) -> anyhow::Result<CleanupReport> {
    let selector = match run {
        Some(id) => format!("{RUN_LABEL}={id}"),
        None => RUN_LABEL.to_string(),
    };
    let lp = ListParams::default().labels(&selector);
    let ns_resource = ApiResource {
        group: String::new(),
        version: "v1".into(),
        api_version: "v1".into(),
        kind: "Namespace".into(),
        plural: "namespaces".into(),
    };
    let namespaces: Api<DynamicObject> = Api::all_with(client.clone(), &ns_resource);
    let guard = CleanupGuard::default();
    for r in cluster_scoped {
        let api: Api<DynamicObject> = Api::all_with(client.clone(), r);
        if let Ok(objs) = api.list(&lp).await {
            for o in objs.items {
                if let Some(name) = o.metadata.name.as_deref() {
                    guard.track(r, None, name);
                }
            }
        }
    }
    let list = namespaces.list(&lp).await?;
    for ns in &list.items {
        let Some(ns_name) = ns.metadata.name.as_deref() else {
            continue;
        };
        for r in resources {
            let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), ns_name, r);
            if let Ok(objs) = api.list(&lp).await {
                for o in objs.items {
                    if let Some(name) = o.metadata.name.as_deref() {
                        guard.track(r, Some(ns_name), name);
                    }
                }
            }
        }
        guard.track(&ns_resource, None, ns_name);
    }
    // What a run installed on a cluster it does not own (`check --kubeconfig … --crds …`):
    // cluster-scoped objects carry the run label too.
    for r in installed_cluster_kinds() {
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &r);
        if let Ok(objs) = api.list(&lp).await {
            for o in objs.items {
                if let Some(name) = o.metadata.name.as_deref() {
                    guard.track(&r, None, name);
                }
            }
        }
    }
    let tracked = guard.tracked();
    let leftovers = guard.cleanup(client, wait, force).await;
    let removed = tracked
        .into_iter()
        .filter(|t| {
            !leftovers
                .0
                .iter()
                .any(|l| l == t || l.starts_with(&format!("{t} (")))
        })
        .collect();
    Ok(CleanupReport { removed, leftovers })
}

/// The cluster-scoped kinds a run's installation creates (provider components, the baseline's
/// CRDs and RBAC).
fn installed_cluster_kinds() -> Vec<ApiResource> {
    let r = |group: &str, version: &str, kind: &str, plural: &str| ApiResource {
        group: group.into(),
        version: version.into(),
        api_version: format!("{group}/{version}"),
        kind: kind.into(),
        plural: plural.into(),
    };
    vec![
        r(
            "admissionregistration.k8s.io",
            "v1",
            "MutatingWebhookConfiguration",
            "mutatingwebhookconfigurations",
        ),
        r(
            "admissionregistration.k8s.io",
            "v1",
            "ValidatingWebhookConfiguration",
            "validatingwebhookconfigurations",
        ),
        r(
            "rbac.authorization.k8s.io",
            "v1",
            "ClusterRoleBinding",
            "clusterrolebindings",
        ),
        r(
            "rbac.authorization.k8s.io",
            "v1",
            "ClusterRole",
            "clusterroles",
        ),
        r(
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
            "customresourcedefinitions",
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client_retry::RetryingClient;
    use embedded_apiserver::{EmbeddedServer, ServerOptions};
    use k8s_openapi::api::core::v1::Namespace;
    use kube::api::PostParams;

    async fn create_namespace(client: &kube::Client, name: &str, labelled: bool) {
        let mut ns = Namespace::default();
        ns.metadata.name = Some(name.into());
        if labelled {
            ns.metadata.labels = Some([(RUN_LABEL.to_string(), "r1".to_string())].into());
        }
        Api::<Namespace>::all(client.clone())
            .create(&PostParams::default(), &ns)
            .await
            .expect("create namespace");
    }

    /// `cleanup --run`: a run's objects of a cluster-scoped kind (a global IP pool) are in no
    /// namespace; they are found by the run label and removed, an unlabelled one is not.
    #[tokio::test]
    async fn cleanup_runs_removes_labelled_objects_of_cluster_scoped_kinds() {
        let server = EmbeddedServer::new(ServerOptions::default());
        let client = server.retrying_client();
        let crds = capi_mock_provider::crds::mock_ipam_crds()
            .into_iter()
            .map(|c| serde_json::to_value(c).expect("CRD as JSON"))
            .collect();
        server.apply_documents(crds).await.expect("pool CRDs");
        let pools = capi_mock_provider::reconcile::ipam::global_pool_resource();
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &pools);
        for (name, labels) in [
            ("ours", serde_json::json!({RUN_LABEL: "r1"})),
            ("theirs", serde_json::json!({})),
        ] {
            let obj: DynamicObject = serde_json::from_value(serde_json::json!({
                "apiVersion": pools.api_version, "kind": pools.kind,
                "metadata": {"name": name, "labels": labels},
                "spec": {"addresses": ["192.0.2.10"], "prefix": 24},
            }))
            .expect("a pool");
            api.create(&PostParams::default(), &obj)
                .await
                .expect("create pool");
        }
        let report = cleanup_runs(
            &client,
            Some("r1"),
            (&[], std::slice::from_ref(&pools)),
            Duration::from_secs(5),
            false,
        )
        .await
        .expect("cleanup");
        assert_eq!(report.removed, ["MockGlobalIPPool ours"]);
        assert!(report.leftovers.0.is_empty(), "{:?}", report.leftovers);
        assert!(api.get_opt("ours").await.expect("get").is_none());
        assert!(api.get_opt("theirs").await.expect("get").is_some());
    }

    #[tokio::test]
    async fn tracked_cluster_objects_without_the_run_label_are_left_alone() {
        let server = EmbeddedServer::new(ServerOptions::default());
        let client = server.retrying_client();
        create_namespace(&client, "ours", true).await;
        create_namespace(&client, "theirs", false).await;
        let guard = CleanupGuard::default();
        let ns = ApiResource::erase::<Namespace>(&());
        for name in ["ours", "theirs", "never-created"] {
            guard.track(&ns, None, name);
        }
        let left = guard.cleanup(&client, Duration::from_secs(5), false).await;
        assert!(left.0.is_empty(), "{left:?}");
        let api = Api::<Namespace>::all(client.clone());
        let ours = api.get_opt("ours").await.expect("get");
        assert!(
            ours.is_none_or(|n| n.metadata.deletion_timestamp.is_some()),
            "the labelled namespace is being removed"
        );
        let theirs = api
            .get_opt("theirs")
            .await
            .expect("get")
            .expect("still there");
        assert!(theirs.metadata.deletion_timestamp.is_none());
    }
}

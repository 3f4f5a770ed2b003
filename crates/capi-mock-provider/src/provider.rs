//! Running the mock: one kube-runtime `Controller` per kind with a reconciler, each also
//! triggered by the core objects (Cluster, Machine, MachinePool) its gates read; and the two
//! IPAM controllers (IPAddressClaims naming a MockIPPool or a MockGlobalIPPool, and one per
//! pool kind).

use super::cluster_cache::LaggingClusters;
use super::core::CoreKind;
use super::infra::SimulatedInfra;
use super::kinds::{
    IP_POOLS, MOCK_CLUSTER, MOCK_CONFIG, MOCK_CONTROL_PLANE, MOCK_MACHINE, MOCK_MACHINE_POOL,
    MockKind,
};
use super::object::{self, CLUSTER_NAME_LABEL, WATCH_FILTER_LABEL};
use super::options::MockOptions;
use super::reconcile::ipam::{self, IpamCtx};
use super::reconcile::{self, Ctx, ReconcileError};
use capi_contract::contract::Contract;
use futures::StreamExt;
use kube::api::Api;
use kube::core::DynamicObject;
use kube::runtime::WatchStreamExt;
use kube::runtime::controller::{Action, Config as ControllerConfig, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use kube::{Client, ResourceExt};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// The built-in mock provider.
pub struct MockProvider;

/// A running mock provider.
pub struct MockHandle {
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
    infra: SimulatedInfra,
}

impl MockHandle {
    /// Stops every controller and waits for them to finish.
    /// Stops the controllers: graceful for up to 5 s each, then aborted (a controller whose
    /// watch keeps failing, e.g. under a persistent server fault, never ends gracefully).
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        for mut task in self.tasks {
            if tokio::time::timeout(std::time::Duration::from_secs(5), &mut task)
                .await
                .is_err()
            {
                task.abort();
            }
        }
    }

    /// The simulated infrastructure (for tests: live instance count).
    pub fn infra(&self) -> &SimulatedInfra {
        &self.infra
    }
}

type ReconcileFn = fn(
    Arc<DynamicObject>,
    Arc<Ctx>,
) -> Pin<Box<dyn Future<Output = Result<Action, ReconcileError>> + Send>>;

impl MockProvider {
    /// Starts the controllers as tasks on the current runtime.
    pub fn start(client: Client, opts: MockOptions) -> MockHandle {
        let infra = SimulatedInfra::new(opts.provision_delay);
        let (stop, stopped) = watch::channel(false);
        let mut tasks = Vec::new();
        let clusters = opts.core.informer_lag.map(|lag| {
            let ns = opts.watch_namespace.as_deref().filter(|n| !n.is_empty());
            let ar = CoreKind::Cluster.api_resource_at(opts.core.version());
            let (cache, task) =
                LaggingClusters::start(client.clone(), &ar, ns, lag, stopped.clone());
            tasks.push(task);
            cache
        });
        let ctx = Arc::new(Ctx {
            client: client.clone(),
            opts,
            infra: infra.clone(),
            clusters,
            rate_limiter: Default::default(),
        });
        let controllers: [(MockKind, &[CoreKind], ReconcileFn); 5] = [
            (MOCK_CLUSTER, &[CoreKind::Cluster], |o, c| {
                Box::pin(reconcile::infra_cluster::reconcile(o, c))
            }),
            (
                MOCK_MACHINE,
                &[CoreKind::Cluster, CoreKind::Machine],
                |o, c| Box::pin(reconcile::infra_machine::reconcile(o, c)),
            ),
            (
                MOCK_MACHINE_POOL,
                &[CoreKind::Cluster, CoreKind::MachinePool],
                |o, c| Box::pin(reconcile::infra_machine_pool::reconcile(o, c)),
            ),
            (
                MOCK_CONFIG,
                &[CoreKind::Cluster, CoreKind::Machine, CoreKind::MachinePool],
                |o, c| Box::pin(reconcile::bootstrap_config::reconcile(o, c)),
            ),
            (MOCK_CONTROL_PLANE, &[CoreKind::Cluster], |o, c| {
                Box::pin(reconcile::control_plane::reconcile(o, c))
            }),
        ];
        tasks.extend(controllers.into_iter().map(|(kind, triggers, f)| {
            let fut = run_controller(
                client.clone(),
                ctx.clone(),
                kind,
                triggers,
                f,
                stopped.clone(),
            );
            tokio::spawn(fut)
        }));
        let ipam = Arc::new(IpamCtx::new(ctx.clone()));
        tasks.push(tokio::spawn(run_claim_controller(
            client.clone(),
            ipam.clone(),
            stopped.clone(),
        )));
        for kind in IP_POOLS {
            tasks.push(tokio::spawn(run_pool_controller(
                client.clone(),
                ipam.clone(),
                kind,
                stopped.clone(),
            )));
        }
        MockHandle { stop, tasks, infra }
    }
}

/// The watch of the mock's own objects: any version, only those labelled with the watch filter.
fn own_watch_config(ctx: &Ctx) -> watcher::Config {
    let mut wc = watcher::Config::default().any_semantic();
    if let Some(selector) = ctx.opts.own_selector(WATCH_FILTER_LABEL) {
        wc = wc.labels(&selector);
    }
    wc
}

fn watch_namespace(ctx: &Ctx) -> Option<&str> {
    ctx.opts
        .watch_namespace
        .as_deref()
        .filter(|n| !n.is_empty())
}

/// How often the IPAM controllers look for their kinds while the server does not serve them.
const IPAM_DISCOVERY_INTERVAL: Duration = Duration::from_millis(500);

/// Whether the server serves `plurals` of `api_version`.
async fn serves(client: &Client, api_version: &str, plurals: &[&str]) -> bool {
    client
        .list_api_group_resources(api_version)
        .await
        .is_ok_and(|list| {
            plurals
                .iter()
                .all(|p| list.resources.iter().any(|r| r.name == *p))
        })
}

/// Waits until the server serves IPAddressClaims, IPAddresses and the mock's pool kinds (a
/// cluster without CAPI's IPAM CRDs, or without the pools', has nothing for the IPAM
/// controllers to watch); `false` when the mock is stopped first.
async fn ipam_kinds_served(client: &Client, stopped: &mut watch::Receiver<bool>) -> bool {
    let core = format!(
        "{}/{}",
        crate::core_crds::IPAM_CORE_GROUP,
        crate::core_crds::IPAM_CORE_VERSION
    );
    let pool = format!("{}/{}", crate::api::IPAM_GROUP, crate::api::IPAM_VERSION);
    loop {
        if *stopped.borrow() {
            return false;
        }
        if serves(client, &core, &["ipaddressclaims", "ipaddresses"]).await
            && serves(client, &pool, &IP_POOLS.map(|k| k.plural)).await
        {
            return true;
        }
        tokio::select! {
            _ = stopped.wait_for(|s| *s) => return false,
            () = tokio::time::sleep(IPAM_DISCOVERY_INTERVAL) => {}
        }
    }
}

/// IPAddressClaims (watch namespace and filter as the other controllers), triggered by their
/// Cluster, their IPAddress and their pool; started once the IPAM kinds are served.
async fn run_claim_controller(
    client: Client,
    ictx: Arc<IpamCtx>,
    mut stopped: watch::Receiver<bool>,
) {
    if !ipam_kinds_served(&client, &mut stopped).await {
        return;
    }
    let ctx = ictx.ctx.clone();
    let ns = watch_namespace(&ctx);
    let ar = ipam::claim_resource();
    let mut controller = Controller::new_with(
        api_for(&client, ns, &ar),
        own_watch_config(&ctx),
        ar.clone(),
    )
    .with_config(ControllerConfig::default().debounce(Duration::ZERO));
    let store = controller.store();
    if let Some(cache) = &ctx.clusters {
        controller = controller.reconcile_all_on(cache.applied());
    } else {
        let cluster_ar = CoreKind::Cluster.api_resource_at(ctx.opts.core.version());
        let (store, ar) = (store.clone(), ar.clone());
        controller = controller.watches_with(
            api_for(&client, ns, &cluster_ar),
            cluster_ar,
            watcher::Config::default().any_semantic(),
            move |cluster| {
                let name = cluster.name_any();
                claims_where(&store, &ar, &cluster, |c| {
                    ipam::claim_cluster_name(c) == Some(name.as_str())
                })
            },
        );
    }
    let address_ar = ipam::address_resource();
    let claim_ar = ar.clone();
    controller = controller.watches_with(
        api_for(&client, ns, &address_ar),
        address_ar,
        watcher::Config::default().any_semantic(),
        move |address| {
            let name = object::string_field(&address, "spec.claimRef.name")
                .map(str::to_string)
                .unwrap_or_else(|| address.name_any());
            let mut r = ObjectRef::new_with(&name, claim_ar.clone());
            r.namespace = address.namespace();
            Some(r)
        },
    );
    for kind in IP_POOLS {
        // A cluster-scoped pool is watched cluster-wide (its own watch filter still applies)
        // and wakes the claims of every namespace that name it.
        let pool_ns = if ipam::is_global(kind) { None } else { ns };
        let pool_ar = kind.api_resource(Contract::V1Beta2);
        let (pool_store, claim_ar) = (store.clone(), ar.clone());
        controller = controller.watches_with(
            api_for(&client, pool_ns, &pool_ar),
            pool_ar,
            own_watch_config(&ctx),
            move |pool| {
                let name = pool.name_any();
                let names = |c: &DynamicObject| {
                    ipam::named_pool_kind(c) == Some(kind)
                        && ipam::pool_ref_name(c) == Some(name.as_str())
                };
                if ipam::is_global(kind) {
                    pool_store
                        .state()
                        .into_iter()
                        .filter(|c| names(c))
                        .map(|c| ObjectRef::from_obj_with(c.as_ref(), claim_ar.clone()))
                        .collect()
                } else {
                    claims_where(&pool_store, &claim_ar, &pool, |c| {
                        ipam::pool_ref_name(c) == Some(name.as_str())
                    })
                }
            },
        );
    }
    let shutdown = async move {
        let _ = stopped.wait_for(|s| *s).await;
    };
    controller
        .graceful_shutdown_on(shutdown)
        .run(
            |obj, ictx: Arc<IpamCtx>| async move {
                let key = retry_key(&obj);
                let result = ipam::reconcile_claim(obj, ictx.clone()).await;
                if result.is_ok() {
                    ictx.ctx.rate_limiter.forget(&key);
                }
                result
            },
            ipam_error_policy,
            ictx,
        )
        .for_each(|result| async move {
            if let Err(e) = result {
                tracing::debug!(error = %e, "mock IPAM claim reconcile failed");
            }
        })
        .await;
}

/// The objects of `store` in `trigger`'s namespace that satisfy `pred`.
fn claims_where(
    store: &Store<DynamicObject>,
    ar: &kube::core::ApiResource,
    trigger: &DynamicObject,
    pred: impl Fn(&DynamicObject) -> bool,
) -> Vec<ObjectRef<DynamicObject>> {
    let ns = trigger.namespace();
    store
        .state()
        .into_iter()
        .filter(|o| o.namespace() == ns && pred(o))
        .map(|o| ObjectRef::from_obj_with(o.as_ref(), ar.clone()))
        .collect()
}

/// The pools of `kind` (watch namespace and filter as the other controllers; a cluster-scoped
/// kind cluster-wide, by the filter alone), triggered by the IPAddresses and the claims that
/// name them; started once the IPAM kinds are served.
async fn run_pool_controller(
    client: Client,
    ictx: Arc<IpamCtx>,
    kind: MockKind,
    mut stopped: watch::Receiver<bool>,
) {
    if !ipam_kinds_served(&client, &mut stopped).await {
        return;
    }
    let ctx = ictx.ctx.clone();
    let ns = watch_namespace(&ctx);
    let global = ipam::is_global(kind);
    let ar = kind.api_resource(Contract::V1Beta2);
    let pool_of = {
        let ar = ar.clone();
        move |obj: DynamicObject, name: Option<String>| {
            // A namespaced pool is woken by any object naming its name in its namespace (a
            // namesake of another kind only costs a reconcile); a cluster-scoped one only by
            // those naming its kind.
            let names_kind = !global
                || ipam::named_pool_kind(&obj) == Some(kind)
                || obj.owner_references().iter().any(|o| o.kind == kind.kind);
            name.filter(|_| names_kind).map(|n| {
                let mut r = ObjectRef::new_with(&n, ar.clone());
                r.namespace = if global { None } else { obj.namespace() };
                r
            })
        }
    };
    let address_ar = ipam::address_resource();
    let claim_ar = ipam::claim_resource();
    let by_address = pool_of.clone();
    let by_claim = pool_of;
    let controller = Controller::new_with(
        api_for(&client, if global { None } else { ns }, &ar),
        own_watch_config(&ctx),
        ar.clone(),
    )
    .with_config(ControllerConfig::default().debounce(Duration::ZERO))
    .watches_with(
        api_for(&client, ns, &address_ar),
        address_ar,
        watcher::Config::default().any_semantic(),
        move |address| {
            let name = ipam::pool_ref_name(&address)
                .map(str::to_string)
                .or_else(|| {
                    address
                        .owner_references()
                        .iter()
                        .find(|o| o.kind == kind.kind)
                        .map(|o| o.name.clone())
                });
            by_address(address, name)
        },
    )
    .watches_with(
        api_for(&client, ns, &claim_ar),
        claim_ar,
        watcher::Config::default().any_semantic(),
        move |claim| {
            let name = ipam::pool_ref_name(&claim).map(str::to_string);
            by_claim(claim, name)
        },
    );
    let shutdown = async move {
        let _ = stopped.wait_for(|s| *s).await;
    };
    controller
        .graceful_shutdown_on(shutdown)
        .run(
            |obj, ictx: Arc<IpamCtx>| async move {
                let key = retry_key(&obj);
                let result = ipam::reconcile_pool(obj, ictx.clone()).await;
                if result.is_ok() {
                    ictx.ctx.rate_limiter.forget(&key);
                }
                result
            },
            ipam_error_policy,
            ictx,
        )
        .for_each(|result| async move {
            if let Err(e) = result {
                tracing::debug!(error = %e, "mock IPAM pool reconcile failed");
            }
        })
        .await;
}

fn ipam_error_policy(obj: Arc<DynamicObject>, err: &ReconcileError, ictx: Arc<IpamCtx>) -> Action {
    error_policy(obj, err, ictx.ctx.clone())
}

fn api_for(client: &Client, ns: Option<&str>, ar: &kube::core::ApiResource) -> Api<DynamicObject> {
    match ns {
        Some(ns) => Api::namespaced_with(client.clone(), ns, ar),
        None => Api::all_with(client.clone(), ar),
    }
}

async fn run_controller(
    client: Client,
    ctx: Arc<Ctx>,
    kind: MockKind,
    triggers: &'static [CoreKind],
    reconcile_fn: ReconcileFn,
    mut stopped: watch::Receiver<bool>,
) {
    let ns = ctx
        .opts
        .watch_namespace
        .as_deref()
        .filter(|n| !n.is_empty());
    let ns_owned = ns.map(str::to_string);
    let ar = kind.api_resource(Contract::V1Beta2);
    let mut wc = watcher::Config::default().any_semantic();
    if let Some(selector) = ctx.opts.own_selector(WATCH_FILTER_LABEL) {
        wc = wc.labels(&selector);
    }
    let mut controller = Controller::new_with(api_for(&client, ns, &ar), wc, ar.clone())
        .with_config(ControllerConfig::default().debounce(Duration::ZERO));
    let store = controller.store();
    for trigger in triggers {
        let trigger = *trigger;
        if let (CoreKind::Cluster, Some(cache)) = (trigger, &ctx.clusters) {
            // As controller-runtime: handlers run once the (lagging) cache shows the change.
            controller = controller.reconcile_all_on(cache.applied());
            continue;
        }
        let core_ar = trigger.api_resource_at(ctx.opts.core.version());
        let store = store.clone();
        let ar = ar.clone();
        controller = controller.watches_with(
            api_for(&client, ns, &core_ar),
            core_ar,
            watcher::Config::default().any_semantic(),
            move |core_obj| affected(&store, &ar, trigger, &core_obj),
        );
    }
    if kind.kind == MOCK_CONTROL_PLANE.kind {
        // As KCP's `Owns(&clusterv1.Machine{})`: a change of one of its Machines (above all the
        // deletion its own deletion waits for) reconciles the control plane that owns it.
        let machine_ar = CoreKind::Machine.api_resource_at(ctx.opts.core.version());
        let owner_ar = ar.clone();
        controller = controller.watches_with(
            api_for(&client, ns, &machine_ar),
            machine_ar,
            watcher::Config::default().any_semantic(),
            move |machine| {
                let ns = machine.namespace();
                machine
                    .owner_references()
                    .iter()
                    .filter(|r| {
                        r.kind == owner_ar.kind
                            && r.api_version.split('/').next() == Some(owner_ar.group.as_str())
                    })
                    .map(|r| {
                        let mut o = ObjectRef::new_with(&r.name, owner_ar.clone());
                        o.namespace = ns.clone();
                        o
                    })
                    .collect::<Vec<_>>()
            },
        );
    }
    if kind.kind == MOCK_MACHINE.kind {
        // The IPAM contract's infrastructure side: a claim's change (its address allocated)
        // reconciles the machine that owns it, once the server serves CAPI's IPAM kinds
        // (without them machines claim nothing).
        let (client, owner_ar, config) = (client.clone(), ar.clone(), own_watch_config(&ctx));
        let mut served = stopped.clone();
        let claims = futures::stream::once(async move {
            ipam_kinds_served(&client, &mut served).await.then(|| {
                let claim_ar = ipam::claim_resource();
                watcher::watcher(api_for(&client, ns_owned.as_deref(), &claim_ar), config)
                    .default_backoff()
                    .touched_objects()
                    .filter_map(move |claim| {
                        let owner = claim.ok().and_then(|c| claim_owner(&c, &owner_ar));
                        async move { owner }
                    })
            })
        })
        .filter_map(|w| async move { w })
        .flatten();
        controller = controller.reconcile_on(claims);
    }
    let shutdown = async move {
        let _ = stopped.wait_for(|s| *s).await;
    };
    controller
        .graceful_shutdown_on(shutdown)
        .run(
            move |obj, ctx: Arc<Ctx>| {
                let key = retry_key(&obj);
                let fut = reconcile_fn(obj, ctx.clone());
                async move {
                    let result = fut.await;
                    if result.is_ok() {
                        ctx.rate_limiter.forget(&key);
                    }
                    result
                }
            },
            error_policy,
            ctx,
        )
        .for_each(|result| async move {
            if let Err(e) = result {
                tracing::debug!(error = %e, "mock reconcile failed");
            }
        })
        .await;
}

fn error_policy(obj: Arc<DynamicObject>, err: &ReconcileError, ctx: Arc<Ctx>) -> Action {
    let after = if ctx.opts.core.workqueue_backoff {
        ctx.rate_limiter.when(&retry_key(&obj))
    } else {
        Duration::from_millis(200)
    };
    tracing::debug!(error = %err, ?after, "mock reconcile will be retried");
    Action::requeue(after)
}

/// The workqueue key of an object: its kind, namespace and name.
fn retry_key(obj: &DynamicObject) -> String {
    let kind = obj.types.as_ref().map_or("", |t| t.kind.as_str());
    format!(
        "{kind}/{}/{}",
        obj.namespace().unwrap_or_default(),
        obj.name_any()
    )
}

/// The mock objects a change of `core_obj` may unblock.
/// The MockMachine a claim's controller owner reference names, if it does.
fn claim_owner(
    claim: &DynamicObject,
    ar: &kube::core::ApiResource,
) -> Option<ObjectRef<DynamicObject>> {
    let owner = claim.owner_references().iter().find(|r| {
        r.kind == ar.kind && r.api_version.split('/').next() == Some(ar.group.as_str())
    })?;
    let r = ObjectRef::new_with(&owner.name, ar.clone());
    Some(match claim.namespace() {
        Some(ns) => r.within(&ns),
        None => r,
    })
}

fn affected(
    store: &Store<DynamicObject>,
    ar: &kube::core::ApiResource,
    trigger: CoreKind,
    core_obj: &DynamicObject,
) -> Vec<ObjectRef<DynamicObject>> {
    let ns = core_obj.namespace();
    let name = core_obj.name_any();
    let uid = core_obj.uid();
    store
        .state()
        .into_iter()
        .filter(|o| o.namespace() == ns)
        .filter(|o| match trigger {
            CoreKind::Cluster => {
                object::label(o, CLUSTER_NAME_LABEL) == Some(name.as_str())
                    || o.owner_references()
                        .iter()
                        .any(|r| Some(&r.uid) == uid.as_ref())
            }
            CoreKind::Machine | CoreKind::MachinePool => o
                .owner_references()
                .iter()
                .any(|r| Some(&r.uid) == uid.as_ref()),
        })
        .map(|o| ObjectRef::from_obj_with(o.as_ref(), ar.clone()))
        .collect()
}

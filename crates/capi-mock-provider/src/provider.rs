//! Running the mock: one kube-runtime `Controller` per kind with a reconciler, each also
//! triggered by the core objects (Cluster, Machine, MachinePool) its gates read; and it starts the two
//! IPAM controllers (IPAddressClaims naming a MockIPPool or a MockGlobalIPPool, and one per
//! pool kind, [`super::provider_ipam`]).

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
use super::watching::{api_for, error_policy, ipam_kinds_served, own_watch_config, retry_key};
use capi_contract::contract::Contract;
use futures::StreamExt;
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
        tasks.push(tokio::spawn(super::provider_ipam::run_claim_controller(
            client.clone(),
            ipam.clone(),
            stopped.clone(),
        )));
        for kind in IP_POOLS {
            tasks.push(tokio::spawn(super::provider_ipam::run_pool_controller(
                client.clone(),
                ipam.clone(),
                kind,
                stopped.clone(),
            )));
        }
        MockHandle { stop, tasks, infra }
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

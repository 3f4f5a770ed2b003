//! The mock's two IPAM controllers: IPAddressClaims naming a MockIPPool or a MockGlobalIPPool,
//! and one per pool kind ([`super::provider`] starts them).

use super::core::CoreKind;
use super::kinds::IP_POOLS;
use super::kinds::MockKind;
use super::object;
use super::reconcile::ReconcileError;
use super::reconcile::ipam::{self, IpamCtx};
use super::watching::{
    api_for, error_policy, ipam_kinds_served, own_watch_config, retry_key, watch_namespace,
};
use capi_contract::contract::Contract;
use futures::StreamExt;
use kube::core::DynamicObject;
use kube::runtime::controller::{Action, Config as ControllerConfig, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use kube::{Client, ResourceExt};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
/// IPAddressClaims (watch namespace and filter as the other controllers), triggered by their
/// Cluster, their IPAddress and their pool; started once the IPAM kinds are served.
pub(super) async fn run_claim_controller(
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
    drive(controller, stopped, ictx, ipam::reconcile_claim, "claim").await;
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
pub(super) async fn run_pool_controller(
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
    drive(controller, stopped, ictx, ipam::reconcile_pool, "pool").await;
}

fn ipam_error_policy(obj: Arc<DynamicObject>, err: &ReconcileError, ictx: Arc<IpamCtx>) -> Action {
    error_policy(obj, err, ictx.ctx.clone())
}

/// Runs `controller` with `reconcile` until `stopped` turns true: a success forgets the
/// object's retry backoff, a failure is retried by [`ipam_error_policy`] (logged as `what`).
async fn drive<F, Fut>(
    controller: Controller<DynamicObject>,
    mut stopped: watch::Receiver<bool>,
    ictx: Arc<IpamCtx>,
    reconcile: F,
    what: &'static str,
) where
    F: Fn(Arc<DynamicObject>, Arc<IpamCtx>) -> Fut + Copy + Send + 'static,
    Fut: std::future::Future<Output = Result<Action, ReconcileError>> + Send + 'static,
{
    let shutdown = async move {
        let _ = stopped.wait_for(|s| *s).await;
    };
    controller
        .graceful_shutdown_on(shutdown)
        .run(
            move |obj, ictx: Arc<IpamCtx>| async move {
                let key = retry_key(&obj);
                let result = reconcile(obj, ictx.clone()).await;
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
                tracing::debug!(error = %e, "mock IPAM {what} reconcile failed");
            }
        })
        .await;
}

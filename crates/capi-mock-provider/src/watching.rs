//! What the mock's controllers share: which objects they watch and where, the API handle of a
//! kind, how a failed reconcile is retried, and the wait for the IPAM kinds to be served.

use super::kinds::IP_POOLS;
use super::object::WATCH_FILTER_LABEL;
use super::reconcile::{Ctx, ReconcileError};
use kube::api::Api;
use kube::core::DynamicObject;
use kube::runtime::controller::Action;
use kube::runtime::watcher;
use kube::{Client, ResourceExt};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// The watch of the mock's own objects: any version, only those labelled with the watch filter.
pub(crate) fn own_watch_config(ctx: &Ctx) -> watcher::Config {
    let mut wc = watcher::Config::default().any_semantic();
    if let Some(selector) = ctx.opts.own_selector(WATCH_FILTER_LABEL) {
        wc = wc.labels(&selector);
    }
    wc
}

pub(crate) fn watch_namespace(ctx: &Ctx) -> Option<&str> {
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
pub(crate) async fn ipam_kinds_served(
    client: &Client,
    stopped: &mut watch::Receiver<bool>,
) -> bool {
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

pub(crate) fn api_for(
    client: &Client,
    ns: Option<&str>,
    ar: &kube::core::ApiResource,
) -> Api<DynamicObject> {
    match ns {
        Some(ns) => Api::namespaced_with(client.clone(), ns, ar),
        None => Api::all_with(client.clone(), ar),
    }
}

pub(crate) fn error_policy(obj: Arc<DynamicObject>, err: &ReconcileError, ctx: Arc<Ctx>) -> Action {
    let after = if ctx.opts.core.workqueue_backoff {
        ctx.rate_limiter.when(&retry_key(&obj))
    } else {
        Duration::from_millis(200)
    };
    tracing::debug!(error = %err, ?after, "mock reconcile will be retried");
    Action::requeue(after)
}

/// The workqueue key of an object: its kind, namespace and name.
pub(crate) fn retry_key(obj: &DynamicObject) -> String {
    let kind = obj.types.as_ref().map_or("", |t| t.kind.as_str());
    format!(
        "{kind}/{}/{}",
        obj.namespace().unwrap_or_default(),
        obj.name_any()
    )
}

//! The IPAM provider: IPAddressClaims (`ipam.cluster.x-k8s.io/v1beta2`) whose `spec.poolRef`
//! names a MockIPPool (in the claim's namespace) or a MockGlobalIPPool (cluster-scoped: claims
//! of every namespace share its addresses) are fulfilled with an IPAddress, following the
//! contract's steps (docs/book/src/developer/providers/contracts/ipam.md):
//!
//! 1. claims naming another group or kind are ignored;
//! 2. the claim's Cluster (`spec.clusterName`, else the `cluster.x-k8s.io/cluster-name` label)
//!    must exist and not be paused (`spec.paused`, or the `cluster.x-k8s.io/paused` annotation
//!    on the Cluster or the claim), else nothing happens, on create and on delete;
//! 3. the claim gets [`CLAIM_FINALIZER`]; the next free address of the pool goes into an
//!    IPAddress named like the claim, owned by the claim (controller) and the pool, with
//!    [`PROTECT_ADDRESS_FINALIZER`]; the claim's `status.addressRef` names it and its `Ready`
//!    condition is True (`Ready`), else False (`PoolNotReady`, `PoolExhausted`);
//! 4. a deleted claim's IPAddress loses its finalizer and is deleted, then the claim loses its
//!    finalizer.
//!
//! Pools keep a `Ready` condition (True `Ready`, False `InvalidSpec`) and `status.ipAddresses`
//! current, and release the IPAddresses whose claim is gone (a claim deleted without the mock's
//! finalizer). Faults come from the provider-wide set and the annotations of the claim, its pool
//! and (for the release of a vanished claim's address) the IPAddress.

use super::{ReconcileError, Result, contains};
use crate::api::IPAM_GROUP;
use crate::conditions::{self, Wanted};
use crate::core;
use crate::core_crds::{IPAM_CORE_GROUP, IPAM_CORE_VERSION};
use crate::faults::{
    FAULT_ANNOTATION, FaultSet, MISSING_CLUSTER_FAULT, PAUSED_ANNOTATION_FAULT, PAUSED_SPEC_FAULT,
};
use crate::ip_pool::PoolAddresses;
use crate::kinds::{IP_POOLS, MOCK_GLOBAL_IP_POOL, MOCK_IP_POOL, MockKind};
use crate::object::{self, CLUSTER_NAME_LABEL, FIELD_MANAGER, PAUSED_ANNOTATION};
use capi_contract::contract::Contract;
use capi_contract::rule_ids as id;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
use kube::runtime::controller::Action;
use kube::{Client, ResourceExt};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::net::IpAddr;
use std::sync::Arc;

mod claim;
pub use claim::reconcile_claim;
use claim::release;

/// The mock's finalizer on the IPAddressClaims it handles.
pub const CLAIM_FINALIZER: &str = "ipam.mock.capi-conformance.io/ip-claim";
/// The finalizer protecting an IPAddress from deletion while its claim lives.
pub const PROTECT_ADDRESS_FINALIZER: &str = "ipam.cluster.x-k8s.io/protect-address";
/// Reason of a True `Ready` condition (claims and pools).
pub const READY_REASON: &str = "Ready";
/// Claim `Ready=False`: the pool is missing or its spec cannot be used.
pub const POOL_NOT_READY_REASON: &str = "PoolNotReady";
/// Claim `Ready=False`: the pool has no free address.
pub const POOL_EXHAUSTED_REASON: &str = "PoolExhausted";
/// Pool `Ready=False`: its spec cannot be used.
pub const INVALID_SPEC_REASON: &str = "InvalidSpec";

fn ipam_core_resource(kind: &str, plural: &str) -> ApiResource {
    let gvk = GroupVersionKind::gvk(IPAM_CORE_GROUP, IPAM_CORE_VERSION, kind);
    ApiResource::from_gvk_with_plural(&gvk, plural)
}

/// `ipam.cluster.x-k8s.io/v1beta2` IPAddressClaim.
pub fn claim_resource() -> ApiResource {
    ipam_core_resource("IPAddressClaim", "ipaddressclaims")
}

/// `ipam.cluster.x-k8s.io/v1beta2` IPAddress.
pub fn address_resource() -> ApiResource {
    ipam_core_resource("IPAddress", "ipaddresses")
}

/// The MockIPPool kind's `ApiResource`.
pub fn pool_resource() -> ApiResource {
    MOCK_IP_POOL.api_resource(Contract::V1Beta2)
}

/// The MockGlobalIPPool kind's `ApiResource` (cluster-scoped).
pub fn global_pool_resource() -> ApiResource {
    MOCK_GLOBAL_IP_POOL.api_resource(Contract::V1Beta2)
}

/// Whether the pool kind is cluster-scoped.
pub fn is_global(kind: MockKind) -> bool {
    kind == MOCK_GLOBAL_IP_POOL
}

/// The pools of `kind` a claim in `namespace` can name: that namespace's, or (a cluster-scoped
/// kind) the cluster's.
fn pools_api(client: &Client, kind: MockKind, namespace: &str) -> Api<DynamicObject> {
    let ar = kind.api_resource(Contract::V1Beta2);
    if is_global(kind) {
        Api::all_with(client.clone(), &ar)
    } else {
        Api::namespaced_with(client.clone(), namespace, &ar)
    }
}

/// The IPAddresses that can hold addresses of a pool of `kind` in `namespace`: that
/// namespace's, or for a cluster-scoped pool those the mock watches (its watch namespace, else
/// every namespace: a namespace-restricted manager sees no other, as controller-runtime's
/// namespaced cache does not).
fn addresses_api(ctx: &super::Ctx, kind: MockKind, namespace: Option<&str>) -> Api<DynamicObject> {
    let scope = if is_global(kind) {
        ctx.opts
            .watch_namespace
            .as_deref()
            .filter(|n| !n.is_empty())
    } else {
        namespace
    };
    match scope {
        Some(ns) => Api::namespaced_with(ctx.client.clone(), ns, &address_resource()),
        None => Api::all_with(ctx.client.clone(), &address_resource()),
    }
}

/// State of the IPAM controllers: the shared reconciler state and a lock that makes choosing
/// and creating an address one step (two claims never get the same address).
pub struct IpamCtx {
    pub ctx: Arc<super::Ctx>,
    allocation: tokio::sync::Mutex<()>,
}

impl IpamCtx {
    pub fn new(ctx: Arc<super::Ctx>) -> IpamCtx {
        IpamCtx {
            ctx,
            allocation: tokio::sync::Mutex::new(()),
        }
    }

    fn client(&self) -> &Client {
        &self.ctx.client
    }
}

/// `spec.poolRef.name` of a claim or an IPAddress.
pub fn pool_ref_name(obj: &DynamicObject) -> Option<&str> {
    object::string_field(obj, "spec.poolRef.name")
}

/// The mock's pool kind `spec.poolRef` names (group and kind), if any.
pub fn named_pool_kind(obj: &DynamicObject) -> Option<MockKind> {
    if object::string_field(obj, "spec.poolRef.apiGroup") != Some(IPAM_GROUP) {
        return None;
    }
    let kind = object::string_field(obj, "spec.poolRef.kind")?;
    IP_POOLS.into_iter().find(|k| k.kind == kind)
}

/// Whether `spec.poolRef` names one of the mock's pool kinds (group and kind).
pub fn names_mock_pool(obj: &DynamicObject) -> bool {
    named_pool_kind(obj).is_some()
}

/// The claim's Cluster: `spec.clusterName`, else the cluster-name label.
pub fn claim_cluster_name(claim: &DynamicObject) -> Option<&str> {
    object::string_field(claim, "spec.clusterName")
        .or_else(|| object::label(claim, CLUSTER_NAME_LABEL))
}

fn params() -> PatchParams {
    PatchParams {
        field_manager: Some(FIELD_MANAGER.into()),
        ..Default::default()
    }
}

/// A metadata merge patch that only applies to the version of `obj` it was computed from.
fn metadata_patch(obj: &DynamicObject, mut metadata: Value) -> Value {
    if let (Some(rv), Some(m)) = (obj.resource_version(), metadata.as_object_mut()) {
        m.insert("resourceVersion".into(), Value::String(rv));
    }
    json!({ "metadata": metadata })
}

fn without(finalizers: &[String], finalizer: &str) -> Vec<String> {
    finalizers
        .iter()
        .filter(|f| *f != finalizer)
        .cloned()
        .collect()
}

/// The pool's spec, parsed.
pub fn parse_pool(pool: &DynamicObject) -> Result<PoolAddresses, crate::ip_pool::PoolError> {
    let addresses: Vec<String> = object::field(pool, "spec.addresses")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|v| v.as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default();
    let prefix = object::int_field(pool, "spec.prefix").unwrap_or(-1);
    PoolAddresses::parse(
        &addresses,
        prefix,
        object::string_field(pool, "spec.gateway"),
    )
}

/// Whether `address` is one of `pool`'s (of `kind`): its `spec.poolRef` names the pool, or it
/// has an owner reference to it.
fn belongs_to(address: &DynamicObject, pool: &DynamicObject, kind: MockKind) -> bool {
    let by_ref = named_pool_kind(address) == Some(kind)
        && pool_ref_name(address) == Some(pool.name_any().as_str());
    let by_owner = pool.uid().is_some_and(|uid| {
        address
            .owner_references()
            .iter()
            .any(|o| o.uid == uid && o.kind == kind.kind)
    });
    by_ref || by_owner
}

/// The IPAddresses of `pool` (of `kind`) among those `addresses` lists (the pool's namespace;
/// every namespace for a cluster-scoped pool).
async fn addresses_of(
    addresses: &Api<DynamicObject>,
    pool: &DynamicObject,
    kind: MockKind,
) -> Result<Vec<DynamicObject>> {
    Ok(addresses
        .list(&ListParams::default())
        .await?
        .items
        .into_iter()
        .filter(|a| belongs_to(a, pool, kind))
        .collect())
}

/// The addresses held by IPAddresses of `pool` (of `kind`).
async fn used_addresses(
    addresses: &Api<DynamicObject>,
    pool: &DynamicObject,
    kind: MockKind,
) -> Result<BTreeSet<IpAddr>> {
    Ok(addresses_of(addresses, pool, kind)
        .await?
        .iter()
        .filter_map(|a| object::string_field(a, "spec.address"))
        .filter_map(|a| a.parse().ok())
        .collect())
}

/// Reconciles one pool (a MockIPPool, or a MockGlobalIPPool: one without a namespace): the
/// cluster-name label fault, `status.conditions` `Ready`, `status.ipAddresses`, and the release
/// of addresses whose claim is gone.
pub async fn reconcile_pool(obj: Arc<DynamicObject>, ictx: Arc<IpamCtx>) -> Result<Action> {
    let ctx = &ictx.ctx;
    let ns = obj.namespace();
    let kind = if ns.is_some() {
        MOCK_IP_POOL
    } else {
        MOCK_GLOBAL_IP_POOL
    };
    let name = obj.name_any();
    let faults = FaultSet::for_object(&ctx.opts.faults, &obj);
    let pools = pools_api(ictx.client(), kind, ns.as_deref().unwrap_or_default());
    let mut pool = (*obj).clone();
    if object::is_deleting(&pool) {
        return Ok(Action::await_change());
    }
    if faults.has(id::ipam::POOL_MOVE_LABEL) && object::label(&pool, CLUSTER_NAME_LABEL).is_some() {
        let body = metadata_patch(&pool, json!({ "labels": { CLUSTER_NAME_LABEL: null } }));
        pool = pools.patch(&name, &params(), &Patch::Merge(&body)).await?;
    }
    let addresses = addresses_api(ctx, kind, ns.as_deref());
    let mut used = 0i64;
    for address in addresses_of(&addresses, &pool, kind).await? {
        // The claim and the address share a namespace (a cluster-scoped pool's addresses are
        // in their claims' namespaces).
        let address_ns = address.namespace().unwrap_or_default();
        let claims: Api<DynamicObject> =
            Api::namespaced_with(ictx.client().clone(), &address_ns, &claim_resource());
        let in_ns: Api<DynamicObject> =
            Api::namespaced_with(ictx.client().clone(), &address_ns, &address_resource());
        let claim_name = object::string_field(&address, "spec.claimRef.name").unwrap_or_default();
        let claim_gone = claim_name.is_empty() || claims.get_opt(claim_name).await?.is_none();
        let keep = faults.clone().with_object(&address).has(id::ipam::DELETE);
        if claim_gone && !keep {
            release(&in_ns, &address).await?;
        } else if !object::is_deleting(&address) {
            used += 1;
        }
    }
    let parsed = parse_pool(&pool);
    let total = parsed
        .as_ref()
        .map_or(0, |p| i64::try_from(p.total()).unwrap_or(i64::MAX));
    let mut status = json!({
        "ipAddresses": { "total": total, "used": used, "free": (total - used).max(0) },
    });
    if !faults.has(id::ipam::POOL_READY_CONDITION) {
        let message = parsed
            .as_ref()
            .err()
            .map(ToString::to_string)
            .unwrap_or_default();
        let wanted = match &parsed {
            Ok(_) => Wanted::new("Ready", true, READY_REASON, ""),
            Err(_) => Wanted::new("Ready", false, INVALID_SPEC_REASON, &message),
        };
        status["conditions"] = Value::Array(conditions::merged(
            object::field(&pool, "status.conditions"),
            &[wanted],
            &[],
            Contract::V1Beta2,
            pool.metadata.generation,
            &conditions::now_rfc3339(),
        ));
    }
    let current = pool.data.get("status").cloned().unwrap_or(Value::Null);
    if !contains(&current, &status) {
        let body = json!({ "status": status });
        pools
            .patch_status(&name, &params(), &Patch::Merge(&body))
            .await?;
    }
    Ok(Action::await_change())
}

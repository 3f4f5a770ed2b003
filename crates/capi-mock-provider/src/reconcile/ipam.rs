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

/// Reconciles one IPAddressClaim.
pub async fn reconcile_claim(obj: Arc<DynamicObject>, ictx: Arc<IpamCtx>) -> Result<Action> {
    let ctx = &ictx.ctx;
    let ns = obj.namespace().ok_or(ReconcileError::NoNamespace)?;
    let name = obj.name_any();
    // Under the claim-filter fault a claim naming another kind takes the MockIPPool of the name.
    let kind = named_pool_kind(&obj).unwrap_or(MOCK_IP_POOL);
    let pools = pools_api(ictx.client(), kind, &ns);
    let pool = match pool_ref_name(&obj) {
        Some(p) => pools.get_opt(p).await?,
        None => None,
    };
    let mut faults = FaultSet::for_object(&ctx.opts.faults, &obj);
    if let Some(p) = &pool {
        faults = faults.with_object(p);
    }
    if !names_mock_pool(&obj) && !faults.has(id::ipam::CLAIM_FILTER) {
        return Ok(Action::await_change());
    }
    if !faults.has(id::ipam::PAUSED) && !cluster_allows(ctx, &ns, &obj, &faults).await? {
        return Ok(Action::await_change());
    }
    let claims: Api<DynamicObject> =
        Api::namespaced_with(ictx.client().clone(), &ns, &claim_resource());
    let addresses: Api<DynamicObject> =
        Api::namespaced_with(ictx.client().clone(), &ns, &address_resource());
    if object::is_deleting(&obj) {
        return delete_claim(&obj, &claims, &addresses, &faults).await;
    }
    let mut claim = (*obj).clone();
    if !faults.has(id::ipam::CLAIM_FINALIZER) && !object::has_finalizer(&claim, CLAIM_FINALIZER) {
        let mut finalizers = claim.finalizers().to_vec();
        finalizers.push(CLAIM_FINALIZER.into());
        let body = metadata_patch(&claim, json!({ "finalizers": finalizers }));
        claim = claims.patch(&name, &params(), &Patch::Merge(&body)).await?;
    }
    let Some(pool) = pool else {
        let msg = format!(
            "{} {} not found",
            kind.kind,
            pool_ref_name(&claim).unwrap_or_default()
        );
        return not_ready(&claims, &claim, POOL_NOT_READY_REASON, &msg).await;
    };
    let parsed = match parse_pool(&pool) {
        Ok(p) => p,
        Err(e) => {
            let msg = format!("{} {}: {e}", kind.kind, pool.name_any());
            return not_ready(&claims, &claim, POOL_NOT_READY_REASON, &msg).await;
        }
    };
    let address = match addresses.get_opt(&name).await? {
        Some(a) => a,
        None => {
            let _held = ictx.allocation.lock().await;
            match addresses.get_opt(&name).await? {
                Some(a) => a,
                None => {
                    let pool_addresses = addresses_api(ctx, kind, Some(&ns));
                    let used = used_addresses(&pool_addresses, &pool, kind).await?;
                    let ip = if faults.has(id::ipam::ADDRESS_OBJECT) {
                        parsed.next_outside(&used)
                    } else {
                        parsed.next_free(&used)
                    };
                    let Some(ip) = ip else {
                        let msg = format!("{} {} has no free address", kind.kind, pool.name_any());
                        return not_ready(&claims, &claim, POOL_EXHAUSTED_REASON, &msg).await;
                    };
                    let body = address_object(&claim, (&pool, kind), &parsed, ip, &faults)?;
                    addresses.create(&PostParams::default(), &body).await?
                }
            }
        }
    };
    let mut status = json!({
        "conditions": claim_conditions(&claim, Wanted::new("Ready", true, READY_REASON, "")),
    });
    if !faults.has(id::ipam::ADDRESS_REF) {
        status["addressRef"] = json!({ "name": address.name_any() });
    }
    patch_claim_status(&claims, &claim, status).await?;
    Ok(Action::await_change())
}

/// Whether the claim's Cluster exists (or the claim is being deleted) and neither it nor the
/// claim is paused. The variants of
/// the `ipam/paused` fault each ignore one of the three ([`PAUSED_SPEC_FAULT`],
/// [`PAUSED_ANNOTATION_FAULT`], [`MISSING_CLUSTER_FAULT`]).
async fn cluster_allows(
    ctx: &super::Ctx,
    ns: &str,
    claim: &DynamicObject,
    faults: &FaultSet,
) -> Result<bool> {
    let Some(cluster_name) = claim_cluster_name(claim) else {
        return Ok(false);
    };
    let Some(cluster) = ctx.cluster(ns, cluster_name).await? else {
        // A deleted claim is released without its Cluster, as CAPI's in-cluster IPAM provider
        // does (`pkg/ipamutil/reconciler.go`): a Cluster deleted before its claims would
        // otherwise hold them forever.
        return Ok(object::is_deleting(claim) || faults.has_named(MISSING_CLUSTER_FAULT));
    };
    let spec_paused = core::cluster_paused(&cluster) && !faults.has_named(PAUSED_SPEC_FAULT);
    let annotated = (object::annotation(&cluster, PAUSED_ANNOTATION).is_some()
        || object::annotation(claim, PAUSED_ANNOTATION).is_some())
        && !faults.has_named(PAUSED_ANNOTATION_FAULT);
    Ok(!spec_paused && !annotated)
}

/// The delete path: release the IPAddress, then drop the claim's finalizer.
async fn delete_claim(
    claim: &DynamicObject,
    claims: &Api<DynamicObject>,
    addresses: &Api<DynamicObject>,
    faults: &FaultSet,
) -> Result<Action> {
    if !object::has_finalizer(claim, CLAIM_FINALIZER) {
        return Ok(Action::await_change());
    }
    let name = claim.name_any();
    if faults.has(id::ipam::DELETE) {
        // The fault follows the address, so the pool's release of addresses whose claim is
        // gone leaves this one alone too.
        if let Some(address) = addresses.get_opt(&name).await? {
            stamp_fault(addresses, &address, id::ipam::DELETE.as_str()).await?;
        }
    } else if let Some(address) = addresses.get_opt(&name).await?
        && object::string_field(&address, "spec.claimRef.name") == Some(name.as_str())
    {
        release(addresses, &address).await?;
    }
    let body = metadata_patch(
        claim,
        json!({ "finalizers": without(claim.finalizers(), CLAIM_FINALIZER) }),
    );
    claims.patch(&name, &params(), &Patch::Merge(&body)).await?;
    Ok(Action::await_change())
}

/// Adds `fault` to the fault annotation of `obj`.
async fn stamp_fault(api: &Api<DynamicObject>, obj: &DynamicObject, fault: &str) -> Result<()> {
    let current = object::annotation(obj, FAULT_ANNOTATION).unwrap_or_default();
    if current.split(',').any(|f| f.trim() == fault) {
        return Ok(());
    }
    let value = if current.trim().is_empty() {
        fault.to_string()
    } else {
        format!("{current},{fault}")
    };
    let body = metadata_patch(obj, json!({ "annotations": { FAULT_ANNOTATION: value } }));
    api.patch(&obj.name_any(), &params(), &Patch::Merge(&body))
        .await?;
    Ok(())
}

/// Removes the protecting finalizer of an IPAddress and deletes it.
async fn release(addresses: &Api<DynamicObject>, address: &DynamicObject) -> Result<()> {
    let name = address.name_any();
    if object::has_finalizer(address, PROTECT_ADDRESS_FINALIZER) {
        let body = metadata_patch(
            address,
            json!({ "finalizers": without(address.finalizers(), PROTECT_ADDRESS_FINALIZER) }),
        );
        match addresses
            .patch(&name, &params(), &Patch::Merge(&body))
            .await
        {
            Ok(_) => {}
            Err(kube::Error::Api(e)) if e.code == 404 => return Ok(()),
            Err(e) => return Err(e.into()),
        }
    }
    if address.metadata.deletion_timestamp.is_none() {
        match addresses.delete(&name, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(e)) if e.code == 404 => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
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

/// The IPAddress for `claim` holding `ip` of `pool` (of its kind).
fn address_object(
    claim: &DynamicObject,
    (pool, kind): (&DynamicObject, MockKind),
    parsed: &PoolAddresses,
    ip: IpAddr,
    faults: &FaultSet,
) -> Result<DynamicObject> {
    let missing = |what: &str| ReconcileError::Invalid(format!("{what} has no uid"));
    let claim_uid = claim.uid().ok_or_else(|| missing("the IPAddressClaim"))?;
    let pool_uid = pool
        .uid()
        .ok_or_else(|| missing(&format!("the {}", kind.kind)))?;
    let mut pool_owner = json!({
        "apiVersion": format!("{IPAM_GROUP}/{}", crate::api::IPAM_VERSION),
        "kind": kind.kind,
        "name": pool.name_any(),
        "uid": pool_uid,
        "controller": false,
        "blockOwnerDeletion": true,
    });
    if faults.has(id::ipam::ADDRESS_OWNERS)
        && let Some(o) = pool_owner.as_object_mut()
    {
        o.remove("blockOwnerDeletion");
    }
    let finalizers: Vec<&str> = if faults.has(id::ipam::ADDRESS_FINALIZER) {
        vec![]
    } else {
        vec![PROTECT_ADDRESS_FINALIZER]
    };
    // The claim's own poolRef (under the claim-filter fault it names another kind).
    let pool_ref = json!({
        "apiGroup": object::string_field(claim, "spec.poolRef.apiGroup").unwrap_or(IPAM_GROUP),
        "kind": object::string_field(claim, "spec.poolRef.kind").unwrap_or(kind.kind),
        "name": pool.name_any(),
    });
    let mut spec = json!({
        "claimRef": { "name": claim.name_any() },
        "poolRef": pool_ref,
        "address": ip.to_string(),
        "prefix": parsed.prefix(),
    });
    if let Some(gw) = parsed.gateway() {
        spec["gateway"] = json!(gw.to_string());
    }
    let body = json!({
        "apiVersion": format!("{IPAM_CORE_GROUP}/{IPAM_CORE_VERSION}"),
        "kind": "IPAddress",
        "metadata": {
            "name": claim.name_any(),
            "namespace": claim.namespace(),
            "finalizers": finalizers,
            "ownerReferences": [
                {
                    "apiVersion": format!("{IPAM_CORE_GROUP}/{IPAM_CORE_VERSION}"),
                    "kind": "IPAddressClaim",
                    "name": claim.name_any(),
                    "uid": claim_uid,
                    "controller": true,
                    "blockOwnerDeletion": true,
                },
                pool_owner,
            ],
        },
        "spec": spec,
    });
    serde_json::from_value(body).map_err(|e| ReconcileError::Invalid(e.to_string()))
}

fn claim_conditions(claim: &DynamicObject, wanted: Wanted<'_>) -> Vec<Value> {
    conditions::merged(
        object::field(claim, "status.conditions"),
        &[wanted],
        &[],
        Contract::V1Beta2,
        claim.metadata.generation,
        &conditions::now_rfc3339(),
    )
}

/// `Ready=False` with `reason` on the claim, no address.
async fn not_ready(
    claims: &Api<DynamicObject>,
    claim: &DynamicObject,
    reason: &str,
    message: &str,
) -> Result<Action> {
    let status = json!({
        "conditions": claim_conditions(claim, Wanted::new("Ready", false, reason, message)),
    });
    patch_claim_status(claims, claim, status).await?;
    Ok(Action::await_change())
}

/// Merge-patches the claim's status unless it already holds every value of `status`.
async fn patch_claim_status(
    claims: &Api<DynamicObject>,
    claim: &DynamicObject,
    status: Value,
) -> Result<()> {
    let current = claim.data.get("status").cloned().unwrap_or(Value::Null);
    if contains(&current, &status) {
        return Ok(());
    }
    let body = json!({ "status": status });
    claims
        .patch_status(&claim.name_any(), &params(), &Patch::Merge(&body))
        .await?;
    Ok(())
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

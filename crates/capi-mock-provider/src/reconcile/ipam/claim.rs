//! IPAddressClaims: the contract's steps for one claim (its group and kind, its Cluster's pause,
//! the finalizer, the IPAddress and `status.addressRef`, the `Ready` condition) and its deletion.

use super::*;

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
    ctx: &crate::reconcile::Ctx,
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
pub(super) async fn release(addresses: &Api<DynamicObject>, address: &DynamicObject) -> Result<()> {
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

//! InfraMachine (MockMachine): owner gate (Machine controller) → cluster lookup → pause →
//! finalizer → cluster infrastructure gate → bootstrap data gate → provision → providerID →
//! IPAddressClaims of `spec.addressesFromPools` allocated → provisioned + addresses + failure domain + Ready; deletion releases (gates never block it).

use super::ipam;
use super::{Ctx, Gates, Result, Subject, common_gates};
use crate::conditions::Wanted;
use crate::core::{self, CoreKind};
use crate::kinds::MOCK_MACHINE;
use crate::object::{self, CLUSTER_NAME_LABEL, POOL_NAME_LABEL, WATCH_FILTER_LABEL, is_deleting};
use capi_contract::contract::Contract;
use capi_contract::rule_ids as id;
use kube::api::{Api, PostParams};
use kube::core::DynamicObject;
use kube::runtime::controller::Action;
use serde_json::{Value, json};
use std::sync::Arc;

/// Reconciles one MockMachine.
pub async fn reconcile(obj: Arc<DynamicObject>, ctx: Arc<Ctx>) -> Result<Action> {
    let s = Subject::new(obj, MOCK_MACHINE, &ctx)?;
    let deleting = is_deleting(&s.obj);
    if object::label(&s.obj, POOL_NAME_LABEL).is_some() {
        // A MachinePool Machine: its instance belongs to the pool's reconciler.
        return Ok(Action::await_change());
    }
    let mut cluster = None;
    if !deleting {
        match common_gates(&s, &ctx, &[CoreKind::Machine], true).await? {
            Gates::Stop(action) => return Ok(action),
            Gates::Go(c) => cluster = c.map(|c| *c),
        }
    }
    if deleting && s.fault("delete") {
        return Ok(Action::await_change());
    }
    if s.fault("finalizer") {
        return if deleting {
            Ok(Action::await_change())
        } else {
            apply(&s, &ctx, cluster.as_ref()).await
        };
    }
    s.with_finalizer(apply(&s, &ctx, cluster.as_ref()), cleanup(&s, &ctx))
        .await
}

async fn apply(s: &Subject, ctx: &Ctx, cluster: Option<&DynamicObject>) -> Result<Action> {
    if ctx.opts.core.infrastructure_ref
        && let Some(cluster) = cluster
        && !infra_cluster_available(s, ctx, cluster).await?
    {
        return waiting(
            s,
            "WaitingForInfraCluster",
            "the InfraCluster of the Cluster's spec.infrastructureRef is not available yet",
        )
        .await
        .and_then(|_| ctx.recheck("the InfraCluster of the Cluster is not available yet"));
    }
    let machine = match object::core_owner(&s.obj, "Machine", true) {
        Some(owner) => {
            core::get(
                &ctx.client,
                ctx.opts.core,
                CoreKind::Machine,
                &s.namespace,
                &owner.name,
            )
            .await?
        }
        None => None,
    };
    let cluster_open = cluster.is_none_or(core::cluster_infrastructure_provisioned);
    if !cluster_open && !s.fault("cluster-infra-gate") {
        return waiting(
            s,
            "WaitingForClusterInfrastructure",
            "cluster infrastructure is not provisioned yet",
        )
        .await;
    }
    let has_data = machine
        .as_ref()
        .and_then(core::machine_data_secret_name)
        .is_some();
    if !has_data && !s.fault("bootstrap-gate") {
        return waiting(
            s,
            "WaitingForBootstrapData",
            "the Machine has no bootstrap data secret yet",
        )
        .await;
    }
    if s.is_b1() && super::has_failure(&s.obj) && !s.fault("failure-gate") {
        return Ok(Action::await_change());
    }
    ctx.infra.provision(&s.infra_id()).await;
    let provider_id = s.provider_id(None);
    let has_id = object::string_field(&s.latest(), "spec.providerID").is_some();
    let late_id = s.fault("provider-id-before-provisioned");
    if !has_id && !late_id && !s.fault("provider-id") {
        s.patch(json!({ "spec": { "providerID": provider_id } }))
            .await?;
    }
    // The instance has its providerID; it is provisioned once its addresses are allocated.
    let Some(claimed) = claimed_addresses(s, ctx).await? else {
        return waiting(
            s,
            "WaitingForIPAddress",
            "an IPAddressClaim of spec.addressesFromPools has no address yet",
        )
        .await;
    };
    let status = status(s, ctx, machine.as_ref(), &claimed);
    s.patch_status_if_changed(status).await?;
    if !has_id && late_id {
        tokio::time::sleep(super::observable_gap(ctx)).await;
        s.patch(json!({ "spec": { "providerID": provider_id } }))
            .await?;
    }
    Ok(Action::await_change())
}

fn status(s: &Subject, ctx: &Ctx, machine: Option<&DynamicObject>, claimed: &[String]) -> Value {
    let latest = s.latest();
    let flip_key = format!("{}sticky", s.infra_id());
    let path = if s.is_b1() {
        "status.ready"
    } else {
        "status.initialization.provisioned"
    };
    let provisioned = if s.fault("provisioned") {
        false
    } else if s.fault("provisioned-sticky")
        && (object::bool_field(&latest, path) || ctx.infra.is_marked(&flip_key))
    {
        ctx.infra.mark_once(&flip_key);
        false
    } else {
        true
    };
    let mut status = match s.contract {
        Contract::V1Beta1 => json!({ "ready": provisioned }),
        Contract::V1Beta2 => json!({ "initialization": { "provisioned": provisioned } }),
    };
    // The contract makes addresses optional ("Set status.addresses … (optional)"): the fault
    // reports them malformed (a type CAPI does not know), which the rule must catch.
    let ip_type = if s.fault("addresses") {
        "PrivateIP"
    } else {
        "InternalIP"
    };
    let mut addresses = vec![
        json!({ "type": ip_type, "address": internal_ip(s) }),
        json!({ "type": "Hostname", "address": s.name }),
    ];
    addresses.extend(
        claimed
            .iter()
            .map(|a| json!({ "type": "InternalIP", "address": a })),
    );
    status["addresses"] = Value::Array(addresses);
    let wanted_fd = machine.and_then(|m| object::string_field(m, "spec.failureDomain"));
    if let (Contract::V1Beta2, Some(fd)) = (s.contract, wanted_fd) {
        let placed = if s.fault("failure-domain-placement") {
            format!("{fd}-elsewhere")
        } else {
            fd.to_string()
        };
        status["failureDomain"] = json!(placed);
    }
    if !s.fault("ready-condition") {
        let (reason, msg) = if provisioned {
            ("Provisioned", "")
        } else {
            ("Provisioning", "instance is not provisioned")
        };
        status["conditions"] =
            Value::Array(s.conditions(&[Wanted::new("Ready", provisioned, reason, msg)], &[]));
    }
    status
}

/// A private address derived from the object's uid (stable across reconciles).
fn internal_ip(s: &Subject) -> String {
    let uid = s.obj.metadata.uid.clone().unwrap_or_default();
    let h = uid
        .bytes()
        .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
    format!(
        "10.{}.{}.{}",
        (h >> 16) & 0xff,
        (h >> 8) & 0xff,
        (h & 0xfe).max(2)
    )
}

/// CAPI-like: the InfraCluster named by `Cluster.spec.infrastructureRef` (CAPI's in-memory
/// InfraMachine controller gets it by that name and needs it reconciled). A Cluster without
/// the reference is an error, as the nil dereference is in that provider; one naming a group
/// other than the mock's, or a MockCluster that does not exist, waits.
async fn infra_cluster_available(s: &Subject, ctx: &Ctx, cluster: &DynamicObject) -> Result<bool> {
    let Some(name) = core::cluster_infrastructure_ref_name(cluster) else {
        return Err(super::ReconcileError::Invalid(format!(
            "Cluster {} has no spec.infrastructureRef",
            kube::ResourceExt::name_any(cluster)
        )));
    };
    if core::cluster_infrastructure_ref_group(cluster) != Some(crate::kinds::MOCK_CLUSTER.group) {
        return Ok(false);
    }
    let api: kube::Api<DynamicObject> = kube::Api::namespaced_with(
        ctx.client.clone(),
        &s.namespace,
        &crate::kinds::MOCK_CLUSTER.api_resource(Contract::V1Beta2),
    );
    Ok(api.get_opt(name).await?.is_some())
}

/// The IPAM contract's infrastructure side: one IPAddressClaim per pool of
/// `spec.addressesFromPools`, named `<machine>-<index>`, for the machine's Cluster
/// (`spec.clusterName` and the cluster-name label), owned by the machine (`controller: true`,
/// `blockOwnerDeletion: true`) so that deleting the machine deletes it. `Ok(None)` while a
/// claim has no `status.addressRef` (the claim's change reconciles the machine again), else
/// the claimed addresses. A server without CAPI's IPAM kinds: nothing is claimed.
async fn claimed_addresses(s: &Subject, ctx: &Ctx) -> Result<Option<Vec<String>>> {
    let pools = s
        .obj
        .data
        .pointer("/spec/addressesFromPools")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if pools.is_empty() {
        return Ok(Some(Vec::new()));
    }
    let claims: Api<DynamicObject> =
        Api::namespaced_with(ctx.client.clone(), &s.namespace, &ipam::claim_resource());
    let addresses: Api<DynamicObject> =
        Api::namespaced_with(ctx.client.clone(), &s.namespace, &ipam::address_resource());
    let mut out = Vec::with_capacity(pools.len());
    for (i, pool) in pools.iter().enumerate() {
        let name = format!("{}-{i}", s.name);
        let claim = match claims.get_opt(&name).await? {
            Some(c) => c,
            None => match claims
                .create(&PostParams::default(), &claim_of(s, &name, pool)?)
                .await
            {
                Ok(c) => c,
                // Not served here: a cluster without CAPI's IPAM kinds.
                Err(kube::Error::Api(e)) if e.code == 404 => return Ok(Some(Vec::new())),
                Err(e) => return Err(e.into()),
            },
        };
        let Some(address_name) = object::string_field(&claim, "status.addressRef.name") else {
            return Ok(None);
        };
        let Some(address) = addresses.get_opt(address_name).await? else {
            return Ok(None);
        };
        out.extend(object::string_field(&address, "spec.address").map(str::to_string));
    }
    Ok(Some(out))
}

/// The claim `name` of `pool` for the machine `s`.
fn claim_of(s: &Subject, name: &str, pool: &Value) -> Result<DynamicObject> {
    let cluster = object::label(&s.obj, CLUSTER_NAME_LABEL).unwrap_or_default();
    let mut labels = serde_json::Map::new();
    labels.insert(CLUSTER_NAME_LABEL.into(), json!(cluster));
    if let Some(filter) = object::label(&s.obj, WATCH_FILTER_LABEL) {
        labels.insert(WATCH_FILTER_LABEL.into(), json!(filter));
    }
    let owner = json!({
        "apiVersion": s.obj.types.as_ref().map(|t| t.api_version.clone()).unwrap_or_default(),
        "kind": MOCK_MACHINE.kind,
        "name": s.name,
        "uid": s.obj.metadata.uid.clone().unwrap_or_default(),
        // The fault: an owner reference that is not the controller's.
        "controller": !s.faults.has(id::ipam::CONSUMER_CLAIM),
        "blockOwnerDeletion": true,
    });
    let claim = json!({
        "apiVersion": ipam::claim_resource().api_version,
        "kind": "IPAddressClaim",
        "metadata": {
            "name": name,
            "namespace": s.namespace,
            "labels": labels,
            "ownerReferences": [owner],
        },
        "spec": {
            "clusterName": cluster,
            "poolRef": {
                "apiGroup": pool.get("apiGroup").cloned().unwrap_or_default(),
                "kind": pool.get("kind").cloned().unwrap_or_default(),
                "name": pool.get("name").cloned().unwrap_or_default(),
            },
        },
    });
    serde_json::from_value(claim).map_err(|e| super::ReconcileError::Invalid(e.to_string()))
}

async fn waiting(s: &Subject, reason: &str, message: &str) -> Result<Action> {
    if !s.fault("ready-condition") {
        let conds = s.conditions(&[Wanted::new("Ready", false, reason, message)], &[]);
        s.patch_status_if_changed(json!({ "conditions": conds }))
            .await?;
    }
    Ok(Action::await_change())
}

async fn cleanup(s: &Subject, ctx: &Ctx) -> Result<Action> {
    super::drop_ready_on_delete(s, ctx).await?;
    ctx.infra.release(&s.infra_id());
    Ok(Action::await_change())
}

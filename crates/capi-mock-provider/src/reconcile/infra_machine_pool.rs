//! InfraMachinePool (MockMachinePool): owner gate (MachinePool controller) → cluster lookup →
//! pause → finalizer → one simulated instance per MachinePool replica → `spec.providerIDList` →
//! `status.replicas`, ready (+ v1beta2 `initialization.provisioned`), optional MachinePool
//! Machines (kind MockMachine, labelled cluster-name + pool-name); deletion releases everything.

use super::{Ctx, Gates, Result, Subject, common_gates};
use crate::conditions::Wanted;
use crate::core::{self, CoreKind};
use crate::kinds::{MOCK_MACHINE, MOCK_MACHINE_POOL};
use crate::object::{self, CLUSTER_NAME_LABEL, POOL_NAME_LABEL, format_label_value, is_deleting};
use capi_contract::contract::Contract;
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kube::core::DynamicObject;
use kube::runtime::controller::Action;
use serde_json::{Value, json};
use std::sync::Arc;

/// Reconciles one MockMachinePool.
pub async fn reconcile(obj: Arc<DynamicObject>, ctx: Arc<Ctx>) -> Result<Action> {
    let s = Subject::new(obj, MOCK_MACHINE_POOL, &ctx)?;
    let deleting = is_deleting(&s.obj);
    let mut cluster = None;
    if !deleting {
        match common_gates(&s, &ctx, &[CoreKind::MachinePool], true).await? {
            Gates::Stop(action) => return Ok(action),
            Gates::Go(c) => cluster = c.map(|c| *c),
        }
    }
    if deleting && s.fault("delete") {
        return Ok(Action::await_change());
    }
    s.with_finalizer(apply(&s, &ctx, cluster.as_ref()), cleanup(&s, &ctx))
        .await
}

async fn apply(s: &Subject, ctx: &Ctx, cluster: Option<&DynamicObject>) -> Result<Action> {
    let owner = object::core_owner(&s.obj, "MachinePool", true);
    let pool = match owner {
        Some(o) => {
            core::get(
                &ctx.client,
                ctx.opts.core,
                CoreKind::MachinePool,
                &s.namespace,
                &o.name,
            )
            .await?
        }
        None => None,
    };
    let latest = s.latest();
    let desired = pool
        .as_ref()
        .and_then(|p| object::int_field(p, "spec.replicas"))
        .or_else(|| object::int_field(&latest, "spec.replicas"))
        .unwrap_or(1)
        .clamp(0, 10_000) as usize;
    let instances: Vec<String> = (0..desired)
        .map(|i| format!("{}{i}/", s.infra_id()))
        .collect();
    futures::future::join_all(instances.iter().map(|id| ctx.infra.provision(id))).await;
    for stale in desired.. {
        if ctx.infra.release(&format!("{}{stale}/", s.infra_id())) == 0 {
            break;
        }
    }
    let ids: Vec<String> = (0..desired).map(|i| s.provider_id(Some(i))).collect();
    let listed: Vec<String> = if s.fault("list-replicas-consistency") {
        Vec::new()
    } else if s.fault("provider-id-list") {
        ids.iter()
            .take(desired.saturating_sub(1))
            .cloned()
            .collect()
    } else {
        ids.clone()
    };
    let spec = json!({ "providerID": s.provider_id(None), "providerIDList": listed });
    if !super::contains(latest.data.get("spec").unwrap_or(&Value::Null), &spec) {
        s.patch(json!({ "spec": spec })).await?;
    }
    let cluster_name = object::label(&s.obj, CLUSTER_NAME_LABEL)
        .map(str::to_string)
        .or_else(|| cluster.map(|c| c.name_any()))
        .unwrap_or_default();
    let pool_label = format_label_value(owner.map_or(s.name.as_str(), |o| o.name.as_str()));
    let mpm = object::bool_field(&latest, "spec.machinePoolMachines");
    if mpm {
        sync_pool_machines(s, ctx, &cluster_name, &pool_label, &ids).await?;
    }
    s.patch_status_if_changed(status(s, &cluster_name, &pool_label, desired, mpm))
        .await?;
    Ok(Action::await_change())
}

fn status(s: &Subject, cluster_name: &str, pool_label: &str, desired: usize, mpm: bool) -> Value {
    let previous = object::int_field(&s.latest(), "status.replicas");
    let replicas = match previous {
        Some(p) if s.fault("replicas") => p,
        _ => desired as i64,
    };
    let ready = !s.fault("ready");
    let mut status = json!({
        "ready": ready,
        "replicas": replicas,
        "selector": format!("{CLUSTER_NAME_LABEL}={cluster_name},{POOL_NAME_LABEL}={pool_label}"),
    });
    if s.contract == Contract::V1Beta2 {
        status["initialization"] = json!({ "provisioned": ready });
    }
    if mpm {
        let kind = if s.fault("mpm-kind") {
            "MockMachinePoolMachine"
        } else {
            MOCK_MACHINE.kind
        };
        status["infrastructureMachineKind"] = json!(kind);
    }
    if !s.fault("conditions") {
        let (reason, message) = if ready {
            ("Provisioned", "")
        } else {
            ("Provisioning", "instances are not ready")
        };
        status["conditions"] =
            Value::Array(s.conditions(&[Wanted::new("Ready", ready, reason, message)], &[]));
    }
    status
}

/// One MockMachine per instance (same apiVersion as the pool), extra ones deleted.
async fn sync_pool_machines(
    s: &Subject,
    ctx: &Ctx,
    cluster: &str,
    pool: &str,
    ids: &[String],
) -> Result<()> {
    let api: Api<DynamicObject> = Api::namespaced_with(
        ctx.client.clone(),
        &s.namespace,
        &MOCK_MACHINE.api_resource(s.contract),
    );
    let existing = owned_machines(s, &api).await?;
    let pool_uid = s.obj.uid().unwrap_or_default();
    for (i, id) in ids.iter().enumerate() {
        let name = format!("{}-{i}", s.name);
        if existing.iter().any(|m| m.name_any() == name) {
            continue;
        }
        let mut labels = serde_json::Map::new();
        labels.insert(CLUSTER_NAME_LABEL.into(), json!(cluster));
        if !s.fault("mpm-objects") {
            labels.insert(POOL_NAME_LABEL.into(), json!(pool));
        }
        let ar = MOCK_MACHINE.api_resource(s.contract);
        let machine: DynamicObject = serde_json::from_value(json!({
            "apiVersion": ar.api_version,
            "kind": ar.kind,
            "metadata": {
                "name": name,
                "namespace": s.namespace,
                "labels": labels,
                "annotations": { object::CONTRACT_ANNOTATION: s.contract.as_str() },
                "ownerReferences": [{
                    "apiVersion": format!("{}/{}", s.kind.group, s.contract.as_str()),
                    "kind": s.kind.kind,
                    "name": s.name,
                    "uid": pool_uid,
                }],
            },
            "spec": { "providerID": id },
        }))
        .map_err(|e| super::ReconcileError::Invalid(e.to_string()))?;
        match api.create(&PostParams::default(), &machine).await {
            Ok(_) => {}
            Err(kube::Error::Api(e)) if e.code == 409 => {}
            Err(e) => return Err(e.into()),
        }
    }
    for m in existing {
        let index = m
            .name_any()
            .rsplit('-')
            .next()
            .and_then(|i| i.parse::<usize>().ok());
        if index.is_none_or(|i| i >= ids.len()) {
            delete_ignoring_missing(&api, &m.name_any()).await?;
        }
    }
    Ok(())
}

async fn owned_machines(s: &Subject, api: &Api<DynamicObject>) -> Result<Vec<DynamicObject>> {
    let uid = s.obj.uid().unwrap_or_default();
    let list = api.list(&ListParams::default()).await?;
    Ok(list
        .items
        .into_iter()
        .filter(|m| m.owner_references().iter().any(|o| o.uid == uid))
        .collect())
}

async fn delete_ignoring_missing(api: &Api<DynamicObject>, name: &str) -> Result<()> {
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(e)) if e.code == 404 => Ok(()),
        Err(e) => Err(e.into()),
    }
}

async fn cleanup(s: &Subject, ctx: &Ctx) -> Result<Action> {
    super::drop_ready_on_delete(s, ctx).await?;
    ctx.infra.release(&s.infra_id());
    let api: Api<DynamicObject> = Api::namespaced_with(
        ctx.client.clone(),
        &s.namespace,
        &MOCK_MACHINE.api_resource(s.contract),
    );
    for m in owned_machines(s, &api).await? {
        delete_ignoring_missing(&api, &m.name_any()).await?;
    }
    Ok(Action::await_change())
}

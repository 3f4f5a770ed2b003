//! BootstrapConfig (MockConfig): owner gate (Machine/MachinePool controller) → cluster lookup →
//! pause → failure gate (v1beta1) → data Secret with a deterministic name → dataSecretName →
//! ready / dataSecretCreated. The Secret is owned by the config, so deletion needs no finalizer.

use super::secrets::{self, CAPI_SECRET_TYPE, SecretSpec};
use super::{Ctx, Gates, Result, Subject, common_gates};
use crate::conditions::Wanted;
use crate::core::CoreKind;
use crate::kinds::MOCK_CONFIG;
use crate::object::{self, CLUSTER_NAME_LABEL, is_deleting};
use capi_contract::contract::Contract;
use capi_contract::rule_ids as id;
use kube::ResourceExt;
use kube::core::DynamicObject;
use kube::runtime::controller::Action;
use serde_json::{Value, json};
use std::sync::Arc;

/// Reconciles one MockConfig.
pub async fn reconcile(obj: Arc<DynamicObject>, ctx: Arc<Ctx>) -> Result<Action> {
    let s = Subject::new(obj, MOCK_CONFIG, &ctx)?;
    if is_deleting(&s.obj) {
        return Ok(Action::await_change());
    }
    let cluster =
        match common_gates(&s, &ctx, &[CoreKind::Machine, CoreKind::MachinePool], true).await? {
            Gates::Stop(action) => return Ok(action),
            Gates::Go(c) => c.map(|c| *c),
        };
    if s.is_b1() && super::has_failure(&s.obj) && !s.fault("failure-gate") {
        return Ok(Action::await_change());
    }
    if ctx.opts.core.worker_join
        && object::string_field(&s.obj, "status.dataSecretName").is_none()
        && let Some(cluster) = &cluster
    {
        let machine = match object::core_owner(&s.obj, "Machine", true) {
            Some(o) => {
                crate::core::get(
                    &ctx.client,
                    ctx.opts.core,
                    CoreKind::Machine,
                    &s.namespace,
                    &o.name,
                )
                .await?
            }
            None => None,
        };
        super::worker_join::init_or_join(&ctx.client, &s, cluster, machine.as_ref()).await?;
    }
    let cluster_name = object::label(&s.obj, CLUSTER_NAME_LABEL)
        .map(str::to_string)
        .or_else(|| cluster.as_ref().map(|c| c.name_any()));
    let secret_name = secret_name(&s);
    let spec = SecretSpec {
        name: &secret_name,
        cluster: cluster_name.as_deref().filter(|_| !s.fault("secret-label")),
        data: vec![(
            if s.fault("secret-value") {
                "data"
            } else {
                "value"
            },
            payload(&s),
        )],
        secret_type: if s.fault("secret-type") {
            "Opaque"
        } else {
            CAPI_SECRET_TYPE
        },
        owned: !s.fault("secret-owner"),
    };
    if s.fault("status-after-secret") {
        s.patch_status_if_changed(status(&s, &secret_name)).await?;
        tokio::time::sleep(super::observable_gap(&ctx)).await;
        secrets::ensure(&ctx.client, &s, spec).await?;
        return Ok(Action::await_change());
    }
    secrets::ensure(&ctx.client, &s, spec).await?;
    if s.faults.has(id::all::READY_CONDITION_LIFECYCLE)
        && super::condition_status(&s.latest(), "Ready").is_none()
    {
        // Status first without Ready; Ready only in a later write.
        let mut early = status(&s, &secret_name);
        if let Some(map) = early.as_object_mut() {
            map.remove("conditions");
        }
        s.patch_status_if_changed(early).await?;
        tokio::time::sleep(super::observable_gap(&ctx)).await;
    }
    s.patch_status_if_changed(status(&s, &secret_name)).await?;
    Ok(Action::await_change())
}

/// The config's name (deterministic, so a moved or status-wiped config finds its Secret again);
/// under the `deterministic-name` fault a random name whenever the status does not hold one.
fn secret_name(s: &Subject) -> String {
    if !s.fault("deterministic-name") {
        return s.name.clone();
    }
    match object::string_field(&s.obj, "status.dataSecretName") {
        Some(existing) => existing.to_string(),
        None => format!(
            "{}-{}",
            s.name,
            &uuid::Uuid::new_v4().simple().to_string()[..8]
        ),
    }
}

fn payload(s: &Subject) -> String {
    object::string_field(&s.obj, "spec.payload").map(str::to_string).unwrap_or_else(|| {
        format!(
            "#!/bin/sh\n# capi-conformance mock bootstrap data for {}/{}\nmkdir -p /run/cluster-api && touch /run/cluster-api/bootstrap-success.complete\n",
            s.namespace, s.name
        )
    })
}

fn status(s: &Subject, secret_name: &str) -> Value {
    let created = !s.fault("data-secret-created");
    let mut status = match s.contract {
        Contract::V1Beta1 => json!({ "ready": created }),
        Contract::V1Beta2 => json!({ "initialization": { "dataSecretCreated": created } }),
    };
    if !s.fault("data-secret-name") {
        let reported = if s.fault("secret-name") {
            format!("{secret_name}-other")
        } else {
            secret_name.to_string()
        };
        status["dataSecretName"] = json!(reported);
    }
    if !s.fault("ready-condition") {
        status["conditions"] = Value::Array(s.conditions(
            &[Wanted::new("Ready", created, "DataSecretAvailable", "")],
            &[],
        ));
    }
    status
}

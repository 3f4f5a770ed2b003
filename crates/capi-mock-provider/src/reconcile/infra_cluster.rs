//! InfraCluster (MockCluster): owner gate → cluster lookup → pause → finalizer → provision →
//! endpoint → provisioned + failure domains + Ready; deletion releases and drops the finalizer.

use super::{Ctx, Gates, Result, Subject, common_gates};
use crate::conditions::Wanted;
use crate::core::CoreKind;
use crate::kinds::MOCK_CLUSTER;
use crate::object::{self, MANAGED_BY_ANNOTATION, is_deleting};
use kube::core::DynamicObject;
use kube::runtime::controller::Action;
use serde_json::{Value, json};
use std::sync::Arc;

/// Port of the simulated API server endpoints.
pub const ENDPOINT_PORT: i64 = 6443;

/// Reconciles one MockCluster.
pub async fn reconcile(obj: Arc<DynamicObject>, ctx: Arc<Ctx>) -> Result<Action> {
    let s = Subject::new(obj, MOCK_CLUSTER, &ctx)?;
    let deleting = is_deleting(&s.obj);
    if object::annotation(&s.obj, MANAGED_BY_ANNOTATION).is_some() && !s.fault("externally-managed")
    {
        return Ok(Action::await_change());
    }
    if !deleting
        && let Gates::Stop(action) = common_gates(&s, &ctx, &[CoreKind::Cluster], false).await?
    {
        return Ok(action);
    }
    if deleting && s.fault("delete") {
        return Ok(Action::await_change());
    }
    if s.fault("finalizer") {
        return if deleting {
            Ok(Action::await_change())
        } else {
            apply(&s, &ctx).await
        };
    }
    s.with_finalizer(apply(&s, &ctx), cleanup(&s, &ctx)).await
}

async fn apply(s: &Subject, ctx: &Ctx) -> Result<Action> {
    ctx.infra.provision(&s.infra_id()).await;
    let latest = s.latest();
    if !s.fault("control-plane-endpoint")
        && object::string_field(&latest, "spec.controlPlaneEndpoint.host").is_none()
    {
        let host = if ctx.opts.core.pod_ip_endpoint {
            std::env::var("POD_IP").unwrap_or_default()
        } else {
            format!("{}.{}.mock.capi-conformance.io", s.name, s.namespace)
        };
        s.patch(
            json!({ "spec": { "controlPlaneEndpoint": { "host": host, "port": ENDPOINT_PORT } } }),
        )
        .await?;
    }
    let flip_key = format!("{}sticky", s.infra_id());
    let was_provisioned = object::bool_field(&latest, provisioned_path(s));
    let provisioned = if s.fault("provisioned") {
        false
    } else if s.fault("provisioned-sticky") && (was_provisioned || ctx.infra.is_marked(&flip_key)) {
        ctx.infra.mark_once(&flip_key);
        false
    } else {
        true
    };
    let mut status = match s.contract {
        capi_contract::contract::Contract::V1Beta1 => {
            json!({ "ready": provisioned, "failureDomains": failure_domains_b1(s) })
        }
        capi_contract::contract::Contract::V1Beta2 => json!({
            "initialization": { "provisioned": provisioned },
            "failureDomains": failure_domains_b2(s),
        }),
    };
    if !s.fault("ready-condition") {
        let (reason, msg) = if provisioned {
            ("Provisioned", "")
        } else {
            ("Provisioning", "waiting for infrastructure")
        };
        status["conditions"] =
            Value::Array(s.conditions(&[Wanted::new("Ready", provisioned, reason, msg)], &[]));
    }
    s.patch_status_if_changed(status).await?;
    Ok(Action::await_change())
}

fn provisioned_path(s: &Subject) -> &'static str {
    if s.is_b1() {
        "status.ready"
    } else {
        "status.initialization.provisioned"
    }
}

fn failure_domains_b1(s: &Subject) -> Value {
    if s.fault("failure-domains") {
        return json!({});
    }
    json!({
        "fd-1": { "controlPlane": true, "attributes": { "zone": "mock-a" } },
        "fd-2": { "controlPlane": true, "attributes": { "zone": "mock-b" } },
        "fd-3": { "controlPlane": false, "attributes": { "zone": "mock-c" } },
    })
}

fn failure_domains_b2(s: &Subject) -> Value {
    if s.fault("failure-domains") {
        return json!([{ "name": "fd-1", "controlPlane": true }, { "name": "fd-1", "controlPlane": false }]);
    }
    json!([
        { "name": "fd-1", "controlPlane": true, "attributes": { "zone": "mock-a" } },
        { "name": "fd-2", "controlPlane": true, "attributes": { "zone": "mock-b" } },
        { "name": "fd-3", "controlPlane": false, "attributes": { "zone": "mock-c" } },
    ])
}

async fn cleanup(s: &Subject, ctx: &Ctx) -> Result<Action> {
    super::drop_ready_on_delete(s, ctx).await?;
    ctx.infra.release(&s.infra_id());
    Ok(Action::await_change())
}

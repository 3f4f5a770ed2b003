//! Calling the webhooks (`webhook/mutating/dispatcher.go`, `webhook/validating/dispatcher.go`): matching, JSONPatch application, reinvocation, failure policies, dry run and side effects.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::{Value, json};

use super::attributes::*;
use super::review::*;
use crate::error::{ApiError, qualified};
use crate::rbac::UserInfo;
use crate::registry::ResourceType;
use crate::state::EmbeddedServer;
use crate::webhook::client::status_error;
use crate::webhook::config::Webhook;
use crate::webhook::matching::{self, Conditions, RequestInfo};
use crate::webhook::{CallKind, CallOutcome, WebhookCall};

/// The request-wide context of a dispatch.
pub struct Ctx<'a> {
    pub server: &'a EmbeddedServer,
    pub rt: Arc<ResourceType>,
    pub user: UserInfo,
    /// Namespace labels captured for namespaceSelector (None: the namespace does not exist).
    pub namespaces: BTreeMap<String, BTreeMap<String, String>>,
    /// Warnings the webhooks returned (forwarded as `Warning` headers).
    pub warnings: Mutex<Vec<String>>,
}

impl Ctx<'_> {
    fn versions(&self) -> Vec<String> {
        self.rt.versions.iter().map(|v| v.name.clone()).collect()
    }

    fn request_info<'b>(
        &'b self,
        attrs: &'b Attributes,
        versions: &'b [String],
    ) -> RequestInfo<'b> {
        attrs.request_info(&self.rt, versions)
    }

    fn namespace_labels(&self, ns: &str) -> Option<BTreeMap<String, String>> {
        self.namespaces.get(ns).cloned()
    }
}

/// One webhook round trip: the review, the reply checks, warnings recorded.
pub(super) async fn call_hook(
    ctx: &Ctx<'_>,
    w: &Webhook,
    attrs: &Attributes,
    version: &str,
    object: &Value,
    old: &Value,
) -> Result<HookResponse, HookError> {
    let started = Instant::now();
    let webhooks = ctx.server.webhooks();
    let url = w.client.url();
    let observe = |outcome: CallOutcome| {
        webhooks.observe(WebhookCall {
            kind: if w.mutating {
                CallKind::Mutating
            } else {
                CallKind::Validating
            },
            webhook: w.name.clone(),
            url: url.clone(),
            operation: attrs.operation.to_string(),
            resource: format!(
                "{}/{}/{}{}",
                ctx.rt.group,
                version,
                ctx.rt.resource,
                if attrs.subresource.is_empty() {
                    String::new()
                } else {
                    format!("/{}", attrs.subresource)
                }
            ),
            namespace: attrs.namespace.clone(),
            outcome,
            duration: started.elapsed(),
        });
    };
    let Some(review_version) = w
        .review_versions
        .iter()
        .find(|v| *v == "v1" || *v == "v1beta1")
    else {
        let e = "could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)";
        observe(CallOutcome::Failed(e.into()));
        return Err(calling(&w.name, e));
    };
    let review_av = format!("admission.k8s.io/{review_version}");
    let uid = uuid::Uuid::new_v4().to_string();
    let review = json!({
        "apiVersion": review_av,
        "kind": "AdmissionReview",
        "request": request_json(&ctx.rt, &ctx.user, attrs, version, &uid, object, old),
    });
    let body = Bytes::from(serde_json::to_vec(&review).unwrap_or_default());
    let timeout = Duration::from_secs(w.timeout_seconds);
    let reply = async {
        let dial = webhooks
            .resolve(&ctx.server.inner.store, &w.client)
            .map_err(|e| crate::webhook::client::post_error(&w.client, timeout, &e))?;
        webhooks
            .client
            .post(&w.client, dial, body, timeout)
            .await
            .map_err(|e| e.0)
    }
    .await;
    let reply = match reply {
        Ok(r) => r,
        Err(e) => {
            observe(CallOutcome::Failed(e.clone()));
            return Err(calling(&w.name, format!("failed to call webhook: {e}")));
        }
    };
    if !(200..300).contains(&reply.status) {
        let e = status_error(reply.status, &reply.body);
        observe(CallOutcome::Failed(e.clone()));
        return Err(calling(&w.name, format!("failed to call webhook: {e}")));
    }
    let parsed = match parse_response(&reply.body, &review_av, &uid, w.mutating) {
        Ok(p) => p,
        Err(e) => {
            observe(CallOutcome::Failed(e.clone()));
            return Err(calling(&w.name, e));
        }
    };
    // Warnings count whether the request is allowed or not.
    let warnings = warnings_of(&reply.body);
    if !warnings.is_empty() {
        let mut all = ctx.warnings.lock().unwrap_or_else(|p| p.into_inner());
        all.extend(warnings);
    }
    observe(if !parsed.allowed {
        CallOutcome::Denied(
            parsed
                .status
                .as_ref()
                .and_then(|s| s.get("code"))
                .and_then(Value::as_u64)
                .unwrap_or(0)
                .max(400) as u16,
        )
    } else if parsed.patch.is_some() {
        CallOutcome::Patched
    } else {
        CallOutcome::Allowed
    });
    Ok(parsed)
}

/// The object (and old object) at `version` for a webhook registered there.
pub(super) async fn versioned(
    ctx: &Ctx<'_>,
    attrs: &Attributes,
    obj: &Value,
    old: &Value,
    version: &str,
) -> Result<(Value, Value), ApiError> {
    if version == attrs.version || attrs.is_scale() || !ctx.rt.custom {
        return Ok((obj.clone(), old.clone()));
    }
    let one = |v: &Value| {
        let v = v.clone();
        async move {
            if v.is_null() {
                return Ok(Value::Null);
            }
            crate::webhook::conversion::convert(ctx.server, &ctx.rt, vec![v], version, false)
                .await
                .map(|mut out| out.pop().unwrap_or(Value::Null))
                .map_err(ApiError::internal_error)
        }
    };
    Ok((one(obj).await?, one(old).await?))
}

pub(super) fn dry_run_check(w: &Webhook, attrs: &Attributes) -> Result<(), HookError> {
    if !attrs.dry_run {
        return Ok(());
    }
    match w.side_effects.as_deref() {
        None => Err(calling(&w.name, "Webhook SideEffects is nil")),
        Some("None" | "NoneOnDryRun") => Ok(()),
        Some(_) => Err(HookError::Status(ApiError::bad_request(format!(
            "admission webhook \"{}\" does not support dry run",
            w.name
        )))),
    }
}

pub(super) fn forbidden(ctx: &Ctx<'_>, attrs: &Attributes, err: &str) -> ApiError {
    let res = qualified(&ctx.rt.resource, &ctx.rt.group);
    let msg = if attrs.name.is_empty() {
        format!("{res} is forbidden: {err}")
    } else {
        format!("{res} \"{}\" is forbidden: {err}", attrs.name)
    };
    let mut details = json!({"kind": ctx.rt.resource});
    if !attrs.name.is_empty() {
        details["name"] = json!(attrs.name);
    }
    if !ctx.rt.group.is_empty() {
        details["group"] = json!(ctx.rt.group);
    }
    ApiError::forbidden(msg).with_details(details)
}

/// matchConditions for one webhook (request bound without objects).
pub(super) fn conditions(
    ctx: &Ctx<'_>,
    w: &Webhook,
    attrs: &Attributes,
    version: &str,
    obj: &Value,
    old: &Value,
) -> Result<bool, ApiError> {
    if w.match_conditions.is_empty() {
        return Ok(true);
    }
    let mut request = request_json(
        &ctx.rt,
        &ctx.user,
        attrs,
        version,
        "",
        &Value::Null,
        &Value::Null,
    );
    if let Some(m) = request.as_object_mut() {
        m.remove("object");
        m.remove("oldObject");
    }
    match matching::eval_conditions(w, obj, old, &request) {
        Conditions::Call => Ok(true),
        Conditions::Skip => Ok(false),
        Conditions::Error(e) => Err(forbidden(ctx, attrs, &e)),
    }
}

/// Applies a JSONPatch to the versioned object: `Ok(None)` when the patch is empty.
pub(super) fn apply_patch(
    w: &Webhook,
    resp: &HookResponse,
    obj: &Value,
) -> Result<Option<Value>, HookError> {
    let Some(bytes) = &resp.patch else {
        return Ok(None);
    };
    let t = resp.patch_type.as_deref().unwrap_or_default();
    if t != "JSONPatch" {
        return Err(calling(&w.name, format!("unsupported patch type \"{t}\"")));
    }
    let patch: json_patch::Patch = serde_json::from_slice(bytes).map_err(|e| {
        calling(
            &w.name,
            format!("received undecodable patch in webhook response: {e}"),
        )
    })?;
    if patch.0.is_empty() {
        return Ok(None);
    }
    if obj.is_null() {
        return Err(HookError::Status(ApiError::internal_error(format!(
            "admission webhook \"{}\" attempted to modify the object, which is not supported for this operation",
            w.name
        ))));
    }
    let mut out = obj.clone();
    json_patch::patch(&mut out, &patch)
        .map_err(|e| HookError::Status(ApiError::internal_error(e.to_string())))?;
    if !out.is_object() {
        return Err(HookError::Status(ApiError::internal_error(
            "Object 'Kind' is missing in patched object",
        )));
    }
    Ok(Some(out))
}

/// The mutating chain: webhooks in configuration-name order, each patch applied at the
/// webhook's version and defaulted there, the object converted back to the request version;
/// one reinvocation round for `IfNeeded` webhooks when a later patch changed the object.
pub async fn mutate(
    ctx: &Ctx<'_>,
    attrs: &Attributes,
    mut obj: Value,
    old: &Value,
    hooks: &[Arc<Webhook>],
) -> Result<Value, ApiError> {
    let versions = ctx.versions();
    let req = ctx.request_info(attrs, &versions);
    let mut previously_invoked: HashSet<usize> = HashSet::new();
    let mut reinvoke: HashSet<usize> = HashSet::new();
    let mut should_reinvoke = false;
    for round in 0..2 {
        if round == 1 && !should_reinvoke {
            break;
        }
        // Versioned copies of the current object, by version (dropped on every change).
        let mut cache: HashMap<String, (Value, Value)> = HashMap::new();
        for (i, w) in hooks.iter().enumerate() {
            let ns = |n: &str| ctx.namespace_labels(n);
            let current = (!obj.is_null()).then_some(&obj);
            let old_opt = (!old.is_null()).then_some(old);
            let Some(version) = matching::should_call(w, &req, current, old_opt, &ns)? else {
                continue;
            };
            if round == 1 && !reinvoke.contains(&i) {
                continue;
            }
            let (vobj, vold) = match cache.get(&version) {
                Some(v) => v.clone(),
                None => {
                    let v = versioned(ctx, attrs, &obj, old, &version).await?;
                    cache.insert(version.clone(), v.clone());
                    v
                }
            };
            if !conditions(ctx, w, attrs, &version, &vobj, &vold)? {
                continue;
            }
            let result = match dry_run_check(w, attrs) {
                Ok(()) => call_hook(ctx, w, attrs, &version, &vobj, &vold).await,
                Err(e) => Err(e),
            };
            let mut changed = false;
            let outcome = match result {
                Ok(resp) if !resp.allowed => {
                    Err(HookError::Status(rejection(&w.name, resp.status.as_ref())))
                }
                Ok(resp) => match apply_patch(w, &resp, &vobj) {
                    Ok(None) => Ok(()),
                    Ok(Some(mut patched)) => {
                        changed = patched != vobj;
                        default_at(ctx, &version, &mut patched);
                        obj = back_to_request_version(ctx, attrs, patched, &version).await?;
                        cache.clear();
                        Ok(())
                    }
                    Err(e) => Err(e),
                },
                Err(e) => Err(e),
            };
            if changed {
                reinvoke.extend(previously_invoked.iter().copied());
                should_reinvoke = true;
            }
            if w.reinvoke_if_needed {
                previously_invoked.insert(i);
            }
            match outcome {
                Ok(()) => {}
                Err(HookError::Calling(_)) if w.fail_open => {}
                Err(HookError::Calling(e)) => return Err(ApiError::internal_error(e)),
                Err(HookError::Status(e)) => return Err(e),
            }
        }
    }
    Ok(obj)
}

/// The CR defaulter at the webhook's version after a patch.
pub(super) fn default_at(ctx: &Ctx<'_>, version: &str, obj: &mut Value) {
    if !ctx.rt.custom {
        return;
    }
    if let Some(schema) = ctx.rt.version(version).and_then(|v| v.schema.as_ref()) {
        crate::schema::apply_defaults(obj, schema);
    }
}

pub(super) async fn back_to_request_version(
    ctx: &Ctx<'_>,
    attrs: &Attributes,
    obj: Value,
    version: &str,
) -> Result<Value, ApiError> {
    if version == attrs.version || attrs.is_scale() || !ctx.rt.custom {
        return Ok(obj);
    }
    crate::webhook::conversion::convert(ctx.server, &ctx.rt, vec![obj], &attrs.version, false)
        .await
        .map(|mut v| v.pop().unwrap_or(Value::Null))
        .map_err(ApiError::internal_error)
}

/// The validating webhooks, called in parallel; the first error (in webhook order) wins.
pub async fn validate(
    ctx: &Ctx<'_>,
    attrs: &Attributes,
    obj: &Value,
    old: &Value,
    hooks: &[Arc<Webhook>],
) -> Result<(), ApiError> {
    let versions = ctx.versions();
    let req = ctx.request_info(attrs, &versions);
    let mut relevant: Vec<(&Arc<Webhook>, String)> = Vec::new();
    let mut by_version: HashMap<String, (Value, Value)> = HashMap::new();
    for w in hooks {
        let ns = |n: &str| ctx.namespace_labels(n);
        let current = (!obj.is_null()).then_some(obj);
        let old_opt = (!old.is_null()).then_some(old);
        let Some(version) = matching::should_call(w, &req, current, old_opt, &ns)? else {
            continue;
        };
        if !by_version.contains_key(&version) {
            let v = versioned(ctx, attrs, obj, old, &version).await?;
            by_version.insert(version.clone(), v);
        }
        let (vobj, vold) = &by_version[&version];
        if !conditions(ctx, w, attrs, &version, vobj, vold)? {
            continue;
        }
        relevant.push((w, version));
    }
    if relevant.is_empty() {
        return Ok(());
    }
    let calls = relevant.iter().map(|(w, version)| {
        let (vobj, vold) = &by_version[version];
        async move {
            dry_run_check(w, attrs)?;
            let resp = call_hook(ctx, w, attrs, version, vobj, vold).await?;
            if resp.allowed {
                Ok(())
            } else {
                Err(HookError::Status(rejection(&w.name, resp.status.as_ref())))
            }
        }
    });
    let results = futures::future::join_all(calls).await;
    for ((w, _), r) in relevant.iter().zip(results) {
        match r {
            Ok(()) => {}
            Err(HookError::Calling(_)) if w.fail_open => {}
            Err(HookError::Calling(e)) => return Err(ApiError::internal_error(e)),
            Err(HookError::Status(e)) => return Err(e),
        }
    }
    Ok(())
}

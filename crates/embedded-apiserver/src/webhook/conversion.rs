//! CRD conversion webhooks (apiextensions-apiserver `conversion/webhook_converter.go`):
//! `spec.conversion.strategy: Webhook` with `ConversionReview` (v1, or v1beta1 when only that is
//! offered), response checks (uid, count, apiVersion, kind, name/namespace/uid), metadata
//! restored except labels and annotations, output pruned by the target version's schema.
//!
//! One review per call: a LIST sends only the items that need converting, a single object one
//! item; objects already at the desired version never reach the webhook.

use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::{Value, json};

use super::client::status_error;
pub use super::crd_conversion::{ConversionWebhook, gvk_string, needs_conversion, validate_crd};
use super::stored_conversions;
use super::{CallKind, CallOutcome, WebhookCall};
use crate::registry::ResourceType;
use crate::state::EmbeddedServer;

/// kube-apiserver's fixed timeout for conversion calls (the REST client default).
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// Converts `objects` of `rt` to `version`: the ones at another version go to the webhook in
/// one ConversionReview (`list_kind`: the review converts a list, whose kind names errors);
/// the rest stay as they are. `Err` is kube's error text (`conversion webhook for … failed: …`).
pub async fn convert(
    server: &EmbeddedServer,
    rt: &ResourceType,
    mut objects: Vec<Value>,
    version: &str,
    list: bool,
) -> Result<Vec<Value>, String> {
    let desired = rt.api_version(version);
    let pending: Vec<usize> = objects
        .iter()
        .enumerate()
        .filter(|(_, o)| needs_conversion(o, &desired))
        .map(|(i, _)| i)
        .collect();
    if pending.is_empty() {
        return Ok(objects);
    }
    let schema = rt.version(version).and_then(|v| v.schema.clone());
    let Some(hook) = rt.conversion.clone() else {
        // Strategy None: apiVersion only (docs/embedded-apiserver.md M10).
        for i in pending {
            objects[i] = crate::target::present(rt, version, std::mem::take(&mut objects[i]));
        }
        return Ok(objects);
    };
    let first = &objects[pending[0]];
    let in_api_version = first
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let in_gvk = if list {
        let storage = rt
            .storage_version()
            .map(|v| rt.api_version(&v.name))
            .unwrap_or(in_api_version);
        gvk_string(&storage, &rt.list_kind)
    } else {
        gvk_string(&in_api_version, &rt.kind)
    };
    // Objects with nothing but apiVersion and kind are converted locally.
    let (empty, to_send): (Vec<usize>, Vec<usize>) = pending
        .into_iter()
        .partition(|i| objects[*i].as_object().is_some_and(|m| m.len() <= 2));
    for i in empty {
        objects[i]["apiVersion"] = json!(desired);
    }
    if to_send.is_empty() {
        return Ok(objects);
    }
    let originals: Vec<Value> = to_send.iter().map(|i| objects[*i].clone()).collect();
    let converted = call(server, &hook, &originals, &desired, &in_gvk).await?;
    let item_err = |idx: usize, what: &str| {
        if list {
            format!(
                "conversion webhook for {in_gvk} returned invalid converted object at index {idx}: {what}"
            )
        } else {
            format!("conversion webhook for {in_gvk} returned invalid object: {what}")
        }
    };
    if converted.len() != originals.len() {
        return Err(format!(
            "conversion webhook for {in_gvk} returned {} objects, expected {}",
            converted.len(),
            originals.len()
        ));
    }
    for (idx, ((slot, original), mut out)) in
        to_send.iter().zip(&originals).zip(converted).enumerate()
    {
        let got = out
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if got != desired {
            return Err(item_err(
                idx,
                &format!("invalid groupVersion (expected {desired}, received {got})"),
            ));
        }
        if let Some(why) = changed_identity(original, &out) {
            return Err(item_err(idx, &why));
        }
        restore_metadata(original, &mut out).map_err(|why| {
            if list {
                format!("conversion webhook for {in_gvk} returned invalid metadata in object at index {idx}: {why}")
            } else {
                format!("conversion webhook for {in_gvk} returned invalid metadata: {why}")
            }
        })?;
        if let Some(schema) = &schema {
            crate::schema::prune_resource(&mut out, schema);
        }
        objects[*slot] = out;
    }
    Ok(objects)
}

/// `validateConvertedObject`: kind, name, namespace and uid must be unchanged.
fn changed_identity(original: &Value, out: &Value) -> Option<String> {
    let s = |v: &Value, p: &str| {
        v.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let (ek, ak) = (s(original, "/kind"), s(out, "/kind"));
    if ek != ak {
        return Some(format!("invalid kind (expected {ek}, received {ak})"));
    }
    for (what, p) in [
        ("name", "/metadata/name"),
        ("namespace", "/metadata/namespace"),
        ("UID", "/metadata/uid"),
    ] {
        let (e, a) = (s(original, p), s(out, p));
        if e != a {
            return Some(format!("must have the same {what}: {e} != {a}"));
        }
    }
    None
}

/// `restoreObjectMeta`: the original metadata, with labels and annotations from the webhook.
fn restore_metadata(original: &Value, out: &mut Value) -> Result<(), String> {
    let Some(meta) = out.get("metadata") else {
        return Err("missing metadata in converted object".into());
    };
    if !meta.is_object() {
        return Err(format!(
            "invalid metadata of type {} in converted object",
            type_name(meta)
        ));
    }
    let mut restored = original
        .get("metadata")
        .cloned()
        .unwrap_or_else(|| json!({}));
    for k in ["labels", "annotations"] {
        match meta.get(k) {
            None | Some(Value::Null) => {
                if let Some(m) = restored.as_object_mut() {
                    m.remove(k);
                }
            }
            Some(Value::Object(map)) => {
                if let Some((key, v)) = map.iter().find(|(_, v)| !v.is_string()) {
                    return Err(format!(".metadata.{k}[{key}] must be a string, got {v}"));
                }
                restored[k] = Value::Object(map.clone());
            }
            Some(other) => {
                return Err(format!(
                    ".metadata.{k} must be an object, got {}",
                    type_name(other)
                ));
            }
        }
    }
    out["metadata"] = restored;
    Ok(())
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// One ConversionReview round trip; `Ok` is `response.convertedObjects`.
async fn call(
    server: &EmbeddedServer,
    hook: &ConversionWebhook,
    objects: &[Value],
    desired: &str,
    in_gvk: &str,
) -> Result<Vec<Value>, String> {
    let failed = |why: String| format!("conversion webhook for {in_gvk} failed: {why}");
    let started = Instant::now();
    let webhooks = server.webhooks();
    let namespaces: std::collections::BTreeSet<&str> = objects
        .iter()
        .map(|o| {
            o.pointer("/metadata/namespace")
                .and_then(Value::as_str)
                .unwrap_or_default()
        })
        .collect();
    let namespace = match namespaces.len() {
        1 => namespaces.first().copied().unwrap_or_default().to_string(),
        _ => String::new(),
    };
    let observe = |outcome: CallOutcome, url: String| {
        webhooks.observe(WebhookCall {
            kind: CallKind::Conversion,
            webhook: hook.crd.clone(),
            url,
            operation: String::new(),
            resource: desired.to_string(),
            namespace: namespace.clone(),
            outcome,
            duration: started.elapsed(),
        });
    };
    let cfg = match &hook.client {
        Ok(c) => c,
        Err(e) => {
            observe(CallOutcome::Failed(e.clone()), String::new());
            return Err(failed(e.clone()));
        }
    };
    let review_version = hook
        .review_versions
        .iter()
        .find(|v| *v == "v1" || *v == "v1beta1")
        .cloned();
    let Some(review_version) = review_version else {
        let e = format!(
            "no supported conversion review versions: {:?}",
            hook.review_versions
        );
        observe(CallOutcome::Failed(e.clone()), cfg.url());
        return Err(failed(e));
    };
    let api_version = format!("apiextensions.k8s.io/{review_version}");
    let uid = uuid::Uuid::new_v4().to_string();
    let review = json!({
        "apiVersion": api_version,
        "kind": "ConversionReview",
        "request": {"uid": uid, "desiredAPIVersion": desired, "objects": objects},
    });
    let body = Bytes::from(serde_json::to_vec(&review).unwrap_or_default());
    let result = async {
        let dial = webhooks
            .resolve(&server.inner.store, cfg)
            .map_err(|e| super::client::post_error(cfg, TIMEOUT, &e))?;
        let reply = webhooks
            .client
            .post(cfg, dial, body, TIMEOUT)
            .await
            .map_err(|e| e.0)?;
        if !(200..300).contains(&reply.status) {
            return Err(status_error(reply.status, &reply.body));
        }
        parse_response(&reply.body, &api_version, &uid, review_version == "v1")
    }
    .await;
    match result {
        Ok(objs) => {
            observe(CallOutcome::Converted(objs.len()), cfg.url());
            Ok(objs)
        }
        Err(e) => {
            observe(CallOutcome::Failed(e.clone()), cfg.url());
            Err(failed(e))
        }
    }
}

/// `getConvertedObjectsFromResponse`.
fn parse_response(
    body: &[u8],
    api_version: &str,
    uid: &str,
    v1: bool,
) -> Result<Vec<Value>, String> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| format!("couldn't get version/kind; json parse error: {e}"))?;
    if v1 {
        let got_av = v
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let got_kind = v.get("kind").and_then(Value::as_str).unwrap_or_default();
        if got_av != api_version || got_kind != "ConversionReview" {
            return Err(format!(
                "expected webhook response of {}, got {}",
                gvk_string(api_version, "ConversionReview"),
                gvk_string(got_av, got_kind)
            ));
        }
    }
    let Some(resp) = v.get("response").filter(|r| r.is_object()) else {
        return Err("no response provided".into());
    };
    if v1 {
        let got = resp.get("uid").and_then(Value::as_str).unwrap_or_default();
        if got != uid {
            return Err(format!("expected response.uid=\"{uid}\", got \"{got}\""));
        }
    }
    let status = resp
        .pointer("/result/status")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if status != "Success" {
        let msg = resp
            .pointer("/result/message")
            .and_then(Value::as_str)
            .unwrap_or_default();
        return Err(if msg.is_empty() {
            format!("response.result.status was '{status}', not 'Success'")
        } else {
            msg.to_string()
        });
    }
    Ok(resp
        .get("convertedObjects")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default())
}

/// Whether `rt` converts through a webhook server of this process.
fn converts_locally(server: &EmbeddedServer, rt: &ResourceType) -> bool {
    let Some(cfg) = rt
        .conversion
        .as_ref()
        .and_then(|hook| hook.client.as_ref().ok())
    else {
        return false;
    };
    matches!(
        server.webhooks().resolve(&server.inner.store, cfg),
        Ok(super::client::Dial::Local(_))
    )
}

/// [`convert`] for objects as stored: answered from the table when every object that needs
/// converting is in it (a list converts in one review or not at all, so its errors name the
/// same indexes), else converted and remembered.
pub async fn convert_stored(
    server: &EmbeddedServer,
    rt: &ResourceType,
    objects: Vec<Value>,
    version: &str,
    list: bool,
) -> Result<Vec<Value>, String> {
    let desired = rt.api_version(version);
    let keys: Vec<Option<stored_conversions::Key>> = objects
        .iter()
        .map(|o| {
            super::crd_conversion::needs_conversion(o, &desired)
                .then(|| stored_conversions::key(rt, o, &desired))
                .flatten()
        })
        .collect();
    let table = &server.webhooks().stored_conversions;
    let pending = objects
        .iter()
        .filter(|o| super::crd_conversion::needs_conversion(o, &desired))
        .count();
    // The table holds only what a webhook server of this process answered, and forgets it
    // when a route changes: a full hit needs no route lookup (no store lock).
    let hits: Vec<Option<Value>> = keys
        .iter()
        .map(|k| k.as_ref().and_then(|k| table.get(k)))
        .collect();
    if pending > 0 && hits.iter().filter(|h| h.is_some()).count() == pending {
        return Ok(objects
            .into_iter()
            .zip(hits)
            .map(|(o, hit)| hit.unwrap_or(o))
            .collect());
    }
    if pending == 0 || !converts_locally(server, rt) {
        return convert(server, rt, objects, version, list).await;
    }
    let converted = convert(server, rt, objects, version, list).await?;
    for (k, out) in keys.into_iter().zip(&converted) {
        if let Some(k) = k {
            table.put(k, out.clone());
        }
    }
    Ok(converted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crd_conversion_validation() {
        let crd = |conv: Value| json!({"spec": {"conversion": conv}});
        assert!(validate_crd(&crd(json!({"strategy": "None"})), true).is_empty());
        let c = validate_crd(&crd(json!({"strategy": "Webhook"})), true);
        let fields: Vec<&str> = c.iter().map(|c| c.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "spec.conversion.webhookClientConfig",
                "spec.conversion.conversionReviewVersions"
            ]
        );
        let ok = crd(
            json!({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"],
            "clientConfig": {"service": {"namespace": "n", "name": "s", "path": "/convert"}}}}),
        );
        assert!(validate_crd(&ok, true).is_empty());
        let v2 = crd(
            json!({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v2"],
            "clientConfig": {"url": "https://x/convert"}}}),
        );
        assert_eq!(
            validate_crd(&v2, true)[0].message,
            "Invalid value: []string{\"v2\"}: must include at least one of v1, v1beta1"
        );
        let none_with_hook =
            crd(json!({"strategy": "None", "webhook": {"conversionReviewVersions": ["v1"]}}));
        assert_eq!(
            validate_crd(&none_with_hook, true)[0].reason,
            "FieldValueForbidden"
        );
    }

    #[test]
    fn response_checks() {
        let ok = br#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","response":{"uid":"u","convertedObjects":[{"a":1}],"result":{"status":"Success"}}}"#;
        assert_eq!(
            parse_response(ok, "apiextensions.k8s.io/v1", "u", true)
                .unwrap()
                .len(),
            1
        );
        assert_eq!(
            parse_response(ok, "apiextensions.k8s.io/v1", "other", true).unwrap_err(),
            "expected response.uid=\"other\", got \"u\""
        );
        let failure = br#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","response":{"uid":"u","result":{"status":"Failure","message":"nope"}}}"#;
        assert_eq!(
            parse_response(failure, "apiextensions.k8s.io/v1", "u", true).unwrap_err(),
            "nope"
        );
        assert_eq!(
            parse_response(b"{}", "apiextensions.k8s.io/v1", "u", true).unwrap_err(),
            "expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got /, Kind="
        );
    }

    #[test]
    fn metadata_is_restored_but_labels() {
        let original =
            json!({"metadata": {"name": "a", "resourceVersion": "5", "labels": {"x": "1"}}});
        let mut out = json!({"metadata": {"name": "a", "resourceVersion": "9", "labels": {"x": "2"}, "finalizers": ["f"]}});
        restore_metadata(&original, &mut out).unwrap();
        assert_eq!(
            out["metadata"],
            json!({"name": "a", "resourceVersion": "5", "labels": {"x": "2"}})
        );
        let renamed = json!({"kind": "K", "metadata": {"name": "b"}});
        assert_eq!(
            changed_identity(&json!({"kind": "K", "metadata": {"name": "a"}}), &renamed).unwrap(),
            "must have the same name: a != b"
        );
    }
}

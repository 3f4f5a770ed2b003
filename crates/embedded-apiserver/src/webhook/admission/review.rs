//! The AdmissionReview wire format (`webhook/request/admissionreview.go`): the request sent, the response verified, and kube's error texts and codes (`webhook/errors/statuserror.go`).

use base64::Engine as _;
use serde_json::{Value, json};

use super::attributes::*;
use crate::error::ApiError;
use crate::rbac::UserInfo;
use crate::registry::ResourceType;

/// Why one webhook call failed.
pub(super) enum HookError {
    /// `ErrCallingWebhook`: subject to failurePolicy.
    Calling(String),
    /// Anything else: returned as is.
    Status(ApiError),
}

/// The parsed `response` of an AdmissionReview.
pub(super) struct HookResponse {
    pub(super) allowed: bool,
    pub(super) status: Option<Value>,
    pub(super) patch: Option<Vec<u8>>,
    pub(super) patch_type: Option<String>,
}

pub(super) fn calling(name: &str, reason: impl std::fmt::Display) -> HookError {
    HookError::Calling(format!("failed calling webhook \"{name}\": {reason}"))
}

/// `ToStatusErr`: the webhook's Status with the code raised to ≥ 400 and the denial message.
pub fn rejection(name: &str, status: Option<&Value>) -> ApiError {
    let denied = format!("admission webhook \"{name}\" denied the request");
    let s = |k: &str| {
        status
            .and_then(|v| v.get(k))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let (message, reason) = (s("message"), s("reason"));
    let text = if !message.is_empty() {
        format!("{denied}: {message}")
    } else if !reason.is_empty() {
        format!("{denied}: {reason}")
    } else {
        format!("{denied} without explanation")
    };
    let code = status
        .and_then(|v| v.get("code"))
        .and_then(Value::as_u64)
        .and_then(|c| u16::try_from(c).ok())
        .unwrap_or(0)
        .max(400);
    let mut e = ApiError::new(code, "", text);
    e.reason = std::borrow::Cow::Owned(reason);
    if let Some(d) = status
        .and_then(|v| v.get("details"))
        .filter(|d| !d.is_null())
    {
        e.details = Some(Box::new(d.clone()));
    }
    e
}

/// The AdmissionRequest a webhook at `version` receives (`kind`/`resource` at the webhook's
/// version, `request*` at the client's).
pub(super) fn request_json(
    rt: &ResourceType,
    user: &UserInfo,
    attrs: &Attributes,
    version: &str,
    uid: &str,
    object: &Value,
    old: &Value,
) -> Value {
    let kind_at = |v: &str| {
        if attrs.is_scale() {
            json!({"group": "autoscaling", "version": "v1", "kind": "Scale"})
        } else {
            json!({"group": rt.group, "version": v, "kind": rt.kind})
        }
    };
    let resource_at = |v: &str| json!({"group": rt.group, "version": v, "resource": rt.resource});
    let mut user_info = json!({"username": user.name, "groups": user.groups});
    if user.groups.is_empty() {
        user_info.as_object_mut().map(|m| m.remove("groups"));
    }
    let mut r = json!({
        "uid": uid,
        "kind": kind_at(version),
        "resource": resource_at(version),
        "requestKind": kind_at(&attrs.version),
        "requestResource": resource_at(&attrs.version),
        "operation": attrs.operation,
        "userInfo": user_info,
        "object": object,
        "oldObject": old,
        "dryRun": attrs.dry_run,
        "options": attrs.options,
    });
    let ns = attrs.admission_namespace(rt);
    if let Some(m) = r.as_object_mut() {
        if !attrs.name.is_empty() {
            m.insert("name".into(), json!(attrs.name));
        }
        if !ns.is_empty() {
            m.insert("namespace".into(), json!(ns));
        }
        if !attrs.subresource.is_empty() {
            m.insert("subResource".into(), json!(attrs.subresource));
            m.insert("requestSubResource".into(), json!(attrs.subresource));
        }
    }
    r
}

/// `VerifyAdmissionResponse` plus decoding.
pub(super) fn parse_response(
    body: &[u8],
    review_av: &str,
    uid: &str,
    mutating: bool,
) -> Result<HookResponse, String> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| format!("couldn't get version/kind; json parse error: {e}"))?;
    let v1 = review_av == "admission.k8s.io/v1";
    let Some(resp) = v.get("response").filter(|r| r.is_object()) else {
        return Err("received invalid webhook response: webhook response was absent".into());
    };
    let invalid = |m: String| format!("received invalid webhook response: {m}");
    if v1 {
        let got = resp.get("uid").and_then(Value::as_str).unwrap_or_default();
        if got != uid {
            return Err(invalid(format!(
                "expected response.uid=\"{uid}\", got \"{got}\""
            )));
        }
        let av = v
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let kind = v.get("kind").and_then(Value::as_str).unwrap_or_default();
        if av != review_av || kind != "AdmissionReview" {
            return Err(invalid(format!(
                "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got {}",
                crate::webhook::crd_conversion::gvk_string(av, kind)
            )));
        }
    }
    let patch_b64 = resp
        .get("patch")
        .and_then(Value::as_str)
        .filter(|p| !p.is_empty());
    let patch_type = resp
        .get("patchType")
        .and_then(Value::as_str)
        .map(str::to_string);
    if mutating {
        if v1 {
            match (&patch_b64, &patch_type) {
                (Some(_), None) => {
                    return Err(invalid(
                        "webhook returned response.patch but not response.patchType".into(),
                    ));
                }
                (None, Some(t)) if !t.is_empty() => {
                    return Err(invalid(
                        "webhook returned response.patchType but not response.patch".into(),
                    ));
                }
                (_, Some(t)) if t.is_empty() => {
                    return Err(invalid(
                        "webhook returned invalid response.patchType of \"\"".into(),
                    ));
                }
                _ => {}
            }
        }
    } else {
        if patch_b64.is_some() {
            return Err(invalid(
                "validating webhook may not return response.patch".into(),
            ));
        }
        if patch_type.is_some() {
            return Err(invalid(
                "validating webhook may not return response.patchType".into(),
            ));
        }
    }
    let patch = match patch_b64 {
        Some(p) => Some(
            base64::engine::general_purpose::STANDARD
                .decode(p)
                .map_err(|e| format!("received undecodable patch in webhook response: {e}"))?,
        ),
        None => None,
    };
    Ok(HookResponse {
        allowed: resp
            .get("allowed")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        status: resp.get("status").cloned(),
        patch,
        patch_type: if v1 {
            patch_type
        } else {
            Some("JSONPatch".into())
        },
    })
}

pub(super) fn warnings_of(body: &[u8]) -> Vec<String> {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v.pointer("/response/warnings").cloned())
        .and_then(|w| w.as_array().cloned())
        .map(|a| {
            a.into_iter()
                .filter_map(|w| w.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

impl From<HookError> for ApiError {
    fn from(e: HookError) -> Self {
        match e {
            HookError::Calling(e) => ApiError::internal_error(e),
            HookError::Status(e) => e,
        }
    }
}

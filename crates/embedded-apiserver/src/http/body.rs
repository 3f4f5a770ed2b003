//! Request decoding: body (JSON, YAML, protobuf) and the options of writes and deletes from query and body.

use axum::body::Bytes;
use axum::http::{HeaderMap, header};
use serde_json::{Value, json};

use crate::admission::FieldValidation;
use crate::error::ApiError;
use crate::ops::{DeleteOpts, WriteOpts};
use crate::patch::PatchType;
use crate::query::{Query, truthy};

/// kube-apiserver's request body limit.
pub const MAX_BODY: usize = 3 * 1024 * 1024;

/// Decodes a request body by Content-Type.
pub(super) fn decode_body(
    headers: &HeaderMap,
    body: &Bytes,
    api_version: &str,
    kind_hint: &str,
) -> Result<Value, ApiError> {
    let ct = header_str(headers, header::CONTENT_TYPE);
    let base = ct.split(';').next().unwrap_or_default().trim();
    match base {
        "application/vnd.kubernetes.protobuf" => protobuf_body(body, api_version, kind_hint),
        "application/yaml" | "application/apply-patch+yaml" => decode_yaml_or_json(body),
        "" | "application/json" | "*/*" => serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("couldn't decode request body: {e}"))),
        b if PatchType::from_content_type(b).is_some() => serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}"))),
        other => Err(ApiError::unsupported_media_type(
            other,
            &[
                "application/json",
                "application/yaml",
                "application/vnd.kubernetes.protobuf",
            ],
        )),
    }
}

pub(super) fn decode_yaml_or_json(body: &Bytes) -> Result<Value, ApiError> {
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        return Ok(v);
    }
    let text = std::str::from_utf8(body)
        .map_err(|e| ApiError::bad_request(format!("couldn't decode request body: {e}")))?;
    serde_saphyr::from_str::<Value>(text)
        .map_err(|e| ApiError::bad_request(format!("couldn't decode request body: {e}")))
}

/// Protobuf request bodies (kubectl ≥1.32), decoded by [`protobuf`].
pub(super) fn protobuf_body(body: &[u8], api_version: &str, kind: &str) -> Result<Value, ApiError> {
    crate::protobuf::decode_with_default(body, Some((api_version, kind))).map_err(|e| match e {
        crate::protobuf::ProtoError::UnsupportedKind { .. } => ApiError::unsupported_media_type(
            "application/vnd.kubernetes.protobuf",
            &["application/json", "application/yaml"],
        ),
        other => ApiError::bad_request(format!("couldn't decode protobuf body: {other}")),
    })
}

pub(super) fn write_opts(q: &Query, headers: &HeaderMap) -> Result<WriteOpts, ApiError> {
    let dry_run = match q.get("dryRun").map(String::as_str) {
        None | Some("") => false,
        Some("All") => true,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "Invalid dryRun value: {other}; supported values: [All]"
            )));
        }
    };
    Ok(WriteOpts {
        dry_run,
        validation: FieldValidation::parse(q.get("fieldValidation").map(String::as_str))?,
        field_manager: q.get("fieldManager").cloned().filter(|s| !s.is_empty()),
        force: truthy(q, "force"),
        update_manager: Some(crate::field_manager::update_manager(
            q.get("fieldManager").map(String::as_str),
            header_str(headers, header::USER_AGENT),
        )),
        via_subresource: None,
        oracle: None,
    })
}

pub(super) fn delete_opts(body: &Bytes, q: &Query) -> Result<DeleteOpts, ApiError> {
    let b: Value = if body.is_empty() {
        json!({})
    } else {
        serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("couldn't decode DeleteOptions: {e}")))?
    };
    let dry_run = q.get("dryRun").is_some_and(|v| v == "All")
        || b.get("dryRun")
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(|v| v == "All"));
    let propagation = q
        .get("propagationPolicy")
        .cloned()
        .or_else(|| {
            b.get("propagationPolicy")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .or_else(
            || match b.get("orphanDependents").and_then(Value::as_bool) {
                Some(true) => Some("Orphan".to_string()),
                Some(false) => Some("Background".to_string()),
                None => None,
            },
        );
    if let Some(p) = &propagation
        && !matches!(p.as_str(), "Foreground" | "Background" | "Orphan")
    {
        return Err(ApiError::invalid(
            "meta.k8s.io",
            "DeleteOptions",
            "",
            vec![crate::error::StatusCause::new(
                "FieldValueNotSupported",
                "propagationPolicy",
                format!(
                    "Unsupported value: \"{p}\": supported values: \"Foreground\", \"Background\", \"Orphan\""
                ),
            )],
        ));
    }
    Ok(DeleteOpts {
        propagation,
        precondition_uid: b
            .pointer("/preconditions/uid")
            .and_then(Value::as_str)
            .map(str::to_string),
        precondition_rv: b
            .pointer("/preconditions/resourceVersion")
            .and_then(Value::as_str)
            .map(str::to_string),
        dry_run,
        oracle: None,
    })
}

pub(super) fn header_str(h: &HeaderMap, name: header::HeaderName) -> &str {
    h.get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

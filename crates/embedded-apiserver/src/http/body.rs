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
        "" | "application/json" | "*/*" => decode_json_object(body, kind_hint),
        b if PatchType::from_content_type(b).is_some() => serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}"))),
        _ => Err(ApiError::unsupported_media_type(&[
            "application/json",
            "application/yaml",
            "application/vnd.kubernetes.protobuf",
        ])),
    }
}

/// A JSON request body that must be an object, refused as kube's handlers refuse what its
/// decoder cannot read the apiVersion and kind of (`transformDecodeError`): `the object provided
/// is unrecognized (must be of type Widget): couldn't get version/kind; json parse error: <Go's
/// encoding/json error> (<the body's first 30 bytes>)`.
fn decode_json_object(body: &[u8], kind: &str) -> Result<Value, ApiError> {
    let why = match serde_json::from_slice::<Value>(body) {
        Ok(v @ Value::Object(_)) => return Ok(v),
        Ok(other) => format!(
            "json: cannot unmarshal {} into Go value of type struct {{ APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }}",
            go_json_type(&other)
        ),
        Err(e) => crate::gojson::syntax_error(body, &e),
    };
    Err(ApiError::bad_request(format!(
        "the object provided is unrecognized (must be of type {kind}): couldn't get version/kind; json parse error: {why} ({})",
        summarize_data(body, 30)
    )))
}

/// encoding/json's name of a JSON value's type in an UnmarshalTypeError.
fn go_json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// apiserver's `summarizeData`: an object's text, anything else in hex, cut at `max` bytes.
fn summarize_data(data: &[u8], max: usize) -> String {
    let cut = &data[..data.len().min(max)];
    let more = if data.len() > max { " ..." } else { "" };
    match data.first() {
        None => "<empty>".into(),
        Some(b'{') => format!("{}{more}", String::from_utf8_lossy(cut)),
        Some(_) => {
            let hex: String = cut.iter().map(|b| format!("{b:02x}")).collect();
            format!("{hex}{more}")
        }
    }
}

pub(super) fn decode_yaml_or_json(body: &Bytes) -> Result<Value, ApiError> {
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        return Ok(v);
    }
    let text = std::str::from_utf8(body)
        .map_err(|e| ApiError::bad_request(format!("couldn't decode request body: {e}")))?;
    serde_saphyr::from_str::<Value>(text).map_err(|e| {
        // kube's one-line wording around the parser's first line (the parser's text is
        // serde-saphyr's, not go-yaml's).
        let first = e.to_string();
        let first = first.lines().next().unwrap_or_default().trim();
        let first = first.strip_prefix("error: ").unwrap_or(first);
        ApiError::bad_request(format!(
            "error decoding YAML: error converting YAML to JSON: yaml: {first}"
        ))
    })
}

/// Protobuf request bodies (kubectl ≥1.32), decoded by [`protobuf`].
pub(super) fn protobuf_body(body: &[u8], api_version: &str, kind: &str) -> Result<Value, ApiError> {
    crate::protobuf::decode_with_default(body, Some((api_version, kind))).map_err(|e| match e {
        crate::protobuf::ProtoError::UnsupportedKind { .. } => {
            ApiError::unsupported_media_type(&["application/json", "application/yaml"])
        }
        other => ApiError::bad_request(format!("couldn't decode protobuf body: {other}")),
    })
}

/// The options of a write; `options_kind` names them in kube's validation errors
/// (`CreateOptions`, `UpdateOptions`, `PatchOptions`).
pub(super) fn write_opts(
    q: &Query,
    headers: &HeaderMap,
    options_kind: &str,
) -> Result<WriteOpts, ApiError> {
    let invalid = |field: &str, message: String| {
        ApiError::invalid(
            "meta.k8s.io",
            options_kind,
            "",
            vec![crate::error::StatusCause::new(
                "FieldValueNotSupported",
                field,
                message,
            )],
        )
    };
    let dry_run = match q.get("dryRun").map(String::as_str) {
        None | Some("") => false,
        Some("All") => true,
        Some(other) => {
            return Err(invalid(
                "dryRun",
                format!(
                    "Unsupported value: [{}]: supported values: \"All\"",
                    crate::schema::go_quote(other)
                ),
            ));
        }
    };
    let validation = match q.get("fieldValidation").map(String::as_str) {
        None | Some("" | "Warn" | "Strict" | "Ignore") => {
            FieldValidation::parse(q.get("fieldValidation").map(String::as_str))?
        }
        Some(other) => {
            return Err(invalid(
                "fieldValidation",
                format!(
                    "Unsupported value: {}: supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"",
                    crate::schema::go_quote(other)
                ),
            ));
        }
    };
    Ok(WriteOpts {
        dry_run,
        validation,
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

pub(super) fn delete_opts(
    headers: &HeaderMap,
    body: &Bytes,
    q: &Query,
) -> Result<DeleteOpts, ApiError> {
    let ct = header_str(headers, header::CONTENT_TYPE);
    let protobuf = ct.split(';').next().unwrap_or_default().trim()
        == "application/vnd.kubernetes.protobuf"
        || body.starts_with(crate::protobuf::MAGIC);
    let b: Value = if body.is_empty() {
        json!({})
    } else if protobuf {
        crate::protobuf::decode_with_default(body, Some(("meta.k8s.io/v1", "DeleteOptions")))
            .map_err(|e| ApiError::bad_request(format!("couldn't decode DeleteOptions: {e}")))?
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

//! A CRD's `spec.conversion` (apiextensions-apiserver): its webhook client configuration, its
//! validation, and whether an object needs converting; the calls are `conversion.rs`.

use serde_json::Value;

use super::client::ClientConfig;
use crate::error::StatusCause;

/// A CRD's webhook conversion configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversionWebhook {
    /// The CRD name (`<plural>.<group>`), for observers.
    pub crd: String,
    pub review_versions: Vec<String>,
    /// The client configuration, or why it cannot be used.
    pub client: Result<ClientConfig, String>,
}

impl ConversionWebhook {
    /// The webhook conversion of a CRD object (None for strategy None).
    pub fn from_crd(crd: &Value) -> Option<Self> {
        let conv = crd.pointer("/spec/conversion")?;
        if conv.get("strategy").and_then(Value::as_str) != Some("Webhook") {
            return None;
        }
        let hook = conv.get("webhook").cloned().unwrap_or(Value::Null);
        let client = match hook.get("clientConfig") {
            Some(cc) => ClientConfig::from_value(cc),
            None => Err("webhook clientConfig is missing".into()),
        };
        Some(Self {
            crd: crd
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            review_versions: crate::meta::strings_at(&hook, "/conversionReviewVersions"),
            client,
        })
    }
}

/// apiextensions validation of `spec.conversion` (field paths as kube's v1 API reports them).
pub fn validate_crd(crd: &Value, creating: bool) -> Vec<StatusCause> {
    let mut causes = Vec::new();
    let Some(conv) = crd.pointer("/spec/conversion").filter(|c| !c.is_null()) else {
        return causes;
    };
    let strategy = conv
        .get("strategy")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let hook = conv.get("webhook").filter(|w| !w.is_null());
    match strategy {
        "None" => {
            if let Some(h) = hook {
                if h.get("clientConfig").is_some_and(|c| !c.is_null()) {
                    causes.push(StatusCause::new(
                        "FieldValueForbidden",
                        "spec.conversion.webhookClientConfig",
                        "Forbidden: should not be set when strategy is not set to Webhook",
                    ));
                }
                if h.get("conversionReviewVersions")
                    .is_some_and(|c| !c.is_null())
                {
                    causes.push(StatusCause::new(
                        "FieldValueForbidden",
                        "spec.conversion.conversionReviewVersions",
                        "Forbidden: should not be set when strategy is not set to Webhook",
                    ));
                }
            }
        }
        "Webhook" => {
            if crd.pointer("/spec/preserveUnknownFields") == Some(&Value::Bool(true)) {
                causes.push(StatusCause::new(
                    "FieldValueInvalid",
                    "spec.conversion.strategy",
                    "Invalid value: \"Webhook\": must be None if spec.preserveUnknownFields is true",
                ));
            }
            match hook
                .and_then(|h| h.get("clientConfig"))
                .filter(|c| !c.is_null())
            {
                None => causes.push(StatusCause::new(
                    "FieldValueRequired",
                    "spec.conversion.webhookClientConfig",
                    "Required value: required when strategy is set to Webhook",
                )),
                Some(cc) => causes.extend(super::config::validate_client_config(
                    cc,
                    "spec.conversion.webhookClientConfig",
                )),
            }
            let versions: Vec<&str> = hook
                .and_then(|h| h.get("conversionReviewVersions"))
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let field = "spec.conversion.conversionReviewVersions";
            if versions.is_empty() {
                causes.push(StatusCause::new(
                    "FieldValueRequired",
                    field,
                    "Required value",
                ));
            } else {
                for (i, v) in versions.iter().enumerate() {
                    if versions[..i].contains(v) {
                        causes.push(StatusCause::new(
                            "FieldValueDuplicate",
                            &format!("{field}[{i}]"),
                            format!("Duplicate value: \"{v}\""),
                        ));
                    }
                }
                if creating && !versions.iter().any(|v| *v == "v1" || *v == "v1beta1") {
                    causes.push(super::client::unsupported_review_versions(field, &versions));
                }
            }
        }
        other => causes.push(StatusCause::new(
            "FieldValueNotSupported",
            "spec.conversion.strategy",
            format!("Unsupported value: \"{other}\": supported values: \"None\", \"Webhook\""),
        )),
    }
    causes
}

/// `group/version, Kind=Kind` (schema.GroupVersionKind.String()).
pub fn gvk_string(api_version: &str, kind: &str) -> String {
    match api_version.split_once('/') {
        Some((g, v)) => format!("{g}/{v}, Kind={kind}"),
        None => format!("/{api_version}, Kind={kind}"),
    }
}

/// Whether `obj` must be converted to reach `api_version` (empty objects are converted
/// locally).
pub fn needs_conversion(obj: &Value, api_version: &str) -> bool {
    obj.get("apiVersion").and_then(Value::as_str) != Some(api_version)
}

//! `admissionregistration.k8s.io/v1` Mutating/ValidatingWebhookConfiguration: v1 defaulting
//! (`pkg/apis/admissionregistration/v1/defaults.go`), API validation
//! (`pkg/apis/admissionregistration/validation`) with kube's messages, and the parsed form the
//! dispatcher matches requests against.

use std::sync::Arc;

use serde_json::{Value, json};

use super::client::ClientConfig;
use crate::error::StatusCause;
use crate::selector::LabelSelector;

pub const GROUP: &str = "admissionregistration.k8s.io";
pub const MUTATING: &str = "mutatingwebhookconfigurations";
pub const VALIDATING: &str = "validatingwebhookconfigurations";

/// Whether a kind is one of the two webhook configuration kinds.
pub fn is_config_kind(kind: &str) -> bool {
    matches!(
        kind,
        "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration"
    )
}

/// One `rules[]` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub operations: Vec<String>,
    pub api_groups: Vec<String>,
    pub api_versions: Vec<String>,
    pub resources: Vec<String>,
    /// `Cluster`, `Namespaced` or `*`.
    pub scope: String,
}

/// One parsed webhook of a configuration.
#[derive(Debug, Clone)]
pub struct Webhook {
    pub configuration: String,
    pub name: String,
    pub mutating: bool,
    pub client: ClientConfig,
    pub rules: Vec<Rule>,
    pub fail_open: bool,
    pub match_exact: bool,
    pub namespace_selector: Option<LabelSelector>,
    pub object_selector: Option<LabelSelector>,
    /// `sideEffects` (None when absent).
    pub side_effects: Option<String>,
    pub timeout_seconds: u64,
    pub review_versions: Vec<String>,
    pub reinvoke_if_needed: bool,
    /// `matchConditions` as (name, expression).
    pub match_conditions: Vec<(String, String)>,
}

/// Every webhook of the stored configurations, mutating sorted by configuration name then list
/// order (kube's `sort.SliceStable(configurations, ByName)`); validating likewise.
#[derive(Debug, Clone, Default)]
pub struct Configs {
    pub mutating: Vec<Arc<Webhook>>,
    pub validating: Vec<Arc<Webhook>>,
}

impl Configs {
    pub fn is_empty(&self) -> bool {
        self.mutating.is_empty() && self.validating.is_empty()
    }

    /// Parses stored configurations (`(mutating, object)`), already in name order.
    pub fn parse<'a>(objects: impl Iterator<Item = (bool, &'a Value)>) -> Self {
        let mut out = Configs::default();
        for (mutating, obj) in objects {
            let cfg_name = obj
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            for w in obj
                .get("webhooks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(parsed) = parse_webhook(cfg_name, mutating, w) {
                    let list = if mutating {
                        &mut out.mutating
                    } else {
                        &mut out.validating
                    };
                    list.push(Arc::new(parsed));
                }
            }
        }
        out
    }
}

/// The strings of the array at key `k` of `v`.
fn strings(v: &Value, k: &str) -> Vec<String> {
    crate::meta::strings_at(v, &format!("/{k}"))
}

fn selector(v: Option<&Value>) -> Option<LabelSelector> {
    let v = v.filter(|s| s.as_object().is_some_and(|m| !m.is_empty()))?;
    // Validation refused unparsable selectors; one that still fails matches nothing.
    Some(LabelSelector::from_label_selector(v).unwrap_or_else(|_| LabelSelector::nothing()))
}

fn parse_webhook(configuration: &str, mutating: bool, w: &Value) -> Option<Webhook> {
    let client = ClientConfig::from_value(w.get("clientConfig")?).ok()?;
    let s = |k: &str| w.get(k).and_then(Value::as_str);
    Some(Webhook {
        configuration: configuration.to_string(),
        name: s("name")?.to_string(),
        mutating,
        client,
        rules: w
            .get("rules")
            .and_then(Value::as_array)
            .map(|rs| {
                rs.iter()
                    .map(|r| Rule {
                        operations: strings(r, "operations"),
                        api_groups: strings(r, "apiGroups"),
                        api_versions: strings(r, "apiVersions"),
                        resources: strings(r, "resources"),
                        scope: r
                            .get("scope")
                            .and_then(Value::as_str)
                            .unwrap_or("*")
                            .to_string(),
                    })
                    .collect()
            })
            .unwrap_or_default(),
        fail_open: s("failurePolicy") == Some("Ignore"),
        match_exact: s("matchPolicy") == Some("Exact"),
        namespace_selector: selector(w.get("namespaceSelector")),
        object_selector: selector(w.get("objectSelector")),
        side_effects: s("sideEffects").map(str::to_string),
        timeout_seconds: w
            .get("timeoutSeconds")
            .and_then(Value::as_u64)
            .unwrap_or(10)
            .clamp(1, 30),
        review_versions: strings(w, "admissionReviewVersions"),
        reinvoke_if_needed: mutating && s("reinvocationPolicy") == Some("IfNeeded"),
        match_conditions: w
            .get("matchConditions")
            .and_then(Value::as_array)
            .map(|mc| {
                mc.iter()
                    .map(|c| {
                        (
                            c.get("name")
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                                .to_string(),
                            c.get("expression")
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                                .to_string(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default(),
    })
}

/// v1 defaulting of a configuration object (on every write, as decoding does in kube).
pub fn default(obj: &mut Value, mutating: bool) {
    let Some(hooks) = obj.get_mut("webhooks").and_then(Value::as_array_mut) else {
        return;
    };
    for w in hooks.iter_mut() {
        let Some(m) = w.as_object_mut() else { continue };
        m.entry("failurePolicy").or_insert(json!("Fail"));
        m.entry("matchPolicy").or_insert(json!("Equivalent"));
        m.entry("namespaceSelector").or_insert(json!({}));
        m.entry("objectSelector").or_insert(json!({}));
        m.entry("timeoutSeconds").or_insert(json!(10));
        if mutating {
            m.entry("reinvocationPolicy").or_insert(json!("Never"));
        }
        if let Some(rules) = m.get_mut("rules").and_then(Value::as_array_mut) {
            for r in rules {
                if let Some(r) = r.as_object_mut() {
                    r.entry("scope").or_insert(json!("*"));
                }
            }
        }
        if let Some(svc) = m
            .get_mut("clientConfig")
            .and_then(|c| c.get_mut("service"))
            .and_then(Value::as_object_mut)
        {
            svc.entry("port").or_insert(json!(443));
        }
    }
}

const OPERATIONS: [&str; 5] = ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"];

fn quoted_list(values: &[&str]) -> String {
    values
        .iter()
        .map(|v| format!("\"{v}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

fn unsupported(field: &str, value: &str, supported: &[&str]) -> StatusCause {
    StatusCause::new(
        "FieldValueNotSupported",
        field,
        format!(
            "Unsupported value: \"{value}\": supported values: {}",
            quoted_list(supported)
        ),
    )
}

fn required(field: &str, detail: &str) -> StatusCause {
    let msg = if detail.is_empty() {
        "Required value".to_string()
    } else {
        format!("Required value: {detail}")
    };
    StatusCause::new("FieldValueRequired", field, msg)
}

fn invalid(field: &str, value: &str, detail: &str) -> StatusCause {
    StatusCause::new(
        "FieldValueInvalid",
        field,
        format!("Invalid value: \"{value}\": {detail}"),
    )
}

fn is_dns1123_subdomain(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && l.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        })
}

/// Validation causes of a configuration object (after [`default`]).
pub fn validate(obj: &Value, mutating: bool) -> Vec<StatusCause> {
    let mut causes = Vec::new();
    let Some(hooks) = obj.get("webhooks") else {
        return causes;
    };
    let Some(hooks) = hooks.as_array() else {
        causes.push(StatusCause::new(
            "FieldValueTypeInvalid",
            "webhooks",
            "Invalid value: must be a list",
        ));
        return causes;
    };
    let mut names: Vec<&str> = Vec::new();
    for (i, w) in hooks.iter().enumerate() {
        let p = format!("webhooks[{i}]");
        let name = w.get("name").and_then(Value::as_str).unwrap_or_default();
        if name.is_empty() {
            causes.push(required(&format!("{p}.name"), ""));
        } else if !is_dns1123_subdomain(name) {
            causes.push(invalid(
                &format!("{p}.name"),
                name,
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            ));
        } else if name.split('.').count() < 3 {
            causes.push(invalid(
                &format!("{p}.name"),
                name,
                "should be a domain with at least three segments separated by dots",
            ));
        } else if names.contains(&name) {
            causes.push(StatusCause::new(
                "FieldValueDuplicate",
                &format!("{p}.name"),
                format!("Duplicate value: \"{name}\""),
            ));
        }
        names.push(name);
        for (ri, r) in w
            .get("rules")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let rp = format!("{p}.rules[{ri}]");
            let ops = strings(r, "operations");
            if ops.is_empty() {
                causes.push(required(&format!("{rp}.operations"), ""));
            }
            for (oi, op) in ops.iter().enumerate() {
                if !OPERATIONS.contains(&op.as_str()) {
                    causes.push(unsupported(
                        &format!("{rp}.operations[{oi}]"),
                        op,
                        &OPERATIONS,
                    ));
                }
            }
            for (k, what) in [("apiGroups", "apiGroups"), ("apiVersions", "apiVersions")] {
                let vals = strings(r, k);
                if vals.is_empty() {
                    causes.push(required(&format!("{rp}.{what}"), ""));
                } else if vals.len() > 1 && vals.iter().any(|v| v == "*") {
                    causes.push(invalid(
                        &format!("{rp}.{what}"),
                        &format!("{vals:?}"),
                        "if '*' is present, must not specify other values",
                    ));
                }
            }
            let res = strings(r, "resources");
            if res.is_empty() {
                causes.push(required(&format!("{rp}.resources"), ""));
            }
            for (j, re) in res.iter().enumerate() {
                if re.is_empty() {
                    causes.push(required(&format!("{rp}.resources[{j}]"), ""));
                }
            }
            if let Some(scope) = r.get("scope").and_then(Value::as_str)
                && !matches!(scope, "*" | "Cluster" | "Namespaced")
            {
                causes.push(unsupported(
                    &format!("{rp}.scope"),
                    scope,
                    &["*", "Cluster", "Namespaced"],
                ));
            }
        }
        match w.get("clientConfig") {
            None => causes.push(required(&format!("{p}.clientConfig"), "")),
            Some(cc) => causes.extend(validate_client_config(cc, &format!("{p}.clientConfig"))),
        }
        let versions = strings(w, "admissionReviewVersions");
        if versions.is_empty() {
            causes.push(required(
                &format!("{p}.admissionReviewVersions"),
                "must specify one of v1, v1beta1",
            ));
        } else if !versions.iter().any(|v| v == "v1" || v == "v1beta1") {
            causes.push(super::client::unsupported_review_versions(
                &format!("{p}.admissionReviewVersions"),
                &versions,
            ));
        }
        match w.get("sideEffects").and_then(Value::as_str) {
            None => causes.push(required(
                &format!("{p}.sideEffects"),
                "must specify one of None, NoneOnDryRun",
            )),
            Some("None" | "NoneOnDryRun") => {}
            Some(other) => causes.push(unsupported(
                &format!("{p}.sideEffects"),
                other,
                &["None", "NoneOnDryRun"],
            )),
        }
        if let Some(t) = w.get("timeoutSeconds").and_then(Value::as_i64)
            && !(1..=30).contains(&t)
        {
            causes.push(StatusCause::new(
                "FieldValueInvalid",
                &format!("{p}.timeoutSeconds"),
                format!("Invalid value: {t}: the timeout value must be between 1 and 30 seconds"),
            ));
        }
        for (k, allowed) in [
            ("failurePolicy", &["Fail", "Ignore"][..]),
            ("matchPolicy", &["Equivalent", "Exact"][..]),
        ] {
            if let Some(v) = w.get(k).and_then(Value::as_str)
                && !allowed.contains(&v)
            {
                causes.push(unsupported(&format!("{p}.{k}"), v, allowed));
            }
        }
        if mutating
            && let Some(v) = w.get("reinvocationPolicy").and_then(Value::as_str)
            && !matches!(v, "Never" | "IfNeeded")
        {
            causes.push(unsupported(
                &format!("{p}.reinvocationPolicy"),
                v,
                &["IfNeeded", "Never"],
            ));
        }
        for k in ["namespaceSelector", "objectSelector"] {
            if let Some(sel) = w.get(k).filter(|s| !s.is_null())
                && let Err(e) = LabelSelector::from_label_selector(sel)
            {
                causes.push(StatusCause::new(
                    "FieldValueInvalid",
                    &format!("{p}.{k}"),
                    format!("Invalid value: {sel}: {}", e.0),
                ));
            }
        }
        let conditions = w
            .get("matchConditions")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if conditions.len() > 64 {
            causes.push(StatusCause::new(
                "FieldValueTooMany",
                &format!("{p}.matchConditions"),
                format!("Too many: {}: must have at most 64 items", conditions.len()),
            ));
        }
        let mut cond_names: Vec<String> = Vec::new();
        for (ci, c) in conditions.iter().enumerate() {
            let cp = format!("{p}.matchConditions[{ci}]");
            let cname = c.get("name").and_then(Value::as_str).unwrap_or_default();
            if cname.is_empty() {
                causes.push(required(&format!("{cp}.name"), ""));
            } else if cond_names.iter().any(|n| n == cname) {
                causes.push(StatusCause::new(
                    "FieldValueDuplicate",
                    &format!("{cp}.name"),
                    format!("Duplicate value: \"{cname}\""),
                ));
            }
            cond_names.push(cname.to_string());
            let expr = c
                .get("expression")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if expr.trim().is_empty() {
                causes.push(required(&format!("{cp}.expression"), ""));
            } else if let Err(e) = crate::schema::cel::parse(expr) {
                causes.push(invalid(
                    &format!("{cp}.expression"),
                    expr,
                    &format!("compilation failed: ERROR: <input>: {e}"),
                ));
            }
        }
    }
    causes
}

/// `clientConfig` validation shared with CRD conversion (`prefix` is the field path).
pub fn validate_client_config(cc: &Value, prefix: &str) -> Vec<StatusCause> {
    let mut causes = Vec::new();
    let url = cc.get("url").and_then(Value::as_str);
    let service = cc.get("service").filter(|s| !s.is_null());
    match (url, service) {
        (Some(_), Some(_)) | (None, None) => {
            causes.push(required(
                prefix,
                "exactly one of url or service is required",
            ));
        }
        (Some(url), None) => {
            let field = format!("{prefix}.url");
            match url.parse::<http::Uri>() {
                Err(e) => causes.push(invalid(&field, url, &e.to_string())),
                Ok(u) => {
                    if u.scheme_str() != Some("https") {
                        causes.push(invalid(
                            &field,
                            url,
                            "'https' is the only allowed URL scheme",
                        ));
                    }
                    if u.host().is_none_or(str::is_empty) {
                        causes.push(invalid(&field, url, "host must be specified"));
                    }
                    if u.authority().is_some_and(|a| a.as_str().contains('@')) {
                        causes.push(invalid(
                            &field,
                            url,
                            "user information is not permitted in the URL",
                        ));
                    }
                    if u.query().is_some() {
                        causes.push(invalid(&field, url, "query parameters are not allowed"));
                    }
                }
            }
            if url.contains('#') {
                causes.push(invalid(
                    &field,
                    url,
                    "fragments are not permitted in the URL",
                ));
            }
        }
        (None, Some(svc)) => {
            let sp = format!("{prefix}.service");
            for k in ["name", "namespace"] {
                if svc
                    .get(k)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .is_empty()
                {
                    causes.push(required(
                        &format!("{sp}.{k}"),
                        &format!("service {k} is required"),
                    ));
                }
            }
            if let Some(path) = svc.get("path").and_then(Value::as_str)
                && !path.is_empty()
                && !path.starts_with('/')
            {
                causes.push(invalid(
                    &format!("{sp}.path"),
                    path,
                    "must start with a '/'",
                ));
            }
            if let Some(port) = svc.get("port").and_then(Value::as_i64)
                && !(1..=65535).contains(&port)
            {
                causes.push(StatusCause::new(
                    "FieldValueInvalid",
                    &format!("{sp}.port"),
                    format!("Invalid value: {port}: port is not valid: must be between 1 and 65535, inclusive"),
                ));
            }
        }
    }
    if let Some(b) = cc.get("caBundle").and_then(Value::as_str)
        && base64::Engine::decode(&base64::engine::general_purpose::STANDARD, b).is_err()
    {
        causes.push(StatusCause::new(
            "FieldValueInvalid",
            &format!("{prefix}.caBundle"),
            "Invalid value: \"...\": illegal base64 data",
        ));
    }
    causes
}

#[cfg(test)]
mod tests;

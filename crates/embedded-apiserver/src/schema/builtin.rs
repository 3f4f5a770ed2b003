//! Content validation of the built-in kinds the emulator serves (kube `pkg/apis/core/validation`
//! and `pkg/apis/rbac/validation`): Secret and ConfigMap keys, sizes and Secret types; RBAC
//! rules, role references and subjects. Metadata is validated separately
//! ([`super::validate_object_meta_for_kind`]). Values are the v1 JSON (defaults applied).

use super::cause::Cause;
use super::names;
use super::validate::json_eq;
use base64::Engine;
use regex::Regex;
use serde_json::Value;
use std::sync::LazyLock;

/// `core.MaxSecretSize`: Secret data and ConfigMap data+binaryData budget.
pub const MAX_SECRET_SIZE: usize = 1024 * 1024;
const RBAC_GROUP: &str = "rbac.authorization.k8s.io";
const CONFIG_MAP_KEY_FMT: &str = "[-._a-zA-Z0-9]+";

static CONFIG_MAP_KEY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!("^{CONFIG_MAP_KEY_FMT}$")).expect("constant config key regex compiles")
});

/// `IsConfigMapKey`.
pub fn config_map_key(key: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if key.len() > names::DNS1123_SUBDOMAIN_MAX {
        errs.push(format!(
            "must be no more than {} characters",
            names::DNS1123_SUBDOMAIN_MAX
        ));
    }
    if !CONFIG_MAP_KEY.is_match(key) {
        errs.push(format!(
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '{CONFIG_MAP_KEY_FMT}')"
        ));
    }
    if key == "." || key == ".." {
        errs.push(format!("must not be '{key}'"));
    } else if key.starts_with("..") {
        errs.push("must not start with '..'".to_string());
    }
    errs
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn map_of<'a>(v: &'a Value, key: &str) -> Vec<(&'a String, &'a Value)> {
    v.get(key)
        .and_then(Value::as_object)
        .map(|m| m.iter().collect())
        .unwrap_or_default()
}

fn list_of<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

fn decoded_len(v: &Value) -> usize {
    let s = v.as_str().unwrap_or("");
    base64::engine::general_purpose::STANDARD
        .decode(s)
        .map_or(s.len() / 4 * 3, |b| b.len())
}

/// Validates the content of a built-in object of `kind` (empty for kinds without rules).
pub fn validate_builtin(kind: &str, obj: &Value) -> Vec<Cause> {
    match kind {
        "Secret" => validate_secret(obj),
        "ConfigMap" => validate_config_map(obj),
        "Role" => validate_rules(obj, true),
        "ClusterRole" => validate_cluster_role(obj),
        "RoleBinding" => validate_binding(obj, true),
        "ClusterRoleBinding" => validate_binding(obj, false),
        "Job" => super::job::validate(obj),
        other => super::workloads::validate(other, obj),
    }
}

/// Update rules: [`validate_builtin`] on `new`, plus what may not change from `old`
/// (Secret `type`, immutable Secret/ConfigMap contents, binding `roleRef`).
pub fn validate_builtin_update(kind: &str, new: &Value, old: &Value) -> Vec<Cause> {
    if matches!(
        kind,
        "Service"
            | "Deployment"
            | "DaemonSet"
            | "MutatingWebhookConfiguration"
            | "ValidatingWebhookConfiguration"
    ) {
        return super::workloads::validate_update(kind, new, old);
    }
    let mut out = validate_builtin(kind, new);
    match kind {
        "Secret" | "ConfigMap" => {
            if kind == "Secret" && str_of(new, "type") != str_of(old, "type") {
                out.push(Cause::invalid(
                    "type",
                    &Value::String(str_of(new, "type").to_string()),
                    "field is immutable",
                ));
            }
            if old.get("immutable").and_then(Value::as_bool) == Some(true) {
                let fields: &[&str] = if kind == "Secret" {
                    &["data"]
                } else {
                    &["data", "binaryData"]
                };
                for f in fields {
                    let a = new.get(*f).cloned().unwrap_or(Value::Null);
                    let b = old.get(*f).cloned().unwrap_or(Value::Null);
                    if !json_eq(&a, &b) {
                        out.push(Cause::forbidden(
                            f,
                            "field is immutable when `immutable` is set",
                        ));
                    }
                }
                if new.get("immutable").and_then(Value::as_bool) != Some(true) {
                    out.push(Cause::forbidden(
                        "immutable",
                        "field is immutable when `immutable` is set",
                    ));
                }
            }
        }
        "Job" => return super::job::validate_update(new, old),
        "RoleBinding" | "ClusterRoleBinding" => {
            let a = new.get("roleRef").cloned().unwrap_or(Value::Null);
            let b = old.get("roleRef").cloned().unwrap_or(Value::Null);
            if !json_eq(&a, &b) {
                out.push(Cause::invalid("roleRef", &a, "cannot change roleRef"));
            }
        }
        _ => {}
    }
    out
}

fn validate_secret(obj: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    let data = map_of(obj, "data");
    let mut total = 0;
    for (k, v) in &data {
        for msg in config_map_key(k) {
            out.push(Cause::invalid(
                &format!("data[{k}]"),
                &Value::String((*k).clone()),
                &msg,
            ));
        }
        total += decoded_len(v);
    }
    if total > MAX_SECRET_SIZE {
        out.push(Cause::new_too_long_bytes("data", MAX_SECRET_SIZE));
    }
    let has = |k: &str| data.iter().any(|(key, _)| key.as_str() == k);
    let required = |k: &str| Cause::required(&format!("data[{k}]"), "");
    match str_of(obj, "type") {
        "kubernetes.io/service-account-token" => {
            let annotated = obj
                .get("metadata")
                .and_then(|m| m.get("annotations"))
                .and_then(|a| a.get("kubernetes.io/service-account.name"))
                .and_then(Value::as_str)
                .is_some_and(|s| !s.is_empty());
            if !annotated {
                out.push(Cause::required(
                    "metadata.annotations[kubernetes.io/service-account.name]",
                    "",
                ));
            }
        }
        "kubernetes.io/dockercfg" | "kubernetes.io/dockerconfigjson" => {
            let key = if str_of(obj, "type") == "kubernetes.io/dockercfg" {
                ".dockercfg"
            } else {
                ".dockerconfigjson"
            };
            match data.iter().find(|(k, _)| k.as_str() == key) {
                None => out.push(required(key)),
                Some((_, v)) => {
                    let bytes = base64::engine::general_purpose::STANDARD
                        .decode(v.as_str().unwrap_or(""))
                        .unwrap_or_default();
                    if let Err(e) = serde_json::from_slice::<serde_json::Map<String, Value>>(&bytes)
                    {
                        out.push(Cause::invalid(
                            &format!("data[{key}]"),
                            &Value::String("<secret contents redacted>".into()),
                            &e.to_string(),
                        ));
                    }
                }
            }
        }
        "kubernetes.io/basic-auth" if !has("username") && !has("password") => {
            out.push(required("username"));
            out.push(required("password"));
        }
        "kubernetes.io/ssh-auth" => {
            let present = data
                .iter()
                .any(|(k, v)| k.as_str() == "ssh-privatekey" && decoded_len(v) > 0);
            if !present {
                out.push(required("ssh-privatekey"));
            }
        }
        "kubernetes.io/tls" => {
            for k in ["tls.crt", "tls.key"] {
                if !has(k) {
                    out.push(required(k));
                }
            }
        }
        _ => {}
    }
    out
}

fn validate_config_map(obj: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    let data = map_of(obj, "data");
    let binary = map_of(obj, "binaryData");
    let mut total = 0;
    for (k, v) in &data {
        let key = Value::String((*k).clone());
        for msg in config_map_key(k) {
            out.push(Cause::invalid(&format!("data[{k}]"), &key, &msg));
        }
        if binary.iter().any(|(b, _)| b == k) {
            out.push(Cause::invalid(
                &format!("data[{k}]"),
                &key,
                "duplicate of key present in binaryData",
            ));
        }
        total += v.as_str().map_or(0, str::len);
    }
    for (k, v) in &binary {
        for msg in config_map_key(k) {
            out.push(Cause::invalid(
                &format!("binaryData[{k}]"),
                &Value::String((*k).clone()),
                &msg,
            ));
        }
        total += decoded_len(v);
    }
    if total > MAX_SECRET_SIZE {
        out.push(Cause::new_too_long_bytes("", MAX_SECRET_SIZE));
    }
    out
}

fn validate_rules(obj: &Value, namespaced: bool) -> Vec<Cause> {
    let mut out = Vec::new();
    for (i, rule) in list_of(obj, "rules").iter().enumerate() {
        let path = format!("rules[{i}]");
        let non_empty = |k: &str| !list_of(rule, k).is_empty();
        if !non_empty("verbs") {
            out.push(Cause::required(
                &format!("{path}.verbs"),
                "verbs must contain at least one value",
            ));
        }
        if non_empty("nonResourceURLs") {
            let urls = rule.get("nonResourceURLs").cloned().unwrap_or(Value::Null);
            if namespaced {
                out.push(Cause::invalid(
                    &format!("{path}.nonResourceURLs"),
                    &urls,
                    "namespaced rules cannot apply to non-resource URLs",
                ));
            }
            if non_empty("apiGroups") || non_empty("resources") || non_empty("resourceNames") {
                out.push(Cause::invalid(
                    &format!("{path}.nonResourceURLs"),
                    &urls,
                    "rules cannot apply to both regular resources and non-resource URLs",
                ));
            }
            continue;
        }
        if !non_empty("apiGroups") {
            out.push(Cause::required(
                &format!("{path}.apiGroups"),
                "resource rules must supply at least one api group",
            ));
        }
        if !non_empty("resources") {
            out.push(Cause::required(
                &format!("{path}.resources"),
                "resource rules must supply at least one resource",
            ));
        }
    }
    out
}

fn validate_cluster_role(obj: &Value) -> Vec<Cause> {
    let mut out = validate_rules(obj, false);
    if let Some(agg) = obj.get("aggregationRule").filter(|a| !a.is_null()) {
        let selectors = list_of(agg, "clusterRoleSelectors");
        if selectors.is_empty() {
            out.push(Cause::required(
                "aggregationRule.clusterRoleSelectors",
                "at least one clusterRoleSelector required if aggregationRule is non-nil",
            ));
        }
        for (i, sel) in selectors.iter().enumerate() {
            if let Err(e) = super::super::selector::LabelSelector::from_label_selector(sel) {
                out.push(Cause::invalid(
                    &format!("aggregationRule.clusterRoleSelectors[{i}]"),
                    sel,
                    &e.to_string(),
                ));
            }
        }
    }
    out
}

fn supported(values: &[&str]) -> Vec<String> {
    values.iter().map(|s| s.to_string()).collect()
}

fn validate_binding(obj: &Value, namespaced: bool) -> Vec<Cause> {
    let mut out = Vec::new();
    let role_ref = obj.get("roleRef").cloned().unwrap_or(Value::Null);
    let api_group = str_of(&role_ref, "apiGroup");
    if api_group != RBAC_GROUP {
        out.push(Cause::not_supported(
            "roleRef.apiGroup",
            &Value::String(api_group.to_string()),
            &supported(&[RBAC_GROUP]),
        ));
    }
    let kind = str_of(&role_ref, "kind");
    let kinds: &[&str] = if namespaced {
        &["Role", "ClusterRole"]
    } else {
        &["ClusterRole"]
    };
    if !kinds.contains(&kind) {
        out.push(Cause::not_supported(
            "roleRef.kind",
            &Value::String(kind.to_string()),
            &supported(kinds),
        ));
    }
    let name = str_of(&role_ref, "name");
    if name.is_empty() {
        out.push(Cause::required("roleRef.name", ""));
    } else if name == "." || name == ".." || name.contains('/') || name.contains('%') {
        let msg = if name == "." || name == ".." {
            format!("may not be '{name}'")
        } else if name.contains('/') {
            "may not contain '/'".to_string()
        } else {
            "may not contain '%'".to_string()
        };
        out.push(Cause::invalid(
            "roleRef.name",
            &Value::String(name.to_string()),
            &msg,
        ));
    }
    for (i, subject) in list_of(obj, "subjects").iter().enumerate() {
        out.extend(validate_subject(
            subject,
            namespaced,
            &format!("subjects[{i}]"),
        ));
    }
    out
}

fn validate_subject(subject: &Value, namespaced: bool, path: &str) -> Vec<Cause> {
    let mut out = Vec::new();
    let name = str_of(subject, "name");
    if name.is_empty() {
        out.push(Cause::required(&format!("{path}.name"), ""));
    }
    let api_group = str_of(subject, "apiGroup");
    match str_of(subject, "kind") {
        "ServiceAccount" => {
            if !name.is_empty() {
                for msg in names::dns1123_subdomain(name) {
                    out.push(Cause::invalid(
                        &format!("{path}.name"),
                        &Value::String(name.to_string()),
                        &msg,
                    ));
                }
            }
            if !api_group.is_empty() {
                out.push(Cause::not_supported(
                    &format!("{path}.apiGroup"),
                    &Value::String(api_group.to_string()),
                    &supported(&[""]),
                ));
            }
            if !namespaced && str_of(subject, "namespace").is_empty() {
                out.push(Cause::required(&format!("{path}.namespace"), ""));
            }
        }
        "User" | "Group" => {
            if api_group != RBAC_GROUP {
                out.push(Cause::not_supported(
                    &format!("{path}.apiGroup"),
                    &Value::String(api_group.to_string()),
                    &supported(&[RBAC_GROUP]),
                ));
            }
        }
        other => out.push(Cause::not_supported(
            &format!("{path}.kind"),
            &Value::String(other.to_string()),
            &supported(&["ServiceAccount", "User", "Group"]),
        )),
    }
    out
}

/// v1 defaulting of RBAC subjects: `User`/`Group` subjects without `apiGroup` get
/// `rbac.authorization.k8s.io` (`SetDefaults_Subject`). Call before [`validate_builtin`].
pub fn default_rbac_subjects(obj: &mut Value) {
    if let Some(subjects) = obj.get_mut("subjects").and_then(Value::as_array_mut) {
        for s in subjects {
            let kind = str_of(s, "kind").to_string();
            if matches!(kind.as_str(), "User" | "Group")
                && str_of(s, "apiGroup").is_empty()
                && let Some(m) = s.as_object_mut()
            {
                m.insert("apiGroup".into(), Value::String(RBAC_GROUP.into()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fr(c: &[Cause]) -> Vec<(&str, &str)> {
        c.iter()
            .map(|c| (c.field.as_str(), c.reason.as_str()))
            .collect()
    }

    #[test]
    fn secret_keys_sizes_and_types() {
        let ok = json!({"type": "Opaque", "data": {"a.b_C-1": "Yg=="}});
        assert!(validate_builtin("Secret", &ok).is_empty());
        let bad = json!({"type": "kubernetes.io/tls", "data": {"bad key": "Yg==", "..x": ""}});
        assert_eq!(
            fr(&validate_builtin("Secret", &bad)),
            vec![
                ("data[..x]", "FieldValueInvalid"),
                ("data[bad key]", "FieldValueInvalid"),
                ("data[tls.crt]", "FieldValueRequired"),
                ("data[tls.key]", "FieldValueRequired"),
            ]
        );
        let big = base64::engine::general_purpose::STANDARD.encode(vec![0u8; MAX_SECRET_SIZE + 1]);
        assert_eq!(
            fr(&validate_builtin("Secret", &json!({"data": {"k": big}}))),
            vec![("data", "FieldValueTooLong")]
        );
        let sat = json!({"type": "kubernetes.io/service-account-token"});
        assert_eq!(
            fr(&validate_builtin("Secret", &sat)),
            vec![(
                "metadata.annotations[kubernetes.io/service-account.name]",
                "FieldValueRequired"
            )]
        );
        let docker = json!({"type": "kubernetes.io/dockerconfigjson", "data": {".dockerconfigjson": "bm90IGpzb24="}});
        assert_eq!(
            fr(&validate_builtin("Secret", &docker)),
            vec![("data[.dockerconfigjson]", "FieldValueInvalid")]
        );
        let capi = json!({"type": "cluster.x-k8s.io/secret", "data": {"value": "Yg=="}});
        assert!(validate_builtin("Secret", &capi).is_empty());
    }

    #[test]
    fn config_map_keys_overlap_and_size() {
        let cm = json!({"data": {"a": "x", "b": "y"}, "binaryData": {"a": "eA==", "c d": "eA=="}});
        assert_eq!(
            fr(&validate_builtin("ConfigMap", &cm)),
            vec![
                ("data[a]", "FieldValueInvalid"),
                ("binaryData[c d]", "FieldValueInvalid")
            ]
        );
        let big = json!({"data": {"k": "x".repeat(MAX_SECRET_SIZE + 1)}});
        assert_eq!(
            fr(&validate_builtin("ConfigMap", &big)),
            vec![("", "FieldValueTooLong")]
        );
    }

    #[test]
    fn immutability_on_update() {
        let old = json!({"type": "Opaque", "immutable": true, "data": {"a": "Yg=="}});
        let new = json!({"type": "other", "immutable": false, "data": {"a": "Yw=="}});
        assert_eq!(
            fr(&validate_builtin_update("Secret", &new, &old)),
            vec![
                ("type", "FieldValueInvalid"),
                ("data", "FieldValueForbidden"),
                ("immutable", "FieldValueForbidden")
            ]
        );
        assert!(validate_builtin_update("Secret", &old, &old).is_empty());
        let rb = json!({"roleRef": {"apiGroup": RBAC_GROUP, "kind": "Role", "name": "a"}, "subjects": []});
        let mut rb2 = rb.clone();
        rb2["roleRef"]["name"] = json!("b");
        assert_eq!(
            fr(&validate_builtin_update("RoleBinding", &rb2, &rb)),
            vec![("roleRef", "FieldValueInvalid")]
        );
    }

    #[test]
    fn rbac_rules() {
        let role = json!({"rules": [
            {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]},
            {"verbs": [], "apiGroups": [], "resources": []},
            {"verbs": ["get"], "nonResourceURLs": ["/healthz"]}
        ]});
        assert_eq!(
            fr(&validate_builtin("Role", &role)),
            vec![
                ("rules[1].verbs", "FieldValueRequired"),
                ("rules[1].apiGroups", "FieldValueRequired"),
                ("rules[1].resources", "FieldValueRequired"),
                ("rules[2].nonResourceURLs", "FieldValueInvalid"),
            ]
        );
        assert_eq!(
            fr(&validate_builtin("ClusterRole", &role)),
            vec![
                ("rules[1].verbs", "FieldValueRequired"),
                ("rules[1].apiGroups", "FieldValueRequired"),
                ("rules[1].resources", "FieldValueRequired"),
            ]
        );
        let agg = json!({"aggregationRule": {"clusterRoleSelectors": []}});
        assert_eq!(
            fr(&validate_builtin("ClusterRole", &agg)),
            vec![("aggregationRule.clusterRoleSelectors", "FieldValueRequired")]
        );
    }

    #[test]
    fn bindings_and_subjects() {
        let mut crb = json!({"roleRef": {"apiGroup": RBAC_GROUP, "kind": "Role", "name": "x"},
        "subjects": [
            {"kind": "ServiceAccount", "name": "sa"},
            {"kind": "User", "name": "alice"},
            {"kind": "Robot", "name": "r"}
        ]});
        default_rbac_subjects(&mut crb);
        assert_eq!(crb["subjects"][1]["apiGroup"], RBAC_GROUP);
        assert_eq!(
            fr(&validate_builtin("ClusterRoleBinding", &crb)),
            vec![
                ("roleRef.kind", "FieldValueNotSupported"),
                ("subjects[0].namespace", "FieldValueRequired"),
                ("subjects[2].kind", "FieldValueNotSupported"),
            ]
        );
        let rb = json!({"roleRef": {"apiGroup": "", "kind": "ClusterRole", "name": "system:x"},
            "subjects": [{"kind": "ServiceAccount", "name": "sa"}]});
        assert_eq!(
            fr(&validate_builtin("RoleBinding", &rb)),
            vec![("roleRef.apiGroup", "FieldValueNotSupported")]
        );
    }
}

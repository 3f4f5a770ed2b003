//! `metav1.ObjectMeta` validation (apimachinery `ValidateObjectMeta`): names, namespace,
//! labels, annotations, ownerReferences, finalizers.

use super::cause::Cause;
use super::names;
use serde_json::Value;

/// Total size of all annotation keys and values (`TotalAnnotationSizeLimitB`).
pub const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

/// Which rule a kind's `metadata.name` follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameRule {
    /// `NameIsDNSSubdomain`: custom resources and most built-ins.
    Dns1123Subdomain,
    /// `NameIsDNSLabel` / `ValidateNamespaceName`: Namespaces.
    Dns1123Label,
    /// `ValidatePathSegmentName`: RBAC roles and bindings (`system:controller:x` is valid).
    PathSegment,
    /// `NameIsDNS1035Label`: Services.
    Dns1035Label,
}

impl NameRule {
    /// The rule kube applies to objects of `kind`.
    pub fn for_kind(kind: &str) -> NameRule {
        match kind {
            "Namespace" => NameRule::Dns1123Label,
            "Service" => NameRule::Dns1035Label,
            "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding" => NameRule::PathSegment,
            _ => NameRule::Dns1123Subdomain,
        }
    }

    fn check(self, name: &str) -> Vec<String> {
        match self {
            NameRule::Dns1123Subdomain => names::dns1123_subdomain(name),
            NameRule::Dns1123Label => names::dns1123_label(name),
            NameRule::PathSegment => path_segment(name),
            NameRule::Dns1035Label => names::dns1035_label(name),
        }
    }
}

/// `ValidatePathSegmentName`.
fn path_segment(name: &str) -> Vec<String> {
    if name == "." || name == ".." {
        return vec![format!("may not be '{name}'")];
    }
    ["/", "%"]
        .iter()
        .filter(|bad| name.contains(*bad))
        .map(|bad| format!("may not contain '{bad}'"))
        .collect()
}

/// kube's `maskTrailingDash`, applied to a `generateName` before validating it as a name.
fn mask_trailing_dash(name: &str) -> String {
    if name.len() > 1 && name.ends_with('-') {
        let cut = name.len() - 2;
        match name.get(..cut) {
            Some(head) => format!("{head}a"),
            None => name.to_string(),
        }
    } else {
        name.to_string()
    }
}

/// Validates a JSON `metadata` object of a create/update. `namespaced` decides whether
/// `namespace` is required or forbidden. Names use DNS-1123 subdomain rules (what CRs and most
/// built-ins use); see [`validate_object_meta_for_kind`] for the per-kind rules.
pub fn validate_object_meta(meta: &Value, namespaced: bool) -> Vec<Cause> {
    validate_object_meta_with(meta, namespaced, NameRule::Dns1123Subdomain)
}

/// Like [`validate_object_meta`] for a Namespace object (name must be a DNS-1123 label).
pub fn validate_namespace_meta(meta: &Value) -> Vec<Cause> {
    validate_object_meta_with(meta, false, NameRule::Dns1123Label)
}

/// [`validate_object_meta`] with the name rule of `kind` ([`NameRule::for_kind`]).
pub fn validate_object_meta_for_kind(meta: &Value, namespaced: bool, kind: &str) -> Vec<Cause> {
    validate_object_meta_with(meta, namespaced, NameRule::for_kind(kind))
}

/// ObjectMeta validation with an explicit name rule.
pub fn validate_object_meta_with(meta: &Value, namespaced: bool, rule: NameRule) -> Vec<Cause> {
    let mut out = type_errors(meta);
    let str_of = |k: &str| meta.get(k).and_then(Value::as_str).unwrap_or_default();
    let name = str_of("name");
    let generate_name = str_of("generateName");

    if !generate_name.is_empty() {
        for msg in rule.check(&mask_trailing_dash(generate_name)) {
            out.push(Cause::invalid(
                "metadata.generateName",
                &Value::String(generate_name.to_string()),
                &msg,
            ));
        }
    }
    if name.is_empty() {
        if generate_name.is_empty() {
            out.push(Cause::required(
                "metadata.name",
                "name or generateName is required",
            ));
        }
    } else {
        for msg in rule.check(name) {
            out.push(Cause::invalid(
                "metadata.name",
                &Value::String(name.to_string()),
                &msg,
            ));
        }
    }

    let namespace = str_of("namespace");
    if namespaced {
        if namespace.is_empty() {
            out.push(Cause::required("metadata.namespace", ""));
        } else {
            for msg in names::dns1123_label(namespace) {
                out.push(Cause::invalid(
                    "metadata.namespace",
                    &Value::String(namespace.to_string()),
                    &msg,
                ));
            }
        }
    } else if !namespace.is_empty() {
        out.push(Cause::forbidden(
            "metadata.namespace",
            "not allowed on this type",
        ));
    }

    if let Some(v) = meta.get("generation").and_then(Value::as_i64)
        && v < 0
    {
        out.push(Cause::invalid(
            "metadata.generation",
            &Value::from(v),
            "must be greater than or equal to 0",
        ));
    }

    if let Some(labels) = meta.get("labels").and_then(Value::as_object) {
        for (k, v) in labels {
            for msg in names::qualified_name(k) {
                out.push(Cause::invalid(
                    "metadata.labels",
                    &Value::String(k.clone()),
                    &msg,
                ));
            }
            let v = v.as_str().unwrap_or_default();
            for msg in names::label_value(v) {
                out.push(Cause::invalid(
                    "metadata.labels",
                    &Value::String(v.to_string()),
                    &msg,
                ));
            }
        }
    }

    if let Some(ann) = meta.get("annotations").and_then(Value::as_object) {
        let mut total = 0usize;
        for (k, v) in ann {
            for msg in names::qualified_name(&k.to_lowercase()) {
                out.push(Cause::invalid(
                    "metadata.annotations",
                    &Value::String(k.clone()),
                    &msg,
                ));
            }
            total += k.len() + v.as_str().map_or(0, str::len);
        }
        if total > TOTAL_ANNOTATION_SIZE_LIMIT {
            out.push(Cause::new_too_long_bytes(
                "metadata.annotations",
                TOTAL_ANNOTATION_SIZE_LIMIT,
            ));
        }
    }

    if let Some(refs) = meta.get("ownerReferences").and_then(Value::as_array) {
        out.extend(validate_owner_references(refs));
    }

    if let Some(fins) = meta.get("finalizers").and_then(Value::as_array) {
        let mut has_orphan = false;
        let mut has_foreground = false;
        for f in fins {
            let f = f.as_str().unwrap_or_default();
            for msg in names::qualified_name(f) {
                out.push(Cause::invalid(
                    "metadata.finalizers",
                    &Value::String(f.to_string()),
                    &msg,
                ));
            }
            has_orphan |= f == "orphan";
            has_foreground |= f == "foregroundDeletion";
        }
        if has_orphan && has_foreground {
            out.push(Cause::invalid(
                "metadata.finalizers",
                &Value::Array(fins.clone()),
                "finalizer orphan and foregroundDeletion cannot be both set",
            ));
        }
    }
    out
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Fields whose JSON type cannot decode into ObjectMeta (kube fails the decode with Go's
/// unmarshal message; reported here on `metadata`).
fn type_errors(meta: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    let Some(m) = meta.as_object() else {
        if !meta.is_null() {
            out.push(Cause::invalid(
                "metadata",
                meta,
                &format!(
                    "json: cannot unmarshal {} into Go value of type v1.ObjectMeta",
                    json_kind(meta)
                ),
            ));
        }
        return out;
    };
    let mut bad = |field: &str, got: &Value, want: &str| {
        out.push(Cause::invalid(
            "metadata",
            got,
            &format!(
                "json: cannot unmarshal {} into Go struct field ObjectMeta.metadata.{field} of type {want}",
                json_kind(got)
            ),
        ));
    };
    for f in [
        "name",
        "generateName",
        "namespace",
        "uid",
        "resourceVersion",
    ] {
        if let Some(v) = m.get(f).filter(|v| !v.is_null() && !v.is_string()) {
            bad(f, v, "string");
        }
    }
    for f in ["labels", "annotations"] {
        match m.get(f) {
            None | Some(Value::Null) => {}
            Some(Value::Object(entries)) => {
                if let Some(v) = entries.values().find(|v| !v.is_string()) {
                    bad(f, v, "string");
                }
            }
            Some(other) => bad(f, other, "map[string]string"),
        }
    }
    match m.get("finalizers") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            if let Some(v) = items.iter().find(|v| !v.is_string()) {
                bad("finalizers", v, "string");
            }
        }
        Some(other) => bad("finalizers", other, "[]string"),
    }
    match m.get("ownerReferences") {
        None | Some(Value::Null) | Some(Value::Array(_)) => {}
        Some(other) => bad("ownerReferences", other, "[]v1.OwnerReference"),
    }
    out
}

fn validate_owner_references(refs: &[Value]) -> Vec<Cause> {
    let path = "metadata.ownerReferences";
    let mut out = Vec::new();
    let mut controllers = Vec::new();
    for r in refs {
        let s = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or_default();
        let api_version = s("apiVersion");
        let version = api_version.rsplit('/').next().unwrap_or_default();
        if version.is_empty() {
            out.push(Cause::invalid(
                &format!("{path}.apiVersion"),
                &Value::String(version.to_string()),
                "version must not be empty",
            ));
        }
        if s("kind").is_empty() {
            out.push(Cause::invalid(
                &format!("{path}.kind"),
                &Value::String(String::new()),
                "kind must not be empty",
            ));
        }
        if s("name").is_empty() {
            out.push(Cause::invalid(
                &format!("{path}.name"),
                &Value::String(String::new()),
                "name must not be empty",
            ));
        }
        if s("uid").is_empty() {
            out.push(Cause::invalid(
                &format!("{path}.uid"),
                &Value::String(String::new()),
                "uid must not be empty",
            ));
        }
        if r.get("controller").and_then(Value::as_bool) == Some(true) {
            controllers.push(format!("{}/{}", s("kind"), s("name")));
        }
    }
    if controllers.len() > 1 {
        out.push(Cause::invalid(
            path,
            &Value::Array(refs.to_vec()),
            &format!(
                "Only one reference can have Controller set to true. Found \"true\" in references for {}",
                controllers.join(" and ")
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fields(c: &[Cause]) -> Vec<(&str, &str)> {
        c.iter()
            .map(|c| (c.field.as_str(), c.reason.as_str()))
            .collect()
    }

    #[test]
    fn valid_meta_has_no_causes() {
        let m = json!({"name": "w1", "namespace": "default", "labels": {"app": "demo"},
            "annotations": {"example.com/x": "y"}, "finalizers": ["example.com/f"],
            "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "c", "uid": "u", "controller": true}]});
        assert!(validate_object_meta(&m, true).is_empty());
    }

    #[test]
    fn names_and_namespaces() {
        assert_eq!(
            fields(&validate_object_meta(
                &json!({"name": "Bad_Name", "namespace": "default"}),
                true
            )),
            vec![("metadata.name", "FieldValueInvalid")]
        );
        assert_eq!(
            fields(&validate_object_meta(&json!({}), true)),
            vec![
                ("metadata.name", "FieldValueRequired"),
                ("metadata.namespace", "FieldValueRequired")
            ]
        );
        assert_eq!(
            fields(&validate_object_meta(
                &json!({"generateName": "w-", "namespace": "x"}),
                true
            )),
            vec![]
        );
        assert_eq!(
            fields(&validate_object_meta(
                &json!({"name": "c", "namespace": "x"}),
                false
            )),
            vec![("metadata.namespace", "FieldValueForbidden")]
        );
        assert_eq!(
            fields(&validate_namespace_meta(&json!({"name": "a.b"}))),
            vec![("metadata.name", "FieldValueInvalid")]
        );
    }

    #[test]
    fn per_kind_name_rules() {
        let m = json!({"name": "system:controller:x"});
        assert!(validate_object_meta_for_kind(&m, false, "ClusterRole").is_empty());
        assert_eq!(
            fields(&validate_object_meta_for_kind(&m, false, "ConfigMap")),
            vec![("metadata.name", "FieldValueInvalid")]
        );
        let bad = validate_object_meta_for_kind(&json!({"name": "a/b"}), false, "ClusterRole");
        assert_eq!(
            bad[0].message,
            "Invalid value: \"a/b\": may not contain '/'"
        );
        assert_eq!(
            validate_object_meta_for_kind(&json!({"name": ".."}), false, "Role")[0].message,
            "Invalid value: \"..\": may not be '..'"
        );
        // generateName: kube masks the trailing dash (and the character before it).
        assert!(validate_object_meta(&json!({"generateName": "A-"}), false).is_empty());
        assert_eq!(
            validate_object_meta(&json!({"generateName": "Ab-"}), false).len(),
            1
        );
    }

    #[test]
    fn labels_annotations_finalizers() {
        let m = json!({"name": "a", "labels": {"bad key": "v", "ok": "bad value"},
            "annotations": {"/x": "y"}, "finalizers": ["a/b/c"]});
        assert_eq!(
            fields(&validate_object_meta(&m, false)),
            vec![
                ("metadata.labels", "FieldValueInvalid"),
                ("metadata.labels", "FieldValueInvalid"),
                ("metadata.annotations", "FieldValueInvalid"),
                ("metadata.finalizers", "FieldValueInvalid"),
            ]
        );
        let big = "x".repeat(TOTAL_ANNOTATION_SIZE_LIMIT);
        let m = json!({"name": "a", "annotations": {"k": big}});
        assert_eq!(
            fields(&validate_object_meta(&m, false)),
            vec![("metadata.annotations", "FieldValueTooLong")]
        );
    }

    #[test]
    fn wrongly_typed_fields_are_reported() {
        let m = json!({"name": "a", "labels": {"k": 1}, "finalizers": "x"});
        let c = validate_object_meta(&m, false);
        assert_eq!(
            fields(&c)[..2],
            [
                ("metadata", "FieldValueInvalid"),
                ("metadata", "FieldValueInvalid")
            ]
        );
        assert!(
            c[0].message
                .contains("ObjectMeta.metadata.labels of type string")
        );
        assert!(
            c[1].message
                .contains("ObjectMeta.metadata.finalizers of type []string")
        );
        assert_eq!(
            validate_object_meta(&json!("x"), false)[0].field,
            "metadata"
        );
    }

    #[test]
    fn owner_references() {
        let m = json!({"name": "a", "ownerReferences": [
            {"apiVersion": "v1", "kind": "A", "name": "a", "controller": true},
            {"apiVersion": "v1", "kind": "B", "name": "b", "uid": "u2", "controller": true}]});
        let c = validate_object_meta(&m, false);
        assert_eq!(
            fields(&c),
            vec![
                ("metadata.ownerReferences.uid", "FieldValueInvalid"),
                ("metadata.ownerReferences", "FieldValueInvalid"),
            ]
        );
        assert!(
            c[1].message
                .contains("Only one reference can have Controller set to true")
        );
    }
}

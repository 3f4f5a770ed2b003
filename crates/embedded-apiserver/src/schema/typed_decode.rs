//! Typed decoding of built-in kinds, as kube-apiserver decodes a request body into the kind's
//! Go struct before anything else sees it (`sigs.k8s.io/json` with `k8s.io/apimachinery`'s
//! strict mode): a value of the wrong JSON type is a 400 (`Deployment in version "v1" cannot be
//! handled as a Deployment: json: cannot unmarshal string into Go struct field
//! DeploymentSpec.spec.replicas of type int32`), a field the struct does not have is dropped (a
//! Go struct cannot keep it) and reported as unknown (`fieldValidation=Strict`: 400, `Warn`:
//! a warning).
//!
//! The structs are read from the kind's OpenAPI schema (k8s-openapi's, as served under
//! `/openapi/v3`: [`crate::openapi::builtin_schema`]). Go's decoding is lenient where the schema
//! is strict, and so is this: `null` is any type's zero value, `x-kubernetes-int-or-string`
//! (IntOrString, Quantity) takes a string or any number, an object without properties
//! (`FieldsV1`) takes any object. `required` is not a decoding matter (validation answers 422
//! for it). CustomResourceDefinitions are decoded too: their free-form JSON values (`default`,
//! `example`, `enum`) are of apiextensions' `JSON`, which takes any value, and the
//! `JSONSchemaPropsOr…` unions (`items`, `additionalProperties`) any of their forms.

use serde_json::{Map, Value};

/// A decoded object: unknown fields removed, and their paths (`spec.template.spec.containers[0].bogus`).
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    pub object: Value,
    pub unknown_fields: Vec<String>,
}

/// Decodes `obj`, an object of built-in kind `group/version/kind`. `Err`: the 400 message of
/// the first value of the wrong type. Kinds without a schema here pass unchanged.
pub fn decode_builtin(
    group: &str,
    version: &str,
    kind: &str,
    obj: Value,
) -> Result<Decoded, String> {
    let unchanged = |object| Decoded {
        object,
        unknown_fields: Vec::new(),
    };
    let Some(builtin) = crate::openapi::builtin_schema(group, version, kind) else {
        return Ok(unchanged(obj));
    };
    let root = Value::Object(
        [(
            "$ref".to_string(),
            Value::String(format!("#/components/schemas/{}", builtin.name)),
        )]
        .into_iter()
        .collect(),
    );
    let mut d = Decoder {
        definitions: builtin.definitions,
        unknown: Vec::new(),
    };
    let mut obj = obj;
    let mut path = Vec::new();
    // kube names the version alone (`Deployment in version "v1"`), as its decoder reports it.
    d.walk(&root, &mut obj, &mut path, "").map_err(|e| {
        format!(
            "{kind} in version {} cannot be handled as a {kind}: {e}",
            super::cause::go_quote(version)
        )
    })?;
    Ok(Decoded {
        object: obj,
        unknown_fields: d.unknown,
    })
}

/// One step of a path: a struct field, a map key or a list index.
#[derive(Debug, Clone)]
enum Step {
    Field(String),
    Key(String),
    Index(usize),
}

/// `spec.containers[0].name` (with indexes, as strict decoding names unknown fields).
fn with_indexes(path: &[Step]) -> String {
    let mut s = String::new();
    for step in path {
        match step {
            Step::Field(f) | Step::Key(f) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(f);
            }
            Step::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

/// `spec.containers.name` (struct fields only, as encoding/json names the field of a type
/// error: `ConfigMap.data` for a value under `data`).
fn without_indexes(path: &[Step]) -> String {
    path.iter()
        .filter_map(|s| match s {
            Step::Field(f) => Some(f.as_str()),
            Step::Key(_) | Step::Index(_) => None,
        })
        .collect::<Vec<_>>()
        .join(".")
}

struct Decoder<'a> {
    definitions: &'a Map<String, Value>,
    unknown: Vec<String>,
}

impl<'a> Decoder<'a> {
    /// The schema `s` stands for (a `$ref`, or an `allOf` of one `$ref`), and the Go type name
    /// of a referenced definition.
    fn resolve(&self, s: &'a Value) -> (&'a Value, Option<&'a str>) {
        let (node, name) = crate::openapi::resolve_ref(self.definitions, s);
        (node, name.map(short_name))
    }

    /// Whether `schema` is a struct (an object with declared fields).
    fn is_struct(&self, schema: &'a Value) -> bool {
        let (s, _) = self.resolve(schema);
        s.get("properties").is_some()
    }

    /// Decodes `v` at `path` against `schema`; `parent`: the Go type holding the field.
    fn walk(
        &mut self,
        schema: &'a Value,
        v: &mut Value,
        path: &mut Vec<Step>,
        parent: &str,
    ) -> Result<(), String> {
        let (s, name) = self.resolve(schema);
        if v.is_null() || s.get("oneOf").is_some() || s.get("anyOf").is_some() {
            return Ok(());
        }
        let integer = s.get("type").and_then(Value::as_str) == Some("integer");
        let mismatch = |go_type: String| {
            Err(format!(
                "json: cannot unmarshal {} into Go struct field {parent}.{} of type {go_type}",
                json_kind(v, integer),
                without_indexes(path)
            ))
        };
        if s.get("x-kubernetes-int-or-string").and_then(Value::as_bool) == Some(true) {
            return match v {
                Value::String(_) | Value::Number(_) => Ok(()),
                _ => mismatch(name.unwrap_or("intstr.IntOrString").to_string()),
            };
        }
        match s.get("type").and_then(Value::as_str) {
            Some("object") => {
                let Value::Object(fields) = v else {
                    return mismatch(go_type(s, name));
                };
                if let Some(props) = s.get("properties").and_then(Value::as_object) {
                    let here = name.unwrap_or(parent);
                    let required: Vec<&str> = s
                        .get("required")
                        .and_then(Value::as_array)
                        .map(|r| r.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_default();
                    let mut unknown = Vec::new();
                    let mut zero = Vec::new();
                    for (k, fv) in fields.iter_mut() {
                        path.push(Step::Field(k.clone()));
                        match props.get(k) {
                            Some(fs) => {
                                if fv.is_null()
                                    && !required.contains(&k.as_str())
                                    && !self.is_struct(fs)
                                {
                                    zero.push(k.clone());
                                }
                                self.walk(fs, fv, path, here)?
                            }
                            None => {
                                self.unknown.push(with_indexes(path));
                                unknown.push(k.clone());
                            }
                        }
                        path.pop();
                    }
                    // A null decodes to the field's zero value, which Go leaves out of what it
                    // writes (`omitempty`, `omitzero`): a `creationTimestamp: null` older
                    // clients send is not stored. Struct fields (written as `{}`) keep theirs.
                    for k in unknown.into_iter().chain(zero) {
                        fields.remove(&k);
                    }
                } else if let Some(items) = s.get("additionalProperties").filter(|a| a.is_object())
                {
                    for (k, fv) in fields.iter_mut() {
                        path.push(Step::Key(k.clone()));
                        self.walk(items, fv, path, parent)?;
                        path.pop();
                    }
                }
                Ok(())
            }
            Some("array") => {
                let Value::Array(items) = v else {
                    return mismatch(go_type(s, name));
                };
                if let Some(item_schema) = s.get("items") {
                    for (i, item) in items.iter_mut().enumerate() {
                        path.push(Step::Index(i));
                        self.walk(item_schema, item, path, parent)?;
                        path.pop();
                    }
                }
                Ok(())
            }
            Some("string") if !v.is_string() => mismatch("string".into()),
            // A []byte field: encoding/json decodes it as standard base64 and reports the
            // decoder's error alone.
            Some("string") if s.get("format").and_then(Value::as_str) == Some("byte") => {
                match crate::gojson::base64_error(v.as_str().unwrap_or_default().as_bytes()) {
                    Some(at) => Err(format!("illegal base64 data at input byte {at}")),
                    None => Ok(()),
                }
            }
            Some("boolean") if !v.is_boolean() => mismatch("bool".into()),
            Some("number") if !v.is_number() => mismatch(go_type(s, name)),
            Some("integer") => {
                let fits = match s.get("format").and_then(Value::as_str) {
                    Some("int32") => v.as_i64().is_some_and(|n| i32::try_from(n).is_ok()),
                    _ => v.as_i64().is_some() || v.as_u64().is_some(),
                };
                if fits {
                    Ok(())
                } else {
                    mismatch(go_type(s, name))
                }
            }
            _ => Ok(()),
        }
    }
}

/// `DeploymentSpec` of `io.k8s.api.apps.v1.DeploymentSpec`.
fn short_name(definition: &str) -> &str {
    definition.rsplit('.').next().unwrap_or(definition)
}

/// How encoding/json names the JSON value in a type error: `number 1.5` with the literal when
/// an integer was wanted, else `number`.
fn json_kind(v: &Value, integer: bool) -> String {
    match v {
        Value::String(_) => "string".into(),
        Value::Number(n) if integer => format!("number {n}"),
        Value::Number(_) => "number".into(),
        Value::Bool(_) => "bool".into(),
        Value::Array(_) => "array".into(),
        Value::Object(_) => "object".into(),
        Value::Null => "null".into(),
    }
}

/// The Go type of a schema node, as far as the schema tells it.
fn go_type(s: &Value, name: Option<&str>) -> String {
    if let Some(n) = name {
        return n.to_string();
    }
    match (
        s.get("type").and_then(Value::as_str),
        s.get("format").and_then(Value::as_str),
    ) {
        (Some("integer"), Some(f)) => f.to_string(),
        (Some("integer"), None) => "int64".into(),
        (Some("number"), _) => "float64".into(),
        (Some("string"), _) => "string".into(),
        (Some("boolean"), _) => "bool".into(),
        (Some("array"), _) => format!(
            "[]{}",
            s.get("items")
                .map(|i| go_type(i, None))
                .unwrap_or_else(|| "interface {}".into())
        ),
        (Some("object"), _) => match s.get("additionalProperties") {
            Some(a) if a.is_object() => format!("map[string]{}", go_type(a, None)),
            _ => "map[string]interface {}".into(),
        },
        _ => "interface {}".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment(spec: Value) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "d", "creationTimestamp": null}, "spec": spec})
    }

    #[test]
    fn a_value_of_the_wrong_type_is_refused_as_kube_refuses_it() {
        let err = decode_builtin(
            "apps",
            "v1",
            "Deployment",
            deployment(json!({"replicas": "three"})),
        )
        .unwrap_err();
        assert_eq!(
            err,
            "Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"
        );
        let err = decode_builtin(
            "apps",
            "v1",
            "Deployment",
            deployment(json!({"template": {"spec": {"containers": [{"name": 1}]}}})),
        )
        .unwrap_err();
        assert!(
            err.ends_with("cannot unmarshal number into Go struct field Container.spec.template.spec.containers.name of type string"),
            "{err}"
        );
        let err = decode_builtin("", "v1", "ConfigMap", json!({"data": {"a": 1}})).unwrap_err();
        assert_eq!(
            err,
            "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string"
        );
        let err = decode_builtin(
            "apps",
            "v1",
            "Deployment",
            deployment(json!({"replicas": 1.5})),
        )
        .unwrap_err();
        assert!(err.ends_with("cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32"), "{err}");
        assert!(
            decode_builtin(
                "apps",
                "v1",
                "Deployment",
                deployment(json!({"replicas": 3_000_000_000u64}))
            )
            .is_err()
        );
    }

    #[test]
    fn unknown_fields_are_dropped_and_named_with_their_indexes() {
        let d = decode_builtin(
            "apps",
            "v1",
            "Deployment",
            deployment(json!({
                "replicas": 2,
                "bogus": true,
                "template": {"spec": {"containers": [
                    {"name": "a", "image": "x"},
                    {"name": "b", "image": "y", "extra": {"k": 1}},
                ]}},
            })),
        )
        .unwrap();
        assert_eq!(
            d.unknown_fields,
            ["spec.bogus", "spec.template.spec.containers[1].extra"]
        );
        assert_eq!(d.object["spec"]["replicas"], 2);
        assert!(d.object["spec"].get("bogus").is_none());
        assert_eq!(
            d.object["spec"]["template"]["spec"]["containers"][1],
            json!({"name": "b", "image": "y"})
        );
        let d = decode_builtin(
            "",
            "v1",
            "Secret",
            json!({"metadata": {"name": "s", "bogus": 1}}),
        )
        .unwrap();
        assert_eq!(d.unknown_fields, ["metadata.bogus"]);
    }

    /// What Go accepts: null for anything, numbers for quantities and int-or-strings, any object
    /// where the schema has no properties; maps' keys are not fields.
    #[test]
    fn what_go_decodes_passes_unchanged() {
        let obj = deployment(json!({
            "replicas": null,
            "selector": {"matchLabels": {"any-key": "v"}},
            "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
            "template": {
                "metadata": {"labels": {"a": "b"}, "creationTimestamp": null},
                "spec": {"containers": [{
                    "name": "c", "image": "i",
                    "resources": {"limits": {"cpu": 0.5, "memory": "1Gi"}},
                    "ports": [{"containerPort": 80}],
                }]},
            },
        }));
        let mut with_managed = obj.clone();
        with_managed["metadata"]["managedFields"] = json!([{"manager": "m", "operation": "Apply", "fieldsV1": {"f:spec": {"f:replicas": {}}}}]);
        for o in [obj, with_managed] {
            let d = decode_builtin("apps", "v1", "Deployment", o.clone()).unwrap();
            assert!(d.unknown_fields.is_empty(), "{:?}", d.unknown_fields);
            // But for the nulls of optional fields, zero values Go leaves out when it writes
            // the object.
            let mut want = o.clone();
            for (at, field) in [
                ("/metadata", "creationTimestamp"),
                ("/spec", "replicas"),
                ("/spec/template/metadata", "creationTimestamp"),
            ] {
                if let Some(m) = want.pointer_mut(at).and_then(Value::as_object_mut) {
                    m.remove(field);
                }
            }
            assert_eq!(d.object, want);
        }
        // A CRD's free-form values take any JSON value, and its unions any of their forms;
        // an unknown field of a schema is dropped and named.
        let props = json!({"a": {"type": "integer", "default": 3, "enum": [1, "x", null, {"k": [1]}]},
            "b": {"type": "array", "items": [{"type": "string"}], "additionalItems": false},
            "c": {"type": "object", "additionalProperties": {"type": "string"}, "example": "e"},
            "d": {"type": "object", "additionalProperties": true,
                  "dependencies": {"a": ["b"], "c": {"required": ["a"]}}}});
        let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "ws.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"plural": "ws", "kind": "W"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": props,
                        "x-kubernetes-preserve-unknown-fields": true,
                        "x-kubernetes-validations": [{"rule": "true"}]}}}]}});
        let d = decode_builtin(
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
            crd.clone(),
        )
        .unwrap();
        assert_eq!(d.object, crd);
        assert!(d.unknown_fields.is_empty(), "{:?}", d.unknown_fields);
        let mut typo = crd.clone();
        typo["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["descripton"] = json!("x");
        let d = decode_builtin(
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
            typo,
        )
        .unwrap();
        assert_eq!(
            d.unknown_fields,
            ["spec.versions[0].schema.openAPIV3Schema.descripton"]
        );
        assert_eq!(d.object, crd);
        let mut wrong = crd.clone();
        wrong["spec"]["versions"][0]["served"] = json!("yes");
        let err = decode_builtin(
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
            wrong,
        )
        .unwrap_err();
        assert!(
            err.ends_with("cannot unmarshal string into Go struct field CustomResourceDefinitionVersion.spec.versions.served of type bool"),
            "{err}"
        );
        let d = decode_builtin("example.com", "v1", "Widget", json!({"spec": {"x": 1}})).unwrap();
        assert!(d.unknown_fields.is_empty());
    }
}

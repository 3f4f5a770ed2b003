//! A custom resource's OpenAPI definitions as apiextensions-apiserver's builder
//! (`controller/openapi/builder`) publishes them, in v3 and in v2: the version's schema with
//! `apiVersion`, `kind` and `metadata` added (also under every embedded resource), the kind and
//! its selectable fields as extensions, and the `<Kind>List` definition.

use serde_json::{Map, Value, json};

use crate::registry::ResourceType;

pub(super) const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
pub(super) const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";

/// `PartialObjectMetadataList`'s doc of its `metadata`, which the builder gives a list's.
const LIST_META_DOC: &str = "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";
/// The builder's own docs of an embedded resource's type meta.
const EMBEDDED_API_VERSION_DOC: &str = "apiVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
const EMBEDDED_KIND_DOC: &str = "kind is a string value representing the type of this object. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";

/// Which document the definitions go in.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Doc {
    V2,
    V3,
}

impl Doc {
    fn reference(self, name: &str) -> Value {
        match self {
            Doc::V2 => json!({"$ref": format!("#/definitions/{name}")}),
            Doc::V3 => json!({"$ref": format!("#/components/schemas/{name}")}),
        }
    }

    /// A reference with a description: a sibling in v2, wrapped in `allOf` in v3.
    fn described_reference(self, name: &str, description: &str) -> Value {
        match self {
            Doc::V2 => {
                let mut r = self.reference(name);
                r["description"] = json!(description);
                r
            }
            Doc::V3 => json!({"description": description, "allOf": [self.reference(name)]}),
        }
    }
}

/// The descriptions TypeMeta and ObjectMeta give the fields every kind has (read from the
/// built-in schemas: a ConfigMap's `apiVersion`, `kind` and `metadata`).
fn meta_doc(field: &str) -> String {
    super::builtin_schema("", "v1", "ConfigMap")
        .and_then(|b| {
            b.definitions
                .get(b.name)?
                .pointer(&format!("/properties/{field}/description"))?
                .as_str()
                .map(str::to_string)
        })
        .unwrap_or_default()
}

fn type_meta_property(field: &str) -> Value {
    json!({"description": meta_doc(field), "type": "string"})
}

/// `addEmbeddedProperties`: type meta and metadata under every `x-kubernetes-embedded-resource`
/// object (not in v2 where it preserves unknown fields).
fn add_embedded(s: &mut Value, doc: Doc) {
    let Value::Object(m) = s else { return };
    if let Some(Value::Object(props)) = m.get_mut("properties") {
        for p in props.values_mut() {
            add_embedded(p, doc);
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(sub) = m.get_mut(key).filter(|v| v.is_object()) {
            add_embedded(sub, doc);
        }
    }
    let flag = |m: &Map<String, Value>, k: &str| m.get(k).and_then(Value::as_bool) == Some(true);
    if doc == Doc::V2 && flag(m, "x-kubernetes-preserve-unknown-fields") {
        return;
    }
    if flag(m, "x-kubernetes-embedded-resource") {
        let props = m
            .entry("properties")
            .or_insert_with(|| json!({}))
            .as_object_mut();
        if let Some(props) = props {
            props.insert(
                "apiVersion".into(),
                json!({"description": EMBEDDED_API_VERSION_DOC, "type": "string"}),
            );
            props.insert(
                "kind".into(),
                json!({"description": EMBEDDED_KIND_DOC, "type": "string"}),
            );
            props.insert(
                "metadata".into(),
                doc.described_reference(OBJECT_META, &meta_doc("metadata")),
            );
        }
        let required = m.entry("required").or_insert_with(|| json!([]));
        if let Some(req) = required.as_array_mut() {
            for k in ["kind", "apiVersion"] {
                if !req.iter().any(|r| r == k) {
                    req.push(json!(k));
                }
            }
        }
    }
}

/// Removes `default` everywhere (what the v2 document publishes carries none).
fn without_defaults(s: &mut Value) {
    match s {
        Value::Object(m) => {
            m.remove("default");
            for v in m.values_mut() {
                without_defaults(v);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(without_defaults),
        _ => {}
    }
}

fn selectable_fields(t: &ResourceType, version: &str) -> Option<Value> {
    let fields = &t.version(version)?.selectable_fields;
    (!fields.is_empty())
        .then(|| Value::Array(fields.iter().map(|f| json!({"fieldPath": f})).collect()))
}

/// `buildKubeNative`: the kind's definition.
pub(super) fn kind_definition(t: &ResourceType, version: &str, doc: Doc) -> Value {
    let schema = t.version(version).and_then(|v| v.schema.as_ref());
    let preserve = |s: &Value| {
        s.get("x-kubernetes-preserve-unknown-fields")
            .and_then(Value::as_bool)
            == Some(true)
    };
    let mut def = match schema {
        None => json!({"type": "object"}),
        Some(s) if doc == Doc::V2 && preserve(s) => json!({"type": "object"}),
        Some(s) => {
            let mut d = match doc {
                Doc::V2 => {
                    let mut d = super::structural_v2::to_v2(s);
                    without_defaults(&mut d);
                    d
                }
                Doc::V3 => s.clone(),
            };
            if let Some(m) = d.as_object_mut() {
                let props = m
                    .entry("properties")
                    .or_insert_with(|| json!({}))
                    .as_object_mut();
                if let Some(props) = props {
                    props.insert(
                        "metadata".into(),
                        doc.described_reference(OBJECT_META, &meta_doc("metadata")),
                    );
                    props.insert("apiVersion".into(), type_meta_property("apiVersion"));
                    props.insert("kind".into(), type_meta_property("kind"));
                }
            }
            // The root's own embedded flag does not apply; its children's do.
            if let Some(Value::Object(props)) = d.get_mut("properties") {
                for p in props.values_mut() {
                    add_embedded(p, doc);
                }
            }
            for key in ["items", "additionalProperties"] {
                if let Some(sub) = d.get_mut(key).filter(|v| v.is_object()) {
                    add_embedded(sub, doc);
                }
            }
            d
        }
    };
    def["x-kubernetes-group-version-kind"] =
        json!([{"group": t.group, "version": version, "kind": t.kind}]);
    if let Some(f) = selectable_fields(t, version) {
        def["x-kubernetes-selectable-fields"] = f;
    }
    def
}

/// `buildListSchema`: the `<Kind>List` definition; `name` is the kind's definition's.
pub(super) fn list_definition(t: &ResourceType, version: &str, name: &str, doc: Doc) -> Value {
    let mut def = json!({
        "description": format!("{} is a list of {}", t.list_kind, t.kind),
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": type_meta_property("apiVersion"),
            "items": {
                "description": format!("List of {}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md", t.resource),
                "type": "array",
                "items": doc.reference(name),
            },
            "kind": type_meta_property("kind"),
            "metadata": doc.described_reference(LIST_META, LIST_META_DOC),
        },
        "x-kubernetes-group-version-kind": [{"group": t.group, "version": version, "kind": t.list_kind}],
    });
    if let Some(f) = selectable_fields(t, version) {
        def["x-kubernetes-selectable-fields"] = f;
    }
    def
}

//! Reading a CRD document into a [`Crd`] ([`Crd::from_document`] and its owned and pre-read
//! forms): the checks' view of names, versions, schemas and subresources, with malformed CRDs
//! as input errors. Kept apart from the [`Crd`] type so the type does not depend on documents.

use super::crd::{Crd, CrdVersion, Derived, ScaleSubresource, string_map};
use super::document::Document;
use super::error::InputError;
use super::fast_yaml::{ReadSchema, SchemaSlot};
use super::schema_node::SchemaNode;
use serde_json::Value;

impl Crd {
    /// Whether a document is a CRD (by kind; any apiextensions version).
    pub fn is_crd(doc: &Document) -> bool {
        doc.value.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition")
    }

    pub fn from_document(doc: &Document) -> Result<Crd, InputError> {
        Crd::from_owned_document(doc.clone())
    }

    /// As [`Crd::from_document`], moving the version schemas out of the document instead of
    /// copying them (the inventory builder owns its documents). A document read with
    /// [`super::SchemaForm::Compact`] already holds its CRD.
    pub fn from_owned_document(mut doc: Document) -> Result<Crd, InputError> {
        match doc.crd.take() {
            Some(read) => *read,
            None => Crd::from_read_document(doc, Vec::new()),
        }
    }

    /// As [`Crd::from_owned_document`], with the schemas the fast YAML reader already read
    /// (left as `null` in the document).
    pub(crate) fn from_read_document(
        mut doc: Document,
        read: Vec<ReadSchema>,
    ) -> Result<Crd, InputError> {
        let mut schemas = CrdSchemas::take(&mut doc.value, read);
        let doc = &doc;
        let v = &doc.value;
        let name = str_at(v, &["metadata", "name"]).unwrap_or_default();
        let invalid = |message: &str| InputError::InvalidCrd {
            origin: doc.origin.clone(),
            name: if name.is_empty() {
                "<unnamed>".into()
            } else {
                name.clone()
            },
            message: message.into(),
        };
        let spec = v
            .get("spec")
            .filter(|s| s.is_object())
            .ok_or_else(|| invalid("no spec"))?;
        let names = spec
            .get("names")
            .filter(|n| n.is_object())
            .ok_or_else(|| invalid("no spec.names"))?;
        let kind = str_at(names, &["kind"]).ok_or_else(|| invalid("no spec.names.kind"))?;
        let plural = str_at(names, &["plural"]).ok_or_else(|| invalid("no spec.names.plural"))?;
        let group = str_at(spec, &["group"]).ok_or_else(|| invalid("no spec.group"))?;
        let raw_versions = spec
            .get("versions")
            .and_then(Value::as_array)
            .filter(|a| !a.is_empty())
            .ok_or_else(|| invalid("no spec.versions"))?;
        let mut versions = Vec::with_capacity(raw_versions.len());
        for (index, rv) in raw_versions.iter().enumerate() {
            let vname = str_at(rv, &["name"])
                .ok_or_else(|| invalid("a spec.versions entry has no name"))?;
            let schema = match schemas.take_version(index) {
                None => None,
                Some(Ok(s)) => Some(s),
                Some(Err(message)) => {
                    return Err(InputError::NonStructural {
                        origin: doc.origin.clone(),
                        name: name.clone(),
                        version: vname,
                        message,
                    });
                }
            };
            let sub = rv.get("subresources").or_else(|| spec.get("subresources"));
            let scale = sub.and_then(|s| s.get("scale")).map(|s| ScaleSubresource {
                spec_replicas_path: str_at(s, &["specReplicasPath"]),
                status_replicas_path: str_at(s, &["statusReplicasPath"]),
                label_selector_path: str_at(s, &["labelSelectorPath"]),
            });
            versions.push(CrdVersion {
                name: vname,
                served: rv.get("served").and_then(Value::as_bool).unwrap_or(false),
                storage: rv.get("storage").and_then(Value::as_bool).unwrap_or(false),
                schema,
                status_subresource: sub.and_then(|s| s.get("status")).is_some(),
                scale,
            });
        }
        Ok(Crd {
            name,
            api_version: str_at(v, &["apiVersion"]).unwrap_or_default(),
            group,
            kind,
            plural,
            list_kind: str_at(names, &["listKind"]),
            scope: str_at(spec, &["scope"]).unwrap_or_default(),
            categories: names
                .get("categories")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default(),
            versions,
            labels: string_map(v.get("metadata").and_then(|m| m.get("labels"))),
            annotations: string_map(v.get("metadata").and_then(|m| m.get("annotations"))),
            origin: doc.origin.clone(),
            calculated_name: Derived::default(),
        })
    }
}

/// The `openAPIV3Schema` of each `spec.versions` entry (else the legacy `spec.validation`
/// one), moved out of a CRD document and read into [`SchemaNode`]s (or the reason one is not
/// structural).
struct CrdSchemas {
    per_version: Vec<Option<Result<SchemaNode, String>>>,
    shared: Option<Result<SchemaNode, String>>,
}

impl CrdSchemas {
    fn take_version(&mut self, index: usize) -> Option<Result<SchemaNode, String>> {
        self.per_version
            .get_mut(index)
            .and_then(Option::take)
            .or_else(|| self.shared.clone())
    }

    /// Moves the schemas out of a CRD document's JSON and reads them; the slots in `read`
    /// were read already.
    fn take(v: &mut Value, mut read: Vec<ReadSchema>) -> CrdSchemas {
        let mut already = |slot: SchemaSlot| {
            read.iter()
                .position(|(s, _)| *s == slot)
                .map(|i| read.swap_remove(i).1)
        };
        let take = |node: Option<&mut Value>| {
            node.and_then(|s| s.get_mut("openAPIV3Schema"))
                .map(|s| SchemaNode::from_value(&s.take()))
        };
        let Some(spec) = v.get_mut("spec") else {
            return CrdSchemas {
                per_version: Vec::new(),
                shared: None,
            };
        };
        let shared = already(SchemaSlot::Validation).or_else(|| take(spec.get_mut("validation")));
        let per_version = spec
            .get_mut("versions")
            .and_then(Value::as_array_mut)
            .map(|versions| {
                versions
                    .iter_mut()
                    .enumerate()
                    .map(|(i, rv)| {
                        already(SchemaSlot::Version(i)).or_else(|| take(rv.get_mut("schema")))
                    })
                    .collect()
            })
            .unwrap_or_default();
        CrdSchemas {
            per_version,
            shared,
        }
    }
}

fn str_at(v: &Value, path: &[&str]) -> Option<String> {
    let mut cur = v;
    for p in path {
        cur = cur.get(p)?;
    }
    cur.as_str().filter(|s| !s.is_empty()).map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::super::origin::Origin;
    use super::*;
    use serde_json::json;

    fn doc(v: Value) -> Document {
        Document::new(v, Origin::new("f.yaml", 3, 10))
    }

    #[test]
    fn missing_names_and_versions_are_errors() {
        let e = Crd::from_document(&doc(json!({"kind": "CustomResourceDefinition",
            "metadata": {"name": "a.b"}, "spec": {"group": "b"}})))
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "f.yaml: document 3 (line 10): CustomResourceDefinition a.b: no spec.names"
        );
        let e = Crd::from_document(&doc(json!({"kind": "CustomResourceDefinition",
            "metadata": {"name": "as.b"}, "spec": {"group": "b", "names": {"kind": "A", "plural": "as"}}})))
        .unwrap_err()
        .to_string();
        assert!(e.ends_with("no spec.versions"), "{e}");
    }

    #[test]
    fn non_structural_schema_is_an_error() {
        let e = Crd::from_document(&doc(json!({"kind": "CustomResourceDefinition",
            "metadata": {"name": "as.b"}, "spec": {"group": "b", "names": {"kind": "A", "plural": "as"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema":
              {"type": "object", "properties": {"spec": {"properties": {}}}}}}]}})))
        .unwrap_err();
        assert!(matches!(e, InputError::NonStructural { .. }));
        assert!(
            e.to_string()
                .contains("openAPIV3Schema.properties.spec has no type"),
            "{e}"
        );
    }
}

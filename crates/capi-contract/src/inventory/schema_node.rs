//! A CRD version's `openAPIV3Schema`, kept in the compact form the checks walk: per node its
//! `type`, the two Kubernetes flags that open or widen it, and the children reached through
//! `properties`, `items` and `additionalProperties`. Descriptions, defaults, enums and the
//! rest are dropped as the schema is read (the checks never look at them), which makes a
//! schema node about a tenth of its `serde_json::Value` (a sorted `serde_json` map allocates
//! a whole B-tree node even for `{type: string}`).
//!
//! Building a node also checks that the schema is structural in the part the checks walk:
//! every node reached through `properties`, `items` or `additionalProperties` has a `type`
//! (unless `x-kubernetes-int-or-string` or `x-kubernetes-preserve-unknown-fields`), and no
//! node uses `$ref`.

use serde_json::Value;

/// A node's `type` (interned for the common ones).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaType {
    /// No `type`, or one that is not a non-empty string.
    Untyped,
    Object,
    Array,
    String,
    Integer,
    Number,
    Boolean,
    Other(Box<str>),
}

impl SchemaType {
    fn parse(v: Option<&Value>) -> SchemaType {
        match v.and_then(Value::as_str) {
            None | Some("") => SchemaType::Untyped,
            Some("object") => SchemaType::Object,
            Some("array") => SchemaType::Array,
            Some("string") => SchemaType::String,
            Some("integer") => SchemaType::Integer,
            Some("number") => SchemaType::Number,
            Some("boolean") => SchemaType::Boolean,
            Some(other) => SchemaType::Other(other.into()),
        }
    }

    /// The `type` as written (empty when untyped).
    pub fn as_str(&self) -> &str {
        match self {
            SchemaType::Untyped => "",
            SchemaType::Object => "object",
            SchemaType::Array => "array",
            SchemaType::String => "string",
            SchemaType::Integer => "integer",
            SchemaType::Number => "number",
            SchemaType::Boolean => "boolean",
            SchemaType::Other(s) => s,
        }
    }
}

/// A node's `properties`: name and schema, sorted by name.
type Properties = Box<[(Box<str>, SchemaNode)]>;

/// One schema node.
#[derive(Debug, Clone, PartialEq)]
pub struct SchemaNode {
    pub kind: SchemaType,
    /// `x-kubernetes-int-or-string: true`.
    pub int_or_string: bool,
    /// `x-kubernetes-preserve-unknown-fields: true`.
    pub preserve_unknown: bool,
    /// `properties`, sorted by name (`None` when the node has no `properties` key).
    properties: Option<Properties>,
    /// `items` (a non-object `items` is kept as an untyped node).
    items: Option<Box<SchemaNode>>,
    /// `additionalProperties` when it is a schema (a boolean one is dropped).
    additional: Option<Box<SchemaNode>>,
}

/// Why a schema is not structural: the node (its path below `openAPIV3Schema`, e.g.
/// `.properties.spec`) and the problem.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NotStructural {
    at: String,
    problem: &'static str,
}

impl NotStructural {
    fn at_node(problem: &'static str) -> NotStructural {
        NotStructural {
            at: String::new(),
            problem,
        }
    }

    /// The same problem seen from the parent, one `step` up (`.properties.<k>`, `.items`).
    fn under(mut self, step: &str) -> NotStructural {
        self.at.insert_str(0, step);
        self
    }

    pub(crate) fn message(&self) -> String {
        format!("openAPIV3Schema{} {}", self.at, self.problem)
    }
}

/// One property read by a reader: its name and its schema (or why that is not structural).
pub(crate) type ReadProperty = (Box<str>, Result<SchemaNode, NotStructural>);

/// What a reader found in one schema node, before the structural checks: its own keys, and
/// its children already read (or why they are not structural).
pub(crate) struct NodeParts {
    pub kind: SchemaType,
    pub int_or_string: bool,
    pub preserve_unknown: bool,
    pub has_ref: bool,
    /// Sorted by name, without duplicates.
    pub properties: Option<Vec<ReadProperty>>,
    pub items: Option<Result<SchemaNode, NotStructural>>,
    pub additional: Option<Result<SchemaNode, NotStructural>>,
}

impl NodeParts {
    pub(crate) fn new() -> NodeParts {
        NodeParts {
            kind: SchemaType::Untyped,
            int_or_string: false,
            preserve_unknown: false,
            has_ref: false,
            properties: None,
            items: None,
            additional: None,
        }
    }

    /// Records `type`, `$ref` or one of the two flags; other keys are not kept.
    pub(crate) fn scalar_key(&mut self, key: &str, value: &Value) {
        match key {
            "$ref" => self.has_ref = true,
            "type" => self.kind = SchemaType::parse(Some(value)),
            "x-kubernetes-int-or-string" => self.int_or_string = value.as_bool() == Some(true),
            "x-kubernetes-preserve-unknown-fields" => {
                self.preserve_unknown = value.as_bool() == Some(true);
            }
            _ => {}
        }
    }

    /// The node, or the first problem in the order the checks walk: the node itself
    /// (`$ref`, no type), then its properties by name, `items`, `additionalProperties`.
    pub(crate) fn assemble(self) -> Result<SchemaNode, NotStructural> {
        if self.has_ref {
            return Err(NotStructural::at_node("uses $ref"));
        }
        if self.kind == SchemaType::Untyped && !self.int_or_string && !self.preserve_unknown {
            return Err(NotStructural::at_node("has no type"));
        }
        let properties = match self.properties {
            None => None,
            Some(children) => {
                let mut out = Vec::with_capacity(children.len());
                for (k, child) in children {
                    match child {
                        Ok(node) => out.push((k, node)),
                        Err(e) => return Err(e.under(&format!(".properties.{k}"))),
                    }
                }
                Some(out.into_boxed_slice())
            }
        };
        let items = match self.items {
            None => None,
            Some(Ok(node)) => Some(Box::new(node)),
            Some(Err(e)) => return Err(e.under(".items")),
        };
        let additional = match self.additional {
            None => None,
            Some(Ok(node)) => Some(Box::new(node)),
            Some(Err(e)) => return Err(e.under(".additionalProperties")),
        };
        Ok(SchemaNode {
            kind: self.kind,
            int_or_string: self.int_or_string,
            preserve_unknown: self.preserve_unknown,
            properties,
            items,
            additional,
        })
    }
}

impl SchemaNode {
    /// Reads a schema rooted at `openAPIV3Schema`. A non-structural schema is an error naming
    /// the offending node (`openAPIV3Schema.properties.spec has no type`).
    pub fn from_value(root: &Value) -> Result<SchemaNode, String> {
        build(root).map_err(|e| e.message())
    }

    /// An untyped node without children (what a non-object `items` reads as).
    fn untyped() -> SchemaNode {
        SchemaNode {
            kind: SchemaType::Untyped,
            int_or_string: false,
            preserve_unknown: false,
            properties: None,
            items: None,
            additional: None,
        }
    }

    /// The `type` as written (empty when untyped).
    pub fn type_name(&self) -> &str {
        self.kind.as_str()
    }

    /// `properties.<name>`.
    pub fn property(&self, name: &str) -> Option<&SchemaNode> {
        let props = self.properties.as_deref()?;
        props
            .binary_search_by(|(k, _)| (**k).cmp(name))
            .ok()
            .map(|i| &props[i].1)
    }

    /// Whether the node has a `properties` key (even an empty one).
    pub fn has_properties(&self) -> bool {
        self.properties.is_some()
    }

    /// `properties` in name order (empty when absent).
    pub fn properties(&self) -> impl Iterator<Item = (&str, &SchemaNode)> {
        self.properties
            .as_deref()
            .unwrap_or_default()
            .iter()
            .map(|(k, v)| (&**k, v))
    }

    pub fn items(&self) -> Option<&SchemaNode> {
        self.items.as_deref()
    }

    /// `additionalProperties` when it is a schema.
    pub fn additional_properties(&self) -> Option<&SchemaNode> {
        self.additional.as_deref()
    }
}

/// [`SchemaNode::from_value`]'s walk over one node.
pub(crate) fn build(node: &Value) -> Result<SchemaNode, NotStructural> {
    let Some(obj) = node.as_object() else {
        return Err(NotStructural::at_node("is not an object"));
    };
    let mut parts = NodeParts::new();
    for (key, value) in obj {
        match key.as_str() {
            "properties" => parts.properties = Some(properties_node(value)),
            "items" => parts.items = Some(items_node(value)),
            "additionalProperties" => parts.additional = additional_node(value),
            other => parts.scalar_key(other, value),
        }
    }
    parts.assemble()
}

/// `properties`: each child schema by name (none when it is not an object). `serde_json` maps
/// iterate in key order, so they come sorted.
pub(crate) fn properties_node(value: &Value) -> Vec<ReadProperty> {
    value
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, child)| (Box::<str>::from(k.as_str()), build(child)))
        .collect()
}

/// `items`: a schema when it is an object (a non-object `items` reads as an untyped node).
pub(crate) fn items_node(value: &Value) -> Result<SchemaNode, NotStructural> {
    if value.is_object() {
        build(value)
    } else {
        Ok(SchemaNode::untyped())
    }
}

/// `additionalProperties`: a schema when it is an object (a boolean one is dropped).
pub(crate) fn additional_node(value: &Value) -> Option<Result<SchemaNode, NotStructural>> {
    value.is_object().then(|| build(value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keeps_types_flags_and_children() {
        let s = SchemaNode::from_value(&json!({"type": "object", "description": "x",
        "properties": {
            "b": {"type": "array", "items": {"type": "string"}},
            "a": {"type": "object", "additionalProperties": {"type": "integer"}},
            "c": {"x-kubernetes-int-or-string": true},
            "d": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {}},
            "e": {"type": "object", "additionalProperties": true},
            "f": {"type": "thing"}
        }}))
        .unwrap();
        assert_eq!(s.type_name(), "object");
        let names: Vec<&str> = s.properties().map(|(k, _)| k).collect();
        assert_eq!(names, ["a", "b", "c", "d", "e", "f"]);
        let p = |k: &str| s.property(k).unwrap();
        assert_eq!(p("b").items().unwrap().type_name(), "string");
        assert_eq!(
            p("a").additional_properties().unwrap().type_name(),
            "integer"
        );
        assert!(p("c").int_or_string && p("c").type_name().is_empty());
        assert!(p("d").preserve_unknown && p("d").has_properties());
        assert_eq!(p("d").properties().count(), 0);
        assert!(p("e").additional_properties().is_none() && !p("e").has_properties());
        assert_eq!(p("f").type_name(), "thing");
        assert!(s.property("g").is_none());
    }

    #[test]
    fn non_structural_nodes_are_named() {
        let err = |v: Value| SchemaNode::from_value(&v).unwrap_err();
        assert_eq!(
            err(json!({"type": "object", "properties": {"spec": {"properties": {}}}})),
            "openAPIV3Schema.properties.spec has no type"
        );
        assert_eq!(
            err(
                json!({"type": "object", "properties": {"a": {"type": "array",
                "items": {"type": "object", "additionalProperties": {"$ref": "#/x"}}}}})
            ),
            "openAPIV3Schema.properties.a.items.additionalProperties uses $ref"
        );
        assert_eq!(err(json!("x")), "openAPIV3Schema is not an object");
    }

    #[test]
    fn a_non_object_items_reads_as_untyped() {
        let s = SchemaNode::from_value(&json!({"type": "array", "items": [1]})).unwrap();
        assert_eq!(s.items().unwrap().type_name(), "");
    }
}

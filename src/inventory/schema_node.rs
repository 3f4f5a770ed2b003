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

/// One step from a schema node to a child, for the path of a non-structural node.
enum Step<'a> {
    Property(&'a str),
    Items,
    AdditionalProperties,
}

impl SchemaNode {
    /// Reads a schema rooted at `openAPIV3Schema`. A non-structural schema is an error naming
    /// the offending node (`openAPIV3Schema.properties.spec has no type`).
    pub fn from_value(root: &Value) -> Result<SchemaNode, String> {
        let mut trail = Vec::new();
        build(root, &mut trail).map_err(|problem| {
            let mut at = String::from("openAPIV3Schema");
            for step in &trail {
                match step {
                    Step::Property(k) => {
                        at.push_str(".properties.");
                        at.push_str(k);
                    }
                    Step::Items => at.push_str(".items"),
                    Step::AdditionalProperties => at.push_str(".additionalProperties"),
                }
            }
            format!("{at} {problem}")
        })
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

/// [`SchemaNode::from_value`]'s walk: on error, `trail` holds the steps to the offending node
/// (the path is only spelled out then, not for every node).
fn build<'a>(node: &'a Value, trail: &mut Vec<Step<'a>>) -> Result<SchemaNode, &'static str> {
    let Some(obj) = node.as_object() else {
        return Err("is not an object");
    };
    let mut out = SchemaNode::untyped();
    // One pass over the node's keys (instead of one map search per key).
    let mut has_ref = false;
    let mut props = None;
    let mut items = None;
    let mut additional = None;
    for (key, value) in obj {
        match key.as_str() {
            "$ref" => has_ref = true,
            "type" => out.kind = SchemaType::parse(Some(value)),
            "x-kubernetes-int-or-string" => out.int_or_string = value.as_bool() == Some(true),
            "x-kubernetes-preserve-unknown-fields" => {
                out.preserve_unknown = value.as_bool() == Some(true);
            }
            "properties" => props = Some(value),
            "items" => items = Some(value),
            "additionalProperties" => additional = Some(value).filter(|v| v.is_object()),
            _ => {}
        }
    }
    if has_ref {
        return Err("uses $ref");
    }
    if out.kind == SchemaType::Untyped && !out.int_or_string && !out.preserve_unknown {
        return Err("has no type");
    }
    if let Some(props) = props {
        let map = props.as_object();
        let mut children = Vec::with_capacity(map.map_or(0, |m| m.len()));
        for (k, child) in map.into_iter().flatten() {
            trail.push(Step::Property(k));
            children.push((Box::<str>::from(k.as_str()), build(child, trail)?));
            trail.pop();
        }
        // `serde_json` maps iterate in key order: the slice is sorted for `property`.
        out.properties = Some(children.into_boxed_slice());
    }
    if let Some(items) = items {
        out.items = Some(Box::new(if items.is_object() {
            trail.push(Step::Items);
            let node = build(items, trail)?;
            trail.pop();
            node
        } else {
            SchemaNode::untyped()
        }));
    }
    if let Some(ap) = additional {
        trail.push(Step::AdditionalProperties);
        out.additional = Some(Box::new(build(ap, trail)?));
        trail.pop();
    }
    Ok(out)
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

//! Lines of fields in a YAML document, for findings reported at the line a user edits.
//!
//! The fast reader ([`super::fast_yaml`]) keeps no positions, and keeping them for every
//! document would slow `lint` down for nothing: most findings pass. So a document is parsed a
//! second time, with serde-saphyr's [`Spanned`] positions, only when a finding on it is
//! reported (see `checks::locate`). The tree kept is small: mapping keys with their lines,
//! sequence items with theirs, scalars as text (to find a `spec.versions` entry by name).

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;
use std::fmt;

/// A YAML node with the lines of its keys and items (1-based, relative to the parsed text).
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    Map(Vec<Entry>),
    Seq(Vec<Item>),
    Scalar(String),
}

/// A mapping entry: its key, the key's line, its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub key: String,
    pub line: u32,
    pub value: Node,
}

/// A sequence item and the line it starts on.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub line: u32,
    pub value: Node,
}

/// Parses one YAML document (`None` if it does not parse: no line is then reported).
pub fn parse(doc: &str) -> Option<Node> {
    serde_saphyr::from_str::<Node>(doc).ok()
}

/// One step of a path through a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A mapping key.
    Key(String),
    /// The item of a sequence of mappings whose `name` is this (`spec.versions[v1beta2]`).
    Named(String),
    /// An OpenAPI schema property: `properties.<name>`, else the schema's
    /// `additionalProperties` (a map accepts any key).
    Prop(String),
    /// An OpenAPI array schema's `items`.
    Items,
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::Key(k) | Step::Prop(k) => f.write_str(k),
            Step::Named(n) => write!(f, "[{n}]"),
            Step::Items => f.write_str("[]"),
        }
    }
}

/// Where a path leads in a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Line of the deepest node of the path that exists (1 when not even the first does).
    pub line: u32,
    /// Whether the whole path exists (else `line` is its nearest existing ancestor's).
    pub exact: bool,
    /// How many steps exist.
    pub depth: usize,
}

impl Node {
    /// The value of mapping key `key`, with the key's line.
    pub fn get(&self, key: &str) -> Option<(&Node, u32)> {
        match self {
            Node::Map(entries) => entries
                .iter()
                .find(|e| e.key == key)
                .map(|e| (&e.value, e.line)),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Node::Scalar(s) => Some(s),
            _ => None,
        }
    }

    /// Follows `steps` as far as they exist.
    pub fn find(&self, steps: &[Step]) -> Found {
        let mut node = self;
        let mut line = 1;
        for (depth, step) in steps.iter().enumerate() {
            let next = match step {
                Step::Key(k) => node.get(k),
                Step::Named(name) => match node {
                    Node::Seq(items) => items
                        .iter()
                        .find(|i| i.value.get("name").and_then(|(n, _)| n.as_str()) == Some(name))
                        .map(|i| (&i.value, i.line)),
                    _ => None,
                },
                Step::Prop(p) => node
                    .get("properties")
                    .and_then(|(props, _)| props.get(p))
                    .or_else(|| {
                        node.get("additionalProperties")
                            .filter(|(v, _)| matches!(v, Node::Map(_)))
                    }),
                Step::Items => node.get("items"),
            };
            match next {
                Some((n, l)) => {
                    node = n;
                    line = l;
                }
                None => {
                    return Found {
                        line,
                        exact: false,
                        depth,
                    };
                }
            }
        }
        Found {
            line,
            exact: true,
            depth: steps.len(),
        }
    }

    /// The line of the first mapping key (depth first, in document order) that `pred` accepts.
    pub fn find_key(&self, pred: &dyn Fn(&str) -> bool) -> Option<u32> {
        match self {
            Node::Map(entries) => entries.iter().find_map(|e| {
                if pred(&e.key) {
                    Some(e.line)
                } else {
                    e.value.find_key(pred)
                }
            }),
            Node::Seq(items) => items.iter().find_map(|i| i.value.find_key(pred)),
            Node::Scalar(_) => None,
        }
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a YAML node")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Scalar(v.to_string()))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Scalar(v.to_string()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Node, E> {
        Ok(Node::Scalar(v.to_string()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Node, E> {
        Ok(Node::Scalar(v.to_string()))
    }
    fn visit_str<E>(self, v: &str) -> Result<Node, E> {
        Ok(Node::Scalar(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Node, E> {
        Ok(Node::Scalar(v))
    }
    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Scalar(String::new()))
    }
    fn visit_none<E>(self) -> Result<Node, E> {
        Ok(Node::Scalar(String::new()))
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        Node::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Spanned<Node>>()? {
            items.push(Item {
                line: line_of(&item.referenced),
                value: item.value,
            });
        }
        Ok(Node::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<Spanned<Key>>()? {
            let value: Node = map.next_value()?;
            entries.push(Entry {
                key: key.value.0,
                line: line_of(&key.referenced),
                value,
            });
        }
        Ok(Node::Map(entries))
    }
}

fn line_of(loc: &serde_saphyr::Location) -> u32 {
    u32::try_from(loc.line()).unwrap_or(u32::MAX)
}

/// A mapping key as text (a complex key is the empty string).
struct Key(String);

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a mapping key")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Key, E> {
        Ok(Key(v.to_string()))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Key, E> {
        Ok(Key(v.to_string()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Key, E> {
        Ok(Key(v.to_string()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Key, E> {
        Ok(Key(v.to_string()))
    }
    fn visit_str<E>(self, v: &str) -> Result<Key, E> {
        Ok(Key(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Key, E> {
        Ok(Key(v))
    }
    fn visit_unit<E>(self) -> Result<Key, E> {
        Ok(Key(String::new()))
    }
    fn visit_none<E>(self) -> Result<Key, E> {
        Ok(Key(String::new()))
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Key, D::Error> {
        Key::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Key, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Key(String::new()))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Key, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Key(String::new()))
    }
}

/// Parses a field path as evidence spells it into steps.
///
/// - Object paths: `metadata.name`, `spec.names.categories`; a segment `key[name]` steps into
///   the `key` sequence's item named `name` (`spec.versions[v1beta2]`); a segment `["a.b/c"]`
///   (or `key["a.b/c"]`) is a mapping key holding dots (`metadata.labels["cluster.x-k8s.io/v1beta2"]`).
/// - A schema path after `: ` (`spec.versions[v1beta2].schema.openAPIV3Schema: status.ready`)
///   walks OpenAPI `properties` (`[]` after a segment steps into `items`).
pub fn parse_path(path: &str) -> Vec<Step> {
    let (object, schema) = match path.split_once(": ") {
        Some((o, s)) => (o, Some(s)),
        None => (path, None),
    };
    let mut steps = Vec::new();
    for seg in split_segments(object) {
        let (head, rest) = match seg.find('[') {
            Some(i) => (&seg[..i], &seg[i..]),
            None => (seg, ""),
        };
        if !head.is_empty() {
            steps.push(Step::Key(head.to_string()));
        }
        let mut rest = rest;
        while let Some(inner) = rest.strip_prefix('[') {
            let Some(end) = inner.find(']') else { break };
            let sel = &inner[..end];
            match sel.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
                Some(key) => steps.push(Step::Key(key.to_string())),
                None if !sel.is_empty() => steps.push(Step::Named(sel.to_string())),
                None => {}
            }
            rest = &inner[end + 1..];
        }
    }
    if let Some(schema) = schema {
        for seg in schema.split('.').filter(|s| !s.is_empty()) {
            let mut name = seg;
            let mut items = 0;
            while let Some(n) = name.strip_suffix("[]") {
                name = n;
                items += 1;
            }
            steps.push(Step::Prop(name.to_string()));
            steps.extend(std::iter::repeat_n(Step::Items, items));
        }
    }
    steps
}

/// Splits at dots outside brackets.
fn split_segments(path: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in path.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            '.' if depth == 0 => {
                out.push(&path[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&path[start..]);
    out.retain(|s| !s.is_empty());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: foos.x.io
spec:
  names:
    kind: Foo
  versions:
  - name: v1beta1
    schema:
      openAPIV3Schema:
        properties:
          status: {type: object}
  - name: v1beta2
    schema:
      openAPIV3Schema:
        type: object
        properties:
          status:
            type: object
            properties:
              addresses:
                type: array
                items:
                  properties:
                    type:
                      type: string
              tags:
                additionalProperties:
                  type: string
";

    #[test]
    fn finds_fields_by_version_and_schema_path() {
        let node = parse(CRD).unwrap();
        let at = |p: &str| node.find(&parse_path(p));
        assert_eq!(at("metadata.name").line, 4);
        assert!(at("metadata.name").exact);
        let f = at("spec.versions[v1beta2].schema.openAPIV3Schema: status.addresses[].type");
        assert_eq!((f.line, f.exact), (26, true));
        let f = at("spec.versions[v1beta2].schema.openAPIV3Schema: status.tags.anything");
        assert_eq!((f.line, f.exact), (29, true));
        // Missing: the nearest existing ancestor (`status` of v1beta1).
        let f =
            at("spec.versions[v1beta1].schema.openAPIV3Schema: status.initialization.provisioned");
        assert_eq!((f.line, f.exact, f.depth), (13, false, 6));
        let f = at("spec.names.categories");
        assert_eq!((f.line, f.exact), (6, false));
    }

    #[test]
    fn paths_with_dotted_keys_and_selectors() {
        assert_eq!(
            parse_path("metadata.labels[\"cluster.x-k8s.io/v1beta2\"]"),
            vec![
                Step::Key("metadata".into()),
                Step::Key("labels".into()),
                Step::Key("cluster.x-k8s.io/v1beta2".into())
            ]
        );
        assert_eq!(
            parse_path("spec.versions[v1.2].subresources.status"),
            vec![
                Step::Key("spec".into()),
                Step::Key("versions".into()),
                Step::Named("v1.2".into()),
                Step::Key("subresources".into()),
                Step::Key("status".into())
            ]
        );
    }

    #[test]
    fn finds_keys_anywhere() {
        let node = parse("labels:\n- pairs:\n    cluster.x-k8s.io/v1beta2: v1beta2\n").unwrap();
        assert_eq!(
            node.find_key(&|k| k.starts_with("cluster.x-k8s.io/")),
            Some(3)
        );
    }
}

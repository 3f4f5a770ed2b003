//! A fast reader for the plain block-style YAML that generators write (controller-gen,
//! kustomize, `kubectl get -o yaml`, serde-saphyr): block mappings and sequences, one-line plain
//! and quoted scalars, literal block scalars (`|`, `|-`), `{}` / `[]`, comment lines.
//!
//! It is only a fast path: whenever a document leaves that subset, or anything could be read
//! two ways (a plain scalar that might be a number, an anchor, a tag, a flow collection, a
//! folded scalar, a duplicate key, a tab, deep nesting, …), [`parse`] returns `None` and the
//! caller parses the document with serde-saphyr. So every error message, the alias and
//! budget limits and the duplicate-key refusal stay serde-saphyr's; where this reader does
//! answer, it builds exactly the `serde_json::Value` serde-saphyr builds (tested against it on
//! the fixtures, the real-provider corpus and generated documents).

use super::schema_node::{self, NodeParts, NotStructural, ReadProperty, SchemaNode};
use serde_json::{Map, Value};

mod scalar;

use scalar::{Entry, scalar, split_key};

/// Deeper documents are left to serde-saphyr (which bounds them itself).
const MAX_DEPTH: usize = 64;

/// Parses one document (no `---` markers) whose root is a block mapping at column 0, or
/// returns `None` if the text is outside the subset this reader answers for.
pub fn parse(doc: &str) -> Option<Value> {
    read(doc, false).map(|(value, _)| value)
}

/// Which `openAPIV3Schema` of a CRD a schema read by [`parse_compact`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaSlot {
    /// `spec.versions[i].schema.openAPIV3Schema`.
    Version(usize),
    /// The legacy `spec.validation.openAPIV3Schema`.
    Validation,
}

/// A CRD schema read straight from the text into its compact form (or why it is not
/// structural, as [`SchemaNode::from_value`] words it).
pub type ReadSchema = (SchemaSlot, Result<SchemaNode, String>);

/// As [`parse`], but in a CRD (one whose `kind` comes before its `spec`) each block-mapping
/// `openAPIV3Schema` is read straight into a [`SchemaNode`] and left as `null` in the value:
/// no JSON tree is built for it. What it reads is exactly what [`SchemaNode::from_value`]
/// gives on the value [`parse`] returns (tested on the fixtures and generated schemas).
pub fn parse_compact(doc: &str) -> Option<(Value, Vec<ReadSchema>)> {
    read(doc, true)
}

fn read(doc: &str, compact: bool) -> Option<(Value, Vec<ReadSchema>)> {
    if !plain_chars(doc) {
        return None;
    }
    let mut r = Reader {
        lines: doc.split('\n').collect(),
        pos: 0,
        virtual_line: None,
        compact,
        is_crd: false,
        schemas: Vec::new(),
    };
    match r.peek() {
        Some((0, _)) => {}
        _ => return None,
    }
    let value = r.map(0, 0, Place::Root)?;
    if r.peek().is_some() {
        return None;
    }
    Some((value, r.schemas))
}

/// Where a node sits in a CRD, as far as compact reading cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Root,
    Spec,
    Versions,
    Version(usize),
    VersionSchema(usize),
    Validation,
    Other,
}

impl Place {
    fn child(self, key: &str) -> Place {
        match (self, key) {
            (Place::Root, "spec") => Place::Spec,
            (Place::Spec, "versions") => Place::Versions,
            (Place::Spec, "validation") => Place::Validation,
            (Place::Version(i), "schema") => Place::VersionSchema(i),
            _ => Place::Other,
        }
    }

    /// The slot an `openAPIV3Schema` key here fills.
    fn schema_slot(self) -> Option<SchemaSlot> {
        match self {
            Place::VersionSchema(i) => Some(SchemaSlot::Version(i)),
            Place::Validation => Some(SchemaSlot::Validation),
            _ => None,
        }
    }
}

/// No tabs, carriage returns, control characters or the Unicode line/BOM characters whose
/// handling differs between YAML readers: those documents go to serde-saphyr.
fn plain_chars(doc: &str) -> bool {
    let ascii_ok = |b: u8| b == b'\n' || (0x20..0x7f).contains(&b);
    if doc.is_ascii() {
        return doc.bytes().all(ascii_ok);
    }
    doc.chars().all(|c| {
        if c.is_ascii() {
            ascii_ok(c as u8)
        } else {
            !matches!(
                c,
                '\u{80}'
                    ..='\u{9f}' | '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
            )
        }
    })
}

/// Number of leading spaces.
fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// `-` alone or `- …`: a block sequence entry.
fn is_entry(content: &str) -> bool {
    content == "-" || content.starts_with("- ")
}

struct Reader<'a> {
    lines: Vec<&'a str>,
    /// Next raw line.
    pos: usize,
    /// The rest of a `- key: value` line, read as the first line of the entry's mapping
    /// (indent = its column).
    virtual_line: Option<(usize, &'a str)>,
    /// Read CRD schemas straight into [`SchemaNode`]s ([`parse_compact`]).
    compact: bool,
    /// The root's `kind` is `CustomResourceDefinition`.
    is_crd: bool,
    schemas: Vec<ReadSchema>,
}

impl<'a> Reader<'a> {
    /// The next content line as `(indent, text without indent and trailing spaces)`, skipping
    /// blank and comment lines.
    fn peek(&mut self) -> Option<(usize, &'a str)> {
        if let Some(v) = self.virtual_line {
            return Some(v);
        }
        while let Some(line) = self.lines.get(self.pos) {
            let indent = indent_of(line);
            let content = line[indent..].trim_end_matches(' ');
            if content.is_empty() || content.starts_with('#') {
                self.pos += 1;
                continue;
            }
            return Some((indent, content));
        }
        None
    }

    /// Consumes the line [`Reader::peek`] returned.
    fn advance(&mut self) {
        if self.virtual_line.take().is_none() {
            self.pos += 1;
        }
    }

    fn node(&mut self, indent: usize, content: &str, depth: usize, place: Place) -> Option<Value> {
        if is_entry(content) {
            self.seq(indent, depth, place)
        } else {
            self.map(indent, depth, place)
        }
    }

    /// The value after `key:` on a line at `indent` (`rest` is what follows the colon).
    fn value(&mut self, rest: &str, indent: usize, depth: usize, place: Place) -> Option<Value> {
        if rest.is_empty() {
            self.nested(indent, depth, place)
        } else if rest.starts_with('|') {
            self.literal(rest, indent)
        } else {
            scalar(rest)
        }
    }

    /// The indent of the block mapping that follows a `key:` line at `indent` (with nothing
    /// after the colon), if that is what follows.
    fn block_map_after(&mut self, rest: &str, indent: usize) -> Option<usize> {
        if !rest.is_empty() {
            return None;
        }
        match self.peek() {
            Some((ind, content)) if ind > indent && !is_entry(content) => Some(ind),
            _ => None,
        }
    }

    /// The next `key: rest` line of the block mapping at `indent` (`Some(None)`: the mapping
    /// ended; `None`: outside this reader's subset). The line is not consumed.
    fn next_entry(&mut self, indent: usize) -> Option<Option<(String, &'a str)>> {
        let Some((ind, content)) = self.peek() else {
            return Some(None);
        };
        if ind < indent {
            return Some(None);
        }
        if ind > indent {
            return None;
        }
        match split_key(content) {
            Entry::KeyValue(key, rest) => Some(Some((key, rest))),
            _ => None,
        }
    }

    fn map(&mut self, indent: usize, depth: usize, place: Place) -> Option<Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        let mut out = Map::new();
        while let Some((key, rest)) = self.next_entry(indent)? {
            self.advance();
            let slot = place
                .schema_slot()
                .filter(|_| self.compact && self.is_crd && key == "openAPIV3Schema");
            let value = match slot.zip(self.block_map_after(rest, indent)) {
                Some((slot, child)) => {
                    let schema = self.schema_map(child, depth + 1)?;
                    self.schemas.push((slot, schema.map_err(|e| e.message())));
                    Value::Null
                }
                None => self.value(rest, indent, depth, place.child(&key))?,
            };
            if place == Place::Root && key == "kind" && value == "CustomResourceDefinition" {
                self.is_crd = true;
            }
            match out.entry(key) {
                serde_json::map::Entry::Vacant(e) => {
                    e.insert(value);
                }
                // Duplicate keys: serde-saphyr reports them.
                serde_json::map::Entry::Occupied(_) => return None,
            }
        }
        Some(Value::Object(out))
    }

    /// The value of `key:` with nothing after the colon: a more indented node, a sequence at
    /// the key's own indent, or null.
    fn nested(&mut self, key_indent: usize, depth: usize, place: Place) -> Option<Value> {
        match self.peek() {
            Some((ind, content)) if ind > key_indent => self.node(ind, content, depth + 1, place),
            Some((ind, content)) if ind == key_indent && is_entry(content) => {
                self.seq(ind, depth + 1, place)
            }
            _ => Some(Value::Null),
        }
    }

    /// One schema node written as a block mapping at `indent`, read into its compact form
    /// with the structural checks of [`SchemaNode::from_value`]. `None`: outside this
    /// reader's subset (the caller falls back to serde-saphyr).
    fn schema_map(
        &mut self,
        indent: usize,
        depth: usize,
    ) -> Option<Result<SchemaNode, NotStructural>> {
        if depth > MAX_DEPTH {
            return None;
        }
        let mut parts = NodeParts::new();
        let mut seen: Vec<String> = Vec::new();
        while let Some((key, rest)) = self.next_entry(indent)? {
            if seen.contains(&key) {
                // Duplicate keys: serde-saphyr reports them.
                return None;
            }
            self.advance();
            let child = self.block_map_after(rest, indent);
            match (key.as_str(), child) {
                ("properties", Some(child)) => {
                    parts.properties = Some(self.schema_properties(child, depth + 1)?);
                }
                ("items", Some(child)) => parts.items = Some(self.schema_map(child, depth + 1)?),
                ("additionalProperties", Some(child)) => {
                    parts.additional = Some(self.schema_map(child, depth + 1)?);
                }
                (key, _) => {
                    let value = self.value(rest, indent, depth, Place::Other)?;
                    match key {
                        "properties" => {
                            parts.properties = Some(schema_node::properties_node(&value));
                        }
                        "items" => parts.items = Some(schema_node::items_node(&value)),
                        "additionalProperties" => {
                            parts.additional = schema_node::additional_node(&value);
                        }
                        other => parts.scalar_key(other, &value),
                    }
                }
            }
            seen.push(key);
        }
        Some(parts.assemble())
    }

    /// The block mapping under `properties:` at `indent`: each child schema by name, sorted.
    fn schema_properties(&mut self, indent: usize, depth: usize) -> Option<Vec<ReadProperty>> {
        if depth > MAX_DEPTH {
            return None;
        }
        let mut out: Vec<ReadProperty> = Vec::new();
        while let Some((key, rest)) = self.next_entry(indent)? {
            self.advance();
            let child = match self.block_map_after(rest, indent) {
                Some(child) => self.schema_map(child, depth + 1)?,
                None => schema_node::build(&self.value(rest, indent, depth, Place::Other)?),
            };
            out.push((key.into_boxed_str(), child));
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        if out.windows(2).any(|w| w[0].0 == w[1].0) {
            // Duplicate keys: serde-saphyr reports them.
            return None;
        }
        Some(out)
    }

    fn seq(&mut self, indent: usize, depth: usize, place: Place) -> Option<Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        let mut out = Vec::new();
        while let Some((ind, content)) = self.peek() {
            if ind > indent {
                return None;
            }
            if ind < indent || !is_entry(content) {
                break;
            }
            let rest = content[1..].trim_start_matches(' ');
            let column = ind + (content.len() - rest.len());
            let item_place = match place {
                Place::Versions => Place::Version(out.len()),
                _ => Place::Other,
            };
            if rest.is_empty() {
                self.advance();
                let item = match self.peek() {
                    Some((i2, c2)) if i2 > indent => self.node(i2, c2, depth + 1, item_place)?,
                    _ => Value::Null,
                };
                out.push(item);
            } else if rest.starts_with('-') && is_entry(rest) {
                return None;
            } else if rest.starts_with('|') {
                self.advance();
                out.push(self.literal(rest, indent)?);
            } else {
                match split_key(rest) {
                    Entry::KeyValue(..) => {
                        // `- key: value`: a mapping whose keys sit at `column`.
                        self.advance();
                        self.virtual_line = Some((column, rest));
                        out.push(self.map(column, depth + 1, item_place)?);
                    }
                    Entry::Scalar => {
                        self.advance();
                        out.push(scalar(rest)?);
                    }
                    Entry::Unsure => return None,
                }
            }
        }
        Some(Value::Array(out))
    }

    /// A literal block scalar (`|` keeps one final newline, `|-` none) whose lines follow the
    /// current position; `parent` is the indent of the key or entry that owns it.
    fn literal(&mut self, header: &str, parent: usize) -> Option<Value> {
        let strip = match header {
            "|" => false,
            "|-" => true,
            _ => return None,
        };
        let first = self.lines.get(self.pos)?;
        let content_indent = indent_of(first);
        if first.len() == content_indent || content_indent <= parent {
            // Leading blank lines or an empty scalar: left to serde-saphyr.
            return None;
        }
        let mut out = String::new();
        let mut started = false;
        let mut blank_run = 0usize;
        while let Some(line) = self.lines.get(self.pos) {
            let ind = indent_of(line);
            if ind == line.len() {
                if ind > content_indent {
                    return None;
                }
                blank_run += 1;
                self.pos += 1;
                continue;
            }
            if ind < content_indent {
                break;
            }
            if started {
                out.push('\n');
            }
            for _ in 0..blank_run {
                out.push('\n');
            }
            blank_run = 0;
            started = true;
            out.push_str(&line[content_indent..]);
            self.pos += 1;
        }
        if !strip {
            out.push('\n');
        }
        Some(Value::String(out))
    }
}

#[cfg(test)]
mod tests;

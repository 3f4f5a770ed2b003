//! Documents: a text (JSON or multi-document YAML) split and parsed into JSON values, each
//! with its origin (file, document index, line). Where texts come from (files, directories,
//! stdin, kustomize) is the CLI's source stage; [`read_file`] reads one named file within the
//! size limit (also used to quote source lines of evidence).

use super::crd::Crd;
use super::error::InputError;
use super::fast_yaml::ReadSchema;
pub use super::origin::{Origin, RenderedFrom};
use serde_json::Value;
use std::fmt;
use std::path::Path;

/// Files larger than this are refused ("too large"): real components YAML is a few MB.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.rendered.as_deref() {
            Some(RenderedFrom {
                file: Some(from), ..
            }) => write!(
                f,
                "{} (kustomize): document {} (from {from})",
                self.file, self.index
            ),
            Some(_) => write!(f, "{} (kustomize): document {}", self.file, self.index),
            None => write!(
                f,
                "{}: document {} (line {})",
                self.file, self.index, self.line
            ),
        }
    }
}

/// One parsed input document: a JSON value plus where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    pub value: Value,
    pub origin: Origin,
    /// For a CRD read with [`SchemaForm::Compact`]: the CRD (or why it is malformed), read as
    /// the document was parsed; `value` then keeps only `apiVersion`, `kind` and
    /// `metadata.name`/`namespace`.
    pub crd: Option<Box<Result<Crd, InputError>>>,
}

impl Document {
    pub fn new(value: Value, origin: Origin) -> Document {
        Document {
            value,
            origin,
            crd: None,
        }
    }
}

/// A note on one input (the source stage collects them beside its documents).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputNote {
    /// The input it is about: a file (`file#index` for a document), a directory, a root.
    pub source: String,
    pub message: String,
}

/// Reads one file, refusing anything above [`MAX_FILE_BYTES`].
pub fn read_file(path: &Path) -> Result<String, InputError> {
    let file = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|e| InputError::Unreadable {
        file: file.clone(),
        message: e.to_string(),
    })?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(InputError::TooLarge {
            file,
            bytes: meta.len(),
        });
    }
    let bytes = std::fs::read(path).map_err(|e| InputError::Unreadable {
        file: file.clone(),
        message: e.to_string(),
    })?;
    String::from_utf8(bytes).map_err(|_| InputError::Unreadable {
        file,
        message: "not valid UTF-8".into(),
    })
}

/// Splits a YAML stream into documents at `---` lines; returns `(start line, text)` pairs
/// (1-based line of the document's first content line).
pub fn split_documents(text: &str) -> Vec<(usize, &str)> {
    let mut docs = Vec::new();
    let mut start = 0usize;
    let mut start_line = 1usize;
    let mut offset = 0usize;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let trimmed = line.trim_end();
        if trimmed == "---" || trimmed == "..." {
            docs.push((start_line, &text[start..offset]));
            start = offset + line.len();
            start_line = i + 2;
        } else if trimmed.starts_with("--- ") {
            // `--- <content>`: the document starts on this line, after the marker.
            docs.push((start_line, &text[start..offset]));
            start = offset + 4;
            start_line = i + 1;
        }
        offset += line.len();
    }
    docs.push((start_line, &text[start..]));
    docs
}

/// The 1-based start line of every document of `file`'s text, by document index (the index
/// and line an [`Origin`] of the same text has): what a report writer uses to place evidence
/// that names only `file#index`.
pub fn document_start_lines(file: &str, text: &str) -> Vec<usize> {
    if file.ends_with(".json") {
        return vec![1];
    }
    split_documents(text)
        .into_iter()
        .map(|(line, _)| line)
        .collect()
}

fn is_blank(doc: &str) -> bool {
    doc.lines().all(|l| {
        let t = l.trim();
        t.is_empty() || t.starts_with('#') || t.starts_with('%')
    })
}

/// Parses one file's text (JSON or multi-document YAML) into documents. Empty documents
/// (only comments or whitespace) are dropped but still count for the index.
/// CRDs are kept whole ([`SchemaForm::Whole`]); `lint` reads files with
/// [`SchemaForm::Compact`].
pub fn parse_text(file: &str, text: &str) -> Vec<Result<Document, InputError>> {
    parse_text_as(file, text, SchemaForm::Whole)
}

/// [`parse_text`], keeping CRD schemas in the given form.
pub fn parse_text_as(
    file: &str,
    text: &str,
    form: SchemaForm,
) -> Vec<Result<Document, InputError>> {
    parse_text_with(file, text, form, None)
}

/// What is done to each parsed document before its CRD is read (a rendered kustomize stream
/// moves kustomize's annotations into the document's origin).
pub type DocumentHook<'a> = &'a (dyn Fn(&mut Document) + Sync);

/// [`parse_text_as`], running `hook` on every document right after it is parsed.
pub fn parse_text_with(
    file: &str,
    text: &str,
    form: SchemaForm,
    hook: Option<DocumentHook<'_>>,
) -> Vec<Result<Document, InputError>> {
    let hooked = |parsed: Result<(Document, Vec<ReadSchema>), InputError>| {
        parsed.map(|(mut d, read)| {
            if let Some(h) = hook {
                h(&mut d);
            }
            (d, read)
        })
    };
    if file.ends_with(".json") {
        let origin = Origin::new(file, 0, 1);
        return vec![form.apply(hooked(parse_json(text, origin).map(|d| (d, Vec::new()))))];
    }
    // YAML (a superset of JSON, so `-` and extension-less JSON work too).
    let docs: Vec<(usize, usize, &str)> = split_documents(text)
        .into_iter()
        .enumerate()
        .filter(|(_, (_, doc))| !is_blank(doc))
        .map(|(index, (line, doc))| (index, line, doc))
        .collect();
    let parse = |&(index, line, doc): &(usize, usize, &str)| {
        form.apply(hooked(parse_yaml_doc(
            doc,
            Origin::new(file, index, line),
            form,
        )))
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    if threads < 2 || docs.len() < 16 || text.len() < PARALLEL_BYTES {
        return docs.iter().map(parse).collect();
    }
    // Large streams: parse documents on every core, keeping their order.
    let chunk = docs.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = docs
            .chunks(chunk)
            .map(|part| scope.spawn(move || part.iter().map(parse).collect::<Vec<_>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| match h.join() {
                Ok(v) => v,
                Err(_) => vec![Err(InputError::Unreadable {
                    file: file.to_string(),
                    message: "internal error while parsing".into(),
                })],
            })
            .collect()
    })
}

/// Streams at least this large are parsed on several threads.
const PARALLEL_BYTES: usize = 512 * 1024;

fn parse_json(text: &str, origin: Origin) -> Result<Document, InputError> {
    let value = serde_json::from_str::<StrictValue>(text)
        .map(|v| v.0)
        .map_err(|e| InputError::InvalidSyntax {
            origin: origin.clone(),
            message: format!("invalid JSON at line {}: {e}", e.line()),
        })?;
    // A JSON `List` (kubectl get -o json) holds its documents in `items`.
    document(value, origin)
}

/// A JSON value that refuses duplicate object keys, as YAML input does (a duplicated `scope` or
/// `kind` must not silently take the last value).
struct StrictValue(Value);

impl<'de> serde::Deserialize<'de> for StrictValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrictVisitor).map(StrictValue)
    }
}

struct StrictVisitor;

impl<'de> serde::de::Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        serde::Deserialize::deserialize(d).map(|v: StrictValue| v.0)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(StrictValue(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let StrictValue(v) = map.next_value()?;
            if out.contains_key(&key) {
                return Err(serde::de::Error::custom(format!("duplicate key {key:?}")));
            }
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

/// One YAML document, with the CRD schemas the fast reader read straight into their compact
/// form ([`SchemaForm::Compact`]).
fn parse_yaml_doc(
    doc: &str,
    origin: Origin,
    form: SchemaForm,
) -> Result<(Document, Vec<ReadSchema>), InputError> {
    // Plain block YAML (what generators write) takes the fast reader; anything else, and every
    // error, goes through serde-saphyr.
    let fast = match form {
        SchemaForm::Compact => super::fast_yaml::parse_compact(doc),
        SchemaForm::Whole => super::fast_yaml::parse(doc).map(|v| (v, Vec::new())),
    };
    if let Some((value, read)) = fast {
        return document(value, origin).map(|d| (d, read));
    }
    let value: Value = serde_saphyr::from_str(doc).map_err(|e| InputError::InvalidSyntax {
        origin: origin.clone(),
        message: yaml_error(&e, origin.line),
    })?;
    document(value, origin).map(|d| (d, Vec::new()))
}

/// One-line YAML error with the position made absolute (file line, not document line).
fn yaml_error(e: &serde_saphyr::Error, doc_line: usize) -> String {
    let text = one_line(&e.without_snippet().to_string());
    let text = text.strip_prefix("error: ").unwrap_or(&text);
    match e.location() {
        Some(loc) if loc.line() > 0 => {
            let line = doc_line as u64 + loc.line() - 1;
            // Drop the document-relative "line N column M: " prefix the parser adds.
            let detail = text
                .split_once(": ")
                .filter(|(head, _)| head.starts_with("line "))
                .map(|(_, rest)| rest)
                .unwrap_or(text);
            // …and the relative " at line N, column M" suffix.
            let detail = match detail.rsplit_once(" at line ") {
                Some((head, tail)) if tail.contains(", column ") => head,
                _ => detail,
            };
            format!(
                "invalid YAML at line {line}, column {}: {detail}",
                loc.column()
            )
        }
        _ => format!("invalid YAML: {text}"),
    }
}

fn document(value: Value, origin: Origin) -> Result<Document, InputError> {
    if !value.is_object() {
        return Err(InputError::NotMapping {
            origin,
            found: json_kind(&value).into(),
        });
    }
    Ok(Document::new(value, origin))
}

/// How a CRD's version schemas are kept once its document is parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaForm {
    /// A CRD document is read into a [`Crd`] (its schemas into compact
    /// [`super::SchemaNode`] trees) right after it is parsed, so its big JSON tree is freed at
    /// once (what `lint` does). Problems are kept with it and reported as before.
    Compact,
    /// Left in the document's JSON (for callers that edit the documents first).
    Whole,
}

impl SchemaForm {
    fn apply(
        self,
        parsed: Result<(Document, Vec<ReadSchema>), InputError>,
    ) -> Result<Document, InputError> {
        let (doc, read) = parsed?;
        if !Crd::is_crd(&doc) {
            return Ok(doc);
        }
        if is_kustomize_patch(&doc.value) {
            return Err(InputError::KustomizePatch {
                name: doc
                    .value
                    .pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or("<unnamed>")
                    .to_string(),
                origin: doc.origin,
            });
        }
        if self == SchemaForm::Whole {
            return Ok(doc);
        }
        // What is still read from a CRD's document (template files, evidence): its type and
        // its name; labels and annotations live on in the `Crd`.
        let mut skeleton = serde_json::Map::new();
        for key in ["apiVersion", "kind"] {
            if let Some(v) = doc.value.get(key) {
                skeleton.insert(key.to_string(), v.clone());
            }
        }
        if let Some(meta) = doc.value.get("metadata").and_then(Value::as_object) {
            let kept: serde_json::Map<String, Value> = ["name", "namespace"]
                .into_iter()
                .filter_map(|k| meta.get(k).map(|v| (k.to_string(), v.clone())))
                .collect();
            skeleton.insert("metadata".into(), Value::Object(kept));
        }
        let origin = doc.origin.clone();
        let crd = Crd::from_read_document(doc, read);
        Ok(Document {
            value: Value::Object(skeleton),
            origin,
            crd: Some(Box::new(crd)),
        })
    }
}

/// Whether a CustomResourceDefinition document is a kustomize patch rather than a CRD: it has
/// none of `spec.group`, `spec.names` and `spec.versions` (kubebuilder's
/// `config/crd/patches/webhook_in_*.yaml` hold only `spec.conversion`,
/// `cainjection_in_*.yaml` only metadata). A CRD missing only some of them is malformed, not a
/// patch, and stays an error.
pub fn is_kustomize_patch(v: &Value) -> bool {
    let spec = v.get("spec");
    ["group", "names", "versions"]
        .iter()
        .all(|k| spec.and_then(|s| s.get(k)).is_none())
}

/// JSON type name of a value, for messages.
pub fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn one_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Expands `kind: List` documents (e.g. `kubectl get crd -o yaml`) into their items.
pub fn expand_lists(docs: Vec<Document>) -> Vec<Document> {
    let mut out = Vec::with_capacity(docs.len());
    for doc in docs {
        let is_list = doc.value.get("kind").and_then(Value::as_str) == Some("List");
        match (is_list, doc.value.get("items").and_then(Value::as_array)) {
            (true, Some(items)) => {
                for item in items.iter().filter(|i| i.is_object()) {
                    out.push(Document::new(item.clone(), doc.origin.clone()));
                }
            }
            _ => out.push(doc),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_multi_document_yaml_with_lines() {
        let text = "a: 1\n---\n# comment\n---\nb: 2\n...\n";
        let docs = parse_text("x.yaml", text);
        assert_eq!(docs.len(), 2);
        let second = docs[1].as_ref().unwrap();
        assert_eq!(second.origin.index, 2);
        assert_eq!(second.origin.line, 5);
        assert_eq!(second.value["b"], 2);
    }

    #[test]
    fn content_after_the_document_marker_is_kept() {
        let docs = parse_text("x.yaml", "--- # first\na: 1\n--- {b: 2}\n");
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[0].as_ref().unwrap().value["a"], 1);
        let second = docs[1].as_ref().unwrap();
        assert_eq!(second.value["b"], 2);
        assert_eq!(second.origin.line, 3);
    }

    #[test]
    fn non_mapping_and_invalid_yaml_are_errors() {
        let docs = parse_text("x.yaml", "- a\n- b\n");
        assert!(matches!(docs[0], Err(InputError::NotMapping { .. })));
        let docs = parse_text("x.yaml", "a: [1, 2\n");
        let err = docs[0].as_ref().unwrap_err().to_string();
        assert!(
            err.starts_with("x.yaml: document 0 (line 1): invalid YAML"),
            "{err}"
        );
        assert!(!err.contains('\n'));
    }

    #[test]
    fn duplicate_json_keys_are_an_error() {
        let docs = parse_text("x.json", r#"{"kind": "A", "spec": {"a": 1, "a": 2}}"#);
        let err = docs[0].as_ref().unwrap_err().to_string();
        assert!(
            err.starts_with("x.json: document 0 (line 1): invalid JSON at line 1")
                && err.contains("duplicate key \"a\""),
            "{err}"
        );
    }

    #[test]
    fn json_input() {
        let docs = parse_text("x.json", "{\"kind\": \"A\"}");
        assert_eq!(docs[0].as_ref().unwrap().value["kind"], "A");
    }
}

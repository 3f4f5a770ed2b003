//! Findings at the source line: the evidence of every failing cell is given the file and line a
//! user edits to fix it ([`Evidence::source`], and `location` as `file:line`).
//!
//! - A document read from a file: that file, the line of the evidence's field in that
//!   document.
//! - A document rendered from a kustomize root: the file kustomize read it from (its origin
//!   annotation), the document in it of the same kind and name, the line of the field there.
//! - The field: the evidence's `path` (a CRD field, or a schema path
//!   `spec.versions[v1beta2].schema.openAPIV3Schema: status.ready` walked through `properties`
//!   / `items` / `additionalProperties`); without one, `metadata.name`. A field the document
//!   does not have is reported at its nearest existing ancestor, and the evidence says so.
//! - Contract labels (`metadata.labels…`): the line that sets the label, in the CRD or in the
//!   kustomization whose `labels:` / `commonLabels:` added it; a missing label at the
//!   kustomization's `labels:` / `commonLabels:` (where it would be added), else the CRD's
//!   `metadata.labels` / `metadata`.
//!
//! Only failing cells are located, each source document parsed once, lazily: a passing run
//! reads nothing more.

use crate::inventory::lines::{self, Found, Node, Step};
use crate::inventory::{Inventory, Origin};
use crate::model::{Evidence, Outcome, RuleResult, SourceLocation};
use std::collections::HashMap;
use std::rc::Rc;

/// Fills `source` (and `location`) of the evidence of every failing result.
pub(crate) fn locate_failures(results: &mut [RuleResult], inv: &Inventory) {
    if !results.iter().any(|r| r.outcome == Outcome::Fail) {
        return;
    }
    let mut locator = Locator::new(inv);
    for r in results.iter_mut().filter(|r| r.outcome == Outcome::Fail) {
        for e in &mut r.evidence {
            locator.locate(e);
        }
    }
}

/// An input document evidence can point at.
#[derive(Clone, Copy)]
struct Target<'a> {
    origin: &'a Origin,
    kind: &'a str,
    name: &'a str,
}

/// A source file's documents: (index, 1-based start line, text).
type FileDocuments = Rc<Vec<(usize, u32, String)>>;

/// A parsed source document: where it starts in its file, its tree.
struct SourceDoc {
    start_line: u32,
    node: Option<Node>,
}

struct Locator<'a> {
    /// Evidence location (`file#index`) → the documents there, with their object reference.
    targets: HashMap<String, Vec<(String, Target<'a>)>>,
    /// File → its documents (index, start line, text), or `None` when it cannot be read.
    files: HashMap<String, Option<FileDocuments>>,
    /// (file, document index) → the parsed document.
    docs: HashMap<(String, usize), Rc<SourceDoc>>,
}

impl<'a> Locator<'a> {
    fn new(inv: &'a Inventory) -> Locator<'a> {
        let mut targets: HashMap<String, Vec<(String, Target<'a>)>> = HashMap::new();
        for p in &inv.providers {
            for c in &p.crds {
                targets.entry(c.crd.origin.location()).or_default().push((
                    c.crd.object_ref(),
                    Target {
                        origin: &c.crd.origin,
                        kind: "CustomResourceDefinition",
                        name: &c.crd.name,
                    },
                ));
            }
        }
        for d in inv
            .objects
            .iter()
            .chain(&inv.templates)
            .chain(&inv.metadata)
        {
            let kind = d.value.get("kind").and_then(|v| v.as_str()).unwrap_or("?");
            let name = d
                .value
                .get("metadata")
                .and_then(|m| m.get("name"))
                .and_then(|v| v.as_str())
                .unwrap_or("?");
            targets.entry(d.origin.location()).or_default().push((
                format!("{kind}/{name}"),
                Target {
                    origin: &d.origin,
                    kind,
                    name,
                },
            ));
        }
        Locator {
            targets,
            files: HashMap::new(),
            docs: HashMap::new(),
        }
    }

    fn locate(&mut self, e: &mut Evidence) {
        if e.source.is_some() {
            return;
        }
        let Some(location) = e.location.as_deref() else {
            return;
        };
        let Some(candidates) = self.targets.get(location) else {
            // A finding about a whole file (its name): the file, at its first line.
            if !location.contains('#') && self.file_documents(location).is_some() {
                let file = location.to_string();
                e.location = Some(format!("{file}:1").into());
                e.source = Some(SourceLocation {
                    file: file.into(),
                    line: 1,
                });
            }
            return;
        };
        let target = match e.object.as_deref() {
            Some(o) => candidates.iter().find(|(r, _)| r == o),
            None => candidates.first(),
        };
        let Some(t) = target.map(|(_, t)| *t) else {
            return;
        };
        let steps = e
            .path
            .as_deref()
            .map(lines::parse_path)
            .unwrap_or_else(|| vec![Step::Key("metadata".into()), Step::Key("name".into())]);
        let Some(at) = self.resolve(&t, &steps) else {
            return;
        };
        if let Some(note) = &at.note {
            e.message.push_str(&format!(" [line {}: {note}]", at.line));
        }
        e.location = Some(format!("{}:{}", at.file, at.line).into());
        e.source = Some(SourceLocation {
            file: at.file.into(),
            line: at.line,
        });
    }

    /// The file and line of `steps` for the target document.
    fn resolve(&mut self, t: &Target, steps: &[Step]) -> Option<Located> {
        let (file, doc) = self.source_document(t)?;
        let node = doc.node.as_ref()?;
        let found = node.find(steps);
        let is_label =
            matches!(steps, [Step::Key(m), Step::Key(l), ..] if m == "metadata" && l == "labels");
        if is_label {
            // A contract label set in the CRD itself…
            let in_crd = match steps.get(2) {
                Some(_) if found.exact => Some(found.line),
                Some(_) => None,
                None => node
                    .find(&steps[..2])
                    .exact
                    .then(|| {
                        node.get("metadata")?
                            .0
                            .get("labels")?
                            .0
                            .find_key(&is_contract_key)
                    })
                    .flatten(),
            };
            if let Some(line) = in_crd {
                return Some(Located {
                    line: doc.start_line + line.saturating_sub(1),
                    note: None,
                    file,
                });
            }
            // …else by a kustomization.
            if let Some(at) = self.label_line(t, steps) {
                return Some(at);
            }
        }
        Some(Located {
            line: doc.start_line + found.line.saturating_sub(1),
            note: ancestor_note(steps, &found),
            file,
        })
    }

    /// A contract label set (or to be set) by a kustomization's label transformer.
    fn label_line(&mut self, t: &Target, steps: &[Step]) -> Option<Located> {
        let files = &t.origin.rendered.as_ref()?.label_files;
        let key = match steps.get(2) {
            Some(Step::Key(k)) => Some(k.as_str()),
            _ => None,
        };
        let mut trees = Vec::new();
        for f in files {
            if let Some(doc) = self.document(f, 0) {
                trees.push((f.clone(), doc));
            }
        }
        let at = |f: &String, d: &SourceDoc, line: u32, note: Option<String>| Located {
            file: f.clone(),
            line: d.start_line + line.saturating_sub(1),
            note,
        };
        // The label itself, else any contract label, else where labels are added.
        if let Some(key) = key {
            for (f, d) in &trees {
                if let Some(l) = d.node.as_ref().and_then(|n| n.find_key(&|k| k == key)) {
                    return Some(at(f, d, l, None));
                }
            }
        }
        for (f, d) in &trees {
            if let Some(l) = d.node.as_ref().and_then(|n| n.find_key(&is_contract_key)) {
                return Some(at(f, d, l, None));
            }
        }
        for (f, d) in &trees {
            let node = d.node.as_ref()?;
            for block in ["labels", "commonLabels"] {
                if let Some((_, l)) = node.get(block) {
                    return Some(at(
                        f,
                        d,
                        l,
                        Some(format!(
                            "the label is not set; the line holds `{block}` of the kustomization that labels this object"
                        )),
                    ));
                }
            }
        }
        None
    }

    /// The document the target came from, in the file a user edits.
    fn source_document(&mut self, t: &Target) -> Option<(String, Rc<SourceDoc>)> {
        match &t.origin.rendered {
            Some(r) => {
                let file = r.file.clone()?;
                let index = self.matching_document(&file, t)?;
                Some((file.clone(), self.document(&file, index)?))
            }
            None => {
                let file = &t.origin.file;
                if file == "-" {
                    return None;
                }
                Some((file.clone(), self.document(file, t.origin.index)?))
            }
        }
    }

    /// In a source file, the document a rendered object came from: same kind and name (or the
    /// name kustomize prefixed or suffixed), else the only document of that kind, else the
    /// first document.
    fn matching_document(&mut self, file: &str, t: &Target) -> Option<usize> {
        let parts = self.file_documents(file)?;
        let mut same_kind = Vec::new();
        for (index, _, _) in parts.iter() {
            let Some(doc) = self.document(file, *index) else {
                continue;
            };
            let Some(node) = doc.node.as_ref() else {
                continue;
            };
            if node.get("kind").and_then(|(k, _)| k.as_str()) != Some(t.kind) {
                continue;
            }
            let name = node
                .get("metadata")
                .and_then(|(m, _)| m.get("name"))
                .and_then(|(n, _)| n.as_str())
                .unwrap_or("");
            if name == t.name {
                return Some(*index);
            }
            same_kind.push((*index, !name.is_empty() && t.name.contains(name)));
        }
        same_kind
            .iter()
            .find(|(_, renamed)| *renamed)
            .or(same_kind.first())
            .map(|(i, _)| *i)
            .or_else(|| parts.first().map(|(i, _, _)| *i))
    }

    fn file_documents(&mut self, file: &str) -> Option<FileDocuments> {
        self.files
            .entry(file.to_string())
            .or_insert_with(|| {
                let text =
                    crate::inventory::document::read_file(std::path::Path::new(file)).ok()?;
                let parts = crate::inventory::document::split_documents(&text)
                    .into_iter()
                    .enumerate()
                    .map(|(i, (line, doc))| {
                        (i, u32::try_from(line).unwrap_or(u32::MAX), doc.to_string())
                    })
                    .collect();
                Some(Rc::new(parts))
            })
            .clone()
    }

    fn document(&mut self, file: &str, index: usize) -> Option<Rc<SourceDoc>> {
        if let Some(d) = self.docs.get(&(file.to_string(), index)) {
            return Some(d.clone());
        }
        let parts = self.file_documents(file)?;
        let (_, start_line, text) = parts.iter().find(|(i, _, _)| *i == index)?;
        let doc = Rc::new(SourceDoc {
            start_line: *start_line,
            node: lines::parse(text),
        });
        self.docs.insert((file.to_string(), index), doc.clone());
        Some(doc)
    }
}

/// Whether a label key is a contract label (`cluster.x-k8s.io/v1beta2`).
fn is_contract_key(k: &str) -> bool {
    k.strip_prefix("cluster.x-k8s.io/")
        .is_some_and(|v| v.starts_with('v'))
}

/// A located finding.
struct Located {
    file: String,
    line: u32,
    /// Said beside the evidence when the line is not the field itself.
    note: Option<String>,
}

/// `the field is missing: line holds `status`, its nearest existing ancestor`, or `None` when
/// the whole path exists.
fn ancestor_note(steps: &[Step], found: &Found) -> Option<String> {
    if found.exact {
        return None;
    }
    let missing = steps
        .get(found.depth)
        .map_or_else(String::new, Step::to_string);
    let held = match found.depth.checked_sub(1).and_then(|d| steps.get(d)) {
        Some(Step::Named(n)) => format!("the `name: {n}` entry"),
        Some(s) => format!("`{s}`"),
        None => "the document's start".to_string(),
    };
    Some(format!(
        "no `{missing}` there; the line holds {held}, its nearest existing ancestor"
    ))
}

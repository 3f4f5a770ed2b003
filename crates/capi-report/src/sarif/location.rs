//! Where a SARIF result points: evidence locations turned into artifact URIs relative to the
//! source root (`%SRCROOT%`) and 1-based lines.
//!
//! [`SarifBase::discover`] is the only part that looks at the machine (current directory, the
//! `.git` entry above it, the input files' document boundaries); everything else is a pure
//! function of the matrix and the base, so output stays byte-identical for the same inputs.

use crate::model::{Evidence, Matrix};
use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

/// The `uriBaseId` of every artifact under the source root (GitHub code scanning resolves such
/// URIs against the repository's checkout).
pub const SRCROOT: &str = "%SRCROOT%";

/// What artifact URIs are relative to, and the start lines of the input documents evidence
/// names only by `file#index`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SarifBase {
    /// Absolute source root: the git work tree holding the current directory (the nearest
    /// ancestor with a `.git` entry), else the current directory. `None`: evidence paths are
    /// taken as already relative to the root (tests, hand-built matrices).
    pub root: Option<PathBuf>,
    /// Absolute directory relative evidence paths were given from (the current directory of
    /// the run); `None` = the root.
    pub cwd: Option<PathBuf>,
    /// 1-based start line of input documents, keyed by the evidence location `file#index`.
    pub document_lines: BTreeMap<String, u32>,
}

/// A place in an input, parsed from [`Evidence::location`] or [`Evidence::source`].
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Place {
    /// A file and, when known, the 1-based line.
    File { path: String, line: Option<u32> },
    /// Something that is not a file of the user's tree (stdin `-`, an object read from a
    /// cluster): only a logical location can name it.
    Elsewhere(String),
}

/// Characters percent-encoded inside a URI path segment (RFC 3986 `pchar` keeps the rest).
const SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}')
    .add(b'[')
    .add(b']')
    .add(b'\\')
    .add(b'^')
    .add(b'|')
    .add(b'/');

impl SarifBase {
    /// The base for a run in the current directory: the git work tree above it as the root,
    /// and the start line of every document the matrix's non-passing evidence names by index.
    pub fn discover(matrix: &Matrix) -> SarifBase {
        let Ok(cwd) = std::env::current_dir() else {
            return SarifBase::default();
        };
        let root = cwd
            .ancestors()
            .find(|dir| dir.join(".git").exists())
            .unwrap_or(&cwd)
            .to_path_buf();
        let mut base = SarifBase {
            root: Some(root),
            cwd: Some(cwd),
            document_lines: BTreeMap::new(),
        };
        base.document_lines = document_lines(matrix);
        base
    }

    /// The start line of document `file#index`, if the file could be read.
    pub(crate) fn document_line(&self, location: &str) -> Option<u32> {
        self.document_lines.get(location).copied()
    }

    /// `(uri, uriBaseId)` of a file path as evidence spells it: relative to [`SRCROOT`] when
    /// it lies under the root, else an absolute `file://` URI (no base).
    pub(crate) fn artifact_uri(&self, path: &str) -> (String, Option<&'static str>) {
        let p = Path::new(path);
        let Some(root) = &self.root else {
            return if p.is_absolute() {
                (file_uri(&normalize(p)), None)
            } else {
                (relative_uri(&normalize(p)), Some(SRCROOT))
            };
        };
        let cwd = self.cwd.as_deref().unwrap_or(root);
        let abs = normalize(&cwd.join(p));
        match abs.strip_prefix(root) {
            Ok(rel) if !rel.as_os_str().is_empty() => (relative_uri(rel), Some(SRCROOT)),
            _ => (file_uri(&abs), None),
        }
    }

    /// `file:///…/` of the root, for `run.originalUriBaseIds`.
    pub(crate) fn root_uri(&self) -> Option<String> {
        self.root.as_deref().map(|r| {
            let mut uri = file_uri(r);
            if !uri.ends_with('/') {
                uri.push('/');
            }
            uri
        })
    }
}

/// The place evidence points at: its source line when known, else its input location.
pub(crate) fn place_of(e: &Evidence, base: &SarifBase) -> Option<Place> {
    if let Some(s) = &e.source {
        return Some(Place::File {
            path: s.file.to_string(),
            line: Some(s.line.max(1)),
        });
    }
    let location = e.location.as_deref()?;
    Some(parse_location(location, base))
}

/// Parses `file#index` (document index), `file:line` or a bare name.
pub(crate) fn parse_location(location: &str, base: &SarifBase) -> Place {
    let (file, line) = if let Some((file, index)) = split_number(location, '#') {
        let _ = index;
        (file, base.document_line(location))
    } else if let Some((file, line)) = split_number(location, ':') {
        (file, u32::try_from(line).ok().filter(|l| *l > 0))
    } else {
        (location, None)
    };
    if file.is_empty() || file == "-" || file.starts_with("cluster:") {
        return Place::Elsewhere(location.to_string());
    }
    Place::File {
        path: file.to_string(),
        line,
    }
}

/// `text` split at its last `sep` when what follows is a decimal number.
fn split_number(text: &str, sep: char) -> Option<(&str, u64)> {
    let (head, tail) = text.rsplit_once(sep)?;
    if tail.is_empty() || !tail.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((head, tail.parse().ok()?))
}

/// The path with `.` dropped and `..` applied, without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    out
}

fn encoded_segments(path: &Path) -> Vec<String> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(s) => {
                Some(utf8_percent_encode(&s.to_string_lossy(), SEGMENT).to_string())
            }
            Component::ParentDir => Some("..".to_string()),
            _ => None,
        })
        .collect()
}

fn relative_uri(path: &Path) -> String {
    encoded_segments(path).join("/")
}

fn file_uri(path: &Path) -> String {
    format!("file:///{}", encoded_segments(path).join("/"))
}

/// Start lines of the documents evidence names by `file#index` without a source line (and of
/// `--keep-going` problems): every result's, since passing cells anchor findings that name no
/// place of their own (a scenario failure is reported at its kind's CRD document).
fn document_lines(m: &Matrix) -> BTreeMap<String, u32> {
    let mut wanted: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut want = |location: &str| {
        if let Some((file, _)) = split_number(location, '#')
            && !file.is_empty()
            && file != "-"
            && !file.starts_with("cluster:")
        {
            // Most evidence repeats a location already seen: allocate only for new ones.
            match wanted.get_mut(file) {
                Some(set) if set.contains(location) => {}
                Some(set) => {
                    set.insert(location.to_string());
                }
                None => {
                    wanted.insert(file.to_string(), BTreeSet::from([location.to_string()]));
                }
            }
        }
    };
    for r in &m.results {
        for e in r.evidence.iter().filter(|e| e.source.is_none()) {
            if let Some(l) = e.location.as_deref() {
                want(l);
            }
        }
    }
    for p in &m.problems {
        want(&p.source);
    }
    let mut lines = BTreeMap::new();
    for (file, locations) in wanted {
        let Ok(text) = capi_contract::inventory::document::read_file(Path::new(&file)) else {
            continue;
        };
        let starts = capi_contract::inventory::document::document_start_lines(&file, &text);
        for location in locations {
            let index = split_number(&location, '#').map(|(_, i)| i);
            let line = index
                .and_then(|i| usize::try_from(i).ok())
                .and_then(|i| starts.get(i))
                .and_then(|l| u32::try_from(*l).ok());
            if let Some(line) = line {
                lines.insert(location, line);
            }
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base(root: &str, cwd: &str) -> SarifBase {
        SarifBase {
            root: Some(root.into()),
            cwd: Some(cwd.into()),
            document_lines: BTreeMap::from([("config/a.yaml#2".to_string(), 41)]),
        }
    }

    #[test]
    fn locations_parse_into_files_lines_and_elsewhere() {
        let b = base("/repo", "/repo");
        assert_eq!(
            parse_location("config/a.yaml#2", &b),
            Place::File {
                path: "config/a.yaml".into(),
                line: Some(41)
            }
        );
        assert_eq!(
            parse_location("config/a.yaml#3", &b),
            Place::File {
                path: "config/a.yaml".into(),
                line: None
            }
        );
        assert_eq!(
            parse_location("a.yaml:120", &b),
            Place::File {
                path: "a.yaml".into(),
                line: Some(120)
            }
        );
        assert_eq!(
            parse_location("dir#x/a.yaml", &b),
            Place::File {
                path: "dir#x/a.yaml".into(),
                line: None
            }
        );
        assert_eq!(parse_location("-#0", &b), Place::Elsewhere("-#0".into()));
        assert_eq!(
            parse_location("cluster:CustomResourceDefinition/x#0", &b),
            Place::Elsewhere("cluster:CustomResourceDefinition/x#0".into())
        );
    }

    #[test]
    fn uris_are_relative_to_the_root_and_encoded() {
        let b = base("/repo", "/repo/sub");
        assert_eq!(
            b.artifact_uri("config/a b.yaml"),
            ("sub/config/a%20b.yaml".to_string(), Some(SRCROOT))
        );
        assert_eq!(
            b.artifact_uri("../x/./y.yaml"),
            ("x/y.yaml".to_string(), Some(SRCROOT))
        );
        assert_eq!(
            b.artifact_uri("/repo/c/d#e.yaml"),
            ("c/d%23e.yaml".to_string(), Some(SRCROOT))
        );
        assert_eq!(
            b.artifact_uri("../../elsewhere/f.yaml"),
            ("file:///elsewhere/f.yaml".to_string(), None)
        );
        assert_eq!(b.root_uri().as_deref(), Some("file:///repo/"));

        let unrooted = SarifBase::default();
        assert_eq!(
            unrooted.artifact_uri("./config/a.yaml"),
            ("config/a.yaml".to_string(), Some(SRCROOT))
        );
        assert_eq!(
            unrooted.artifact_uri("/abs/a.yaml"),
            ("file:///abs/a.yaml".to_string(), None)
        );
        assert_eq!(unrooted.root_uri(), None);
    }

    #[test]
    fn discover_reads_document_starts_of_evidence() {
        use crate::model::{Column, Outcome, Phase, RuleResult};
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("m.yaml");
        std::fs::write(&file, "a: 1\n---\n# c\nb: 2\n---\nc: 3\n").unwrap();
        let loc = |i: usize| Evidence {
            location: Some(format!("{}#{i}", file.display()).into()),
            ..Evidence::msg("x")
        };
        let result = |outcome: Outcome, e| RuleResult {
            rule_id: "r".into(),
            column: Column {
                provider: "p".into(),
                kind: "K".into(),
                role: capi_contract::contract::Role::InfraMachine,
                contract: None,
                baseline: false,
            },
            level: capi_contract::contract::Level::Must,
            phase: Phase::Static,
            outcome,
            reason: None,
            evidence: vec![e],
            duration_ms: None,
        };
        let m = Matrix {
            context: capi_contract::checks::LintOptions::default().run_context(),
            rules: Vec::new(),
            columns: Vec::new(),
            results: vec![
                result(Outcome::Fail, loc(1)),
                result(Outcome::Pass, loc(2)),
                result(Outcome::Fail, loc(9)),
            ],
            problems: Vec::new(),
            notes: Vec::new(),
            scenarios: Vec::new(),
        };
        let lines = document_lines(&m);
        assert_eq!(
            lines,
            BTreeMap::from([
                (format!("{}#1", file.display()), 3),
                (format!("{}#2", file.display()), 6)
            ]),
            "document 1 starts on line 3 (after the first ---), document 2 on line 6; an index past the end has no line"
        );
    }
}

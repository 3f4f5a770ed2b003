//! Reading inputs, the files half of the source stage: files, directories (recursive
//! `*.yaml|*.yml|*.json`), kustomize roots (rendered by [`super::kustomize`]) and stdin, each
//! text parsed into documents by the contract crate's [`capi_contract::inventory::document`].

use super::discover::{DirPlan, plan_dir};
use super::kustomize::{self, Kustomize, Rendering, Root};
use capi_contract::inventory::document::{
    Document, InputNote, MAX_FILE_BYTES, RenderedFrom, SchemaForm, parse_text_as, parse_text_with,
    read_file,
};
use capi_contract::inventory::error::{self, InputError};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What loading produced: documents, plus the problems (`--keep-going`) that were skipped.
#[derive(Debug, Default)]
pub struct Loaded {
    pub documents: Vec<Document>,
    pub problems: Vec<InputError>,
    /// Total bytes read (for throughput reporting).
    pub bytes: u64,
    /// What the reader of the report should know about the inputs (never an error): lone
    /// kustomize patches skipped, files beside kustomize roots not read, renders without
    /// source lines.
    pub notes: Vec<InputNote>,
    /// The kustomize roots rendered, in input order.
    pub roots: Vec<RenderedRoot>,
}

/// One rendered kustomize root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedRoot {
    /// The root directory as the user would spell it (the `file` of its documents' origins).
    pub root: String,
    /// The command that rendered it (`kubectl kustomize`).
    pub tool: String,
    /// Wall time spent in kustomize.
    pub elapsed: std::time::Duration,
    /// Documents it rendered.
    pub documents: usize,
    /// Whether its documents carry the files they came from (origin annotations).
    pub with_origins: bool,
}

/// How inputs are read.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// Report the usable documents and collect the problems instead of stopping at the first.
    pub keep_going: bool,
    pub form: SchemaForm,
    /// The kustomize that renders kustomize roots.
    pub kustomize: Kustomize,
}

impl LoadOptions {
    /// Compact CRDs, kustomize roots rendered by [`Kustomize::Auto`] (what a command without
    /// `--kustomize` uses; set [`LoadOptions::kustomize`] for another).
    pub fn new(keep_going: bool) -> LoadOptions {
        LoadOptions {
            keep_going,
            form: SchemaForm::Compact,
            kustomize: Kustomize::Auto,
        }
    }
}

/// Loads every path. Without `keep_going` the first problem is returned as the error. CRDs are
/// read as they are parsed ([`SchemaForm::Compact`]). See [`load_paths_with`].
pub fn load_paths(paths: &[PathBuf], keep_going: bool) -> Result<Loaded, InputError> {
    load_paths_with(paths, &LoadOptions::new(keep_going))
}

/// [`load_paths`], keeping CRD schemas in the given form.
pub fn load_paths_as(
    paths: &[PathBuf],
    keep_going: bool,
    form: SchemaForm,
) -> Result<Loaded, InputError> {
    load_paths_with(
        paths,
        &LoadOptions {
            form,
            ..LoadOptions::new(keep_going)
        },
    )
}

/// One input, in the order given.
enum Input {
    Stdin,
    File(PathBuf),
    /// A plain directory's files.
    Files(Vec<PathBuf>),
    /// Index into the roots to render.
    Root(usize),
}

/// Rewrites the text of one input (its name, its text) before it is split into documents,
/// e.g. clusterctl's variable substitution (`check --embedded --crds`, `serve --load`). A
/// kustomize root's rendered output goes through it as one text.
pub type TextFilter<'a> = &'a (dyn Fn(&str, String) -> String + Sync);

/// [`load_paths_as`], passing every input's text through `filter` before it is parsed.
pub fn load_paths_filtered(
    paths: &[PathBuf],
    keep_going: bool,
    form: SchemaForm,
    filter: TextFilter<'_>,
) -> Result<Loaded, InputError> {
    load_paths_with_filter(
        paths,
        &LoadOptions {
            form,
            ..LoadOptions::new(keep_going)
        },
        filter,
    )
}

/// Loads every path: `-` is stdin; a file is read (a kustomization file renders its
/// directory); a directory is rendered when it is, or holds, kustomize roots
/// ([`super::discover`]), else read file by file (recursive `*.yaml|*.yml|*.json`). Roots are
/// rendered in parallel ([`super::kustomize`]); a rendered document's origin names the root
/// and the file kustomize read it from. A lone kustomize patch is skipped with a note.
/// Without a kustomize to render a root, loading fails (whatever `keep_going` says): never a
/// half-read tree.
pub fn load_paths_with(paths: &[PathBuf], opts: &LoadOptions) -> Result<Loaded, InputError> {
    load_paths_with_filter(paths, opts, &|_, text| text)
}

/// [`load_paths_with`], passing every input's text through `filter` before it is parsed.
pub fn load_paths_with_filter(
    paths: &[PathBuf],
    opts: &LoadOptions,
    filter: TextFilter<'_>,
) -> Result<Loaded, InputError> {
    let mut loaded = Loaded::default();
    let mut inputs = Vec::new();
    let mut roots: Vec<Root> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    let mut add_root = |dir: PathBuf, given: &Path, inputs: &mut Vec<Input>| {
        // `./config/default` (found from `.`) is shown as `config/default`.
        let dir = match dir.strip_prefix(".") {
            Ok(rest) if !rest.as_os_str().is_empty() => rest.to_path_buf(),
            _ => dir,
        };
        let key = dir.canonicalize().unwrap_or_else(|_| dir.clone());
        if seen.insert(key) {
            inputs.push(Input::Root(roots.len()));
            roots.push(Root {
                dir,
                given: given.to_path_buf(),
            });
        }
    };
    for path in paths {
        if path.as_os_str() == "-" {
            inputs.push(Input::Stdin);
        } else if path.is_dir() {
            match plan_dir(path) {
                DirPlan::Roots {
                    roots: found,
                    not_read,
                } => {
                    for dir in found {
                        add_root(dir, path, &mut inputs);
                    }
                    if !not_read.is_empty() {
                        loaded.notes.push(not_read_note(path, &not_read));
                    }
                }
                DirPlan::Plain => {
                    let files = collect_dir(path)?;
                    if files.is_empty() {
                        return Err(InputError::EmptyDir {
                            dir: path.display().to_string(),
                        });
                    }
                    inputs.push(Input::Files(files));
                }
            }
        } else if is_kustomization_file_name(path) {
            let dir = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            };
            add_root(dir.clone(), &dir, &mut inputs);
        } else {
            inputs.push(Input::File(path.clone()));
        }
    }
    let mut rendered: Vec<Option<Result<Rendering, InputError>>> =
        kustomize::render_all(&opts.kustomize, &roots)
            .into_iter()
            .map(Some)
            .collect();
    for input in inputs {
        match input {
            Input::Stdin => {
                let text = read_stdin()?;
                loaded.bytes += text.len() as u64;
                let text = filter("-", text);
                push(
                    &mut loaded,
                    parse_text_as("-", &text, opts.form),
                    opts.keep_going,
                )?;
            }
            Input::File(file) => push_file(&mut loaded, &file, opts.keep_going, opts.form, filter)?,
            Input::Files(files) => {
                for file in files {
                    push_file(&mut loaded, &file, opts.keep_going, opts.form, filter)?;
                }
            }
            Input::Root(i) => match rendered.get_mut(i).and_then(Option::take) {
                Some(Ok(r)) => push_rendering(&mut loaded, r, opts, filter)?,
                // No kustomize at all is never a partial read.
                Some(Err(e))
                    if opts.keep_going && !matches!(e, InputError::KustomizeMissing { .. }) =>
                {
                    loaded.problems.push(e)
                }
                Some(Err(e)) => return Err(e),
                None => {}
            },
        }
    }
    Ok(loaded)
}

fn read_stdin() -> Result<String, InputError> {
    // Room for the whole limit up front: the buffer never regrows (an allocator that copies on
    // regrowth would hold two big copies); untouched capacity costs no memory.
    let mut text = String::with_capacity(MAX_FILE_BYTES as usize + 1);
    std::io::stdin()
        .take(MAX_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| InputError::Unreadable {
            file: "-".into(),
            message: e.to_string(),
        })?;
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(InputError::TooLarge {
            file: "-".into(),
            bytes: text.len() as u64,
        });
    }
    Ok(text)
}

/// Whether a path names a kustomization file (`lint config/default/kustomization.yaml`).
fn is_kustomization_file_name(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| kustomize::KUSTOMIZATION_FILES.contains(&n))
        && path.is_file()
}

/// At most this many file names are listed in a note.
const NOTE_FILES: usize = 5;

fn not_read_note(dir: &Path, files: &[PathBuf]) -> InputNote {
    let names: Vec<String> = files
        .iter()
        .take(NOTE_FILES)
        .map(|f| f.strip_prefix(dir).unwrap_or(f).display().to_string())
        .collect();
    let more = files.len().saturating_sub(NOTE_FILES);
    InputNote {
        source: dir.display().to_string(),
        message: format!(
            "{} YAML file(s) beside its kustomize roots not read: {}{}; pass a file as an input to lint it",
            files.len(),
            names.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ),
    }
}

/// Parses a rendered root, moving kustomize's annotations into each document's origin.
fn push_rendering(
    loaded: &mut Loaded,
    mut r: Rendering,
    opts: &LoadOptions,
    filter: TextFilter<'_>,
) -> Result<(), InputError> {
    let root = r.root.display();
    r.text = filter(&root.to_string(), std::mem::take(&mut r.text));
    let origins = r.origins.as_ref();
    let hook = |d: &mut Document| match origins {
        Some(o) => o.take_annotations(d),
        None => d.origin.rendered = Some(Arc::new(RenderedFrom::default())),
    };
    let parsed = parse_text_with(&root, &r.text, opts.form, Some(&hook));
    loaded.bytes += r.text.len() as u64;
    let before = loaded.documents.len();
    push(loaded, parsed, opts.keep_going)?;
    loaded.roots.push(RenderedRoot {
        root: root.clone(),
        tool: r.tool.clone(),
        elapsed: r.elapsed,
        documents: loaded.documents.len() - before,
        with_origins: origins.is_some(),
    });
    if let Some(note) = r.note {
        loaded.notes.push(InputNote {
            source: root,
            message: note,
        });
    }
    Ok(())
}

fn push_file(
    loaded: &mut Loaded,
    path: &Path,
    keep_going: bool,
    form: SchemaForm,
    filter: TextFilter<'_>,
) -> Result<(), InputError> {
    match read_file(path) {
        Ok(text) => {
            loaded.bytes += text.len() as u64;
            let name = path.display().to_string();
            let text = filter(&name, text);
            push(loaded, parse_text_as(&name, &text, form), keep_going)
        }
        Err(e) if keep_going => {
            loaded.problems.push(e);
            Ok(())
        }
        Err(e) => Err(e),
    }
}

fn push(
    loaded: &mut Loaded,
    parsed: Vec<Result<Document, InputError>>,
    keep_going: bool,
) -> Result<(), InputError> {
    for item in parsed {
        match item {
            Ok(doc) => loaded.documents.push(doc),
            Err(InputError::KustomizePatch { origin, name }) => loaded.notes.push(InputNote {
                source: origin.location(),
                message: format!("CustomResourceDefinition {name} {}", error::KUSTOMIZE_PATCH),
            }),
            Err(e) if keep_going => loaded.problems.push(e),
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Recursively lists `*.yaml|*.yml|*.json` files under `dir`, sorted.
fn collect_dir(dir: &Path) -> Result<Vec<PathBuf>, InputError> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).map_err(|e| InputError::Unreadable {
            file: d.display().to_string(),
            message: e.to_string(),
        })?;
        for entry in entries {
            let entry = entry.map_err(|e| InputError::Unreadable {
                file: d.display().to_string(),
                message: e.to_string(),
            })?;
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("yaml" | "yml" | "json")
            ) {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}

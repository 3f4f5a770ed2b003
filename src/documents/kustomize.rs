//! Rendering kustomize roots with the kustomize the user has (no Rust library implements
//! kustomize): `kustomize build`, else `kubectl kustomize`, or the command `--kustomize CMD`
//! names.
//!
//! A root is rendered through a temporary overlay (`resources: [<relative path to the root>]`,
//! `buildMetadata: [originAnnotations, transformerAnnotations]`), so the user's tree is never
//! written to and every object comes back annotated with the file it was read from and the
//! kustomizations that transformed it. The overlay refers to the root by a relative path
//! (kustomize refuses an absolute one) and is rendered with kustomize's default load
//! restrictor, so the root's own kustomizations are held to exactly the rules of the owner's
//! `kustomize build <root>`. Only when that fails is the plain `build <root>` run: if the owner's
//! build fails too, its error is the error; if it succeeds (an older kustomize without
//! `buildMetadata`, or one that will not load an overlay outside the root), the overlay is
//! retried with `--load-restrictor LoadRestrictionsNone` (safe then: the restricted build of
//! the same root just succeeded, and the overlay adds nothing but the annotations), and failing
//! that the plain output is used without source lines, with a note saying so.

use capi_contract::inventory::document::{Document, RenderedFrom};
use capi_contract::inventory::error::InputError;
use serde_json::Value;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// The file names kustomize accepts for a kustomization, in its order of preference.
pub const KUSTOMIZATION_FILES: [&str; 3] =
    ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// Annotation kustomize writes with `buildMetadata: [originAnnotations]`.
pub const ORIGIN_ANNOTATION: &str = "config.kubernetes.io/origin";
/// Annotation kustomize writes with `buildMetadata: [transformerAnnotations]`.
pub const TRANSFORMATIONS_ANNOTATION: &str = "alpha.config.kubernetes.io/transformations";

const INSTALL_HINT: &str = "install kustomize (https://kubectl.docs.kubernetes.io/installation/kustomize/) or kubectl (https://kubernetes.io/docs/tasks/tools/), or name one with --kustomize CMD";

/// The kustomization file of `dir`, if it is a kustomize root.
pub fn kustomization_file(dir: &Path) -> Option<PathBuf> {
    KUSTOMIZATION_FILES
        .iter()
        .map(|f| dir.join(f))
        .find(|p| p.is_file())
}

/// Which kustomize renders roots.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Kustomize {
    /// `kustomize` on `PATH`, else `kubectl` on `PATH`.
    #[default]
    Auto,
    /// `--kustomize CMD`: a program (`kustomize`, `kubectl`, a path; programs named `kubectl…`
    /// get the `kustomize` subcommand, others `build`) or a program with its arguments
    /// (`"kubectl.1.30 kustomize"`), to which the directory is appended.
    Command(String),
}

impl Kustomize {
    /// `--kustomize CMD` as given (`None` or blank: [`Kustomize::Auto`]).
    pub fn from_flag(flag: Option<&str>) -> Kustomize {
        match flag {
            Some(c) if !c.trim().is_empty() => Kustomize::Command(c.to_string()),
            _ => Kustomize::Auto,
        }
    }

    /// The program and arguments that render a directory (appended), or why there is none.
    /// `root` names the root that needed it, for the error.
    pub fn tool(&self, root: &str) -> Result<Tool, InputError> {
        match self {
            Kustomize::Auto => {
                if let Some(p) = find_on_path("kustomize") {
                    return Ok(Tool::new(
                        p.into_os_string(),
                        vec!["build".into()],
                        "kustomize build",
                    ));
                }
                if let Some(p) = find_on_path("kubectl") {
                    return Ok(Tool::new(
                        p.into_os_string(),
                        vec!["kustomize".into()],
                        "kubectl kustomize",
                    ));
                }
                Err(InputError::KustomizeMissing {
                    root: root.to_string(),
                    message: format!(
                        "a kustomize root (it holds a kustomization) needs kustomize to render, and neither `kustomize` nor `kubectl` is on PATH: {INSTALL_HINT}"
                    ),
                })
            }
            Kustomize::Command(cmd) => {
                let mut words = cmd.split_whitespace();
                let Some(program) = words.next() else {
                    return Kustomize::Auto.tool(root);
                };
                let mut args: Vec<OsString> = words.map(OsString::from).collect();
                let base = Path::new(program)
                    .file_name()
                    .and_then(|n| n.to_str())
                    .unwrap_or(program);
                if args.is_empty() {
                    args.push(if base.starts_with("kubectl") {
                        "kustomize".into()
                    } else {
                        "build".into()
                    });
                }
                let resolved = if program.contains('/') {
                    let p = PathBuf::from(program);
                    p.is_file().then_some(p)
                } else {
                    find_on_path(program)
                };
                let Some(path) = resolved else {
                    return Err(InputError::KustomizeMissing {
                        root: root.to_string(),
                        message: format!(
                            "--kustomize {cmd}: `{program}` not found{}; {INSTALL_HINT}",
                            if program.contains('/') {
                                ""
                            } else {
                                " on PATH"
                            }
                        ),
                    });
                };
                let label = std::iter::once(program.to_string())
                    .chain(args.iter().map(|a| a.to_string_lossy().into_owned()))
                    .collect::<Vec<_>>()
                    .join(" ");
                Ok(Tool::new(path.into_os_string(), args, &label))
            }
        }
    }
}

/// A resolved kustomize command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tool {
    program: OsString,
    args: Vec<OsString>,
    /// How the command is named in messages (`kubectl kustomize`).
    pub label: String,
}

impl Tool {
    fn new(program: OsString, args: Vec<OsString>, label: &str) -> Tool {
        Tool {
            program,
            args,
            label: label.to_string(),
        }
    }

    /// Runs the tool on `dir`; stdout on success, else kustomize's error (warnings dropped).
    fn run(&self, dir: &Path, no_load_restrictions: bool) -> Result<String, RunError> {
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args);
        if no_load_restrictions {
            cmd.args(["--load-restrictor", "LoadRestrictionsNone"]);
        }
        cmd.arg(dir);
        let out = cmd.output().map_err(|e| RunError::Spawn(e.to_string()))?;
        if out.stdout.len() as u64 > capi_contract::inventory::document::MAX_FILE_BYTES {
            return Err(RunError::TooLarge(out.stdout.len() as u64));
        }
        if !out.status.success() {
            return Err(RunError::Failed(error_text(&out.stderr, out.status)));
        }
        String::from_utf8(out.stdout).map_err(|_| RunError::Failed("output is not UTF-8".into()))
    }
}

enum RunError {
    Spawn(String),
    Failed(String),
    TooLarge(u64),
}

impl RunError {
    fn message(&self) -> String {
        match self {
            RunError::Spawn(e) => format!("cannot run it: {e}"),
            RunError::Failed(e) => e.clone(),
            RunError::TooLarge(n) => format!("output too large ({n} bytes; the limit is 64 MiB)"),
        }
    }
}

/// Kustomize's stderr as one line: deprecation warnings dropped, `Error: ` prefix dropped.
fn error_text(stderr: &[u8], status: std::process::ExitStatus) -> String {
    let text = String::from_utf8_lossy(stderr);
    let lines: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("# Warning:"))
        .map(|l| l.strip_prefix("Error: ").unwrap_or(l))
        .map(without_klog_header)
        .collect();
    let mut line = lines.join("; ");
    if line.is_empty() {
        line = format!("exited with {status} and no message");
    }
    const MAX: usize = 2000;
    if line.len() > MAX {
        let cut = (0..=MAX)
            .rev()
            .find(|i| line.is_char_boundary(*i))
            .unwrap_or(0);
        line.truncate(cut);
        line.push('…');
    }
    line
}

/// kubectl logs its error through klog: `E1125 09:00:08.365539   16496 run.go:72] "command
/// failed" err="<kustomize's error>"`. Only kustomize's error is kept.
fn without_klog_header(line: &str) -> String {
    static KLOG: OnceLock<Option<regex::Regex>> = OnceLock::new();
    let re = KLOG.get_or_init(|| {
        regex::Regex::new(
            r#"^[IWEF]\d{4} [0-9:.]+\s+\d+ \S+:\d+\] (?:"command failed" err=)?(.*)$"#,
        )
        .ok()
    });
    let Some(rest) = re
        .as_ref()
        .and_then(|re| re.captures(line))
        .and_then(|c| c.get(1))
    else {
        return line.to_string();
    };
    let rest = rest.as_str();
    // A Go-quoted string: unquote it.
    match serde_json::from_str::<String>(rest) {
        Ok(s) => s,
        Err(_) => rest.to_string(),
    }
}

/// `name` found in a `PATH` directory as a file.
fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(p: &Path) -> bool {
    p.is_file()
}

/// A kustomize root to render: its directory as the user would spell it, and the path
/// argument it was found from (source files under that argument are shown under its spelling).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    pub dir: PathBuf,
    pub given: PathBuf,
}

impl Root {
    pub fn display(&self) -> String {
        self.dir.display().to_string()
    }
}

/// One rendered root.
#[derive(Debug)]
pub struct Rendering {
    pub root: Root,
    pub text: String,
    /// How the objects' origins are resolved (`None`: rendered without origin annotations).
    pub origins: Option<OriginPaths>,
    /// The command that rendered it (`kubectl kustomize`).
    pub tool: String,
    /// Wall time spent in kustomize.
    pub elapsed: Duration,
    /// Said in the report when the render had to fall back.
    pub note: Option<String>,
    /// Kept alive until the origins are resolved (removed on drop).
    _overlay: Option<tempfile::TempDir>,
}

/// Renders every root, in parallel (one kustomize process each). Results in `roots` order.
pub fn render_all(kustomize: &Kustomize, roots: &[Root]) -> Vec<Result<Rendering, InputError>> {
    if roots.is_empty() {
        return Vec::new();
    }
    let tool = match kustomize.tool(&roots[0].display()) {
        Ok(t) => t,
        Err(e) => return roots.iter().map(|_| Err(e.clone())).collect(),
    };
    std::thread::scope(|scope| {
        let handles: Vec<_> = roots
            .iter()
            .map(|root| {
                let tool = &tool;
                scope.spawn(move || render(tool, root))
            })
            .collect();
        handles
            .into_iter()
            .zip(roots)
            .map(|(h, root)| {
                h.join().unwrap_or_else(|_| {
                    Err(InputError::KustomizeFailed {
                        root: root.display(),
                        command: tool.label.clone(),
                        message: "internal error while rendering".into(),
                    })
                })
            })
            .collect()
    })
}

/// Renders one root (see the module documentation for the fallbacks).
pub fn render(tool: &Tool, root: &Root) -> Result<Rendering, InputError> {
    let started = Instant::now();
    let rendering = |text: String, overlay: Option<Overlay>, note: Option<String>| Rendering {
        root: root.clone(),
        text,
        origins: overlay.as_ref().map(|o| OriginPaths::new(&o.dir, root)),
        tool: tool.label.clone(),
        elapsed: started.elapsed(),
        note,
        _overlay: overlay.map(|o| o.temp),
    };
    let (overlay, overlay_error) = match Overlay::create(&root.dir) {
        Ok(ov) => match tool.run(&ov.dir, false) {
            Ok(text) => return Ok(rendering(text, Some(ov), None)),
            Err(e) => (Some(ov), e.message()),
        },
        Err(e) => (None, e),
    };
    // The owner's build decides whether the root renders at all.
    let plain = tool
        .run(&root.dir, false)
        .map_err(|e| InputError::KustomizeFailed {
            root: root.display(),
            command: format!("{} {}", tool.label, root.display()),
            message: e.message(),
        })?;
    if let Some(ov) = overlay
        && let Ok(text) = tool.run(&ov.dir, true)
    {
        return Ok(rendering(text, Some(ov), None));
    }
    Ok(rendering(
        plain,
        None,
        Some(format!(
            "rendered without kustomize's origin annotations ({overlay_error}): findings name the rendered root, not the source line"
        )),
    ))
}

/// The temporary overlay that renders a root with origin annotations.
struct Overlay {
    /// Canonical path of the overlay directory (kustomize resolves the relative path from it).
    dir: PathBuf,
    temp: tempfile::TempDir,
}

impl Overlay {
    fn create(root: &Path) -> Result<Overlay, String> {
        let temp = tempfile::Builder::new()
            .prefix("capi-conformance-kustomize-")
            .tempdir()
            .map_err(|e| format!("cannot create a temporary overlay: {e}"))?;
        let dir = temp
            .path()
            .canonicalize()
            .map_err(|e| format!("cannot resolve the temporary overlay: {e}"))?;
        let root_abs = root
            .canonicalize()
            .map_err(|e| format!("cannot resolve {}: {e}", root.display()))?;
        let rel = relative_path(&root_abs, &dir).ok_or_else(|| {
            "the root has no relative path from the temporary directory".to_string()
        })?;
        let rel = rel.to_str().ok_or("the root's path is not UTF-8")?;
        let quoted = serde_json::to_string(rel).map_err(|e| e.to_string())?;
        let text = format!(
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- {quoted}\nbuildMetadata: [originAnnotations, transformerAnnotations]\n"
        );
        std::fs::write(dir.join("kustomization.yaml"), text)
            .map_err(|e| format!("cannot write the temporary overlay: {e}"))?;
        Ok(Overlay { dir, temp })
    }
}

/// `path` relative to `base` (both absolute and normalised), with `..` where needed; `None`
/// when they share no root (another drive).
pub fn relative_path(path: &Path, base: &Path) -> Option<PathBuf> {
    let p: Vec<Component> = path.components().collect();
    let b: Vec<Component> = base.components().collect();
    if p.first() != b.first() {
        return None;
    }
    let common = p.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..b.len() {
        out.push("..");
    }
    for c in &p[common..] {
        out.push(c.as_os_str());
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    Some(out)
}

/// `path` with `.` and `..` components resolved lexically.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                // `/..` is `/`.
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(".."),
            },
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Turns the paths in kustomize's annotations (relative to the overlay) into paths as the user
/// would open them.
#[derive(Debug, Clone)]
pub struct OriginPaths {
    overlay: PathBuf,
    /// The path argument the root came from, as given, and canonical.
    given: PathBuf,
    given_abs: Option<PathBuf>,
    /// The current directory (canonical), when the argument was relative.
    cwd: Option<PathBuf>,
}

impl OriginPaths {
    fn new(overlay: &Path, root: &Root) -> OriginPaths {
        let relative = root.given.is_relative();
        OriginPaths {
            overlay: overlay.to_path_buf(),
            given: root.given.clone(),
            given_abs: root.given.canonicalize().ok(),
            cwd: if relative {
                std::env::current_dir()
                    .ok()
                    .and_then(|d| d.canonicalize().ok())
            } else {
                None
            },
        }
    }

    /// A path from an annotation (relative to the overlay) as the user would open it.
    pub fn display(&self, annotated: &str) -> String {
        let abs = normalize(&self.overlay.join(annotated));
        if let Some(rest) = self
            .given_abs
            .as_deref()
            .and_then(|g| abs.strip_prefix(g).ok())
        {
            let only_cur = self.given.components().all(|c| c == Component::CurDir);
            let joined = if only_cur {
                rest.to_path_buf()
            } else {
                self.given.join(rest)
            };
            return joined.display().to_string();
        }
        match self.cwd.as_deref().and_then(|cwd| relative_path(&abs, cwd)) {
            Some(rel) => rel.display().to_string(),
            None => abs.display().to_string(),
        }
    }

    /// Moves kustomize's annotations out of a rendered document into its origin; drops the
    /// `annotations` map when nothing else was in it.
    pub fn take_annotations(&self, doc: &mut Document) {
        let mut from = RenderedFrom::default();
        if let Some(meta) = doc.value.get_mut("metadata").and_then(Value::as_object_mut)
            && let Some(ann) = meta.get_mut("annotations").and_then(Value::as_object_mut)
        {
            let origin = ann.remove(ORIGIN_ANNOTATION);
            let transformations = ann.remove(TRANSFORMATIONS_ANNOTATION);
            if ann.is_empty() {
                meta.remove("annotations");
            }
            from.file = origin
                .as_ref()
                .and_then(Value::as_str)
                .and_then(|o| self.origin_file(o));
            from.label_files = transformations
                .as_ref()
                .and_then(Value::as_str)
                .map(|t| self.label_files(t))
                .unwrap_or_default();
        }
        doc.origin.rendered = Some(Arc::new(from));
    }

    /// The local file of an origin annotation: `path` (read from a file), else `configuredIn`
    /// (generated); `None` for a remote origin (`repo`).
    fn origin_file(&self, text: &str) -> Option<String> {
        let v: Value = serde_saphyr::from_str(text).ok()?;
        if v.get("repo").is_some() {
            return None;
        }
        let path = v
            .get("path")
            .or_else(|| v.get("configuredIn"))
            .and_then(Value::as_str)?;
        Some(self.display(path))
    }

    /// Kustomizations whose `LabelTransformer` changed the object, without repeats.
    fn label_files(&self, text: &str) -> Vec<String> {
        let Ok(Value::Array(items)) = serde_saphyr::from_str::<Value>(text) else {
            return Vec::new();
        };
        let mut out: Vec<String> = Vec::new();
        for item in &items {
            let by = item.get("configuredBy");
            // `configuredBy` is a mapping, or (kustomize 5.x) a YAML text of one.
            let kind = match by {
                Some(Value::String(s)) => serde_saphyr::from_str::<Value>(s)
                    .ok()
                    .and_then(|v| v.get("kind").and_then(Value::as_str).map(str::to_string)),
                Some(v) => v.get("kind").and_then(Value::as_str).map(str::to_string),
                None => None,
            };
            if kind.as_deref() != Some("LabelTransformer") {
                continue;
            }
            if let Some(file) = item.get("configuredIn").and_then(Value::as_str) {
                let shown = self.display(file);
                if !out.contains(&shown) {
                    out.push(shown);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;

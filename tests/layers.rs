//! The layers inside the crates, read from the sources:
//! - only `cli/` (and `entry.rs` and the commands above it) knows the command line: nothing
//!   else names `clap` or `crate::cli`;
//! - no command imports another command (`commands/<a>` never names `crate::commands::<b>`);
//! - the report writers (`crates/capi-report`) and the lifecycle engine
//!   (`crates/capi-lifecycle`) never name the command line or the CLI crate, and the writers
//!   never name the engine;
//! - no import circle between the files of the CLI crate, the contract crate and the mock
//!   (a file naming another through a `crate::`, `super::`, `self::` or child-module path, in a
//!   `use` group, a `pub use` re-export or inline, depends on it, as `farm-studio look` reads
//!   it; a module's unit tests are not counted). The embedded API server, the report writers
//!   and the lifecycle engine are covered too.

use regex::Regex;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|x| x == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The code of a file without comments and without its `#[cfg(test)] mod tests { … }`.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let text = match text.find("#[cfg(test)]\nmod tests {") {
        Some(at) => &text[..at],
        None => &text[..],
    };
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `src/`-relative module path of a file (`report/sarif/mod.rs` → `report::sarif`).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

#[test]
fn only_the_cli_knows_the_command_line() {
    let src = root().join("src");
    let clap = Regex::new(r"\bclap::|\buse clap\b|\bcrate::cli\b").unwrap();
    let mut offenders = Vec::new();
    for file in rust_files(&src) {
        let module = module_of(&src, &file);
        let top = module.first().map(String::as_str).unwrap_or("lib");
        if matches!(top, "cli" | "entry" | "commands" | "bin" | "main") {
            continue;
        }
        if clap.is_match(&code(&file)) {
            offenders.push(file.display().to_string());
        }
    }
    assert!(
        offenders.is_empty(),
        "clap or crate::cli below the CLI: {offenders:?}"
    );
}

/// The report writers and the lifecycle engine are crates below the CLI: no file of theirs
/// names the command line or the CLI crate, and the writers name nothing of the engine.
#[test]
fn the_writers_and_the_engine_know_nothing_above_them() {
    let above = Regex::new(r"\bclap::|\buse clap\b|\bcapi_conformance::").unwrap();
    let engine = Regex::new(r"\bcapi_lifecycle::").unwrap();
    let mut offenders = Vec::new();
    for (dir, engine_allowed) in [
        ("crates/capi-report/src", false),
        ("crates/capi-lifecycle/src", true),
    ] {
        let files = rust_files(&root().join(dir));
        assert!(files.len() > 5, "{dir}: only {} files read", files.len());
        for file in files {
            let text = code(&file);
            if above.is_match(&text) || (!engine_allowed && engine.is_match(&text)) {
                offenders.push(file.display().to_string());
            }
        }
    }
    assert!(offenders.is_empty(), "{offenders:#?}");
}

#[test]
fn no_command_imports_another_command() {
    let src = root().join("src");
    let other = Regex::new(r"\bcrate::commands::([a-z_]+)").unwrap();
    let mut offenders = Vec::new();
    for file in rust_files(&src.join("commands")) {
        let module = module_of(&src, &file);
        let Some(own) = module.get(1) else { continue };
        for m in other.captures_iter(&code(&file)) {
            if &m[1] != own {
                offenders.push(format!("{} names commands::{}", file.display(), &m[1]));
            }
        }
    }
    assert!(offenders.is_empty(), "{offenders:#?}");
}

/// The paths one `use` tree names, flattened (`a::{b, c::{d, self}}` → `a::b`, `a::c::d`,
/// `a::c`); `as` renames and globs keep their path (`a::*` → `a::*`).
fn flatten_use(tree: &str) -> Vec<String> {
    let tree: String = tree.split_whitespace().collect::<Vec<_>>().join(" ");
    let Some(open) = tree.find('{') else {
        let path = tree.split(" as ").next().unwrap_or("").trim();
        return vec![path.trim_end_matches("::self").to_string()];
    };
    let prefix = tree[..open].trim_end_matches("::").trim().to_string();
    let close = tree.rfind('}').unwrap_or(tree.len());
    let inner = &tree[open + 1..close];
    // Split the group at its top-level commas.
    let mut items = Vec::new();
    let (mut depth, mut from) = (0usize, 0usize);
    for (i, ch) in inner.char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                items.push(&inner[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    items.push(&inner[from..]);
    let mut out = Vec::new();
    for item in items.into_iter().map(str::trim).filter(|i| !i.is_empty()) {
        for tail in flatten_use(item) {
            out.push(match (prefix.is_empty(), tail.as_str()) {
                (true, _) => tail,
                (false, "self") => prefix.clone(),
                (false, _) => format!("{prefix}::{tail}"),
            });
        }
    }
    out
}

/// File-level dependencies of one crate's `src/`: module → the modules it names, read as
/// `farm-studio look` reads them: every `use` (and `pub use` re-export) with its `{…}` groups,
/// and every path written inline in the code, whether it starts at `crate::`, `super::`,
/// `self::` or at a child module of the file (`crds::minimal()` in `capi_core/mod.rs`). A name
/// is charged to the file its path reaches (a re-export counts for the file that re-exports).
/// `mod x;` declarations are not dependencies, and neither is a file naming a module it stands
/// in (`super::Matrix` in `report/html.rs`): a folder's `mod.rs` is the face of its files, as
/// farm-studio draws it, so only the face's arrows to its files count.
fn graph(src: &Path) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let files: BTreeMap<Vec<String>, PathBuf> = rust_files(src)
        .into_iter()
        .map(|f| (module_of(src, &f), f))
        .collect();
    let resolve = |parts: &[String]| -> Option<Vec<String>> {
        (1..=parts.len())
            .rev()
            .map(|n| parts[..n].to_vec())
            .find(|p| files.contains_key(p))
    };
    let use_stmt = Regex::new(r"(?s)\buse\s+([^;]*);").unwrap();
    let inline = Regex::new(r"[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_*][A-Za-z0-9_]*)+").unwrap();
    let mut out = BTreeMap::new();
    for (module, file) in &files {
        let text = code(file);
        // The module a path starts from, and the rest of it; `None` for paths that leave the
        // crate (std, dependencies) or start at a name that is not a module of this file.
        let absolute = |path: &str| -> Option<Vec<String>> {
            let parts: Vec<String> = path
                .trim()
                .trim_start_matches("::")
                .split("::")
                .map(|p| p.trim().to_string())
                .filter(|p| !p.is_empty())
                .collect();
            let first = parts.first()?;
            let mut base = match first.as_str() {
                "crate" => Vec::new(),
                "self" => module.clone(),
                "super" => {
                    let n = parts.iter().take_while(|p| *p == "super").count();
                    let mut base = module.clone();
                    base.truncate(module.len().saturating_sub(n));
                    base.extend(parts[n..].iter().cloned());
                    return Some(base);
                }
                child => {
                    let mut c = module.clone();
                    c.push(child.to_string());
                    if !files.contains_key(&c) {
                        return None;
                    }
                    module.clone()
                }
            };
            let skip = usize::from(matches!(first.as_str(), "crate" | "self"));
            base.extend(parts[skip..].iter().cloned());
            Some(base)
        };
        let mut deps = BTreeSet::new();
        let mut add = |path: &str| {
            if let Some(parts) = absolute(path)
                && let Some(t) = resolve(&parts)
                && !module.starts_with(&t)
            {
                deps.insert(t);
            }
        };
        for c in use_stmt.captures_iter(&text) {
            for path in flatten_use(&c[1]) {
                add(&path);
            }
        }
        let rest = use_stmt.replace_all(&text, "");
        for m in inline.find_iter(&rest) {
            // A path's tail (`b::c` of `a::b::c`) is not a path of its own.
            let before = rest[..m.start()].chars().next_back();
            if before.is_some_and(|c| c == ':' || c.is_alphanumeric() || c == '_') {
                continue;
            }
            add(m.as_str());
        }
        out.insert(module.clone(), deps);
    }
    out
}

/// The strongly connected components of more than one module (Tarjan).
fn circles(g: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<String>> {
    struct State<'a> {
        g: &'a BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        index: BTreeMap<&'a Vec<String>, usize>,
        low: BTreeMap<&'a Vec<String>, usize>,
        stack: Vec<&'a Vec<String>>,
        on: BTreeSet<&'a Vec<String>>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a Vec<String>) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on.insert(v);
        let g = s.g;
        for w in g.get(v).into_iter().flatten() {
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut scc = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                scc.push(if w.is_empty() {
                    "lib".to_string()
                } else {
                    w.join("::")
                });
                if w == v {
                    break;
                }
            }
            if scc.len() > 1 {
                scc.sort();
                s.out.push(scc);
            }
        }
    }
    let mut s = State {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.out
}

#[test]
fn no_import_circles() {
    for dir in [
        "src",
        "crates/capi-contract/src",
        "crates/capi-lifecycle/src",
        "crates/capi-mock-provider/src",
        "crates/capi-report/src",
        "crates/embedded-apiserver/src",
    ] {
        let g = graph(&root().join(dir));
        let edges: usize = g.values().map(BTreeSet::len).sum();
        assert!(edges > 20, "{dir}: only {edges} dependencies read");
        let found = circles(&g);
        assert!(found.is_empty(), "{dir}: import circles {found:#?}");
    }
}

/// The circle finder finds a circle (so the test above can fail).
#[test]
fn a_circle_is_found() {
    let m = |s: &str| vec![s.to_string()];
    let mut g = BTreeMap::new();
    g.insert(m("a"), BTreeSet::from([m("b")]));
    g.insert(m("b"), BTreeSet::from([m("c")]));
    g.insert(m("c"), BTreeSet::from([m("a")]));
    g.insert(m("d"), BTreeSet::from([m("a")]));
    assert_eq!(circles(&g), vec![vec!["a", "b", "c"]]);
    // And the reader sees one in files: `a` names `crate::b`, `b` names `super::a` (its unit
    // tests' names are not counted).
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("lib.rs"), "mod a;\nmod b;\n").unwrap();
    std::fs::write(dir.path().join("a.rs"), "use crate::b::X;\npub struct Y;\n").unwrap();
    std::fs::write(
        dir.path().join("b.rs"),
        "pub struct X(super::a::Y);\n#[cfg(test)]\nmod tests {\n    use crate::lib;\n}\n",
    )
    .unwrap();
    assert_eq!(circles(&graph(dir.path())), vec![vec!["a", "b"]]);
}

/// The reader sees each way a file names another, as farm-studio does: a circle tied only by an
/// inline child-module path, a `pub use` re-export, a `use crate::a::{b, c::{d}}` group and an
/// inline `crate::` path (the shape of the `capi_core` ↔ `source` circle it once missed).
#[test]
fn the_reader_sees_groups_re_exports_and_child_paths() {
    let dir = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("lib.rs", "pub mod core;\npub mod source;\npub mod low;\n");
    // core/mod.rs → core/crds.rs only through `crds::minimal()` written inline.
    write(
        "core/mod.rs",
        "pub mod crds;\nuse super::Thing;\npub struct Core;\npub fn f() { crds::minimal() }\n",
    );
    // core/crds.rs → source/mod.rs through an inline `crate::` path to a re-exported name.
    write(
        "core/crds.rs",
        "pub fn minimal() { crate::source::load() }\n",
    );
    // source/mod.rs → source/files.rs by a `pub use`, → core/mod.rs by a nested group.
    write(
        "source/mod.rs",
        "mod files;\npub use files::load;\nuse crate::{low, core::{self as c, Core}};\n",
    );
    write(
        "source/files.rs",
        "use super::super::low::X;\npub fn load() {}\n",
    );
    write("low.rs", "pub struct X;\n");
    let g = graph(dir.path());
    let m = |s: &str| s.split("::").map(str::to_string).collect::<Vec<_>>();
    let edges = |from: &str| g[&m(from)].clone();
    assert_eq!(edges("core"), BTreeSet::from([m("core::crds")]));
    assert_eq!(edges("core::crds"), BTreeSet::from([m("source")]));
    assert_eq!(
        edges("source"),
        BTreeSet::from([m("core"), m("low"), m("source::files")])
    );
    assert_eq!(edges("source::files"), BTreeSet::from([m("low")]));
    assert_eq!(circles(&g), vec![vec!["core", "core::crds", "source"]]);
    // Each tie is needed: without the inline child path there is no circle.
    write("core/mod.rs", "pub mod crds;\npub struct Core;\n");
    assert!(circles(&graph(dir.path())).is_empty());
}

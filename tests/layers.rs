//! The layers inside the crates (issue 16 items 2, 5 and 7), read from the sources:
//! - only `cli.rs` (and `entry.rs` and the commands above it) knows the command line: nothing
//!   else names `clap` or `crate::cli`;
//! - no command imports another command (`commands/<a>` never names `crate::commands::<b>`);
//! - no import circle between the files of the CLI crate, the contract crate, the mock and the
//!   embedded API server (a file naming another through a `crate::`, `super::` or `self::` path,
//!   in a `use` or inline, depends on it; a module's unit tests are not counted).

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

/// File-level dependencies of one crate's `src/`: module → the modules it names.
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
    let ident = r"[a-z_][a-z0-9_]*";
    let path = Regex::new(&format!(r"\bcrate::((?:{ident}::)*{ident})")).unwrap();
    let crate_group = Regex::new(r"\bcrate::\{([^}]*)\}").unwrap();
    let sup = Regex::new(&format!(r"\b((?:super::)+)((?:{ident}::)*{ident})")).unwrap();
    let sup_group = Regex::new(r"\b((?:super::)+)\{([^}]*)\}").unwrap();
    let own = Regex::new(&format!(r"\bself::((?:{ident}::)*{ident})")).unwrap();
    let own_group = Regex::new(r"\bself::\{([^}]*)\}").unwrap();
    let split = |s: &str| -> Vec<String> {
        s.trim()
            .split("::")
            .map(str::to_string)
            .filter(|x| !x.is_empty())
            .collect()
    };
    let mut out = BTreeMap::new();
    for (module, file) in &files {
        let text = code(file);
        let mut deps = BTreeSet::new();
        let mut add = |parts: Vec<String>| {
            if let Some(t) = resolve(&parts)
                && &t != module
            {
                deps.insert(t);
            }
        };
        for c in path.captures_iter(&text) {
            add(split(&c[1]));
        }
        for c in crate_group.captures_iter(&text) {
            for item in c[1].split(',') {
                add(split(item));
            }
        }
        let up = |supers: &str| -> Vec<String> {
            let n = supers.matches("super::").count();
            module[..module.len().saturating_sub(n)].to_vec()
        };
        for c in sup.captures_iter(&text) {
            let mut p = up(&c[1]);
            p.extend(split(&c[2]));
            add(p);
        }
        for c in sup_group.captures_iter(&text) {
            for item in c[2].split(',') {
                let mut p = up(&c[1]);
                p.extend(split(item));
                add(p);
            }
        }
        // `self::x` names a module below this one (`a/mod.rs` → `a/x.rs`, `a.rs` → `a/x.rs`).
        for c in own.captures_iter(&text) {
            let mut p = module.clone();
            p.extend(split(&c[1]));
            add(p);
        }
        for c in own_group.captures_iter(&text) {
            for item in c[1].split(',') {
                let mut p = module.clone();
                p.extend(split(item));
                add(p);
            }
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
        "crates/capi-mock-provider/src",
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
    // Inline paths and `self::` count: `c/mod.rs` uses its child `c/d.rs`, which names
    // `crate::c::E` inline.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("lib.rs"), "mod c;\n").unwrap();
    std::fs::create_dir(dir.path().join("c")).unwrap();
    std::fs::write(
        dir.path().join("c/mod.rs"),
        "mod d;\nuse self::d::F;\npub struct E;\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("c/d.rs"),
        "pub struct F;\nfn g() -> crate::c::E {\n    crate::c::E\n}\n",
    )
    .unwrap();
    assert_eq!(circles(&graph(dir.path())), vec![vec!["c", "c::d"]]);
}

//! The project's design documents (`docs/`) and every reference to them resolve in a fresh clone.
//!
//! - Every `docs/<file>.md` named in code, tests, scripts, suites and READMEs exists, and what
//!   follows the name points at something there: `#anchor` (a heading's GitHub anchor),
//!   `"Heading"` (a heading's text), or section ids (`§4.1`, `M10`, `M10–M14`, `S4, S5`), with
//!   `§7 checks 12–20` naming rows of the fidelity table and `§1 finding 3` an item of §1.
//! - No reference is left to the research notes the documents replaced (the old names, which
//!   live outside the repository).
//! - Links between the documents resolve; every fidelity check listed has its `check_NN_` test;
//!   the architecture document names every top-level module of the CLI crate and every crate.

use regex::Regex;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The old names, built so that this file does not contain them.
fn old_names() -> [String; 3] {
    [
        format!("{}.md", "design"),
        format!("{}-spec", "emulator"),
        format!("{}-rules.md", "contract"),
    ]
}

/// One heading of a document.
#[derive(Debug)]
struct Heading {
    text: String,
    /// `§4.1`, `M10`, … when the heading starts with one.
    id: Option<String>,
    anchor: String,
    /// The section's text, up to the next heading of the same or a higher level.
    body: String,
}

/// The documents in `docs/`, by file name.
struct Docs {
    files: BTreeMap<String, Vec<Heading>>,
}

static ID: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(§\d+(?:\.\d+)*|[MSL]\d+)(?:\s|$)").unwrap());

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces to `-`.
fn anchor(text: &str) -> String {
    text.to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn headings(md: &str) -> Vec<Heading> {
    let lines: Vec<&str> = md.lines().collect();
    let mut out = Vec::new();
    let mut in_code = false;
    let mut starts: Vec<(usize, usize, String)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if line.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        let level = line.chars().take_while(|c| *c == '#').count();
        if level > 0 && line[level..].starts_with(' ') {
            starts.push((i, level, line[level..].trim().to_string()));
        }
    }
    for (n, (i, level, text)) in starts.iter().enumerate() {
        let end = starts[n + 1..]
            .iter()
            .find(|(_, l, _)| l <= level)
            .map_or(lines.len(), |(j, _, _)| *j);
        out.push(Heading {
            id: ID.captures(text).map(|c| c[1].to_string()),
            anchor: anchor(text),
            body: lines[i + 1..end].join("\n"),
            text: text.clone(),
        });
    }
    out
}

impl Docs {
    fn read() -> Docs {
        let mut files = BTreeMap::new();
        for e in std::fs::read_dir(Path::new(ROOT).join("docs")).expect("docs/ exists") {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "md") {
                let name = p.file_name().unwrap().to_string_lossy().to_string();
                files.insert(name, headings(&std::fs::read_to_string(&p).unwrap()));
            }
        }
        Docs { files }
    }

    fn section(&self, file: &str, id: &str) -> Option<&Heading> {
        self.files
            .get(file)?
            .iter()
            .find(|h| h.id.as_deref() == Some(id))
    }
}

static DOC_REF: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"docs/([A-Za-z0-9_.-]+?\.md)((?:#[A-Za-z0-9_-]+)?)").unwrap());
/// A section id after a reference, with an optional range end (`M10–M14`, `§5–§18`).
static SECTION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[ `]*(§\d+(?:\.\d+)*|[MSL]\d+)(?:[–-](§?[MSL]?\d+))?").unwrap());
/// `checks 12–20`, `check 39`, `checks 10 and 21–27`, `finding 3` after a section id.
static ITEMS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^ (checks?|finding) (\d+(?:[–-]\d+)?(?:(?:, | and )\d+(?:[–-]\d+)?)*)").unwrap()
});
static SEPARATOR: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^(?:, | and | / )").unwrap());
static QUOTED: LazyLock<Regex> = LazyLock::new(|| Regex::new(r#"^[ `]*"([^"]+)""#).unwrap());

/// `12–20` → 12..=20; `10 and 21–27` → 10, 21..=27.
fn numbers(list: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for part in list.split(", ").flat_map(|p| p.split(" and ")) {
        let mut ends = part
            .split(['–', '-'])
            .map(|n| n.trim().parse::<u32>().unwrap());
        let a = ends.next().unwrap();
        let b = ends.next().unwrap_or(a);
        out.extend(a..=b);
    }
    out
}

/// Section ids a range names: `M10`..`M14` → M10, M11, …, M14; `§5`..`§18` → §5, …, §18.
fn expand(first: &str, last: Option<&str>) -> Vec<String> {
    let Some(last) = last else {
        return vec![first.to_string()];
    };
    let prefix: String = first.chars().take_while(|c| !c.is_ascii_digit()).collect();
    let a: u32 = first[prefix.len()..].parse().unwrap_or(0);
    let b: u32 = last
        .trim_start_matches(|c: char| !c.is_ascii_digit())
        .parse()
        .unwrap_or(0);
    (a..=b).map(|n| format!("{prefix}{n}")).collect()
}

/// Check rows of the fidelity table (`| 12 | … |` in `§7`).
fn check_rows(docs: &Docs) -> BTreeSet<u32> {
    let Some(s7) = docs.section("embedded-apiserver.md", "§7") else {
        return BTreeSet::new();
    };
    s7.body
        .lines()
        .filter_map(|l| l.strip_prefix("| ")?.split(' ').next()?.parse().ok())
        .collect()
}

/// Numbered items (`3. …`) of a section.
fn numbered_items(h: &Heading) -> BTreeSet<u32> {
    h.body
        .lines()
        .filter_map(|l| l.trim_start().split_once(". ")?.0.parse().ok())
        .collect()
}

/// What is wrong with the references in `text` (from `origin`), one line each.
fn problems(text: &str, origin: &str, docs: &Docs) -> Vec<String> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let at = format!("{origin}:{}", n + 1);
        for old in old_names() {
            for (i, _) in line.match_indices(&old) {
                if !line[..i].ends_with("docs/") {
                    out.push(format!(
                        "{at}: `{old}` is not in the repository: cite docs/"
                    ));
                }
            }
        }
        for c in DOC_REF.captures_iter(line) {
            let file = &c[1];
            let Some(heads) = docs.files.get(file) else {
                out.push(format!("{at}: docs/{file} does not exist"));
                continue;
            };
            if let Some(a) = c[2].strip_prefix('#') {
                if !heads.iter().any(|h| h.anchor == a) {
                    out.push(format!("{at}: docs/{file} has no heading with anchor #{a}"));
                }
                continue;
            }
            let mut rest = &line[c.get(0).unwrap().end()..];
            if let Some(q) = QUOTED.captures(rest) {
                if !heads.iter().any(|h| h.text == q[1]) {
                    out.push(format!("{at}: docs/{file} has no heading \"{}\"", &q[1]));
                }
                continue;
            }
            while let Some(s) = SECTION.captures(rest) {
                let first = s[1].to_string();
                let ids = expand(&first, s.get(2).map(|m| m.as_str()));
                rest = &rest[s.get(0).unwrap().end()..];
                for id in &ids {
                    if docs.section(file, id).is_none() {
                        out.push(format!("{at}: docs/{file} has no section {id}"));
                    }
                }
                if let Some(items) = ITEMS.captures(rest) {
                    let wanted = numbers(&items[2]);
                    let have = if &items[1] == "finding" {
                        docs.section(file, &first)
                            .map(numbered_items)
                            .unwrap_or_default()
                    } else {
                        check_rows(docs)
                    };
                    let what = items[1].trim_end_matches('s').to_string();
                    for w in wanted.iter().filter(|w| !have.contains(w)) {
                        out.push(format!("{at}: docs/{file} {first} has no {what} {w}"));
                    }
                    rest = &rest[items.get(0).unwrap().end()..];
                }
                match SEPARATOR.find(rest) {
                    Some(m) if SECTION.is_match(&rest[m.end()..]) => rest = &rest[m.end()..],
                    _ => break,
                }
            }
        }
    }
    out
}

/// Text files of the repository outside `target/`, `.git/` and `docs/`.
fn sources() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().to_string();
            if p.is_dir() {
                if name != "target" && !name.starts_with('.') {
                    walk(&p, out);
                }
            } else if [".rs", ".yaml", ".yml", ".md", ".sh", ".jq", ".toml"]
                .iter()
                .any(|x| name.ends_with(x))
            {
                out.push(p);
            }
        }
    }
    let root = Path::new(ROOT);
    let mut out = vec![root.join("README.md")];
    for d in [
        "src", "crates", "tests", "scripts", "benches", "fuzz", ".ci",
    ] {
        walk(&root.join(d), &mut out);
    }
    out.push(root.join(".ci/run"));
    out.retain(|p| p.is_file() && !p.ends_with("tests/docs_references.rs"));
    out
}

#[test]
fn every_reference_in_the_code_resolves_to_a_docs_section() {
    let docs = Docs::read();
    for f in ["architecture.md", "contract.md", "embedded-apiserver.md"] {
        assert!(docs.files.contains_key(f), "docs/{f} is missing");
    }
    let mut found = 0;
    let mut bad = Vec::new();
    for p in sources() {
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        found += DOC_REF.find_iter(&text).count();
        let origin = p.strip_prefix(ROOT).unwrap_or(&p).display().to_string();
        bad.extend(problems(&text, &origin, &docs));
    }
    assert!(
        bad.is_empty(),
        "{} bad references:\n{}",
        bad.len(),
        bad.join("\n")
    );
    // The code cites the documents (scenarios, the server's modules, suites, tests).
    assert!(found >= 50, "only {found} references to docs/ found");
}

#[test]
fn links_between_the_documents_resolve() {
    let docs = Docs::read();
    let link = Regex::new(r"\]\(([A-Za-z0-9_.-]+\.md)(?:#([A-Za-z0-9_-]+))?\)").unwrap();
    let mut bad = Vec::new();
    for name in docs.files.keys() {
        let text = std::fs::read_to_string(Path::new(ROOT).join("docs").join(name)).unwrap();
        for c in link.captures_iter(&text) {
            match docs.files.get(&c[1]) {
                None => bad.push(format!("docs/{name}: link to missing {}", &c[1])),
                Some(heads) => {
                    if let Some(a) = c.get(2)
                        && !heads.iter().any(|h| h.anchor == a.as_str())
                    {
                        bad.push(format!("docs/{name}: no anchor {}#{}", &c[1], a.as_str()));
                    }
                }
            }
        }
        // The documents' own `docs/…` references follow the same rules as the code's.
        bad.extend(problems(&text, &format!("docs/{name}"), &docs));
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Every check of the fidelity table has a test named `check_NN_…` (server tests in the
/// server's crate, kubectl tests at the root), and the table is complete from 1 on.
#[test]
fn every_fidelity_check_listed_has_its_test() {
    let docs = Docs::read();
    let rows = check_rows(&docs);
    let max = rows.iter().max().copied().unwrap_or(0);
    assert!(max >= 64, "the fidelity table lists checks up to {max}");
    assert_eq!(rows.len() as u32, max, "the fidelity table skips a number");
    let name = Regex::new(r"fn check_(\d+)_").unwrap();
    let mut tested = BTreeSet::new();
    for p in sources() {
        if p.extension().is_some_and(|x| x == "rs")
            && let Ok(text) = std::fs::read_to_string(&p)
        {
            tested.extend(
                name.captures_iter(&text)
                    .map(|c| c[1].parse::<u32>().unwrap()),
            );
        }
    }
    let untested: Vec<u32> = rows.difference(&tested).copied().collect();
    assert!(
        untested.is_empty(),
        "checks without a check_NN_ test: {untested:?}"
    );
}

/// `docs/architecture.md` names every top-level module of `src/lib.rs` and every crate.
#[test]
fn the_architecture_names_every_module_and_crate() {
    let arch = std::fs::read_to_string(Path::new(ROOT).join("docs/architecture.md")).unwrap();
    let lib = std::fs::read_to_string(Path::new(ROOT).join("src/lib.rs")).unwrap();
    let module = Regex::new(r"(?m)^pub mod (\w+);").unwrap();
    let mut missing = Vec::new();
    for c in module.captures_iter(&lib) {
        let m = &c[1];
        if !arch.contains(&format!("{m}/")) && !arch.contains(&format!("{m}.rs")) {
            missing.push(format!("src/{m}"));
        }
    }
    for e in std::fs::read_dir(Path::new(ROOT).join("crates")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().to_string();
        if !arch.contains(&format!("{name}/")) {
            missing.push(format!("crates/{name}"));
        }
    }
    assert!(
        missing.is_empty(),
        "not in docs/architecture.md: {missing:?}"
    );
}

/// The checker finds what it is meant to find.
#[test]
fn bad_references_are_reported() {
    let docs = Docs::read();
    let [design, spec, rules] = old_names();
    let cases = [
        (
            format!("see ../shared/{design} \"Lifecycle\""),
            "is not in the repository",
        ),
        (format!("// {spec} M10"), "is not in the repository"),
        (format!("# ({rules} §4)"), "is not in the repository"),
        ("see docs/nope.md §1".to_string(), "does not exist"),
        ("docs/contract.md §42".to_string(), "no section §42"),
        ("docs/contract.md §4.9".to_string(), "no section §4.9"),
        (
            "docs/embedded-apiserver.md M10–M19".to_string(),
            "no section M18",
        ),
        (
            "docs/embedded-apiserver.md M3, S99".to_string(),
            "no section S99",
        ),
        (
            "docs/embedded-apiserver.md §7 checks 60–70".to_string(),
            "has no check 65",
        ),
        (
            "docs/embedded-apiserver.md §1 finding 30".to_string(),
            "has no finding 30",
        ),
        (
            "docs/architecture.md \"No such heading\"".to_string(),
            "no heading",
        ),
        (
            "docs/architecture.md#no-such-anchor".to_string(),
            "no heading with anchor",
        ),
    ];
    for (text, want) in cases {
        let p = problems(&text, "x", &docs);
        assert!(
            p.iter().any(|l| l.contains(want)),
            "{text:?}: expected {want:?}, got {p:?}"
        );
    }
    let good = "docs/contract.md §4.1; docs/embedded-apiserver.md M3, M7, M10–M14 and \
                docs/embedded-apiserver.md §7 checks 10 and 21–27, §1 finding 3; \
                docs/architecture.md \"Core model\"; docs/architecture.md#dependency-rules";
    assert_eq!(problems(good, "x", &docs), Vec::<String>::new());
}

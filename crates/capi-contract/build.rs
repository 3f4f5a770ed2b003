//! Generates the typed rule ids (`rule_ids.rs`, included as `capi_contract::rule_ids`) from the
//! catalog's `suites/*.yaml`: one constant per rule, in a module per id prefix
//! (`infra-machine/provider-id` → `rule_ids::infra_machine::PROVIDER_ID`), so code that names a
//! rule (static checks, scenarios, mock faults) fails to compile when the catalog has no such
//! rule. Only the `- id: <rule id>` lines are read; the catalog's own loader validates the rest.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

fn main() {
    // The catalog lives at the top of the workspace (`suites/`), beside `src`, `fixtures` and
    // `reports`, where the design card puts it.
    let dir = Path::new("../../suites");
    println!("cargo:rerun-if-changed=../../suites");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("the workspace's suites/ is readable")
        .map(|e| e.expect("suites/ entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    // prefix → (constant → id)
    let mut ids: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for file in &files {
        println!("cargo:rerun-if-changed={}", file.display());
        let text = std::fs::read_to_string(file).expect("suite file is readable");
        for line in text.lines() {
            let Some(id) = line.strip_prefix("- id:") else {
                continue;
            };
            let id = id.trim().trim_matches('"').to_string();
            let Some((prefix, name)) = id.split_once('/') else {
                panic!("{}: rule id {id:?} has no prefix/", file.display());
            };
            let module = prefix.replace('-', "_");
            let constant = name.replace('-', "_").to_ascii_uppercase();
            let previous = ids
                .entry(module)
                .or_default()
                .insert(constant.clone(), id.clone());
            if let Some(previous) = previous {
                panic!("rule ids {previous:?} and {id:?} both give the constant {constant}");
            }
        }
    }
    let mut out = String::new();
    let mut all = Vec::new();
    for (module, constants) in &ids {
        let _ = writeln!(out, "/// Rules `{}/…`.", module.replace('_', "-"));
        let _ = writeln!(out, "pub mod {module} {{");
        for (constant, id) in constants {
            let _ = writeln!(out, "    /// `{id}`");
            let _ = writeln!(
                out,
                "    pub const {constant}: super::RuleId = super::RuleId({id:?});"
            );
            all.push(format!("{module}::{constant}"));
        }
        let _ = writeln!(out, "}}");
    }
    let _ = writeln!(
        out,
        "/// Every rule id of the catalog, by prefix then name."
    );
    let _ = writeln!(out, "pub const ALL: &[RuleId] = &[{}];", all.join(", "));
    let dest = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("rule_ids.rs");
    // Written beside and renamed over: a target directory seeded with hard links (several
    // checkouts sharing one inode) never has another checkout's ids written through it.
    let fresh = dest.with_extension("rs.new");
    std::fs::write(&fresh, out).expect("writing rule_ids.rs");
    std::fs::rename(&fresh, &dest).expect("renaming rule_ids.rs");
}

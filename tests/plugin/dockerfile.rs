//! The `Dockerfile`, linted (no Docker engine here to build it): a multi-stage build whose
//! runtime stage is a slim base, runs as the non-root user the Job's pod asks for, and holds both
//! binaries where the Job and the Sonobuoy plugin run them.

use crate::support::repo_root;
use capi_conformance::commands::manifests::{IMAGE_BINARY, IMAGE_USER};

/// One instruction: keyword (upper case) and its arguments (continuation lines joined).
#[derive(Debug)]
struct Instruction {
    keyword: String,
    args: String,
}

fn instructions(text: &str) -> Vec<Instruction> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let line = line.trim();
        if current.is_empty() && (line.is_empty() || line.starts_with('#')) {
            continue;
        }
        match line.strip_suffix('\\') {
            Some(head) => {
                current.push_str(head);
                current.push(' ');
            }
            None => {
                current.push_str(line);
                let (keyword, args) = current.split_once(' ').unwrap_or((&current, ""));
                out.push(Instruction {
                    keyword: keyword.to_uppercase(),
                    args: args.trim().to_string(),
                });
                current.clear();
            }
        }
    }
    out
}

/// The stages: (FROM arguments, the instructions after it).
fn stages(all: &[Instruction]) -> Vec<(&str, Vec<&Instruction>)> {
    let mut stages: Vec<(&str, Vec<&Instruction>)> = Vec::new();
    for i in all {
        if i.keyword == "FROM" {
            stages.push((i.args.as_str(), Vec::new()));
        } else if let Some(last) = stages.last_mut() {
            last.1.push(i);
        }
    }
    stages
}

#[test]
fn dockerfile_is_multi_stage_non_root_with_both_binaries() {
    let text = std::fs::read_to_string(repo_root().join("Dockerfile")).unwrap();
    let all = instructions(&text);
    let stages = stages(&all);
    assert!(stages.len() >= 2, "multi-stage: {stages:?}");

    // Build stage: named, a Rust toolchain at least Cargo.toml's rust-version, a locked release build.
    let (build_from, build) = &stages[0];
    let (image, name) = build_from
        .split_once(" AS ")
        .or_else(|| build_from.split_once(" as "))
        .expect("the build stage is named (FROM … AS name)");
    let tag = image.rsplit_once(':').expect("a tagged builder image").1;
    assert!(image.contains("rust:"), "{image}");
    let manifest = std::fs::read_to_string(repo_root().join("Cargo.toml")).unwrap();
    let rust_version = manifest
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = "))
        .unwrap()
        .trim_matches('"');
    let numeric =
        |v: &str| -> Vec<u32> { v.split(['-', '.']).map_while(|p| p.parse().ok()).collect() };
    assert!(
        numeric(tag) >= numeric(rust_version),
        "builder {tag} older than rust-version {rust_version}"
    );
    assert!(
        build
            .iter()
            .any(|i| i.keyword == "RUN" && i.args.contains("cargo build --release --locked")),
        "{build:?}"
    );

    // Runtime stage: slim, both binaries from the build stage, non-root.
    let (runtime_from, runtime) = stages.last().unwrap();
    assert!(
        runtime_from.contains("distroless") || runtime_from.contains("-slim"),
        "slim runtime: {runtime_from}"
    );
    let copies: Vec<&str> = runtime
        .iter()
        .filter(|i| i.keyword == "COPY")
        .map(|i| i.args.as_str())
        .collect();
    let kubectl_plugin = format!(
        "{}/kubectl-capi_conformance",
        IMAGE_BINARY.rsplit_once('/').unwrap().0
    );
    for (binary, dest) in [
        ("capi-conformance", IMAGE_BINARY),
        ("kubectl-capi_conformance", kubectl_plugin.as_str()),
    ] {
        assert!(
            manifest.contains(&format!("name = \"{binary}\"")),
            "{binary} is a [[bin]] of Cargo.toml"
        );
        assert!(
            copies
                .iter()
                .any(|c| c.starts_with(&format!("--from={name} "))
                    && c.contains(binary)
                    && c.ends_with(&format!(" {dest}"))),
            "{binary} copied from the {name} stage to {dest}: {copies:?}"
        );
    }
    let user = runtime
        .iter()
        .rev()
        .find(|i| i.keyword == "USER")
        .expect("the runtime stage sets USER");
    let uid = user.args.split(':').next().unwrap();
    assert_eq!(
        uid.parse::<i64>().ok(),
        Some(IMAGE_USER),
        "numeric non-root user (the Job's runAsUser): {}",
        user.args
    );
    assert_ne!(IMAGE_USER, 0);
    let entrypoint = runtime
        .iter()
        .find(|i| i.keyword == "ENTRYPOINT")
        .expect("ENTRYPOINT");
    assert!(
        entrypoint.args.contains(IMAGE_BINARY),
        "{}",
        entrypoint.args
    );

    let ignore = std::fs::read_to_string(repo_root().join(".dockerignore")).unwrap();
    assert!(
        ignore.lines().any(|l| l.trim() == "target"),
        "target/ stays out of the build context"
    );
}

/// The lint above can fail: a single-stage, root Dockerfile is refused by its parts.
#[test]
fn the_dockerfile_lint_parses_stages_users_and_continuations() {
    let all = instructions(
        "# c\nFROM rust:1.89 AS build\nRUN a \\\n  && b\nFROM x:slim\nUSER root\nCOPY --from=build /a /b\n",
    );
    let stages = stages(&all);
    assert_eq!(stages.len(), 2);
    assert_eq!(stages[0].1[0].args, "a  && b");
    assert_eq!(stages[1].1[0].keyword, "USER");
    assert!(
        stages[1].1[0].args.parse::<i64>().is_err(),
        "root is not a numeric uid"
    );
}

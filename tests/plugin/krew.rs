//! The krew manifest template `plugins/capi-conformance.yaml` against krew's Plugin schema
//! (apiVersion krew.googlecontainertools.github.com/v1alpha2), parsed into our own structs that
//! reject unknown fields, and `scripts/release-krew.sh` filling it from archives.

use crate::support::{repo_root, stderr, stdout};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Plugin {
    api_version: String,
    kind: String,
    metadata: Metadata,
    spec: PluginSpec,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Metadata {
    name: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct PluginSpec {
    version: String,
    homepage: Option<String>,
    short_description: String,
    description: Option<String>,
    caveats: Option<String>,
    platforms: Vec<Platform>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Platform {
    selector: Selector,
    uri: String,
    sha256: String,
    bin: String,
    files: Option<Vec<FileOperation>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Selector {
    match_labels: BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileOperation {
    from: String,
    to: String,
}

const KNOWN_OS: [&str; 3] = ["darwin", "linux", "windows"];
const KNOWN_ARCH: [&str; 4] = ["386", "amd64", "arm", "arm64"];

fn template_path() -> std::path::PathBuf {
    repo_root().join("plugins/capi-conformance.yaml")
}

fn parse(text: &str) -> Plugin {
    serde_saphyr::from_str(text).unwrap()
}

/// The parts of krew's validation that do not depend on the placeholders being filled.
fn validate_shape(plugin: &Plugin, file_stem: &str) -> Vec<(String, String)> {
    assert_eq!(
        plugin.api_version,
        "krew.googlecontainertools.github.com/v1alpha2"
    );
    assert_eq!(plugin.kind, "Plugin");
    assert_eq!(
        plugin.metadata.name, file_stem,
        "name must match the file name"
    );
    assert!(
        plugin
            .metadata
            .name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
        "plugin name {}",
        plugin.metadata.name
    );
    let spec = &plugin.spec;
    assert!(!spec.short_description.trim().is_empty());
    assert!(
        spec.short_description.len() <= 80,
        "shortDescription too long"
    );
    assert!(
        spec.description
            .as_deref()
            .is_some_and(|d| !d.trim().is_empty())
    );
    assert!(spec.caveats.as_deref().is_some_and(|c| c.contains("rbac")));
    assert!(
        spec.homepage
            .as_deref()
            .is_some_and(|h| h.starts_with("https://"))
    );
    assert!(!spec.platforms.is_empty());

    // krew links kubectl-<name with - as _> to `bin`; kubectl then finds it as the plugin.
    let expected_bin = format!("kubectl-{}", plugin.metadata.name.replace('-', "_"));
    let mut seen = Vec::new();
    for platform in &spec.platforms {
        let labels = &platform.selector.match_labels;
        let keys: Vec<_> = labels.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            ["arch", "os"],
            "matchLabels must be exactly os and arch"
        );
        let os = labels["os"].clone();
        let arch = labels["arch"].clone();
        assert!(KNOWN_OS.contains(&os.as_str()), "os {os}");
        assert!(KNOWN_ARCH.contains(&arch.as_str()), "arch {arch}");
        assert_eq!(platform.bin, expected_bin);
        let files = platform.files.as_deref().unwrap_or_default();
        assert!(
            files.iter().any(|f| f.from == platform.bin && f.to == "."),
            "the archive's {} must be installed",
            platform.bin
        );
        assert!(files.iter().all(|f| !f.from.is_empty() && !f.to.is_empty()));
        assert!(
            !seen.contains(&(os.clone(), arch.clone())),
            "duplicate {os}/{arch}"
        );
        seen.push((os, arch));
    }
    seen
}

/// Every `{{…}}` in `text`.
fn placeholders(text: &str) -> Vec<String> {
    let re = regex::Regex::new(r"\{\{([^}]*)\}\}").unwrap();
    re.captures_iter(text).map(|c| c[1].to_string()).collect()
}

fn key(os: &str, arch: &str) -> String {
    format!("{os}_{arch}").to_uppercase()
}

#[test]
fn template_matches_krew_plugin_schema() {
    let text = std::fs::read_to_string(template_path()).unwrap();
    let plugin = parse(&text);
    let platforms = validate_shape(&plugin, "capi-conformance");
    assert!(platforms.contains(&("linux".to_string(), "amd64".to_string())));

    assert_eq!(plugin.spec.version, "{{VERSION}}");
    for (platform, (os, arch)) in plugin.spec.platforms.iter().zip(&platforms) {
        assert_eq!(platform.uri, format!("{{{{URI_{}}}}}", key(os, arch)));
        assert_eq!(platform.sha256, format!("{{{{SHA256_{}}}}}", key(os, arch)));
    }
    let mut known = vec!["VERSION".to_string()];
    for (os, arch) in &platforms {
        known.push(format!("URI_{}", key(os, arch)));
        known.push(format!("SHA256_{}", key(os, arch)));
    }
    for placeholder in placeholders(&text) {
        assert!(
            known.contains(&placeholder),
            "unknown placeholder {{{{{placeholder}}}}}"
        );
    }
}

#[test]
fn unknown_manifest_fields_are_rejected() {
    let text = std::fs::read_to_string(template_path()).unwrap();
    let typo = text.replace("shortDescription:", "shortDescriptin:");
    assert!(serde_saphyr::from_str::<Plugin>(&typo).is_err());
    let extra = text.replace("    bin: kubectl", "    binary: x\n    bin: kubectl");
    assert!(serde_saphyr::from_str::<Plugin>(&extra).is_err());
}

fn write_archives(dist: &Path, version: &str) {
    for os in ["linux", "darwin"] {
        for arch in ["amd64", "arm64"] {
            let name = format!("capi-conformance-{version}-{os}-{arch}.tar.gz");
            std::fs::write(dist.join(name), format!("archive {os} {arch}")).unwrap();
        }
    }
}

fn release_krew(args: &[&str]) -> std::process::Output {
    Command::new("bash")
        .arg(repo_root().join("scripts/release-krew.sh"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn release_script_fills_every_placeholder() {
    let dist = tempfile::tempdir().unwrap();
    write_archives(dist.path(), "v1.2.3");
    let dist_arg = dist.path().to_string_lossy().into_owned();
    let output = release_krew(&["1.2.3", &dist_arg, "https://example.test/dl"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(placeholders(&text).is_empty(), "{text}");
    let plugin = parse(&text);
    let platforms = validate_shape(&plugin, "capi-conformance");
    assert_eq!(plugin.spec.version, "v1.2.3");
    let mut sums = Vec::new();
    for (platform, (os, arch)) in plugin.spec.platforms.iter().zip(&platforms) {
        assert_eq!(
            platform.uri,
            format!("https://example.test/dl/capi-conformance-v1.2.3-{os}-{arch}.tar.gz")
        );
        assert_eq!(platform.sha256.len(), 64);
        assert!(platform.sha256.bytes().all(|b| b.is_ascii_hexdigit()));
        sums.push(platform.sha256.clone());
    }
    sums.sort();
    sums.dedup();
    assert_eq!(
        sums.len(),
        platforms.len(),
        "each archive has its own checksum"
    );
}

#[test]
fn release_script_fails_on_a_missing_archive_or_bad_version() {
    let dist = tempfile::tempdir().unwrap();
    write_archives(dist.path(), "v1.2.3");
    std::fs::remove_file(
        dist.path()
            .join("capi-conformance-v1.2.3-darwin-arm64.tar.gz"),
    )
    .unwrap();
    let dist_arg = dist.path().to_string_lossy().into_owned();
    let output = release_krew(&["v1.2.3", &dist_arg]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("darwin-arm64"),
        "{}",
        stderr(&output)
    );
    assert!(stdout(&output).is_empty());

    let output = release_krew(&["latest", &dist_arg]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("not semantic"));
}

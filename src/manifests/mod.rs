//! A provider's release manifests as `clusterctl init` takes them: read through the shared
//! input loader ([`crate::documents::load_paths_with_filter`], so directories and kustomize trees
//! are read as `lint` reads them), clusterctl variables substituted ([`variables`], with the
//! `${…}` grammar in [`envsubst`]), then installed into a cluster in dependency order
//! ([`install`]).

pub mod aggregation;
pub mod envsubst;
pub mod install;
pub mod installation;
pub mod variables;

use crate::documents::{Kustomize, LoadOptions};
use capi_contract::inventory::{self, Document, SchemaForm};
use std::path::PathBuf;
use std::sync::Mutex;
use thiserror::Error;
pub use variables::Variables;

/// Why manifests could not be read.
#[derive(Debug, Error)]
pub enum ManifestError {
    #[error(transparent)]
    Input(#[from] inventory::InputError),
    /// Malformed `${…}` references, one per file (clusterctl refuses such a file).
    #[error("{}", .0.join("; "))]
    BadSubstitution(Vec<String>),
    /// Required clusterctl variables without a value, per file: every one is named.
    #[error(
        "clusterctl variables without a value (and without a default): {}; pass --var NAME=VALUE (repeatable) or set them in the environment",
        list_missing(.0)
    )]
    MissingVariables(Vec<(String, Vec<String>)>),
}

fn list_missing(per_file: &[(String, Vec<String>)]) -> String {
    per_file
        .iter()
        .map(|(file, names)| format!("{} (in {file})", names.join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
}

impl ManifestError {
    /// The missing variable names, across files, sorted and unique.
    pub fn missing_variables(&self) -> Vec<String> {
        let mut all: Vec<String> = match self {
            ManifestError::MissingVariables(v) => v.iter().flat_map(|(_, n)| n.clone()).collect(),
            _ => Vec::new(),
        };
        all.sort();
        all.dedup();
        all
    }
}

/// Reads manifests (files, directories, `-`) with clusterctl's variable substitution applied to
/// each input's text; CRD schemas are kept whole (the documents are installed as they are).
/// Kustomize roots among `paths` are rendered by `kustomize`.
pub fn load(
    paths: &[PathBuf],
    vars: &Variables,
    kustomize: &Kustomize,
) -> Result<Vec<Document>, ManifestError> {
    let missing: Mutex<Vec<(String, Vec<String>)>> = Mutex::new(Vec::new());
    let bad: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let filter = |file: &str, text: String| -> String {
        match variables::substitute(&text, vars) {
            Ok(p) => {
                if !p.missing.is_empty()
                    && let Ok(mut m) = missing.lock()
                {
                    m.push((file.to_string(), p.missing));
                }
                p.text
            }
            Err(e) => {
                if let Ok(mut b) = bad.lock() {
                    b.push(format!(
                        "{file}: {e}: a malformed ${{…}} reference (clusterctl refuses the file)"
                    ));
                }
                text
            }
        }
    };
    let options = LoadOptions {
        keep_going: false,
        form: SchemaForm::Whole,
        kustomize: kustomize.clone(),
    };
    let loaded = crate::documents::load_paths_with_filter(paths, &options, &filter);
    let bad = bad.into_inner().unwrap_or_default();
    if !bad.is_empty() {
        return Err(ManifestError::BadSubstitution(bad));
    }
    let missing = missing.into_inner().unwrap_or_default();
    if !missing.is_empty() {
        return Err(ManifestError::MissingVariables(missing));
    }
    Ok(inventory::document::expand_lists(loaded?.documents))
}

/// How long installing waits for the manifests' CRDs to be Established.
pub const CRD_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Reads manifests ([`load`], kustomize roots rendered by [`Kustomize::Auto`]: `serve --load`
/// has no `--kustomize`) and installs them through `client` ([`install::install`]).
pub async fn load_and_install(
    client: &kube::Client,
    paths: &[PathBuf],
    vars: &Variables,
) -> anyhow::Result<install::InstallReport> {
    let docs = load(paths, vars, &Kustomize::Auto)?;
    Ok(install::install(client, docs, CRD_TIMEOUT).await?)
}

/// One line per skipped object, for stderr and report notes.
pub fn skipped_lines(report: &install::InstallReport) -> Vec<(String, String)> {
    report
        .skipped
        .iter()
        .map(|s| {
            (
                s.origin.clone(),
                format!("skipped {}: {}", s.object, s.reason),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &std::path::Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn missing_variables_of_every_file_in_one_error() {
        let dir = tempfile::tempdir().unwrap();
        let a = write(
            dir.path(),
            "a.yaml",
            "kind: ConfigMap\ndata: {x: '${A_ONE}', y: '${A_TWO:=ok}'}\n",
        );
        let b = write(
            dir.path(),
            "b.yaml",
            "kind: Secret\ndata: {x: '${B_ONE}'}\n",
        );
        let err = load(&[a.clone(), b], &Variables::only(&[]), &Kustomize::Auto).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("A_ONE (in ") && msg.contains("B_ONE (in "),
            "{msg}"
        );
        assert!(!msg.contains("A_TWO"), "{msg}");
        assert!(msg.contains("--var NAME=VALUE"), "{msg}");
        assert_eq!(err.missing_variables(), ["A_ONE", "B_ONE"]);
        let docs = load(&[a], &Variables::only(&[("A_ONE", "v")]), &Kustomize::Auto).unwrap();
        assert_eq!(docs[0].value["data"]["x"], "v");
        assert_eq!(docs[0].value["data"]["y"], "ok");
    }

    #[test]
    fn substituted_values_are_typed_by_yaml_like_clusterctl() {
        // clusterctl substitutes the text, so an unquoted number becomes a number.
        let dir = tempfile::tempdir().unwrap();
        let f = write(dir.path(), "c.yaml", "kind: X\nspec: {replicas: ${N:=3}}\n");
        let docs = load(&[f], &Variables::only(&[]), &Kustomize::Auto).unwrap();
        assert_eq!(docs[0].value["spec"]["replicas"], 3);
    }

    #[test]
    fn bad_substitution_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let f = write(dir.path(), "bad.yaml", "kind: X\nx: ${A.B}\n");
        let msg = load(&[f], &Variables::only(&[]), &Kustomize::Auto)
            .unwrap_err()
            .to_string();
        assert!(msg.contains("bad.yaml: bad substitution (line 2)"), "{msg}");
    }
}

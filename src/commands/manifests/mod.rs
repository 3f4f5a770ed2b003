//! `capi-conformance manifests job|sonobuoy`: what a platform team applies to run `check` where
//! the management cluster is: an in-cluster Job ([`job`]) or a Sonobuoy plugin ([`sonobuoy`]).
//! Both run the image built from the repository's `Dockerfile`.

pub mod job;
pub mod sonobuoy;

use crate::cli::ManifestsCommand;
use crate::tool_rbac::RbacError;

pub use crate::cli::DEFAULT_IMAGE;

/// Where the image installs the tool (the Dockerfile's `COPY` destination).
pub const IMAGE_BINARY: &str = "/usr/local/bin/capi-conformance";

/// The image's non-root user and group (distroless `nonroot`).
pub const IMAGE_USER: i64 = 65532;

/// Errors in the `manifests` arguments (exit 2).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ManifestsError {
    #[error(transparent)]
    Rbac(#[from] RbacError),
    #[error("--namespace {0:?} is not a namespace name: {1}")]
    InvalidNamespace(String, String),
    #[error("the arguments after `--` are not valid for `check`: {0}")]
    InvalidCheckArgs(String),
    #[error("`check {0}` cannot run in the cluster: {1}")]
    NotInCluster(String, &'static str),
    #[error("--image must not be empty")]
    EmptyImage,
    #[error("cannot render the manifests as YAML: {0}")]
    Render(String),
}

/// One YAML document.
fn yaml<T: serde::Serialize>(value: &T) -> Result<String, ManifestsError> {
    serde_saphyr::to_string(value).map_err(|e| ManifestsError::Render(e.to_string()))
}

/// Prints the manifests to stdout; exit 0, or an error (exit 2) for bad arguments.
pub fn run(cmd: &ManifestsCommand) -> anyhow::Result<i32> {
    let yaml = match cmd {
        ManifestsCommand::Job(args) => job::render(args)?,
        ManifestsCommand::Sonobuoy(args) => sonobuoy::render(args)?,
    };
    print!("{yaml}");
    Ok(0)
}

/// Flags a run in the cluster cannot take: they point the tool away from the in-cluster
/// configuration or the cluster altogether.
const NOT_IN_CLUSTER: [(&str, &str); 6] = [
    (
        "--embedded",
        "it starts its own API server instead of checking the cluster",
    ),
    (
        "--kubeconfig",
        "the pod connects with its service account (in-cluster)",
    ),
    (
        "--context",
        "the pod connects with its service account (in-cluster)",
    ),
    (
        "--provider-cmd",
        "the manager would run inside the Job's pod, not as the cluster runs your provider",
    ),
    (
        "--crds",
        "installing components is not in the printed least-privilege RBAC",
    ),
    (
        "--install-core-crds",
        "creating CRDs is not in the printed least-privilege RBAC",
    ),
];

/// The `check` arguments of the container: `fixed` then the user's `extra` (after `--`),
/// validated by parsing them as `check` would, so a typo fails here and not in the cluster.
pub fn check_args(fixed: &[String], extra: &[String]) -> Result<Vec<String>, ManifestsError> {
    for arg in extra {
        let flag = arg.split('=').next().unwrap_or_default();
        if let Some((name, why)) = NOT_IN_CLUSTER.iter().find(|(name, _)| *name == flag) {
            return Err(ManifestsError::NotInCluster((*name).to_string(), why));
        }
    }
    let mut args: Vec<String> = vec!["check".into()];
    args.extend(fixed.iter().cloned());
    args.extend(extra.iter().cloned());
    let argv = std::iter::once("capi-conformance".to_string()).chain(args.iter().cloned());
    crate::cli::parse_from(argv).map_err(|e| {
        let text = e.render().to_string();
        ManifestsError::InvalidCheckArgs(text.lines().next().unwrap_or_default().to_string())
    })?;
    Ok(args)
}

/// `--image`, refused when empty.
fn image(image: &str) -> Result<String, ManifestsError> {
    let image = image.trim();
    if image.is_empty() {
        return Err(ManifestsError::EmptyImage);
    }
    Ok(image.to_string())
}

/// The standard labels of everything printed.
fn labels() -> std::collections::BTreeMap<String, String> {
    std::collections::BTreeMap::from([
        (
            "app.kubernetes.io/name".to_string(),
            "capi-conformance".to_string(),
        ),
        (
            "app.kubernetes.io/version".to_string(),
            env!("CARGO_PKG_VERSION").to_string(),
        ),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_args_are_parsed_as_check_parses_them() {
        let args = check_args(
            &["--static-only".into()],
            &["--fail-on".into(), "should".into()],
        )
        .unwrap();
        assert_eq!(args, ["check", "--static-only", "--fail-on", "should"]);
        let err = check_args(&[], &["--no-such-flag".into()]).unwrap_err();
        assert!(
            matches!(&err, ManifestsError::InvalidCheckArgs(m) if m.contains("--no-such-flag")),
            "{err}"
        );
        let err = check_args(&[], &["--kubeconfig=/x".into()]).unwrap_err();
        assert!(matches!(err, ManifestsError::NotInCluster(ref f, _) if f == "--kubeconfig"));
        let err = check_args(&[], &["--embedded".into()]).unwrap_err();
        assert!(err.to_string().contains("its own API server"), "{err}");
    }

    #[test]
    fn default_image_is_the_release_tag() {
        assert_eq!(
            DEFAULT_IMAGE,
            format!(
                "ghcr.io/capi-conformance/capi-conformance:v{}",
                env!("CARGO_PKG_VERSION")
            )
        );
        assert_eq!(image("  "), Err(ManifestsError::EmptyImage));
    }
}

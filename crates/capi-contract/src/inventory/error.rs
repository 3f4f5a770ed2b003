//! Input errors: each renders as one line naming the file, the document and what is wrong.

use super::origin::Origin;
use thiserror::Error;

/// What is said of a lone kustomize patch ([`InputError::KustomizePatch`]).
pub const KUSTOMIZE_PATCH: &str = "is a kustomize patch (no spec.group, spec.names or spec.versions): lint the kustomization that uses it; skipped";

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum InputError {
    #[error("{file}: cannot read: {message}")]
    Unreadable { file: String, message: String },
    #[error("{file}: too large ({bytes} bytes; the limit is 64 MiB)")]
    TooLarge { file: String, bytes: u64 },
    #[error("{dir}: empty directory (no *.yaml, *.yml or *.json files)")]
    EmptyDir { dir: String },
    #[error("{origin}: {message}")]
    InvalidSyntax { origin: Origin, message: String },
    #[error("{origin}: not a mapping (found {found}); every document must be a Kubernetes object")]
    NotMapping { origin: Origin, found: String },
    #[error("{origin}: CustomResourceDefinition {name}: {message}")]
    InvalidCrd {
        origin: Origin,
        name: String,
        message: String,
    },
    #[error(
        "{origin}: CustomResourceDefinition {name}: schema of version {version} is not structural: {message}"
    )]
    NonStructural {
        origin: Origin,
        name: String,
        version: String,
        message: String,
    },
    #[error("{sources}: no CustomResourceDefinition found in the inputs")]
    NoCrd { sources: String },
    /// A partial CustomResourceDefinition (no `spec.group`, `spec.names` or `spec.versions`):
    /// a kustomize patch read on its own. Loading skips it with a note; it is never an error of
    /// the run.
    #[error("{origin}: CustomResourceDefinition {name} {KUSTOMIZE_PATCH}")]
    KustomizePatch { origin: Origin, name: String },
    /// A kustomize root met, but no kustomize to render it with.
    #[error("{root}: {message}")]
    KustomizeMissing { root: String, message: String },
    /// Kustomize could not render a root (its error, as it said it).
    #[error("{root}: `{command}` failed: {message}")]
    KustomizeFailed {
        root: String,
        command: String,
        message: String,
    },
}

impl InputError {
    /// The `file#index` (or file) this error is about, for `Matrix.problems`.
    pub fn source_label(&self) -> String {
        match self {
            InputError::Unreadable { file, .. } | InputError::TooLarge { file, .. } => file.clone(),
            InputError::EmptyDir { dir } => dir.clone(),
            InputError::InvalidSyntax { origin, .. }
            | InputError::NotMapping { origin, .. }
            | InputError::InvalidCrd { origin, .. }
            | InputError::NonStructural { origin, .. }
            | InputError::KustomizePatch { origin, .. } => origin.location(),
            InputError::NoCrd { sources } => sources.clone(),
            InputError::KustomizeMissing { root, .. }
            | InputError::KustomizeFailed { root, .. } => root.clone(),
        }
    }
}

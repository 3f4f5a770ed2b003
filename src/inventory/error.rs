//! Input errors: each renders as one line naming the file, the document and what is wrong.

use super::source::Origin;
use thiserror::Error;

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
            | InputError::NonStructural { origin, .. } => origin.location(),
            InputError::NoCrd { sources } => sources.clone(),
        }
    }
}

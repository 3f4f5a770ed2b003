//! Where a document came from: its file (or `-`, or the cluster), its index in that file and
//! its first line. Errors, documents and CRDs all carry one.

use std::sync::Arc;

/// Where a document came from.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Origin {
    /// File path as given (or `-` for stdin, or `cluster` for API sources).
    pub file: String,
    /// 0-based document index inside the file.
    pub index: usize,
    /// 1-based line where the document starts.
    pub line: usize,
    /// For a document rendered from a kustomize root (`file` is then the root directory and
    /// `index`/`line` place it in the rendered stream): where kustomize says it came from.
    pub rendered: Option<Arc<RenderedFrom>>,
}

/// Where kustomize says a rendered object came from (its `config.kubernetes.io/origin` and
/// `alpha.config.kubernetes.io/transformations` annotations, removed from the object).
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RenderedFrom {
    /// The file the object was read from, as the user would open it (relative to the current
    /// directory when the input was given relatively). `None` when kustomize named no local
    /// file (a remote base, or a render without origin annotations); for a generated object,
    /// the kustomization that configured the generator.
    pub file: Option<String>,
    /// Kustomization files whose label transformers (`labels:` / `commonLabels:`) changed the
    /// object, innermost first.
    pub label_files: Vec<String>,
}

impl Origin {
    pub fn new(file: impl Into<String>, index: usize, line: usize) -> Self {
        Origin {
            file: file.into(),
            index,
            line,
            rendered: None,
        }
    }

    /// Prefix of [`Origin::file`] for objects read from an API server (`cluster:Kind/name`).
    pub const CLUSTER_PREFIX: &'static str = "cluster:";

    /// True for an object read from an API server rather than from a file.
    pub fn is_cluster(&self) -> bool {
        self.file.starts_with(Self::CLUSTER_PREFIX)
    }

    /// Short location for evidence: `file#index`.
    pub fn location(&self) -> String {
        format!("{}#{}", self.file, self.index)
    }
}

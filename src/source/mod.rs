//! The source stage: where documents come from. Files, directories and stdin ([`files`]),
//! kustomize roots rendered by the kustomize users already have ([`kustomize`], found by
//! [`discover`]), a cluster's CRDs and RBAC ([`cluster`]). What the documents mean is the
//! contract crate's `inventory`.

pub mod cluster;
pub mod discover;
pub mod files;
pub mod kustomize;

pub use files::{
    LoadOptions, Loaded, RenderedRoot, TextFilter, load_paths, load_paths_as, load_paths_filtered,
    load_paths_with, load_paths_with_filter,
};
pub use kustomize::Kustomize;

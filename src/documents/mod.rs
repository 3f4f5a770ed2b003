//! Document loading, below every stage that reads YAML: files, directories (recursive
//! `*.yaml|*.yml|*.json`) and stdin ([`files`]), kustomize roots rendered by the kustomize users
//! already have ([`kustomize`], found by [`discover`]). It names nothing else of this crate, so
//! the source stage, the components files (`manifests`) and CAPI core's CRDs (`capi_core`) all
//! load through it without importing each other. What the documents mean is the contract
//! crate's `inventory`.

pub mod discover;
pub mod files;
pub mod kustomize;

pub use files::{
    LoadOptions, Loaded, RenderedRoot, TextFilter, load_paths, load_paths_as, load_paths_filtered,
    load_paths_with, load_paths_with_filter,
};
pub use kustomize::Kustomize;

//! The source stage: where documents come from, one [`Source`] per kind of input. Files,
//! directories, stdin and kustomize roots (loaded by [`crate::documents`]), a cluster's CRDs and
//! RBAC ([`cluster`]), the embedded server filled with the base documents and the provider's
//! manifests ([`embedded`]). What the documents mean is the contract crate's `inventory`.

pub mod cluster;
pub mod embedded;
pub mod manager_help;

pub use crate::documents::{
    Kustomize, LoadOptions, Loaded, RenderedRoot, TextFilter, load_paths, load_paths_as,
    load_paths_filtered, load_paths_with, load_paths_with_filter,
};

use std::path::PathBuf;

/// One kind of input. A new kind of input is a new variant here, read in [`Source::read`].
pub enum Source<'a> {
    /// Files, directories and stdin (`-`); kustomize roots among them are rendered.
    Files {
        paths: &'a [PathBuf],
        options: LoadOptions,
    },
    /// The objects of a cluster (read with `client`).
    Cluster { client: &'a kube::Client },
    /// A management cluster the run fills (the embedded server, or a real cluster with
    /// `--crds`): filled first (faults, base documents, `inputs`), then read like a cluster
    /// through `client`.
    Embedded {
        management: crate::run::management::Management<'a>,
        client: &'a kube::Client,
        inputs: &'a embedded::EmbeddedInputs,
        /// CAPI core's part, started for `server` ([`embedded::start_core`]).
        core: &'a crate::capi_core::EmbeddedCore,
    },
}

/// What a [`Source`] read.
pub struct Read {
    pub loaded: Loaded,
    /// What filling the embedded server left for the run (report notes on skipped objects, the
    /// provider's webhook serving); empty for the other sources, whose notes are
    /// [`Loaded::notes`].
    pub installed: embedded::Installed,
}

impl Source<'_> {
    /// The documents of the input, with what loading left for the run ([`Read`]).
    pub async fn read(&self) -> anyhow::Result<Read> {
        match self {
            Source::Files { paths, options } => Ok(Read {
                loaded: load_paths_with(paths, options)?,
                installed: embedded::Installed::default(),
            }),
            Source::Cluster { client } => Ok(Read {
                loaded: documents(cluster::read_documents(client).await?),
                installed: embedded::Installed::default(),
            }),
            Source::Embedded {
                management,
                client,
                inputs,
                core,
            } => {
                let installed = embedded::install(*management, client, inputs, core).await?;
                let mut docs = cluster::read_documents(client).await?;
                embedded::input_origins(&mut docs, &installed);
                Ok(Read {
                    loaded: documents(docs),
                    installed,
                })
            }
        }
    }
}

fn documents(documents: Vec<capi_contract::inventory::Document>) -> Loaded {
    Loaded {
        documents,
        problems: Vec::new(),
        bytes: 0,
        notes: Vec::new(),
        roots: Vec::new(),
    }
}

/// Reads `--sample` files into documents (kustomize roots among them rendered by `kustomize`).
pub fn load_samples(
    paths: &[PathBuf],
    kustomize: &Kustomize,
) -> anyhow::Result<Vec<serde_json::Value>> {
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    let options = LoadOptions {
        kustomize: kustomize.clone(),
        ..LoadOptions::new(false)
    };
    let loaded = load_paths_with(paths, &options)?;
    Ok(loaded.documents.into_iter().map(|d| d.value).collect())
}

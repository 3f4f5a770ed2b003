//! The embedded API server as a source: what every embedded run installs (CAPI core's CRDs and
//! RBAC, the mock provider's CRDs and ClusterRoles) and the provider's own manifests (`--crds`:
//! its components file or `config/`, installed as `clusterctl init` would,
//! [`crate::manifests`]). The documents are then read back like a cluster's
//! ([`super::cluster::read_documents`]).
//!
//! CAPI core's CRDs (the tool's minimal ones, or CAPI's released ones with `--core-crds`) are
//! those of a started [`EmbeddedCore`] ([`start_core`]): served at v1beta1 and v1beta2, their
//! conversion pointed at the tool's webhook (docs/core-simulation.md).

use crate::capi_core::EmbeddedCore;
use crate::capi_core::crds::CoreCrds;
use anyhow::Context;
use capi_mock_provider::core_crds::core_crd_documents;
use capi_mock_provider::crds::mock_crds;
use capi_mock_provider::manifests::{aggregated_cluster_role, manager_cluster_role};
use embedded_apiserver::EmbeddedServer;
use serde_json::Value;
use std::path::PathBuf;

/// What the embedded server is given beyond the base documents.
#[derive(Debug, Clone, Default)]
pub struct EmbeddedInputs {
    /// `--crds`: the provider's manifests.
    pub crds: Vec<PathBuf>,
    /// `--var NAME=VALUE`: clusterctl variables of those manifests.
    pub vars: Vec<String>,
    /// `--server-faults`: fault injection in the server.
    pub server_faults: Option<String>,
    /// `--core-crds`: CAPI core's released CRDs (its components file) instead of the tool's
    /// minimal ones.
    pub core_crds: Option<PathBuf>,
}

/// Starts CAPI core's part for `server` (the conversion webhook, the core CRDs of `inputs`
/// pointed at it, the Services they name routed to it). The caller shuts it down after the run.
pub async fn start_core(
    server: &EmbeddedServer,
    inputs: &EmbeddedInputs,
) -> anyhow::Result<EmbeddedCore> {
    let crds = match &inputs.core_crds {
        Some(file) => CoreCrds::Released(file.clone()),
        None => CoreCrds::Minimal,
    };
    let core = EmbeddedCore::start(server.client(), crds).await?;
    core.route(server);
    Ok(core)
}

/// Fills a fresh `server` (through `client`, one of its clients): its faults, the base documents
/// with `core`'s CRDs, the provider's manifests. Returns the notes on objects nothing serves
/// (skipped).
pub async fn install(
    server: &EmbeddedServer,
    client: &kube::Client,
    inputs: &EmbeddedInputs,
    core: &EmbeddedCore,
) -> anyhow::Result<Vec<crate::report::Note>> {
    if let Some(spec) = &inputs.server_faults {
        server
            .faults()
            .apply_spec(spec)
            .context("--server-faults")?;
    }
    server
        .apply_documents(base_documents_with(core.documents.clone())?)
        .await
        .context("installing core and mock CRDs on the embedded server")?;
    install_provider_manifests(client, inputs).await
}

/// The documents every embedded run installs: core CRDs, the mock's CRDs and ClusterRoles.
pub fn base_documents() -> anyhow::Result<Vec<Value>> {
    base_documents_with(core_crd_documents())
}

/// [`base_documents`] with the given core CRDs (and the Services their conversion names),
/// e.g. those of [`EmbeddedCore`].
pub fn base_documents_with(core: Vec<Value>) -> anyhow::Result<Vec<Value>> {
    let mut docs = core;
    for crd in mock_crds().context("building the mock provider CRDs")? {
        docs.push(serde_json::to_value(crd)?);
    }
    docs.push(aggregated_cluster_role());
    docs.push(manager_cluster_role());
    docs.extend(core_manager_rbac());
    Ok(docs)
}

/// What CAPI core's own RBAC contributes (its manager role, aggregated role and binding; see
/// [`capi_mock_provider::core_rbac`]), so the effective-RBAC rule asks the same question as on a real
/// cluster.
pub fn core_manager_rbac() -> Vec<Value> {
    capi_mock_provider::core_rbac::core_manager_rbac()
}

/// Installs the `--crds` manifests as `clusterctl init` would (variables substituted, creation
/// order, CRDs Established first); objects of kinds nothing serves are skipped: each is named on
/// stderr and returned as a report note.
async fn install_provider_manifests(
    client: &kube::Client,
    inputs: &EmbeddedInputs,
) -> anyhow::Result<Vec<crate::report::Note>> {
    if inputs.crds.is_empty() {
        if !inputs.vars.is_empty() {
            anyhow::bail!("--var needs --crds (it sets clusterctl variables of those manifests)");
        }
        return Ok(Vec::new());
    }
    let vars = crate::manifests::Variables::from_flags(&inputs.vars)?;
    let report = crate::manifests::load_and_install(client, &inputs.crds, &vars)
        .await
        .context("installing --crds on the embedded server")?;
    Ok(crate::manifests::skipped_lines(&report)
        .into_iter()
        .map(|(source, message)| {
            eprintln!("{source}: {message}");
            crate::report::Note { source, message }
        })
        .collect())
}

//! The management cluster of a run that installs the provider and starts its controllers itself
//! (`--crds`, `--provider-cmd`): the embedded server, which the run owns and throws away, or a
//! real cluster reached through a kubeconfig, beside which the managers run as local processes
//! (as `make run` beside envtest), and on which everything the run installed or changed is put
//! back afterwards ([`crate::manifests::installation`]).
//!
//! What differs between the two is here and only here: how a manager reaches the cluster (a
//! listener of the embedded server, or the user's kubeconfig), how the API server reaches a
//! webhook of this machine (the embedded server routes a Service to an address; on a cluster the
//! client configs naming the Service are pointed at a URL of this machine, with the CA the run
//! issued), how the run's objects are released at cleanup, and how the base documents (core's
//! and the mock's CRDs and RBAC) are installed.

use super::private_file::PrivateFile;
use crate::kubeconn::Connection;
use crate::manifests::installation::Installation;
use crate::scenarios::cleanup::CleanupGuard;
use anyhow::Context;
use capi_contract::inventory::{Document, Origin};
use embedded_apiserver::{EmbeddedServer, Listener};
use serde_json::Value;
use std::net::SocketAddr;

/// Where a run installs and whose controllers it starts.
#[derive(Clone, Copy)]
pub enum Management<'a> {
    /// The embedded API server (`--embedded`).
    Embedded(&'a EmbeddedServer),
    /// A real cluster (`--kubeconfig`/`--context` with `--crds` or `--provider-cmd`).
    Cluster(&'a ClusterManagement),
}

/// A real cluster the run installs on: its connection and what the run changed there.
pub struct ClusterManagement {
    pub conn: Connection,
    pub installation: Installation,
    /// CAPI core's CRDs are on the cluster already: the run uses them as they are (and their
    /// conversion webhook, core's own) instead of installing its own.
    pub core_installed: bool,
    /// CAPI core's controllers run on the cluster: the run's core objects carry the paused
    /// annotation (docs/architecture.md "Lifecycle scenarios").
    pub core_running: bool,
}

/// How a manager the run starts reaches the management cluster.
pub struct ProviderAccess {
    /// Its `{kubeconfig}`: a private temporary file, removed when dropped.
    pub kubeconfig: PrivateFile,
    /// The embedded server's listener the kubeconfig points at (it counts the manager's
    /// watches); `None` on a cluster.
    pub listener: Option<Listener>,
}

impl ProviderAccess {
    /// Stops the listener (the embedded server) and removes the kubeconfig.
    pub async fn close(self) {
        if let Some(l) = self.listener {
            l.shutdown().await;
        }
    }
}

impl Management<'_> {
    pub fn is_embedded(&self) -> bool {
        matches!(self, Management::Embedded(_))
    }

    /// A kubeconfig for a manager process (`file`: the temporary file's name).
    pub async fn provider_access(&self, file: &str) -> anyhow::Result<ProviderAccess> {
        match self {
            Management::Embedded(server) => {
                let l = server.listen("127.0.0.1:0".parse()?).await?;
                let kubeconfig = PrivateFile::create(file, &l.kubeconfig_yaml())?;
                Ok(ProviderAccess {
                    kubeconfig,
                    listener: Some(l),
                })
            }
            Management::Cluster(c) => {
                let yaml = c.conn.kubeconfig_yaml()?;
                Ok(ProviderAccess {
                    kubeconfig: PrivateFile::create(file, &yaml)?,
                    listener: None,
                })
            }
        }
    }

    /// Sends what the API server sends to Service `namespace/name:port` (webhook calls) to
    /// `addr` on this machine.
    pub async fn route_service(
        &self,
        client: &kube::Client,
        service: (&str, &str, u16),
        addr: SocketAddr,
    ) -> anyhow::Result<()> {
        let (namespace, name, port) = service;
        match self {
            Management::Embedded(server) => {
                server.route_service(namespace, name, port, addr);
                Ok(())
            }
            Management::Cluster(c) => {
                c.installation
                    .route_service(client, service, addr)
                    .await
                    .with_context(|| {
                        format!(
                            "pointing the webhooks of Service {namespace}/{name}:{port} at {addr}"
                        )
                    })?;
                Ok(())
            }
        }
    }

    /// Undoes [`Self::route_service`] (on a cluster the routes go with the rest of the
    /// installation, [`ClusterManagement::restore`]).
    pub fn unroute_service(&self, namespace: &str, name: &str, port: u16) {
        if let Management::Embedded(server) = self {
            server.unroute_service(namespace, name, port);
        }
    }

    /// The run's cleanup guard: on the embedded server, what a crashed provider left
    /// finalizing in the run's namespaces is released at cleanup; on a cluster what the
    /// managers left finalizing in the run's own namespaces gets its finalizers stripped
    /// after the wait ([`CleanupGuard::releasing_its_namespaces`]).
    pub fn cleanup_guard(&self) -> CleanupGuard {
        match self {
            Management::Embedded(server) => {
                let server = (*server).clone();
                CleanupGuard::owning_the_server(move |ns| {
                    server.release_finalizers_in(ns);
                })
            }
            Management::Cluster(_) => CleanupGuard::releasing_its_namespaces(),
        }
    }

    /// The embedded server's request ledger (what the server refused, under server faults).
    pub fn ledger(&self) -> Option<embedded_apiserver::Ledger> {
        match self {
            Management::Embedded(server) => Some(embedded_apiserver::Ledger::new(server)),
            Management::Cluster(_) => None,
        }
    }

    /// The run's record of changes on a cluster (none on the embedded server).
    pub fn installation(&self) -> Option<&Installation> {
        match self {
            Management::Embedded(_) => None,
            Management::Cluster(c) => Some(&c.installation),
        }
    }

    /// Whether CAPI core's own controllers run on the cluster (never on the embedded server).
    pub fn core_running(&self) -> bool {
        matches!(self, Management::Cluster(c) if c.core_running)
    }

    /// Installs the base documents (CAPI core's CRDs and RBAC, the mock's CRDs and roles).
    pub async fn install_base(
        &self,
        client: &kube::Client,
        docs: Vec<Value>,
    ) -> anyhow::Result<()> {
        match self {
            Management::Embedded(server) => server
                .apply_documents(docs)
                .await
                .context("installing core and mock CRDs on the embedded server"),
            Management::Cluster(c) => {
                let docs = docs
                    .into_iter()
                    .enumerate()
                    .map(|(i, v)| Document::new(v, Origin::new("capi-conformance (base)", i, 1)))
                    .collect();
                crate::manifests::install::install_into(
                    client,
                    docs,
                    crate::manifests::CRD_TIMEOUT,
                    Some(&c.installation),
                )
                .await
                .context("installing core and mock CRDs on the cluster")?;
                Ok(())
            }
        }
    }

    /// Installs the provider's components (`--crds`): recorded, on a cluster, to be put back.
    pub async fn install_components(
        &self,
        client: &kube::Client,
        docs: Vec<Document>,
    ) -> Result<crate::manifests::install::InstallReport, crate::manifests::install::InstallError>
    {
        crate::manifests::install::install_into(
            client,
            docs,
            crate::manifests::CRD_TIMEOUT,
            self.installation(),
        )
        .await
    }

    /// Where the run says it installs (`on the embedded server`, `on the cluster`).
    pub fn where_(&self) -> &'static str {
        match self {
            Management::Embedded(_) => "on the embedded server",
            Management::Cluster(_) => "on the cluster",
        }
    }
}

impl ClusterManagement {
    /// Puts the cluster back as it was before the run (see
    /// [`crate::manifests::installation`]); prints what could not be put back.
    pub async fn restore(&self, client: &kube::Client) -> Vec<String> {
        let left = self
            .installation
            .restore(client, std::time::Duration::from_secs(60))
            .await;
        for l in &left {
            eprintln!(
                "left on the cluster by run {}: {l}",
                self.installation.run_id()
            );
        }
        left
    }
}

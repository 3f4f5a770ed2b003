//! What the tool runs in place of CAPI core's manager, beside the scenarios' core simulator
//! ([`crate::scenarios::core_sim`]); docs/core-simulation.md describes all of it:
//!
//! - [`conversion`] (the lifecycle engine's): `cluster.x-k8s.io` v1beta1 ↔ v1beta2 for Cluster,
//!   Machine, MachinePool, as core's conversion webhook converts;
//! - [`webhook`]: that conversion served over HTTPS (`ConversionReview` at `/convert`);
//! - [`crds`]: the core CRDs installed (minimal ones of our own, or CAPI's released ones with
//!   `--core-crds`), their conversion pointed at the webhook;
//! - [`pki`] and [`workload`] (the lifecycle engine's): the certificates and Secrets an
//!   initialized control plane leaves, and the workload clusters `<cluster>-kubeconfig` points
//!   at.

pub mod crds;
pub mod webhook;

pub use capi_lifecycle::capi_core::{conversion, pki, workload};

use anyhow::Context;
use crds::{CoreCrds, ServiceRoute};
use embedded_apiserver::EmbeddedServer;
use serde_json::Value;

/// CAPI core as an embedded run provides it: the conversion webhook, the core CRDs pointed at
/// it, the workload clusters.
pub struct EmbeddedCore {
    pub webhook: webhook::ConversionWebhook,
    /// The core CRDs (and Services) to install.
    pub documents: Vec<Value>,
    /// The Services core's CRDs convert through.
    pub routes: Vec<ServiceRoute>,
    /// The Service the mock's CRDs convert through (the baseline's), routed to the same
    /// webhook.
    pub mock_route: ServiceRoute,
    pub workloads: workload::WorkloadClusters,
    pub crds: CoreCrds,
}

impl EmbeddedCore {
    /// Starts the conversion webhook (reading CRD labels through `client`) and prepares the core
    /// CRDs of `crds`.
    pub async fn start(client: kube::Client, crds: CoreCrds) -> anyhow::Result<Self> {
        let released = match &crds {
            CoreCrds::Minimal => None,
            CoreCrds::Released(file, kustomize) => Some(crds::load_released(file, kustomize)?),
        };
        let mut names: Vec<String> = released
            .iter()
            .flat_map(|r| r.routes.iter().flat_map(ServiceRoute::dns_names))
            .collect();
        names.extend(crds::core_route().dns_names());
        names.extend(crds::mock_route().dns_names());
        let webhook = webhook::ConversionWebhook::start(client, &names)
            .await
            .context("starting the core conversion webhook")?;
        let (documents, routes) = match &released {
            None => (crds::minimal(&webhook.ca_pem), vec![crds::core_route()]),
            Some(r) => (r.documents(&webhook.ca_pem), r.routes.clone()),
        };
        Ok(EmbeddedCore {
            webhook,
            documents,
            routes,
            mock_route: crds::mock_route(),
            workloads: workload::WorkloadClusters::default(),
            crds,
        })
    }

    /// Routes the Services the core CRDs' and the mock's CRDs' conversion names to the webhook,
    /// which the embedded server calls in-process (the run issued its certificate; every
    /// review is answered as over HTTPS).
    pub fn route(&self, server: &EmbeddedServer) {
        for r in self.routes.iter().chain([&self.mock_route]) {
            server.route_service_in_process(
                &r.namespace,
                &r.name,
                r.port,
                self.webhook.router.clone(),
            );
        }
    }

    /// The mock's CRDs with the webhook's CA, and the Namespace and Service they convert
    /// through.
    pub fn mock_documents(&self) -> anyhow::Result<Vec<Value>> {
        let mut docs = Vec::new();
        for crd in
            capi_mock_provider::crds::mock_crds().context("building the mock provider CRDs")?
        {
            docs.push(serde_json::to_value(crd)?);
        }
        capi_mock_provider::crds::with_ca_bundle(&mut docs, &self.webhook.ca_pem);
        docs.extend(crds::route_documents(&self.mock_route));
        Ok(docs)
    }

    /// [`Self::route`] on any management cluster: on a real one the core CRDs' conversion
    /// client configs are pointed at the webhook's URL on this machine.
    pub async fn route_on(
        &self,
        management: crate::run::management::Management<'_>,
        client: &kube::Client,
        core: bool,
    ) -> anyhow::Result<()> {
        let core_routes = if core { self.routes.as_slice() } else { &[] };
        for r in core_routes.iter().chain([&self.mock_route]) {
            management
                .route_service(client, (&r.namespace, &r.name, r.port), self.webhook.addr)
                .await?;
        }
        Ok(())
    }

    pub async fn shutdown(self) {
        self.workloads.shutdown().await;
        self.webhook.shutdown().await;
    }
}

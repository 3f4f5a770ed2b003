//! What core copies from a provider's objects into its own once they report progress, as CAPI
//! v1.11's controllers do (docs/core-simulation.md "Checked against real core"):
//!
//! - the Cluster controller's `reconcileInfrastructure`
//!   (`internal/controllers/cluster/cluster_controller_phases.go`): the InfraCluster's
//!   `spec.controlPlaneEndpoint` when the Cluster has none, its `status.failureDomains`, then
//!   `status.initialization.infrastructureProvisioned`;
//! - the Machine controller's `reconcileBootstrap` (`machine_controller_phases.go`): the
//!   config's `status.dataSecretName` into `spec.bootstrap.dataSecretName`, then
//!   `status.initialization.bootstrapDataSecretCreated`;
//! - its `reconcileInfrastructure`: the InfraMachine's `spec.providerID`, `status.addresses`,
//!   `spec.failureDomain`, then `status.initialization.infrastructureProvisioned`.
//!
//! Each reads the provider's object at the resource given (its v1beta2-contract paths).

use super::{cluster_resource, machine_resource};
use crate::scenarios::env::{Env, EnvError, key};
use kube::discovery::ApiResource;
use serde_json::{Value, json};

impl Env {
    async fn read(&self, resource: &ApiResource, name: &str) -> Result<Value, EnvError> {
        let obj = self
            .api(resource)
            .get(name)
            .await
            .map_err(|source| EnvError::Api {
                action: "read",
                object: key(resource, name),
                source,
            })?;
        serde_json::to_value(obj).map_err(|e| EnvError::Invalid(e.to_string()))
    }

    /// The Cluster controller's infrastructure phase once `infra`'s `name` is provisioned.
    pub async fn copy_cluster_infrastructure(
        &self,
        cluster: &str,
        infra: &ApiResource,
        name: &str,
    ) -> Result<Value, EnvError> {
        let ic = self.read(infra, name).await?;
        let current = self.read(&cluster_resource(), cluster).await?;
        if !valid_endpoint(current.pointer("/spec/controlPlaneEndpoint"))
            && let Some(endpoint) = ic.pointer("/spec/controlPlaneEndpoint")
        {
            self.merge_patch(
                &cluster_resource(),
                cluster,
                json!({"spec": {"controlPlaneEndpoint": endpoint}}),
                "copy control plane endpoint",
            )
            .await?;
        }
        let domains = failure_domains_v1beta2(ic.pointer("/status/failureDomains"));
        self.patch_status(
            &cluster_resource(),
            cluster,
            json!({"status": {
                "failureDomains": domains,
                "initialization": {"infrastructureProvisioned": true},
            }}),
            "open gate: infrastructure provisioned (copied)",
        )
        .await
    }

    /// The Machine controller's bootstrap phase once `config`'s `name` created its data.
    pub async fn copy_machine_bootstrap(
        &self,
        machine: &str,
        config: &ApiResource,
        name: &str,
    ) -> Result<Value, EnvError> {
        let c = self.read(config, name).await?;
        let secret = c
            .pointer("/status/dataSecretName")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| {
                EnvError::Invalid(format!(
                    "{}: got empty status.dataSecretName",
                    key(config, name)
                ))
            })?;
        self.set_data_secret_name(machine, secret).await?;
        self.patch_status(
            &machine_resource(),
            machine,
            json!({"status": {"initialization": {"bootstrapDataSecretCreated": true}}}),
            "bootstrap data secret created (copied)",
        )
        .await
    }

    /// The Machine controller's infrastructure phase once `infra`'s `name` is provisioned.
    pub async fn copy_machine_infrastructure(
        &self,
        machine: &str,
        infra: &ApiResource,
        name: &str,
    ) -> Result<Value, EnvError> {
        let im = self.read(infra, name).await?;
        let provider_id = im
            .pointer("/spec/providerID")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| {
                EnvError::Invalid(format!("{}: got empty spec.providerID", key(infra, name)))
            })?;
        let mut spec = json!({"providerID": provider_id});
        if let Some(fd) = im.pointer("/spec/failureDomain") {
            spec["failureDomain"] = fd.clone();
        }
        self.merge_patch(
            &machine_resource(),
            machine,
            json!({"spec": spec}),
            "copy providerID",
        )
        .await?;
        let mut status = json!({"initialization": {"infrastructureProvisioned": true}});
        if let Some(a) = im.pointer("/status/addresses") {
            status["addresses"] = a.clone();
        }
        self.patch_status(
            &machine_resource(),
            machine,
            json!({ "status": status }),
            "infrastructure provisioned (copied)",
        )
        .await
    }
}

/// `APIEndpoint.IsValid`: a host and a port.
pub(super) fn valid_endpoint(e: Option<&Value>) -> bool {
    e.is_some_and(|e| {
        e.get("host")
            .and_then(Value::as_str)
            .is_some_and(|h| !h.is_empty())
            && e.get("port")
                .and_then(Value::as_i64)
                .is_some_and(|p| p != 0)
    })
}

/// An InfraCluster's `status.failureDomains` in the v1beta2 Cluster's shape: a list of
/// `{name, controlPlane, attributes}`, by core's own conversion of the map. An InfraCluster read at a v1beta1-contract version reports
/// a map by name (core reads it at the contract version and converts,
/// `contract.InfrastructureCluster().FailureDomains()`); written into the Cluster as a map, it
/// would make every Cluster unreadable to a v1beta2 client ("cannot unmarshal object into Go
/// struct field ClusterStatus.items.status.failureDomains").
pub fn failure_domains_v1beta2(domains: Option<&Value>) -> Value {
    match domains {
        Some(Value::Array(list)) => Value::Array(list.clone()),
        map => crate::capi_core::conversion::failure_domains_up(map).unwrap_or_else(|| json!([])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1beta1_failure_domains_become_the_v1beta2_list() {
        let map = json!({"fd-a": {"controlPlane": true, "attributes": {"zone": "a"}}, "fd-b": {}});
        assert_eq!(
            failure_domains_v1beta2(Some(&map)),
            json!([{"name": "fd-a", "controlPlane": true, "attributes": {"zone": "a"}}, {"name": "fd-b", "controlPlane": false}])
        );
        assert_eq!(failure_domains_v1beta2(Some(&json!({}))), json!([]));
        let list = json!([{"name": "x", "controlPlane": false}]);
        assert_eq!(failure_domains_v1beta2(Some(&list)), list);
        assert_eq!(failure_domains_v1beta2(None), json!([]));
    }
}

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
use crate::env::{Env, EnvError, key};
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

    /// Waits (at most a step deadline, through a watch) until the InfraCluster `infra`'s
    /// `name` reports provisioned (`status.initialization.provisioned`, v1beta1
    /// `status.ready`): core's Cluster controller opens a Cluster's infrastructure gate only
    /// then (`reconcileInfrastructure`). Returns it as last seen.
    pub async fn await_infra_cluster_provisioned(
        &self,
        infra: &ApiResource,
        name: &str,
    ) -> Result<Value, EnvError> {
        let deadline = self.step_deadline();
        self.await_object(infra, name, deadline, infra_cluster_provisioned)
            .await
        .ok_or_else(|| {
            EnvError::Invalid(format!(
                "the InfraCluster {}/{name} the Cluster references was not provisioned within {}s: the provider's InfraCluster did not work here, and core opens a Cluster's infrastructure gate only once it is",
                infra.kind,
                deadline.as_secs()
            ))
        })
    }

    /// Opens the infrastructure gate of `cluster` (`status.initialization.infrastructureProvisioned`)
    /// as core does: when the Cluster references `own_infra_cluster` (the InfraCluster of the
    /// provider under test, named as the Cluster, [`Env::create_cluster_of`]), only once that
    /// is provisioned ([`Self::await_infra_cluster_provisioned`]). Opening it earlier is a
    /// state real core never makes: CAPD's DevMachine then reconciled before its DevCluster had
    /// made the in-memory resource group ("resourceGroup ... does not exist") and wrote a
    /// first status no real run shows. A Cluster without one (core opens the gate at once) or
    /// with the mock's stand-in beside another provider (nobody provisions it) gets it at once.
    pub async fn open_infra_gate(
        &self,
        cluster: &str,
        own_infra_cluster: Option<&ApiResource>,
    ) -> Result<Value, EnvError> {
        if let Some(ic) = own_infra_cluster {
            let c = self.read(&cluster_resource(), cluster).await?;
            let r = c.pointer("/spec/infrastructureRef");
            let field = |f: &str| r.and_then(|r| r.get(f)).and_then(Value::as_str);
            if field("kind") == Some(ic.kind.as_str())
                && field("apiGroup") == Some(ic.group.as_str())
            {
                let name = field("name").unwrap_or(cluster).to_string();
                self.await_infra_cluster_provisioned(ic, &name).await?;
            }
        }
        self.set_infra_provisioned(cluster, true).await
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

/// Whether an InfraCluster reports provisioned: `status.initialization.provisioned` (contract
/// v1beta2) or `status.ready` (v1beta1).
pub fn infra_cluster_provisioned(v: &Value) -> bool {
    v.pointer("/status/initialization/provisioned") == Some(&Value::Bool(true))
        || v.pointer("/status/ready") == Some(&Value::Bool(true))
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

    #[test]
    fn an_infra_cluster_is_provisioned_by_either_contracts_flag() {
        assert!(infra_cluster_provisioned(
            &json!({"status": {"initialization": {"provisioned": true}}})
        ));
        assert!(infra_cluster_provisioned(
            &json!({"status": {"ready": true}})
        ));
        assert!(!infra_cluster_provisioned(
            &json!({"status": {"initialization": {"provisioned": false}, "ready": false}})
        ));
        assert!(!infra_cluster_provisioned(&json!({"spec": {}})));
    }
}

//! Reading CAPI core's objects (Cluster, Machine, MachinePool) the way a provider does: by name
//! at the core version the tool installs, tolerant of both contracts' field spellings.

use super::core_crds::{CORE_GROUP, CORE_VERSION};
use super::object::{bool_field, string_field};
use kube::Client;
use kube::api::Api;
use kube::core::{ApiResource, DynamicObject, GroupVersionKind};

/// The core kinds the mock reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CoreKind {
    Cluster,
    Machine,
    MachinePool,
}

impl CoreKind {
    pub fn kind(self) -> &'static str {
        match self {
            CoreKind::Cluster => "Cluster",
            CoreKind::Machine => "Machine",
            CoreKind::MachinePool => "MachinePool",
        }
    }

    pub fn plural(self) -> &'static str {
        match self {
            CoreKind::Cluster => "clusters",
            CoreKind::Machine => "machines",
            CoreKind::MachinePool => "machinepools",
        }
    }

    pub fn api_resource(self) -> ApiResource {
        let gvk = GroupVersionKind::gvk(CORE_GROUP, CORE_VERSION, self.kind());
        ApiResource::from_gvk_with_plural(&gvk, self.plural())
    }
}

/// Gets a core object; `Ok(None)` when it does not exist.
pub async fn get(
    client: &Client,
    kind: CoreKind,
    ns: &str,
    name: &str,
) -> kube::Result<Option<DynamicObject>> {
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), ns, &kind.api_resource());
    api.get_opt(name).await
}

/// `Cluster.spec.paused`.
pub fn cluster_paused(cluster: &DynamicObject) -> bool {
    bool_field(cluster, "spec.paused")
}

/// The cluster infrastructure gate: v1beta2 `status.initialization.infrastructureProvisioned`,
/// or the v1beta1 spelling `status.infrastructureReady`.
pub fn cluster_infrastructure_provisioned(cluster: &DynamicObject) -> bool {
    bool_field(cluster, "status.initialization.infrastructureProvisioned")
        || bool_field(cluster, "status.infrastructureReady")
}

/// `Machine.spec.bootstrap.dataSecretName` when set.
pub fn machine_data_secret_name(machine: &DynamicObject) -> Option<&str> {
    string_field(machine, "spec.bootstrap.dataSecretName")
}

//! The mock's kinds: group, kind, plural and contract role of each, plus the provider label.
//!
//! [`ALL`] holds the kinds served at both contract versions (infrastructure, bootstrap, control
//! plane); the IPAM pool kinds [`IP_POOLS`] have one version ([`IPAM_VERSION`]) and are kept
//! apart, as their CRDs are ([`super::crds::mock_ipam_crds`]).

use super::api::{
    BOOTSTRAP_GROUP, CONTROLPLANE_GROUP, INFRASTRUCTURE_GROUP, IPAM_GROUP, IPAM_VERSION,
};
use capi_contract::contract::{Contract, Role};
use kube::core::{ApiResource, GroupVersionKind};

/// One kind the mock serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MockKind {
    pub group: &'static str,
    pub kind: &'static str,
    pub plural: &'static str,
    pub role: Role,
}

impl MockKind {
    /// The `ApiResource` of this kind at the version that carries `contract`'s shapes (for the
    /// IPAM pool kind, whose one version carries no contract's shapes: that version).
    pub fn api_resource(&self, contract: Contract) -> ApiResource {
        let version = if self.group == IPAM_GROUP {
            IPAM_VERSION
        } else {
            contract.as_str()
        };
        let gvk = GroupVersionKind::gvk(self.group, version, self.kind);
        ApiResource::from_gvk_with_plural(&gvk, self.plural)
    }

    /// The clusterctl provider label value of this kind's provider, e.g. `infrastructure-mock`.
    pub fn provider_label(&self) -> &'static str {
        provider_label(self.group)
    }
}

/// The clusterctl provider label value for one of the mock's groups.
pub fn provider_label(group: &str) -> &'static str {
    match group {
        BOOTSTRAP_GROUP => "bootstrap-mock",
        CONTROLPLANE_GROUP => "control-plane-mock",
        IPAM_GROUP => "ipam-mock",
        _ => "infrastructure-mock",
    }
}

const fn kind(
    group: &'static str,
    kind: &'static str,
    plural: &'static str,
    role: Role,
) -> MockKind {
    MockKind {
        group,
        kind,
        plural,
        role,
    }
}

pub const MOCK_CLUSTER: MockKind = kind(
    INFRASTRUCTURE_GROUP,
    "MockCluster",
    "mockclusters",
    Role::InfraCluster,
);
pub const MOCK_MACHINE: MockKind = kind(
    INFRASTRUCTURE_GROUP,
    "MockMachine",
    "mockmachines",
    Role::InfraMachine,
);
pub const MOCK_MACHINE_POOL: MockKind = kind(
    INFRASTRUCTURE_GROUP,
    "MockMachinePool",
    "mockmachinepools",
    Role::InfraMachinePool,
);
pub const MOCK_CONFIG: MockKind = kind(
    BOOTSTRAP_GROUP,
    "MockConfig",
    "mockconfigs",
    Role::BootstrapConfig,
);
pub const MOCK_CONTROL_PLANE: MockKind = kind(
    CONTROLPLANE_GROUP,
    "MockControlPlane",
    "mockcontrolplanes",
    Role::ControlPlane,
);

/// The IPAM pool kind (not in [`ALL`]: one version, no contract labels).
pub const MOCK_IP_POOL: MockKind = kind(IPAM_GROUP, "MockIPPool", "mockippools", Role::IpamPool);
/// The cluster-scoped IPAM pool kind (as [`MOCK_IP_POOL`], not in [`ALL`]).
pub const MOCK_GLOBAL_IP_POOL: MockKind = kind(
    IPAM_GROUP,
    "MockGlobalIPPool",
    "mockglobalippools",
    Role::IpamPool,
);
/// The IPAM pool kinds: namespaced, then cluster-scoped.
pub const IP_POOLS: [MockKind; 2] = [MOCK_IP_POOL, MOCK_GLOBAL_IP_POOL];

/// Every kind served at both contract versions (base kinds and templates), in manifest order.
pub const ALL: [MockKind; 10] = [
    MOCK_CLUSTER,
    kind(
        INFRASTRUCTURE_GROUP,
        "MockClusterTemplate",
        "mockclustertemplates",
        Role::InfraClusterTemplate,
    ),
    MOCK_MACHINE,
    kind(
        INFRASTRUCTURE_GROUP,
        "MockMachineTemplate",
        "mockmachinetemplates",
        Role::InfraMachineTemplate,
    ),
    MOCK_MACHINE_POOL,
    kind(
        INFRASTRUCTURE_GROUP,
        "MockMachinePoolTemplate",
        "mockmachinepooltemplates",
        Role::InfraMachinePoolTemplate,
    ),
    MOCK_CONFIG,
    kind(
        BOOTSTRAP_GROUP,
        "MockConfigTemplate",
        "mockconfigtemplates",
        Role::BootstrapConfigTemplate,
    ),
    MOCK_CONTROL_PLANE,
    kind(
        CONTROLPLANE_GROUP,
        "MockControlPlaneTemplate",
        "mockcontrolplanetemplates",
        Role::ControlPlaneTemplate,
    ),
];

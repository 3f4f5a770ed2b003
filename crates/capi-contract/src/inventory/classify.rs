//! Role classification (group prefix + kind suffix) and provider grouping.

use crate::contract::Role;

/// Group prefixes of the contract families.
const INFRA: &str = "infrastructure.";
const BOOTSTRAP: &str = "bootstrap.";
const CONTROLPLANE: &str = "controlplane.";
const IPAM: &str = "ipam.";

/// The role a kind plays, from its group prefix and kind suffix (longest suffix first).
/// Managed control planes (`*ControlPlane` kinds in an infrastructure group) are ControlPlanes.
pub fn classify(group: &str, kind: &str) -> Role {
    let ends = |s: &str| kind.len() > s.len() && kind.ends_with(s);
    if group.starts_with(INFRA) {
        if ends("ControlPlaneTemplate") {
            Role::ControlPlaneTemplate
        } else if ends("MachinePoolTemplate") {
            Role::InfraMachinePoolTemplate
        } else if ends("MachineTemplate") {
            Role::InfraMachineTemplate
        } else if ends("ClusterTemplate") {
            Role::InfraClusterTemplate
        } else if ends("ControlPlane") {
            Role::ControlPlane
        } else if ends("MachinePool") {
            Role::InfraMachinePool
        } else if ends("Machine") {
            Role::InfraMachine
        } else if ends("Cluster") {
            Role::InfraCluster
        } else {
            Role::Other
        }
    } else if group.starts_with(BOOTSTRAP) {
        if ends("ConfigTemplate") {
            Role::BootstrapConfigTemplate
        } else if ends("Config") {
            Role::BootstrapConfig
        } else {
            Role::Other
        }
    } else if group.starts_with(CONTROLPLANE) {
        if ends("ControlPlaneTemplate") {
            Role::ControlPlaneTemplate
        } else if ends("ControlPlane") {
            Role::ControlPlane
        } else {
            Role::Other
        }
    } else if group.starts_with(IPAM) && ends("Pool") {
        Role::IpamPool
    } else {
        Role::Other
    }
}

/// The API group family: the group without its contract prefix
/// (`infrastructure.foo.example.io` → `foo.example.io`).
pub fn group_family(group: &str) -> &str {
    for p in [INFRA, BOOTSTRAP, CONTROLPLANE, IPAM] {
        if let Some(rest) = group.strip_prefix(p) {
            return rest;
        }
    }
    group
}

/// The four SIG groups whose RBAC core already has.
pub const SIG_GROUPS: [&str; 4] = [
    "addons.cluster.x-k8s.io",
    "bootstrap.cluster.x-k8s.io",
    "controlplane.cluster.x-k8s.io",
    "infrastructure.cluster.x-k8s.io",
];

/// The SIG group for a role (`all/api-group`).
pub fn sig_group(role: Role) -> Option<&'static str> {
    match role {
        Role::InfraCluster
        | Role::InfraClusterTemplate
        | Role::InfraMachine
        | Role::InfraMachineTemplate
        | Role::InfraMachinePool
        | Role::InfraMachinePoolTemplate => Some("infrastructure.cluster.x-k8s.io"),
        Role::BootstrapConfig | Role::BootstrapConfigTemplate => Some("bootstrap.cluster.x-k8s.io"),
        Role::ControlPlane | Role::ControlPlaneTemplate => Some("controlplane.cluster.x-k8s.io"),
        _ => None,
    }
}

/// The kind suffix a role's kinds carry (`<Env>Machine`, `<Env>ConfigTemplate`, …).
pub fn kind_suffix(role: Role) -> Option<&'static str> {
    match role {
        Role::InfraCluster => Some("Cluster"),
        Role::InfraClusterTemplate => Some("ClusterTemplate"),
        Role::InfraMachine => Some("Machine"),
        Role::InfraMachineTemplate => Some("MachineTemplate"),
        Role::InfraMachinePool => Some("MachinePool"),
        Role::InfraMachinePoolTemplate => Some("MachinePoolTemplate"),
        Role::BootstrapConfig => Some("Config"),
        Role::BootstrapConfigTemplate => Some("ConfigTemplate"),
        Role::ControlPlane => Some("ControlPlane"),
        Role::ControlPlaneTemplate => Some("ControlPlaneTemplate"),
        Role::IpamPool => Some("Pool"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_by_group_and_suffix() {
        let g = "infrastructure.cluster.x-k8s.io";
        assert_eq!(classify(g, "DevMachinePool"), Role::InfraMachinePool);
        assert_eq!(
            classify(g, "DevMachinePoolTemplate"),
            Role::InfraMachinePoolTemplate
        );
        assert_eq!(classify(g, "AzureManagedControlPlane"), Role::ControlPlane);
        assert_eq!(
            classify(g, "GCPManagedControlPlaneTemplate"),
            Role::ControlPlaneTemplate
        );
        assert_eq!(classify(g, "AWSClusterStaticIdentity"), Role::Other);
        assert_eq!(classify(g, "Metal3DataTemplate"), Role::Other);
        assert_eq!(
            classify("bootstrap.cluster.x-k8s.io", "KubeadmConfigTemplate"),
            Role::BootstrapConfigTemplate
        );
        assert_eq!(
            classify("controlplane.cluster.x-k8s.io", "KubeadmControlPlane"),
            Role::ControlPlane
        );
        assert_eq!(
            classify("ipam.cluster.x-k8s.io", "InClusterIPPool"),
            Role::IpamPool
        );
        assert_eq!(
            classify("ipam.cluster.x-k8s.io", "IPAddressClaim"),
            Role::Other
        );
        assert_eq!(classify("cluster.x-k8s.io", "Machine"), Role::Other);
        assert_eq!(classify("infrastructure.foo.io", "Machine"), Role::Other);
    }

    #[test]
    fn family() {
        assert_eq!(
            group_family("infrastructure.foo.example.io"),
            "foo.example.io"
        );
        assert_eq!(group_family("example.io"), "example.io");
    }
}

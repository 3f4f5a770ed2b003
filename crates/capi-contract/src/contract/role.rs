use serde::{Deserialize, Serialize};
use std::fmt;

/// The part a CRD plays in the CAPI contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    InfraCluster,
    InfraClusterTemplate,
    InfraMachine,
    InfraMachineTemplate,
    #[serde(rename = "infra-machinepool")]
    InfraMachinePool,
    #[serde(rename = "infra-machinepool-template")]
    InfraMachinePoolTemplate,
    #[serde(rename = "bootstrap")]
    BootstrapConfig,
    #[serde(rename = "bootstrap-template")]
    BootstrapConfigTemplate,
    ControlPlane,
    ControlPlaneTemplate,
    IpamPool,
    /// Provider-wide rules (RBAC aggregation, clusterctl metadata/components): column kind `*`.
    Provider,
    Other,
}

impl Role {
    pub const ALL: [Role; 13] = [
        Role::InfraCluster,
        Role::InfraClusterTemplate,
        Role::InfraMachine,
        Role::InfraMachineTemplate,
        Role::InfraMachinePool,
        Role::InfraMachinePoolTemplate,
        Role::BootstrapConfig,
        Role::BootstrapConfigTemplate,
        Role::ControlPlane,
        Role::ControlPlaneTemplate,
        Role::IpamPool,
        Role::Provider,
        Role::Other,
    ];

    /// Kebab-case name used in suites, CLI flags and reports (`infra-machine-template`).
    pub fn as_str(self) -> &'static str {
        match self {
            Role::InfraCluster => "infra-cluster",
            Role::InfraClusterTemplate => "infra-cluster-template",
            Role::InfraMachine => "infra-machine",
            Role::InfraMachineTemplate => "infra-machine-template",
            Role::InfraMachinePool => "infra-machinepool",
            Role::InfraMachinePoolTemplate => "infra-machinepool-template",
            Role::BootstrapConfig => "bootstrap",
            Role::BootstrapConfigTemplate => "bootstrap-template",
            Role::ControlPlane => "control-plane",
            Role::ControlPlaneTemplate => "control-plane-template",
            Role::IpamPool => "ipam-pool",
            Role::Provider => "provider",
            Role::Other => "other",
        }
    }

    /// Human name as the contract pages write it (`InfraMachineTemplate`).
    pub fn display_name(self) -> &'static str {
        match self {
            Role::InfraCluster => "InfraCluster",
            Role::InfraClusterTemplate => "InfraClusterTemplate",
            Role::InfraMachine => "InfraMachine",
            Role::InfraMachineTemplate => "InfraMachineTemplate",
            Role::InfraMachinePool => "InfraMachinePool",
            Role::InfraMachinePoolTemplate => "InfraMachinePoolTemplate",
            Role::BootstrapConfig => "BootstrapConfig",
            Role::BootstrapConfigTemplate => "BootstrapConfigTemplate",
            Role::ControlPlane => "ControlPlane",
            Role::ControlPlaneTemplate => "ControlPlaneTemplate",
            Role::IpamPool => "IPAMPool",
            Role::Provider => "Provider",
            Role::Other => "Other",
        }
    }

    /// Parses either the kebab-case name or the display name, case-insensitively.
    pub fn parse(s: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| {
            r.as_str().eq_ignore_ascii_case(s) || r.display_name().eq_ignore_ascii_case(s)
        })
    }

    pub fn is_template(self) -> bool {
        matches!(
            self,
            Role::InfraClusterTemplate
                | Role::InfraMachineTemplate
                | Role::InfraMachinePoolTemplate
                | Role::BootstrapConfigTemplate
                | Role::ControlPlaneTemplate
        )
    }

    /// For a template role, the role of the kind it is cloned into.
    pub fn template_base(self) -> Option<Role> {
        match self {
            Role::InfraClusterTemplate => Some(Role::InfraCluster),
            Role::InfraMachineTemplate => Some(Role::InfraMachine),
            Role::InfraMachinePoolTemplate => Some(Role::InfraMachinePool),
            Role::BootstrapConfigTemplate => Some(Role::BootstrapConfig),
            Role::ControlPlaneTemplate => Some(Role::ControlPlane),
            _ => None,
        }
    }

    /// For a base role, its template role.
    pub fn template(self) -> Option<Role> {
        match self {
            Role::InfraCluster => Some(Role::InfraClusterTemplate),
            Role::InfraMachine => Some(Role::InfraMachineTemplate),
            Role::InfraMachinePool => Some(Role::InfraMachinePoolTemplate),
            Role::BootstrapConfig => Some(Role::BootstrapConfigTemplate),
            Role::ControlPlane => Some(Role::ControlPlaneTemplate),
            _ => None,
        }
    }

    /// Roles CAPI core references (everything except IPAM pools and `Other`).
    pub fn is_contract_kind(self) -> bool {
        !matches!(self, Role::IpamPool | Role::Provider | Role::Other)
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.display_name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for r in Role::ALL {
            assert_eq!(Role::parse(r.as_str()), Some(r));
            assert_eq!(Role::parse(r.display_name()), Some(r));
        }
        for r in Role::ALL {
            if let Some(t) = r.template() {
                assert_eq!(t.template_base(), Some(r));
                assert!(t.is_template());
            }
        }
    }

    /// Suites and reports use `as_str()` names; serde must agree with them.
    #[test]
    fn serde_names_are_the_kebab_names() {
        for r in Role::ALL {
            let json = serde_json::to_value(r).unwrap();
            assert_eq!(json, serde_json::Value::String(r.as_str().to_string()));
            let back: Role = serde_json::from_value(json).unwrap();
            assert_eq!(back, r);
        }
    }
}

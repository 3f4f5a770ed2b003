//! The built-in mock provider as the baseline: which mock kind plays each role, and the sample
//! objects the mock needs (its defaults).

use super::Subject;
use capi_contract::contract::{Contract, Role};
use capi_contract::model::Column;
use kube::discovery::ApiResource;
use serde_json::{Value, json};

/// Provider name of the baseline columns.
pub const BASELINE_PROVIDER: &str = "mock";

/// Group suffix of the built-in mock's kinds (they get the mock's default samples).
pub const MOCK_GROUP_SUFFIX: &str = "mock.capi-conformance.io";

/// The mock's group and kind for a role.
pub fn mock_kind(role: Role) -> Option<(&'static str, &'static str)> {
    const INFRA: &str = "infrastructure.mock.capi-conformance.io";
    const BOOTSTRAP: &str = "bootstrap.mock.capi-conformance.io";
    const CP: &str = "controlplane.mock.capi-conformance.io";
    Some(match role {
        Role::InfraCluster => (INFRA, "MockCluster"),
        Role::InfraClusterTemplate => (INFRA, "MockClusterTemplate"),
        Role::InfraMachine => (INFRA, "MockMachine"),
        Role::InfraMachineTemplate => (INFRA, "MockMachineTemplate"),
        Role::InfraMachinePool => (INFRA, "MockMachinePool"),
        Role::InfraMachinePoolTemplate => (INFRA, "MockMachinePoolTemplate"),
        Role::BootstrapConfig => (BOOTSTRAP, "MockConfig"),
        Role::BootstrapConfigTemplate => (BOOTSTRAP, "MockConfigTemplate"),
        Role::ControlPlane => (CP, "MockControlPlane"),
        Role::ControlPlaneTemplate => (CP, "MockControlPlaneTemplate"),
        Role::IpamPool => ("ipam.mock.capi-conformance.io", "MockIPPool"),
        _ => return None,
    })
}

/// The mock's cluster-scoped IPAM pool kind (group, kind): the baseline of a cluster-scoped
/// pool kind (an in-cluster IPAM provider's `GlobalInClusterIPPool`).
pub const MOCK_GLOBAL_POOL: (&str, &str) = ("ipam.mock.capi-conformance.io", "MockGlobalIPPool");

/// The mock's kind for a role whose objects are cluster-scoped (`cluster_scoped`) or not: the
/// role's kind ([`mock_kind`]), or its cluster-scoped kind where the mock has one (the IPAM
/// pool); `None` when the mock has no kind of that scope for the role.
pub fn mock_kind_scoped(role: Role, cluster_scoped: bool) -> Option<(&'static str, &'static str)> {
    match (role, cluster_scoped) {
        (_, false) => mock_kind(role),
        (Role::IpamPool, true) => Some(MOCK_GLOBAL_POOL),
        _ => None,
    }
}

/// Whether the baseline of a cluster-scoped kind of `role` is a cluster-scoped mock kind (else
/// the role's namespaced mock kind: the mock has no cluster-scoped kind for it).
pub fn baseline_is_cluster_scoped(role: Role, cluster_scoped: bool) -> bool {
    cluster_scoped && mock_kind_scoped(role, true).is_some()
}

/// The mock's cluster-scoped kinds (their CRDs say `scope: Cluster`).
pub fn mock_cluster_scoped() -> super::scope::ClusterScopedKinds {
    super::scope::ClusterScopedKinds::of([(
        MOCK_GLOBAL_POOL.0.to_string(),
        MOCK_GLOBAL_POOL.1.to_string(),
    )])
}

/// The roles the scenarios drive (the mock implements all of them).
pub const SCENARIO_ROLES: [Role; 11] = [
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
];

/// The version the mock serves a role's kind at: the contract's name, or for the IPAM pool (one
/// version, no contract label: CAPI reaches pools through `IPAddressClaim.spec.poolRef`)
/// `v1alpha1`.
fn mock_version(role: Role, contract: Option<Contract>) -> Option<&'static str> {
    match (role, contract) {
        (Role::IpamPool, None) => Some("v1alpha1"),
        (Role::IpamPool, Some(_)) | (_, None) => None,
        (_, Some(c)) => Some(c.as_str()),
    }
}

/// The contracts a role's columns are judged in: the pool's single column has none.
pub fn mock_contracts(role: Role) -> Vec<Option<Contract>> {
    if role == Role::IpamPool {
        vec![None]
    } else {
        Contract::ALL.iter().copied().map(Some).collect()
    }
}

fn resource(group: &str, version: &str, kind: &str) -> ApiResource {
    ApiResource {
        group: group.into(),
        version: version.into(),
        api_version: format!("{group}/{version}"),
        kind: kind.into(),
        plural: format!("{}s", kind.to_lowercase()),
    }
}

/// The mock's spec for a (non-template) kind.
fn base_spec(role: Role) -> Value {
    match role {
        Role::ControlPlane | Role::ControlPlaneTemplate => {
            json!({"replicas": 1, "version": "v1.33.0"})
        }
        Role::InfraMachinePool | Role::InfraMachinePoolTemplate => {
            json!({"machinePoolMachines": true})
        }
        // A documentation network (RFC 5737), its gateway outside the handed-out range.
        Role::IpamPool => json!({
            "addresses": ["192.0.2.10-192.0.2.20"],
            "prefix": 24,
            "gateway": "192.0.2.1",
        }),
        _ => json!({}),
    }
}

/// Annotation telling the mock which contract's shapes an object uses (its objects are served
/// at both versions from one storage, so the apiVersion alone does not say).
pub const MOCK_CONTRACT_ANNOTATION: &str = "mock.capi-conformance.io/contract";

/// The mock's default sample for a role and contract: `{metadata, spec}` (templates wrap the
/// base spec and carry the contract annotation for the clones too; the IPAM pool, judged
/// without a contract, carries none).
pub fn mock_sample(role: Role, contract: impl Into<Option<Contract>>) -> Value {
    let contract = contract.into();
    let mut sample = companion_sample(role, contract);
    if role == Role::ControlPlane
        && let Some(c) = contract
    {
        // Its instances are Machines cloned from the mock's InfraMachineTemplate, as KCP's
        // (control-plane/machine-label, in-place-propagation; core's Machine controller is
        // simulated for them).
        let reference = mock_kind(Role::InfraMachineTemplate).map(|(group, kind)| match c {
            Contract::V1Beta1 => json!({"apiVersion": format!("{group}/{}", c.as_str()), "kind": kind, "name": CONTROL_PLANE_MACHINES}),
            Contract::V1Beta2 => json!({"apiGroup": group, "kind": kind, "name": CONTROL_PLANE_MACHINES}),
        });
        if let Some(reference) = reference {
            sample["spec"]["machineTemplate"] = match c {
                Contract::V1Beta1 => json!({"infrastructureRef": reference}),
                Contract::V1Beta2 => json!({"spec": {"infrastructureRef": reference}}),
            };
        }
    }
    if role == Role::InfraMachine {
        // The IPAM contract's infrastructure side (ipam/consumer-claim): the mock's machine
        // claims its address from a MockIPPool, which the scenario creates from the pool's
        // sample (a reference the sample names, docs/core-simulation.md).
        sample["spec"]["addressesFromPools"] = json!([MOCK_MACHINE_POOL_REF.reference()]);
    }
    sample
}

/// The name of the InfraMachineTemplate the mock control plane's sample clones its Machines from.
pub const CONTROL_PLANE_MACHINES: &str = "cp-machines";

/// The pool the mock's InfraMachine sample claims its address from.
pub const MOCK_MACHINE_POOL_REF: PoolRef = PoolRef {
    group: "ipam.mock.capi-conformance.io",
    kind: "MockIPPool",
    name: "pool",
};

/// An IP address pool a sample names (group, kind, name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolRef {
    pub group: &'static str,
    pub kind: &'static str,
    pub name: &'static str,
}

impl PoolRef {
    /// As a typed local object reference (`apiGroup`, `kind`, `name`).
    pub fn reference(&self) -> Value {
        json!({"apiGroup": self.group, "kind": self.kind, "name": self.name})
    }
}

/// The mock's sample of a role as another scenario's companion: [`mock_sample`] without what
/// only the role's own scenario judges (a machine's pool references: a companion machine
/// claims nothing, so the scenarios it serves do not wait on an IPAM pool).
pub fn companion_sample(role: Role, contract: impl Into<Option<Contract>>) -> Value {
    let Some(contract) = contract.into() else {
        return json!({"metadata": {}, "spec": base_spec(role)});
    };
    let annotations = json!({MOCK_CONTRACT_ANNOTATION: contract.as_str()});
    if role.is_template() {
        json!({"metadata": {"annotations": annotations.clone()},
               "spec": {"template": {"metadata": {"annotations": annotations}, "spec": base_spec(role)}}})
    } else {
        json!({"metadata": {"annotations": annotations}, "spec": base_spec(role)})
    }
}

/// The mock subject for a role and contract (the mock serves version = contract name; the IPAM
/// pool's column has no contract).
pub fn mock_subject(
    role: Role,
    contract: impl Into<Option<Contract>>,
    provider: &str,
    baseline: bool,
) -> Option<Subject> {
    mock_subject_scoped(role, contract, provider, baseline, false)
}

/// [`mock_subject`] of the mock's cluster-scoped kind of the role (`cluster_scoped`), where it
/// has one ([`mock_kind_scoped`]).
pub fn mock_subject_scoped(
    role: Role,
    contract: impl Into<Option<Contract>>,
    provider: &str,
    baseline: bool,
    cluster_scoped: bool,
) -> Option<Subject> {
    let contract = contract.into();
    let (group, kind) = mock_kind_scoped(role, cluster_scoped)?;
    let version = mock_version(role, contract)?;
    let base = role
        .is_template()
        .then(|| kind.strip_suffix("Template"))
        .flatten()
        .map(|k| resource(group, version, k));
    Some(Subject {
        column: Column {
            provider: provider.into(),
            kind: kind.into(),
            role,
            contract,
            baseline,
        },
        resource: resource(group, version, kind),
        base,
        sample: Some(mock_sample(role, contract)),
        schema: None,
        companions: super::Companions {
            pool_kinds: vec![
                (
                    MOCK_MACHINE_POOL_REF.group.into(),
                    MOCK_MACHINE_POOL_REF.kind.into(),
                ),
                (MOCK_GLOBAL_POOL.0.into(), MOCK_GLOBAL_POOL.1.into()),
            ],
            cluster_scoped: mock_cluster_scoped(),
            ..Default::default()
        },
        core_version: crate::capi_core::conversion::V1BETA2,
    })
}

/// Baseline subjects for every role × contract (the IPAM pools once each, without a contract).
pub fn all_mock_subjects(provider: &str, baseline: bool) -> Vec<Subject> {
    SCENARIO_ROLES
        .iter()
        .flat_map(|r| mock_contracts(*r).into_iter().map(move |c| (*r, c)))
        .flat_map(|(r, c)| {
            [false, true]
                .into_iter()
                .filter_map(move |scoped| mock_subject_scoped(r, c, provider, baseline, scoped))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_role_and_contract_has_a_mock_subject() {
        let all = all_mock_subjects(BASELINE_PROVIDER, true);
        assert_eq!(all.len(), 22);
        let global = mock_subject_scoped(Role::IpamPool, None, "mock", true, true).unwrap();
        assert_eq!(global.resource.plural, "mockglobalippools");
        assert!(global.is_cluster_scoped());
        assert!(
            !mock_subject(Role::IpamPool, None, "mock", true)
                .unwrap()
                .is_cluster_scoped()
        );
        assert!(
            mock_subject_scoped(Role::InfraMachine, Contract::V1Beta2, "m", true, true).is_none()
        );
        let pool = mock_subject(Role::IpamPool, None, "mock", true).unwrap();
        assert_eq!(
            pool.resource.api_version,
            "ipam.mock.capi-conformance.io/v1alpha1"
        );
        assert_eq!(pool.column.contract, None);
        assert!(mock_subject(Role::IpamPool, Contract::V1Beta2, "mock", true).is_none());
        let t = mock_subject(Role::InfraMachineTemplate, Contract::V1Beta2, "mock", true).unwrap();
        assert_eq!(t.resource.plural, "mockmachinetemplates");
        assert_eq!(t.base.unwrap().kind, "MockMachine");
        assert!(t.sample.unwrap().pointer("/spec/template/spec").is_some());
        let cp = mock_subject(Role::BootstrapConfig, Contract::V1Beta1, "mock", true).unwrap();
        assert_eq!(
            cp.resource.api_version,
            "bootstrap.mock.capi-conformance.io/v1beta1"
        );
    }
}

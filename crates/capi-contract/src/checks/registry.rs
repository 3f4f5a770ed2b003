//! Static rules implemented in code, keyed by rule id (rules without a `check.fields` block).

use super::{
    CheckCtx, Finding, clusterctl, labels, naming, rbac, roles, scope, subresources, templates,
};
use crate::rule_ids as id;
use crate::suite::Rule;
use std::collections::HashMap;
use std::sync::OnceLock;

/// A coded static rule.
pub type CheckFn = fn(&Rule, &CheckCtx) -> Finding;

const DEFINED: [&str; 10] = [
    id::infra_cluster::DEFINED,
    id::infra_cluster_template::DEFINED,
    id::infra_machine::DEFINED,
    id::infra_machine_template::DEFINED,
    id::infra_machinepool::DEFINED,
    id::infra_machinepool_template::DEFINED,
    id::bootstrap::DEFINED,
    id::bootstrap_template::DEFINED,
    id::control_plane::DEFINED,
    id::control_plane_template::DEFINED,
];

fn table() -> HashMap<&'static str, CheckFn> {
    let mut m: HashMap<&'static str, CheckFn> = HashMap::new();
    m.insert(id::all::CRD, scope::crd_v1);
    m.insert(id::all::NAMESPACED, scope::namespaced);
    m.insert(id::all::LIST_TYPE, scope::list_type);
    m.insert(id::all::API_GROUP, scope::api_group);
    m.insert(id::all::CATEGORY, scope::category);
    m.insert(id::all::VERSION_POLICY, scope::version_policy);
    m.insert(id::template::LIST, scope::template_list);
    m.insert(id::all::CRD_NAME, naming::crd_name);
    m.insert(id::ipam::POOL_CRD, naming::ipam_pool_crd);
    m.insert(id::template::KIND_NAME, naming::template_kind_name);
    m.insert(
        id::clusterctl::CRD_NAME_PREFLIGHT,
        naming::crd_name_preflight,
    );
    m.insert(id::all::CONTRACT_LABEL, labels::contract_label);
    m.insert(
        id::all::CONTRACT_LABEL_VERSIONS,
        labels::contract_label_versions,
    );
    m.insert(
        id::all::CONTRACT_LABEL_UNAMBIGUOUS,
        labels::contract_label_unambiguous,
    );
    m.insert(
        id::all::CONTRACT_LABEL_VS_METADATA,
        labels::contract_label_vs_metadata,
    );
    m.insert(
        id::template::LABELS_VERSIONS,
        labels::template_labels_versions,
    );
    m.insert(
        id::all::STATUS_SUBRESOURCE,
        subresources::status_subresource,
    );
    m.insert(
        id::control_plane::SCALE_SUBRESOURCE,
        subresources::scale_subresource,
    );
    m.insert(id::all::RBAC_AGGREGATION, rbac::rbac_aggregation);
    m.insert(id::all::RBAC_OWNER_FINALIZERS, rbac::rbac_owner_finalizers);
    m.insert(id::bootstrap::PROVIDER_RBAC, rbac::bootstrap_provider_rbac);
    m.insert(id::template::SPEC_TEMPLATE, templates::spec_template);
    m.insert(id::template::CLONE_COMPATIBLE, templates::clone_compatible);
    m.insert(
        id::template::NO_STATUS_CONTRACT,
        templates::no_status_contract,
    );
    for id in DEFINED {
        m.insert(id, roles::defined);
    }
    m.insert(id::control_plane::STATUS_VERSION, roles::cp_status_version);
    m.insert(
        id::control_plane::MACHINE_TEMPLATE,
        roles::cp_machine_template,
    );
    m.insert(
        id::control_plane_template::TOPOLOGY_FIELDS,
        roles::cpt_topology_fields,
    );
    m.insert(id::infra_machinepool::MPM_KIND, roles::mpm_kind);
    m.insert(
        id::all::MULTI_INSTANCE_FLAGS,
        clusterctl::multi_instance_flags,
    );
    m.insert(id::clusterctl::REPO_ASSETS, clusterctl::repo_assets);
    m.insert(
        id::clusterctl::METADATA_APIVERSION,
        clusterctl::metadata_apiversion,
    );
    m.insert(id::clusterctl::METADATA_KIND, clusterctl::metadata_kind);
    m.insert(id::clusterctl::METADATA_SERIES, clusterctl::metadata_series);
    m.insert(
        id::clusterctl::METADATA_COVERS_RELEASE,
        clusterctl::metadata_covers_release,
    );
    m.insert(
        id::clusterctl::METADATA_CONTRACT,
        clusterctl::metadata_contract,
    );
    m.insert(id::clusterctl::COMPONENTS_NAME, clusterctl::components_name);
    m.insert(id::clusterctl::ONE_NAMESPACE, clusterctl::one_namespace);
    m.insert(
        id::clusterctl::TARGET_NAMESPACE,
        clusterctl::target_namespace,
    );
    m.insert(
        id::clusterctl::MANAGER_CONTAINER,
        clusterctl::manager_container,
    );
    m.insert(id::clusterctl::NAMESPACE_FLAG, clusterctl::namespace_flag);
    m.insert(id::clusterctl::IMAGES, clusterctl::images);
    m.insert(id::clusterctl::VARIABLES, clusterctl::variables);
    m.insert(id::clusterctl::PROVIDER_LABEL, clusterctl::provider_label);
    m.insert(id::clusterctl::PROVIDER_NAME, clusterctl::provider_name);
    m.insert(id::clusterctl::TEMPLATE_NAMES, clusterctl::template_names);
    m.insert(
        id::clusterctl::TEMPLATE_NAMESPACE,
        clusterctl::template_namespace,
    );
    m.insert(id::clusterctl::TEMPLATE_VARS, clusterctl::template_vars);
    m.insert(
        id::clusterctl::CLUSTERCLASS_FILES,
        clusterctl::clusterclass_files,
    );
    m
}

/// The implementation registered for `id`.
pub fn get(id: &str) -> Option<CheckFn> {
    static TABLE: OnceLock<HashMap<&'static str, CheckFn>> = OnceLock::new();
    TABLE.get_or_init(table).get(id).copied()
}

/// Every id with a coded implementation (for tests and docs).
pub fn ids() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = table().into_keys().collect();
    v.sort_unstable();
    v
}

//! Static rules implemented in code, keyed by rule id (rules without a `check.fields` block).

use super::{
    CheckCtx, Finding, clusterctl, labels, naming, rbac, roles, scope, subresources, templates,
};
use crate::rule_ids::{self as id, RuleId};
use crate::suite::Rule;
use std::collections::HashMap;
use std::sync::OnceLock;

/// A coded static rule.
pub type CheckFn = fn(&Rule, &CheckCtx) -> Finding;

/// Every coded rule with its implementation, one row each.
const TABLE: &[(RuleId, CheckFn)] = &[
    (id::all::CRD, scope::crd_v1),
    (id::all::NAMESPACED, scope::namespaced),
    (id::all::LIST_TYPE, scope::list_type),
    (id::all::API_GROUP, scope::api_group),
    (id::all::CATEGORY, scope::category),
    (id::all::VERSION_POLICY, scope::version_policy),
    (id::template::LIST, scope::template_list),
    (id::all::CRD_NAME, naming::crd_name),
    (id::ipam::POOL_CRD, naming::ipam_pool_crd),
    (id::template::KIND_NAME, naming::template_kind_name),
    (
        id::clusterctl::CRD_NAME_PREFLIGHT,
        naming::crd_name_preflight,
    ),
    (id::all::CONTRACT_LABEL, labels::contract_label),
    (
        id::all::CONTRACT_LABEL_VERSIONS,
        labels::contract_label_versions,
    ),
    (
        id::all::CONTRACT_LABEL_UNAMBIGUOUS,
        labels::contract_label_unambiguous,
    ),
    (
        id::all::CONTRACT_LABEL_VS_METADATA,
        labels::contract_label_vs_metadata,
    ),
    (
        id::template::LABELS_VERSIONS,
        labels::template_labels_versions,
    ),
    (
        id::all::STATUS_SUBRESOURCE,
        subresources::status_subresource,
    ),
    (
        id::control_plane::SCALE_SUBRESOURCE,
        subresources::scale_subresource,
    ),
    (id::all::RBAC_AGGREGATION, rbac::rbac_aggregation),
    (id::all::RBAC_OWNER_FINALIZERS, rbac::rbac_owner_finalizers),
    (id::bootstrap::PROVIDER_RBAC, rbac::bootstrap_provider_rbac),
    (id::template::SPEC_TEMPLATE, templates::spec_template),
    (id::template::CLONE_COMPATIBLE, templates::clone_compatible),
    (
        id::template::NO_STATUS_CONTRACT,
        templates::no_status_contract,
    ),
    (id::infra_cluster::DEFINED, roles::defined),
    (id::infra_cluster_template::DEFINED, roles::defined),
    (id::infra_machine::DEFINED, roles::defined),
    (id::infra_machine_template::DEFINED, roles::defined),
    (id::infra_machinepool::DEFINED, roles::defined),
    (id::infra_machinepool_template::DEFINED, roles::defined),
    (id::bootstrap::DEFINED, roles::defined),
    (id::bootstrap_template::DEFINED, roles::defined),
    (id::control_plane::DEFINED, roles::defined),
    (id::control_plane_template::DEFINED, roles::defined),
    (id::control_plane::STATUS_VERSION, roles::cp_status_version),
    (
        id::control_plane::MACHINE_TEMPLATE,
        roles::cp_machine_template,
    ),
    (
        id::control_plane_template::TOPOLOGY_FIELDS,
        roles::cpt_topology_fields,
    ),
    (id::infra_machinepool::MPM_KIND, roles::mpm_kind),
    (
        id::all::MULTI_INSTANCE_FLAGS,
        clusterctl::multi_instance_flags,
    ),
    (id::clusterctl::REPO_ASSETS, clusterctl::repo_assets),
    (
        id::clusterctl::METADATA_APIVERSION,
        clusterctl::metadata_apiversion,
    ),
    (id::clusterctl::METADATA_KIND, clusterctl::metadata_kind),
    (id::clusterctl::METADATA_SERIES, clusterctl::metadata_series),
    (
        id::clusterctl::METADATA_COVERS_RELEASE,
        clusterctl::metadata_covers_release,
    ),
    (
        id::clusterctl::METADATA_CONTRACT,
        clusterctl::metadata_contract,
    ),
    (id::clusterctl::COMPONENTS_NAME, clusterctl::components_name),
    (id::clusterctl::ONE_NAMESPACE, clusterctl::one_namespace),
    (
        id::clusterctl::TARGET_NAMESPACE,
        clusterctl::target_namespace,
    ),
    (
        id::clusterctl::MANAGER_CONTAINER,
        clusterctl::manager_container,
    ),
    (id::clusterctl::NAMESPACE_FLAG, clusterctl::namespace_flag),
    (id::clusterctl::IMAGES, clusterctl::images),
    (id::clusterctl::VARIABLES, clusterctl::variables),
    (id::clusterctl::PROVIDER_LABEL, clusterctl::provider_label),
    (id::clusterctl::PROVIDER_NAME, clusterctl::provider_name),
    (id::clusterctl::TEMPLATE_NAMES, clusterctl::template_names),
    (
        id::clusterctl::TEMPLATE_NAMESPACE,
        clusterctl::template_namespace,
    ),
    (id::clusterctl::TEMPLATE_VARS, clusterctl::template_vars),
    (
        id::clusterctl::CLUSTERCLASS_FILES,
        clusterctl::clusterclass_files,
    ),
];

/// The implementation registered for `id`.
pub fn get(id: &str) -> Option<CheckFn> {
    static BY_ID: OnceLock<HashMap<&'static str, CheckFn>> = OnceLock::new();
    BY_ID
        .get_or_init(|| TABLE.iter().map(|(id, f)| (id.as_str(), *f)).collect())
        .get(id)
        .copied()
}

/// Every id with a coded implementation (for tests and docs).
pub fn ids() -> Vec<RuleId> {
    let mut v: Vec<RuleId> = TABLE.iter().map(|(id, _)| *id).collect();
    v.sort_unstable();
    v
}

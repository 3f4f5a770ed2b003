//! Static rules implemented in code, keyed by rule id (rules without a `check.fields` block).

use super::{
    CheckCtx, Finding, clusterctl, labels, naming, rbac, roles, scope, subresources, templates,
};
use crate::suite::Rule;
use std::collections::HashMap;
use std::sync::OnceLock;

/// A coded static rule.
pub type CheckFn = fn(&Rule, &CheckCtx) -> Finding;

const DEFINED: [&str; 10] = [
    "infra-cluster/defined",
    "infra-cluster-template/defined",
    "infra-machine/defined",
    "infra-machine-template/defined",
    "infra-machinepool/defined",
    "infra-machinepool-template/defined",
    "bootstrap/defined",
    "bootstrap-template/defined",
    "control-plane/defined",
    "control-plane-template/defined",
];

fn table() -> HashMap<&'static str, CheckFn> {
    let mut m: HashMap<&'static str, CheckFn> = HashMap::new();
    m.insert("all/crd", scope::crd_v1);
    m.insert("all/namespaced", scope::namespaced);
    m.insert("all/list-type", scope::list_type);
    m.insert("all/api-group", scope::api_group);
    m.insert("all/category", scope::category);
    m.insert("all/version-policy", scope::version_policy);
    m.insert("template/list", scope::template_list);
    m.insert("all/crd-name", naming::crd_name);
    m.insert("ipam/pool-crd", naming::ipam_pool_crd);
    m.insert("template/kind-name", naming::template_kind_name);
    m.insert("clusterctl/crd-name-preflight", naming::crd_name_preflight);
    m.insert("all/contract-label", labels::contract_label);
    m.insert(
        "all/contract-label-versions",
        labels::contract_label_versions,
    );
    m.insert(
        "all/contract-label-unambiguous",
        labels::contract_label_unambiguous,
    );
    m.insert(
        "all/contract-label-vs-metadata",
        labels::contract_label_vs_metadata,
    );
    m.insert("template/labels-versions", labels::template_labels_versions);
    m.insert("all/status-subresource", subresources::status_subresource);
    m.insert(
        "control-plane/scale-subresource",
        subresources::scale_subresource,
    );
    m.insert("all/rbac-aggregation", rbac::rbac_aggregation);
    m.insert("all/rbac-owner-finalizers", rbac::rbac_owner_finalizers);
    m.insert("bootstrap/provider-rbac", rbac::bootstrap_provider_rbac);
    m.insert("template/spec-template", templates::spec_template);
    m.insert("template/clone-compatible", templates::clone_compatible);
    m.insert("template/no-status-contract", templates::no_status_contract);
    for id in DEFINED {
        m.insert(id, roles::defined);
    }
    m.insert("control-plane/status-version", roles::cp_status_version);
    m.insert("control-plane/machine-template", roles::cp_machine_template);
    m.insert(
        "control-plane-template/topology-fields",
        roles::cpt_topology_fields,
    );
    m.insert("infra-machinepool/mpm-kind", roles::mpm_kind);
    m.insert("all/multi-instance-flags", clusterctl::multi_instance_flags);
    m.insert("clusterctl/repo-assets", clusterctl::repo_assets);
    m.insert(
        "clusterctl/metadata-apiversion",
        clusterctl::metadata_apiversion,
    );
    m.insert("clusterctl/metadata-kind", clusterctl::metadata_kind);
    m.insert("clusterctl/metadata-series", clusterctl::metadata_series);
    m.insert(
        "clusterctl/metadata-covers-release",
        clusterctl::metadata_covers_release,
    );
    m.insert(
        "clusterctl/metadata-contract",
        clusterctl::metadata_contract,
    );
    m.insert("clusterctl/components-name", clusterctl::components_name);
    m.insert("clusterctl/one-namespace", clusterctl::one_namespace);
    m.insert("clusterctl/target-namespace", clusterctl::target_namespace);
    m.insert(
        "clusterctl/manager-container",
        clusterctl::manager_container,
    );
    m.insert("clusterctl/namespace-flag", clusterctl::namespace_flag);
    m.insert("clusterctl/images", clusterctl::images);
    m.insert("clusterctl/variables", clusterctl::variables);
    m.insert("clusterctl/provider-label", clusterctl::provider_label);
    m.insert("clusterctl/provider-name", clusterctl::provider_name);
    m.insert("clusterctl/template-names", clusterctl::template_names);
    m.insert(
        "clusterctl/template-namespace",
        clusterctl::template_namespace,
    );
    m.insert("clusterctl/template-vars", clusterctl::template_vars);
    m.insert(
        "clusterctl/clusterclass-files",
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

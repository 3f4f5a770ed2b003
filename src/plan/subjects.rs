//! Which subjects a run drives: every scenario-role CRD of the inventory × contract, with its
//! sample object (`--sample`, an existing template, or the mock's defaults for mock kinds).

use crate::report::Column;
use crate::scenarios::Subject;
use crate::scenarios::baseline::{SCENARIO_ROLES, mock_sample};
use capi_contract::contract::{Contract, Role};
use capi_contract::inventory::{ClassifiedCrd, Inventory};
use capi_contract::model::ContractSelection;
use kube::api::{Api, DynamicObject, ListParams};
use kube::discovery::ApiResource;
use serde_json::{Value, json};

/// Group suffix of the built-in mock's kinds (they get the mock's default samples).
pub use capi_lifecycle::baseline::MOCK_GROUP_SUFFIX;

#[derive(Debug, Clone, Default)]
pub struct PlanOptions {
    pub provider: Option<String>,
    pub contract: ContractSelection,
    /// Documents from `--sample` files.
    pub samples: Vec<Value>,
}

fn resource_of(c: &ClassifiedCrd, version: &str) -> ApiResource {
    ApiResource {
        group: c.crd.group.clone(),
        version: version.into(),
        api_version: format!("{}/{version}", c.crd.group),
        kind: c.crd.kind.clone(),
        plural: c.crd.plural.clone(),
    }
}

/// (contract, version) pairs a CRD is driven under.
fn contracts_of(c: &ClassifiedCrd, sel: ContractSelection) -> Vec<(Option<Contract>, String)> {
    // An IPAM pool without a contract label (as real IPAM CRDs are: CAPI reaches pools through
    // `IPAddressClaim.spec.poolRef`, never through a label) gets one column without a contract,
    // at its storage version; the IPAM rules read the same in both contracts.
    if c.role == Role::IpamPool && c.declared.is_empty() {
        return c
            .crd
            .storage_version()
            .map(|v| (None, v.name.clone()))
            .into_iter()
            .collect();
    }
    contract_versions(c, sel)
        .into_iter()
        .map(|(k, v)| (Some(k), v))
        .collect()
}

fn contract_versions(c: &ClassifiedCrd, sel: ContractSelection) -> Vec<(Contract, String)> {
    let declared = |k: Contract| {
        c.declared
            .iter()
            .find(|d| d.contract == k)
            .map(|d| d.version.clone())
    };
    let storage = || c.crd.storage_version().map(|v| v.name.clone());
    let forced = |k: Contract| declared(k).or_else(storage).map(|v| (k, v));
    match sel {
        ContractSelection::Declared => c
            .declared
            .iter()
            .map(|d| (d.contract, d.version.clone()))
            .collect(),
        ContractSelection::V1beta1 => forced(Contract::V1Beta1).into_iter().collect(),
        ContractSelection::V1beta2 => forced(Contract::V1Beta2).into_iter().collect(),
        ContractSelection::All => Contract::ALL.iter().filter_map(|k| forced(*k)).collect(),
    }
}

/// A sample from `--sample` documents for `group`/`kind`: the object itself, or the
/// `spec.template` of a `<kind>Template` sample.
pub fn sample_from_docs(samples: &[Value], group: &str, kind: &str) -> Option<Value> {
    let group_of = |v: &Value| {
        v.get("apiVersion")
            .and_then(Value::as_str)
            .and_then(|a| a.split_once('/'))
            .map(|(g, _)| g.to_string())
    };
    let kind_of = |v: &Value| v.get("kind").and_then(Value::as_str).map(str::to_string);
    if let Some(s) = samples
        .iter()
        .find(|v| group_of(v).as_deref() == Some(group) && kind_of(v).as_deref() == Some(kind))
    {
        return Some(s.clone());
    }
    let template_kind = format!("{kind}Template");
    samples
        .iter()
        .find(|v| {
            group_of(v).as_deref() == Some(group)
                && kind_of(v).as_deref() == Some(template_kind.as_str())
        })
        .and_then(|t| {
            let mut inner = t.pointer("/spec/template").cloned()?;
            // The object is written at the template's version (`GenerateTemplate` takes the
            // template's apiVersion when `spec.template` names none).
            if let (Some(o), Some(av)) = (inner.as_object_mut(), t.get("apiVersion")) {
                o.entry("apiVersion").or_insert_with(|| av.clone());
            }
            Some(inner)
        })
}

/// The baseline subjects: the inventory's mock kinds as `mock` baseline columns.
pub fn baseline_subjects(inv: &Inventory) -> Vec<Subject> {
    let opts = PlanOptions {
        contract: ContractSelection::Declared,
        ..PlanOptions::default()
    };
    subjects(inv, &opts)
        .into_iter()
        .filter(|s| s.resource.group.ends_with(MOCK_GROUP_SUFFIX))
        .map(|mut s| {
            s.column.provider = crate::scenarios::baseline::BASELINE_PROVIDER.into();
            s.column.baseline = true;
            s
        })
        .collect()
}

/// The subjects of the inventory (target columns; samples resolved from documents and mock
/// defaults; the cluster lookup is [`fill_samples_from_cluster`]).
pub fn subjects(inv: &Inventory, opts: &PlanOptions) -> Vec<Subject> {
    let mut out = Vec::new();
    for p in &inv.providers {
        if opts.provider.as_deref().is_some_and(|want| want != p.name) {
            continue;
        }
        for c in &p.crds {
            if !SCENARIO_ROLES.contains(&c.role) {
                continue;
            }
            for (contract, version) in contracts_of(c, opts.contract) {
                let base = c
                    .role
                    .is_template()
                    .then(|| c.crd.kind.strip_suffix("Template"))
                    .flatten()
                    .and_then(|k| inv.find_crd(&c.crd.group, k))
                    .map(|b| resource_of(b, &version));
                let sample =
                    sample_from_docs(&opts.samples, &c.crd.group, &c.crd.kind).or_else(|| {
                        c.crd
                            .group
                            .ends_with(MOCK_GROUP_SUFFIX)
                            .then(|| mock_sample(c.role, contract))
                    });
                let schema = c.crd.version(&version).and_then(|v| v.schema.clone());
                out.push(Subject {
                    schema,
                    column: Column {
                        provider: p.name.as_str().into(),
                        kind: c.crd.kind.as_str().into(),
                        role: c.role,
                        contract,
                        baseline: false,
                    },
                    resource: resource_of(c, &version),
                    base,
                    sample,
                    companions: Default::default(),
                    core_version: crate::scenarios::core_version_for(
                        &c.declared.iter().map(|d| d.contract).collect::<Vec<_>>(),
                    ),
                });
            }
        }
    }
    let pool_kinds = inv
        .providers
        .iter()
        .flat_map(|p| &p.crds)
        .filter(|c| c.role == capi_contract::contract::Role::IpamPool)
        .map(|c| (c.crd.group.clone(), c.crd.kind.clone()))
        .collect();
    link_companions(&mut out, &opts.samples, pool_kinds);
    let cluster_scoped = crate::scenarios::scope::ClusterScopedKinds::of_inventory(inv);
    for s in &mut out {
        s.companions.cluster_scoped = cluster_scoped.clone();
    }
    out
}

/// Fills each subject's [`crate::scenarios::Companions`]: the InfraCluster of the same
/// provider and contract (with a sample) its Clusters reference, the `--sample` documents and
/// the inventory's pool kinds.
fn link_companions(subjects: &mut [Subject], samples: &[Value], pool_kinds: Vec<(String, String)>) {
    let infra_clusters: Vec<(String, Option<Contract>, ApiResource, Value)> = subjects
        .iter()
        .filter(|s| s.role() == capi_contract::contract::Role::InfraCluster)
        .filter_map(|s| {
            Some((
                s.column.provider.to_string(),
                s.column.contract,
                s.resource.clone(),
                s.sample.clone()?,
            ))
        })
        .collect();
    for s in subjects.iter_mut() {
        s.companions.infra_cluster = infra_clusters
            .iter()
            .find(|(p, c, _, _)| p.as_str() == &*s.column.provider && *c == s.column.contract)
            .map(|(_, _, r, v)| (r.clone(), v.clone()));
        if s.role() == capi_contract::contract::Role::ControlPlane
            && s.companions.infra_cluster.is_none()
        {
            // A control plane of Machines clones the InfraMachineTemplate its sample names; its
            // Cluster's InfraCluster is that infrastructure provider's, as in the cluster
            // templates users apply (the provider's InfraMachines find their InfraCluster
            // through the Cluster: CAPD's DevMachine reads the DevCluster it names).
            let group = s.sample.as_ref().and_then(machine_template_group);
            s.companions.infra_cluster = infra_clusters
                .iter()
                .filter(|(_, _, r, _)| Some(&r.group) == group.as_ref())
                .min_by_key(|(_, c, _, _)| *c != s.column.contract)
                .map(|(_, _, r, v)| (r.clone(), v.clone()));
        }
        s.companions.sample_documents = samples.to_vec();
        s.companions.pool_kinds = pool_kinds.clone();
    }
}

/// The API group of the InfraMachineTemplate a control plane sample's machine template names
/// (v1beta2 `spec.machineTemplate.spec.infrastructureRef.apiGroup`, v1beta1
/// `spec.machineTemplate.infrastructureRef.apiVersion`).
fn machine_template_group(sample: &Value) -> Option<String> {
    if let Some(g) = sample
        .pointer("/spec/machineTemplate/spec/infrastructureRef/apiGroup")
        .and_then(Value::as_str)
    {
        return Some(g.to_string());
    }
    sample
        .pointer("/spec/machineTemplate/infrastructureRef/apiVersion")
        .and_then(Value::as_str)
        .and_then(|av| av.split_once('/'))
        .map(|(g, _)| g.to_string())
}

/// For subjects without a sample: use the `spec.template` of an existing `<Kind>Template` in
/// the cluster (read only), or for a template kind an existing object of that kind.
pub async fn fill_samples_from_cluster(client: &kube::Client, subjects: &mut [Subject]) {
    for s in subjects.iter_mut().filter(|s| s.sample.is_none()) {
        let (resource, is_template) = if s.role().is_template() {
            (s.resource.clone(), true)
        } else {
            let kind = format!("{}Template", s.resource.kind);
            let plural = format!("{}templates", s.resource.kind.to_lowercase());
            (
                ApiResource {
                    kind,
                    plural,
                    ..s.resource.clone()
                },
                false,
            )
        };
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
        let Ok(list) = api.list(&ListParams::default().limit(1)).await else {
            continue;
        };
        let Some(found) = list.items.into_iter().next() else {
            continue;
        };
        let data = found.data;
        s.sample = if is_template {
            Some(json!({"spec": data.get("spec").cloned().unwrap_or(json!({}))}))
        } else {
            data.pointer("/spec/template").cloned()
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_match_kind_or_template() {
        let samples = vec![
            json!({"apiVersion": "infrastructure.foo.io/v1beta2", "kind": "FooMachineTemplate",
                   "spec": {"template": {"spec": {"size": "m"}}}}),
            json!({"apiVersion": "infrastructure.foo.io/v1beta2", "kind": "FooCluster", "spec": {"region": "x"}}),
        ];
        let m = sample_from_docs(&samples, "infrastructure.foo.io", "FooMachine").unwrap();
        assert_eq!(m.pointer("/spec/size").unwrap(), "m");
        let c = sample_from_docs(&samples, "infrastructure.foo.io", "FooCluster").unwrap();
        assert_eq!(c.pointer("/spec/region").unwrap(), "x");
        assert!(sample_from_docs(&samples, "infrastructure.bar.io", "FooCluster").is_none());
    }
}

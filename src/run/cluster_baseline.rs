//! On a real cluster: the CRDs the run needs and may install (minimal CAPI core CRDs, the mock's
//! CRDs for the baseline) and the baseline's skip cells when it cannot run.
//!
//! Installing happens only with `--install-core-crds`; only CRDs that do not exist yet are
//! created, each labelled with the run label and tracked by the cleanup guard, so cleanup
//! removes exactly what this run added and never touches pre-existing CRDs.

use crate::report::{Outcome, Phase, RuleResult};
use crate::scenarios::baseline::{BASELINE_PROVIDER, mock_subject};
use crate::scenarios::cleanup::CleanupGuard;
use crate::scenarios::runner::is_scenario_rule;
use crate::scenarios::{RUN_LABEL, Subject};
use anyhow::Context;
use capi_contract::contract::Contract;
use capi_contract::suite::Rule;
use capi_mock_provider::crds::mock_crds;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};
use serde_json::{Value, json};
use std::time::Duration;

/// Why the baseline is skipped when the mock's CRDs are absent and may not be installed.
pub const NO_MOCK_CRDS: &str = "the mock provider's CRDs are not installed on this cluster; pass --install-core-crds to install them (and missing core CRDs) for this run, removed at cleanup";

/// The mock's CRDs as documents.
pub fn mock_crd_documents() -> anyhow::Result<Vec<Value>> {
    mock_crds()
        .context("building the mock provider CRDs")?
        .into_iter()
        .map(|c| serde_json::to_value(c).context("serializing a mock CRD"))
        .collect()
}

fn name_of(doc: &Value) -> String {
    doc.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// Whether every CRD of `docs` exists.
pub async fn all_present(client: &kube::Client, docs: &[Value]) -> anyhow::Result<bool> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    for d in docs {
        if api.get_opt(&name_of(d)).await?.is_none() {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Creates the CRDs of `docs` that do not exist yet (run label, tracked for cleanup) and
/// waits until they are Established; returns their names.
pub async fn install_missing(
    client: &kube::Client,
    docs: Vec<Value>,
    run_id: &str,
    guard: &CleanupGuard,
    wait: Duration,
) -> anyhow::Result<Vec<String>> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let resource = kube::discovery::ApiResource::erase::<CustomResourceDefinition>(&());
    let mut created = Vec::new();
    for mut doc in docs {
        let name = name_of(&doc);
        if api.get_opt(&name).await?.is_some() {
            continue;
        }
        if let Some(meta) = doc.get_mut("metadata").and_then(Value::as_object_mut) {
            let labels = meta.entry("labels").or_insert_with(|| json!({}));
            if let Some(l) = labels.as_object_mut() {
                l.insert(RUN_LABEL.into(), json!(run_id));
            }
        }
        let crd: CustomResourceDefinition =
            serde_json::from_value(doc).with_context(|| format!("CRD {name}"))?;
        // Tracked first: a create interrupted by Ctrl-C may still have happened (cleanup
        // removes only a CRD carrying the run label).
        guard.track(&resource, None, &name);
        match api.create(&PostParams::default(), &crd).await {
            Ok(_) => created.push(name),
            // Created meanwhile by someone else: theirs, not ours.
            Err(kube::Error::Api(s)) if s.code == 409 => guard.untrack(&resource, None, &name),
            Err(e) => return Err(e).with_context(|| format!("creating CRD {name}")),
        }
    }
    let deadline = tokio::time::Instant::now() + wait;
    for name in &created {
        loop {
            let established = api.get_opt(name).await?.is_some_and(|c| {
                c.status
                    .and_then(|s| s.conditions)
                    .unwrap_or_default()
                    .iter()
                    .any(|c| c.type_ == "Established" && c.status == "True")
            });
            if established {
                break;
            }
            if tokio::time::Instant::now() >= deadline {
                anyhow::bail!("CRD {name} not Established within {}s", wait.as_secs());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    Ok(created)
}

/// The CRDs to install with `--install-core-crds`: the minimal core CRDs (ours) and the mock's,
/// both converting through `conversion` (the run's webhook, on this machine: their client
/// configs are its URL, so the cluster's API server must reach this machine at 127.0.0.1).
pub fn installable_documents(
    conversion: &crate::capi_core::EmbeddedCore,
) -> anyhow::Result<Vec<Value>> {
    let mut docs = conversion.documents.clone();
    docs.extend(conversion.mock_documents()?);
    let mut crds: Vec<Value> = docs
        .into_iter()
        .filter(|d| d.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition"))
        .collect();
    for route in conversion.routes.iter().chain([&conversion.mock_route]) {
        for crd in &mut crds {
            crate::manifests::installation::route_client_configs(
                crd,
                (&route.namespace, &route.name, route.port),
                conversion.webhook.addr,
            );
        }
    }
    Ok(crds)
}

/// Skip cells for the baseline columns the targets would have had.
pub fn baseline_skipped(rules: &[Rule], targets: &[Subject], reason: &str) -> Vec<RuleResult> {
    let mut wanted: Vec<(capi_contract::contract::Role, Contract)> = targets
        .iter()
        .filter_map(|s| s.column.contract.map(|c| (s.role(), c)))
        .collect();
    wanted.sort();
    wanted.dedup();
    let mut out = Vec::new();
    for (role, contract) in wanted {
        let Some(subject) = mock_subject(role, contract, BASELINE_PROVIDER, true) else {
            continue;
        };
        for rule in rules.iter().filter(|r| {
            is_scenario_rule(r) && r.applies_to_role(role) && r.applies_to_contract(contract)
        }) {
            out.push(RuleResult {
                rule_id: rule.id.clone(),
                column: subject.column.clone(),
                level: rule.level_for(Some(contract)),
                phase: Phase::Lifecycle,
                outcome: Outcome::Skip,
                reason: Some(reason.to_string()),
                evidence: Vec::new(),
                duration_ms: None,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use capi_contract::suite::Catalog;

    #[test]
    fn skipped_baseline_has_one_column_per_role_and_contract() {
        let catalog = Catalog::embedded().unwrap();
        let targets: Vec<Subject> = [Contract::V1Beta1, Contract::V1Beta2, Contract::V1Beta2]
            .iter()
            .filter_map(|c| {
                mock_subject(capi_contract::contract::Role::InfraMachine, *c, "p", false)
            })
            .collect();
        let cells = baseline_skipped(catalog.rules(), &targets, NO_MOCK_CRDS);
        assert!(!cells.is_empty());
        assert!(cells.iter().all(|c| c.outcome == Outcome::Skip
            && c.column.baseline
            && c.reason.as_deref() == Some(NO_MOCK_CRDS)));
        let columns: std::collections::HashSet<_> = cells.iter().map(|c| c.column.id()).collect();
        assert_eq!(columns.len(), 2);
    }
}

//! Contract-label resolution, exactly as CAPI does it (`internal/contract` / `controllers/external`):
//! walk the contracts compatible with core's own contract, newest first; the first non-empty
//! `cluster.x-k8s.io/<contract>` label wins; its `_`-separated value is sorted kube-aware and the
//! highest entry is the apiVersion version CAPI reads the kind at.

use super::{Contract, version};
use std::collections::BTreeMap;
use thiserror::Error;

/// One contract label found on a CRD.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclaredContract {
    pub contract: Contract,
    /// Raw label value, e.g. `v1beta1_v1beta2`.
    pub value: String,
    /// The `_`-separated items in label order.
    pub items: Vec<String>,
    /// The highest item (kube-aware): the CRD version CAPI uses under this contract.
    pub version: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ResolveError {
    #[error(
        "cannot find any versions matching contract versions {tried:?} as contract version label(s) are either missing or empty"
    )]
    NoLabel { tried: Vec<&'static str> },
}

/// Contracts core running at `core` accepts, newest first (v1beta2 core: v1beta2, v1beta1).
pub fn compatible_contracts(core: Contract) -> Vec<Contract> {
    match core {
        Contract::V1Beta2 => vec![Contract::V1Beta2, Contract::V1Beta1],
        Contract::V1Beta1 => vec![Contract::V1Beta1],
    }
}

fn declared_one(labels: &BTreeMap<String, String>, contract: Contract) -> Option<DeclaredContract> {
    let value = labels.get(contract.label_key())?;
    if value.is_empty() {
        return None;
    }
    let items: Vec<String> = value.split('_').map(str::to_string).collect();
    let mut sorted = items.clone();
    version::sort_ascending(&mut sorted);
    let version = sorted.last().cloned().unwrap_or_default();
    Some(DeclaredContract {
        contract,
        value: value.clone(),
        items,
        version,
    })
}

/// Every contract whose label is present and non-empty, oldest contract first.
pub fn declared(labels: &BTreeMap<String, String>) -> Vec<DeclaredContract> {
    Contract::ALL
        .into_iter()
        .filter_map(|c| declared_one(labels, c))
        .collect()
}

/// What CAPI core at contract `core` resolves: the contract whose field paths it uses and the
/// version it reads the kind at.
pub fn resolve(
    labels: &BTreeMap<String, String>,
    core: Contract,
) -> Result<DeclaredContract, ResolveError> {
    let tried = compatible_contracts(core);
    tried
        .iter()
        .find_map(|c| declared_one(labels, *c))
        .ok_or(ResolveError::NoLabel {
            tried: tried.iter().map(|c| c.as_str()).collect(),
        })
}

/// Topology's reverse lookup (`GetContractVersionForVersion`): every contract label (any
/// `cluster.x-k8s.io/` key) whose `_` list contains `version`. More than one entry means CAPI's
/// answer depends on map iteration order.
pub fn contracts_listing_version(labels: &BTreeMap<String, String>, version: &str) -> Vec<String> {
    labels
        .iter()
        .filter_map(|(k, v)| {
            let contract = k.strip_prefix("cluster.x-k8s.io/")?;
            v.split('_')
                .any(|item| item == version)
                .then(|| contract.to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn both_labels_newest_wins() {
        let l = labels(&[
            ("cluster.x-k8s.io/v1beta1", "v1beta1"),
            ("cluster.x-k8s.io/v1beta2", "v1beta2"),
        ]);
        let r = resolve(&l, Contract::V1Beta2).unwrap();
        assert_eq!(
            (r.contract, r.version.as_str()),
            (Contract::V1Beta2, "v1beta2")
        );
        let r = resolve(&l, Contract::V1Beta1).unwrap();
        assert_eq!(
            (r.contract, r.version.as_str()),
            (Contract::V1Beta1, "v1beta1")
        );
        assert_eq!(declared(&l).len(), 2);
    }

    #[test]
    fn underscore_list_picks_highest() {
        let l = labels(&[(
            "cluster.x-k8s.io/v1beta1",
            "v1alpha3_v1alpha4_v1beta1_v1beta2",
        )]);
        let r = resolve(&l, Contract::V1Beta2).unwrap();
        assert_eq!(
            (r.contract, r.version.as_str()),
            (Contract::V1Beta1, "v1beta2")
        );
        let l = labels(&[("cluster.x-k8s.io/v1beta1", "v1_v1beta1")]);
        assert_eq!(resolve(&l, Contract::V1Beta2).unwrap().version, "v1");
    }

    #[test]
    fn empty_and_missing_labels() {
        let l = labels(&[
            ("cluster.x-k8s.io/v1beta2", ""),
            ("cluster.x-k8s.io/v1beta1", "v1"),
        ]);
        let r = resolve(&l, Contract::V1Beta2).unwrap();
        assert_eq!(r.contract, Contract::V1Beta1);
        assert!(resolve(&labels(&[]), Contract::V1Beta2).is_err());
        // v1beta1 core does not know the v1beta2 label.
        let l = labels(&[("cluster.x-k8s.io/v1beta2", "v1beta2")]);
        assert!(resolve(&l, Contract::V1Beta1).is_err());
    }

    #[test]
    fn non_kube_like_items_rank_lowest() {
        let l = labels(&[("cluster.x-k8s.io/v1beta2", "zeta_v1alpha1_alpha")]);
        assert_eq!(resolve(&l, Contract::V1Beta2).unwrap().version, "v1alpha1");
        let l = labels(&[("cluster.x-k8s.io/v1beta2", "zeta_alpha")]);
        // Reversed lexical order among non-kube-like strings: "alpha" ranks above "zeta".
        assert_eq!(resolve(&l, Contract::V1Beta2).unwrap().version, "alpha");
    }

    #[test]
    fn reverse_lookup_detects_ambiguity() {
        let l = labels(&[
            ("cluster.x-k8s.io/v1beta1", "v1beta1_v1beta2"),
            ("cluster.x-k8s.io/v1beta2", "v1beta2"),
            ("cluster.x-k8s.io/provider", "infrastructure-foo"),
        ]);
        assert_eq!(
            contracts_listing_version(&l, "v1beta2"),
            vec!["v1beta1", "v1beta2"]
        );
        assert_eq!(contracts_listing_version(&l, "v1beta1"), vec!["v1beta1"]);
    }
}

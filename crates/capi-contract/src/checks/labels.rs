//! Contract labels: `all/contract-label`, `all/contract-label-versions`,
//! `all/contract-label-unambiguous`, `all/contract-label-vs-metadata`, `template/labels-versions`.

use super::{CheckCtx, Finding};
use crate::contract::Contract;
use crate::contract::labels::{self as contract_labels, DeclaredContract};
use crate::inventory::ClassifiedCrd;
use crate::suite::Rule;
use serde_json::Value;

fn crd<'a>(ctx: &CheckCtx<'a>) -> Result<&'a ClassifiedCrd, Finding> {
    ctx.crd
        .ok_or_else(|| Finding::skip("provider-wide column has no CRD"))
}

macro_rules! crd_or_return {
    ($ctx:expr) => {
        match crd($ctx) {
            Ok(c) => c,
            Err(f) => return f,
        }
    };
}

/// Where the contract labels of a CRD are (findings are reported at the line that sets them:
/// in the CRD, or in the kustomization that adds them).
const LABELS: &str = "metadata.labels";

/// The path of one contract label.
fn label_path(contract: Contract) -> String {
    format!("{LABELS}[\"{}\"]", contract.label_key())
}

fn label_list(c: &ClassifiedCrd) -> String {
    c.declared
        .iter()
        .map(|d| format!("{}={}", d.contract.label_key(), d.value))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The declared contract this column is about (its own contract's label).
fn column_label(c: &ClassifiedCrd, contract: Option<Contract>) -> Option<&DeclaredContract> {
    match contract {
        Some(k) => c.declared.iter().find(|d| d.contract == k),
        None => None,
    }
}

pub fn contract_label(_: &Rule, ctx: &CheckCtx) -> Finding {
    let c = crd_or_return!(ctx);
    if c.declared.is_empty() {
        let m = "no non-empty cluster.x-k8s.io/v1beta1 or cluster.x-k8s.io/v1beta2 label: core cannot resolve this kind (\"contract version label(s) are either missing or empty\")";
        return Finding::fail(m, vec![ctx.ev_at(LABELS, m)]);
    }
    match ctx.contract {
        Some(k) if column_label(c, Some(k)).is_none() => {
            let m = format!(
                "checked against contract {k} but the CRD has no non-empty {} label (declares: {})",
                k.label_key(),
                label_list(c)
            );
            Finding::fail(m.clone(), vec![ctx.ev_at(label_path(k), m)])
        }
        _ => Finding::pass(vec![ctx.ev(label_list(c))]),
    }
}

/// The label current CAPI (core contract v1beta2) selects must resolve to a defined, served
/// version. Other labels (what CAPI ≤ v1.10 would select) and undefined list items are noted
/// in the evidence.
pub fn contract_label_versions(_: &Rule, ctx: &CheckCtx) -> Finding {
    let c = crd_or_return!(ctx);
    let Ok(selected) = contract_labels::resolve(&c.crd.labels, Contract::V1Beta2) else {
        return Finding::skip("no contract label to resolve (see all/contract-label)");
    };
    let key = selected.contract.label_key();
    match c.crd.version(&selected.version) {
        None => {
            let m = format!(
                "{key}={} (the label CAPI selects) resolves to version {}, which spec.versions does not define",
                selected.value, selected.version
            );
            return Finding::fail(m.clone(), vec![ctx.ev_at(label_path(selected.contract), m)]);
        }
        Some(v) if !v.served => {
            let m = format!(
                "{key}={} (the label CAPI selects) resolves to version {}, which is not served (every read of this kind uses it)",
                selected.value, selected.version
            );
            return Finding::fail(m.clone(), vec![ctx.ev_at(label_path(selected.contract), m)]);
        }
        Some(_) => {}
    }
    let mut evidence = vec![ctx.ev(format!(
        "{key}={} resolves to served version {}",
        selected.value, selected.version
    ))];
    for d in &c.declared {
        let undefined: Vec<&str> = d
            .items
            .iter()
            .map(String::as_str)
            .filter(|i| c.crd.version(i).is_none())
            .collect();
        if !undefined.is_empty() {
            evidence.push(ctx.ev(format!(
                "{}={} lists versions spec.versions does not define: {}{}",
                d.contract.label_key(),
                d.value,
                undefined.join(", "),
                if undefined.contains(&d.version.as_str()) && d.contract != selected.contract {
                    " (CAPI <= v1.10, which selects this label, could not read this kind)"
                } else {
                    ""
                }
            )));
        }
    }
    Finding::pass(evidence)
}

pub fn contract_label_unambiguous(_: &Rule, ctx: &CheckCtx) -> Finding {
    let c = crd_or_return!(ctx);
    let mut dup = Vec::new();
    for v in &c.crd.versions {
        let listing = contract_labels::contracts_listing_version(&c.crd.labels, &v.name);
        if listing.len() > 1 {
            dup.push(format!("{} under {}", v.name, listing.join(" and ")));
        }
    }
    if dup.is_empty() {
        Finding::pass(vec![ctx.ev("no version appears under two contract labels")])
    } else {
        let m = format!(
            "version listed under two contract labels: {} (topology's reverse lookup becomes random)",
            dup.join("; ")
        );
        Finding::fail(m.clone(), vec![ctx.ev_at(LABELS, m)])
    }
}

/// The newest release series' contract in metadata.yaml.
pub fn newest_series_contract(metadata: &Value) -> Option<(i64, i64, String)> {
    metadata
        .get("releaseSeries")?
        .as_array()?
        .iter()
        .filter_map(|s| {
            Some((
                s.get("major")?.as_i64()?,
                s.get("minor")?.as_i64()?,
                s.get("contract")?.as_str()?.to_string(),
            ))
        })
        .max_by_key(|(a, b, _)| (*a, *b))
}

pub fn contract_label_vs_metadata(_: &Rule, ctx: &CheckCtx) -> Finding {
    let c = crd_or_return!(ctx);
    let Some(md) = &ctx.inv.metadata else {
        return Finding::skip(
            "condition does not hold: no clusterctl metadata.yaml among the inputs",
        );
    };
    let Some((major, minor, contract)) = newest_series_contract(&md.value) else {
        return Finding::skip(
            "metadata.yaml has no usable releaseSeries (see clusterctl/metadata-series)",
        );
    };
    let newest = c.declared.iter().map(|d| d.contract).max();
    match newest {
        Some(n) if n.as_str() == contract => Finding::pass(vec![ctx.ev(format!(
            "newest contract label {n} = contract of series v{major}.{minor} in metadata.yaml"
        ))]),
        Some(n) => {
            let m = format!(
                "newest contract label is {n} but metadata.yaml series v{major}.{minor} declares contract {contract}"
            );
            Finding::fail(m.clone(), vec![ctx.ev_at(label_path(n), m)])
        }
        None => Finding::skip("no contract label (see all/contract-label)"),
    }
}

pub fn template_labels_versions(_: &Rule, ctx: &CheckCtx) -> Finding {
    let c = crd_or_return!(ctx);
    let Some(base_kind) = c.crd.kind.strip_suffix("Template") else {
        return Finding::skip("not a template kind");
    };
    if c.declared.is_empty() {
        let m = "the template CRD has no contract label of its own (core resolves template references through it)";
        return Finding::fail(m, vec![ctx.ev_at(LABELS, m)]);
    }
    let Some(base) = ctx.inv.find_crd(&c.crd.group, base_kind) else {
        return Finding::skip(format!(
            "base kind {base_kind} not among the inputs (see template/kind-name)"
        ));
    };
    if base.declared == c.declared {
        Finding::pass(vec![ctx.ev(format!(
            "same contract labels as {base_kind}: {}",
            label_list(c)
        ))])
    } else {
        let m = format!(
            "contract labels differ from base kind {base_kind}: template has [{}], base has [{}]",
            label_list(c),
            label_list(base)
        );
        Finding::fail(m.clone(), vec![ctx.ev_at(LABELS, m)])
    }
}

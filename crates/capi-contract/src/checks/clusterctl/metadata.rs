//! The clusterctl rules about `metadata.yaml` (§18): where it stands beside the components, its
//! apiVersion and kind, its release series and the contract each series declares.

use super::super::labels::newest_series_contract;
use super::super::{CheckCtx, Finding};
use super::{NO_METADATA, component_files, md_ev, metadata, rendered_root};
use crate::suite::Rule;
use regex::Regex;
use serde_json::Value;
use std::sync::OnceLock;

/// `clusterctl/repo-assets`: metadata.yaml and the components YAML are release assets side by
/// side (one release folder / one set of release assets).
pub fn repo_assets(_: &Rule, ctx: &CheckCtx) -> Finding {
    let Some(md) = &ctx.inv.metadata else {
        return Finding::skip(NO_METADATA);
    };
    let dir = |f: &str| {
        std::path::Path::new(f)
            .parent()
            .map(|p| p.to_path_buf())
            .unwrap_or_default()
    };
    let md_dir = dir(&md.origin.file);
    let files = component_files(ctx.inv);
    if files.is_empty() {
        return Finding::fail_msg("metadata.yaml without components YAML (no CRD or Deployment)");
    }
    if files.iter().any(|f| f == "-") {
        return Finding::skip(
            "components read from stdin: cannot tell where the release assets live",
        );
    }
    if let Some(root) = rendered_root(ctx.inv) {
        return Finding::skip(format!(
            "components rendered from the kustomize root {root}: where the release assets live is decided when the release is built"
        ));
    }
    let apart: Vec<&str> = files
        .iter()
        .filter(|f| dir(f) != md_dir)
        .map(String::as_str)
        .collect();
    if apart.is_empty() {
        Finding::pass(vec![md_ev(
            ctx.inv,
            "metadata.yaml sits beside the components YAML",
        )])
    } else {
        let m = format!(
            "metadata.yaml ({}) is not in the same release folder as the components ({})",
            md.origin.file,
            apart.join(", ")
        );
        Finding::fail(m.clone(), vec![md_ev(ctx.inv, m)])
    }
}

pub fn metadata_apiversion(_: &Rule, ctx: &CheckCtx) -> Finding {
    let md = md_or_return!(ctx);
    match md.get("apiVersion").and_then(Value::as_str) {
        Some("clusterctl.cluster.x-k8s.io/v1alpha3") => Finding::pass(vec![md_ev(
            ctx.inv,
            "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3",
        )]),
        other => {
            let m = format!(
                "metadata apiVersion is {other:?}, expected clusterctl.cluster.x-k8s.io/v1alpha3"
            );
            Finding::fail(m.clone(), vec![md_ev(ctx.inv, m)])
        }
    }
}

pub fn metadata_kind(_: &Rule, ctx: &CheckCtx) -> Finding {
    let md = md_or_return!(ctx);
    match md.get("kind").and_then(Value::as_str) {
        Some("Metadata") => Finding::pass(vec![md_ev(ctx.inv, "kind: Metadata")]),
        other => {
            let m = format!(
                "metadata kind is {other:?}, expected Metadata (clusterctl tolerates an empty kind; the book requires it)"
            );
            Finding::fail(m.clone(), vec![md_ev(ctx.inv, m)])
        }
    }
}

pub fn metadata_series(_: &Rule, ctx: &CheckCtx) -> Finding {
    let md = md_or_return!(ctx);
    let Some(series) = md
        .get("releaseSeries")
        .and_then(Value::as_array)
        .filter(|s| !s.is_empty())
    else {
        let m = "releaseSeries is missing or empty";
        return Finding::fail(m, vec![md_ev(ctx.inv, m)]);
    };
    let bad: Vec<String> = series
        .iter()
        .enumerate()
        .filter(|(_, s)| {
            s.get("major").and_then(Value::as_i64).is_none()
                || s.get("minor").and_then(Value::as_i64).is_none()
                || s.get("contract")
                    .and_then(Value::as_str)
                    .is_none_or(str::is_empty)
        })
        .map(|(i, _)| format!("releaseSeries[{i}]"))
        .collect();
    if bad.is_empty() {
        Finding::pass(vec![md_ev(
            ctx.inv,
            format!("{} release series", series.len()),
        )])
    } else {
        let m = format!("{} lack integer major/minor or a contract", bad.join(", "));
        Finding::fail(m.clone(), vec![md_ev(ctx.inv, m)])
    }
}

/// The release version from the manager image tag (`…:v1.11.0`), when it is a semver.
fn release_version(managers: &[&Value]) -> Option<(i64, i64)> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    let re = RE
        .get_or_init(|| Regex::new(r":v?(\d+)\.(\d+)\.(\d+)").ok())
        .as_ref()?;
    managers.iter().find_map(|c| {
        let image = c.get("image")?.as_str()?;
        let caps = re.captures(image)?;
        Some((caps[1].parse().ok()?, caps[2].parse().ok()?))
    })
}

fn series_contract(md: &Value, major: i64, minor: i64) -> Option<String> {
    md.get("releaseSeries")?.as_array()?.iter().find_map(|s| {
        (s.get("major")?.as_i64()? == major && s.get("minor")?.as_i64()? == minor).then(|| {
            s.get("contract")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        })
    })
}

pub fn metadata_covers_release(_: &Rule, ctx: &CheckCtx) -> Finding {
    let md = md_or_return!(ctx);
    let Some((major, minor)) = release_version(ctx.manager_containers) else {
        return Finding::skip(
            "release version unknown: the manager image tag is not a semantic version",
        );
    };
    match series_contract(md, major, minor) {
        Some(_) => Finding::pass(vec![md_ev(
            ctx.inv,
            format!("series v{major}.{minor} is listed"),
        )]),
        None => {
            let m = format!(
                "release v{major}.{minor} (manager image tag) has no releaseSeries entry: clusterctl init/upgrade fails"
            );
            Finding::fail(m.clone(), vec![md_ev(ctx.inv, m)])
        }
    }
}

pub fn metadata_contract(_: &Rule, ctx: &CheckCtx) -> Finding {
    let md = md_or_return!(ctx);
    let (label, contract) = match release_version(ctx.manager_containers)
        .and_then(|(a, b)| series_contract(md, a, b).map(|c| (format!("v{a}.{b}"), c)))
    {
        Some(x) => x,
        None => match newest_series_contract(md) {
            Some((a, b, c)) => (format!("v{a}.{b} (newest series)"), c),
            None => {
                return Finding::skip("no usable releaseSeries (see clusterctl/metadata-series)");
            }
        },
    };
    if matches!(contract.as_str(), "v1beta1" | "v1beta2") {
        Finding::pass(vec![md_ev(
            ctx.inv,
            format!("series {label}: contract {contract}"),
        )])
    } else {
        let m = format!(
            "series {label} declares contract `{contract}`; clusterctl (v1beta2) accepts v1beta2 or v1beta1"
        );
        Finding::fail(m.clone(), vec![md_ev(ctx.inv, m)])
    }
}

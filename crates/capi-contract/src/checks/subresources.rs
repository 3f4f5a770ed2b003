//! Subresources: `all/status-subresource`, `control-plane/scale-subresource`.

use super::schema::{Lookup, lookup};
use super::{CheckCtx, Finding};
use crate::suite::Rule;

pub fn status_subresource(_: &Rule, ctx: &CheckCtx) -> Finding {
    let (_, version, _) = match ctx.schema() {
        Ok(x) => x,
        Err(f) => return f,
    };
    if version.status_subresource {
        Finding::pass(vec![
            ctx.ev(format!("version {} has subresources.status", version.name)),
        ])
    } else {
        let m = format!(
            "version {} does not enable the status subresource",
            version.name
        );
        let path = format!("spec.versions[{}].subresources.status", version.name);
        Finding::fail(m.clone(), vec![ctx.ev_at(path, m)])
    }
}

/// Conditional on `spec.replicas` being in the schema: exact scale paths plus `status: {}`.
pub fn scale_subresource(_: &Rule, ctx: &CheckCtx) -> Finding {
    let (_, version, schema) = match ctx.schema() {
        Ok(x) => x,
        Err(f) => return f,
    };
    if !matches!(lookup(schema, "spec.replicas"), Lookup::Found(_)) {
        return Finding::skip(format!(
            "condition does not hold: no `spec.replicas` in the {} schema (replica count not controllable)",
            version.name
        ));
    }
    let mut problems = Vec::new();
    match &version.scale {
        None => problems.push("no subresources.scale".to_string()),
        Some(s) => {
            for (name, got, want) in [
                ("specReplicasPath", &s.spec_replicas_path, ".spec.replicas"),
                (
                    "statusReplicasPath",
                    &s.status_replicas_path,
                    ".status.replicas",
                ),
                (
                    "labelSelectorPath",
                    &s.label_selector_path,
                    ".status.selector",
                ),
            ] {
                if got.as_deref() != Some(want) {
                    problems.push(format!(
                        "scale.{name} is {}, expected `{want}`",
                        got.as_deref()
                            .map(|g| format!("`{g}`"))
                            .unwrap_or_else(|| "missing".into())
                    ));
                }
            }
        }
    }
    if !version.status_subresource {
        problems.push("no subresources.status".into());
    }
    if problems.is_empty() {
        Finding::pass(vec![ctx.ev(format!(
            "version {}: scale subresource .spec.replicas/.status.replicas/.status.selector and status",
            version.name
        ))])
    } else {
        let path = format!("spec.versions[{}].subresources.scale", version.name);
        let evidence = problems
            .iter()
            .map(|p| ctx.ev_at(path.clone(), p.clone()))
            .collect();
        Finding::fail(problems.join("; "), evidence)
    }
}

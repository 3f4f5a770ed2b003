//! CRD naming: `all/crd-name`, `ipam/pool-crd`, `template/kind-name`, `clusterctl/crd-name-preflight`.

use super::waivers::CLUSTERCTL_SKIP_NAME_CHECK;
use super::{CheckCtx, Finding};
use crate::inventory::Crd;
use crate::suite::Rule;

/// `None` when the CRD's name is what CAPI computes; else the failure message.
pub fn name_problem(crd: &Crd) -> Option<String> {
    let expected = crd.calculated_name();
    (crd.name != expected).then(|| {
        format!(
            "CRD name is `{}` but CAPI computes `{expected}` (flect plural of `{}`)",
            crd.name,
            crd.kind.to_lowercase()
        )
    })
}

pub fn crd_name(_: &Rule, ctx: &CheckCtx) -> Finding {
    let Some(c) = ctx.crd else {
        return Finding::skip("provider-wide column has no CRD");
    };
    match name_problem(&c.crd) {
        None => Finding::pass(vec![
            ctx.ev(format!("`{}` = CalculateCRDName(group, kind)", c.crd.name)),
        ]),
        Some(m) => Finding::fail(m.clone(), vec![ctx.ev_at("metadata.name", m)]),
    }
}

/// `ipam/pool-crd`: named per CalculateCRDName and with TypeMeta/ObjectMeta in the schema.
pub fn ipam_pool_crd(rule: &Rule, ctx: &CheckCtx) -> Finding {
    let named = crd_name(rule, ctx);
    if named.outcome != crate::model::Outcome::Pass {
        return named;
    }
    let (_, _, schema) = match ctx.schema() {
        Ok(x) => x,
        Err(f) => return f,
    };
    use super::schema::{FieldState, field_state};
    use crate::suite::JsonType;
    for (path, t) in [
        ("apiVersion", JsonType::String),
        ("kind", JsonType::String),
        ("metadata", JsonType::Object),
    ] {
        if field_state(schema, path, t) != FieldState::Ok {
            return Finding::fail_msg(format!("schema root lacks `{path}` of type {}", t.as_str()));
        }
    }
    named
}

/// `template/kind-name`: `<BaseKind>Template` whose base kind exists in the same group.
pub fn template_kind_name(_: &Rule, ctx: &CheckCtx) -> Finding {
    let Some(c) = ctx.crd else {
        return Finding::skip("provider-wide column has no CRD");
    };
    let Some(base) = c
        .crd
        .kind
        .strip_suffix("Template")
        .filter(|b| !b.is_empty())
    else {
        return Finding::fail_msg(format!(
            "template kind `{}` does not end in `Template`",
            c.crd.kind
        ));
    };
    match ctx.inv.find_crd(&c.crd.group, base) {
        Some(_) => Finding::pass(vec![ctx.ev(format!(
            "base kind `{base}` exists in group {}",
            c.crd.group
        ))]),
        None => Finding::fail(
            format!(
                "base kind `{base}` (kind minus `Template`) is not defined in group {}",
                c.crd.group
            ),
            vec![ctx.ev_at(
                "spec.names.kind",
                "core strips `Template` and looks up the base kind's CRD in the same group",
            )],
        ),
    }
}

/// `clusterctl/crd-name-preflight`: every CRD of the provider passes all/crd-name unless it
/// carries clusterctl's skip annotation.
pub fn crd_name_preflight(_: &Rule, ctx: &CheckCtx) -> Finding {
    let crds: Vec<&Crd> = match ctx.crd {
        Some(c) => vec![&c.crd],
        None => ctx.provider.crds.iter().map(|c| &c.crd).collect(),
    };
    let mut failing = Vec::new();
    let mut skipped = Vec::new();
    for crd in crds {
        if let Some(m) = name_problem(crd) {
            if crd.annotations.contains_key(CLUSTERCTL_SKIP_NAME_CHECK) {
                skipped.push(crd.name.clone());
            } else {
                failing.push(ctx_ev(crd, m));
            }
        }
    }
    if !failing.is_empty() {
        return Finding::fail(
            format!(
                "{} CRD(s) would fail clusterctl's CRD-name preflight check",
                failing.len()
            ),
            failing,
        );
    }
    let mut f = Finding::pass_msg("every CRD name matches CalculateCRDName");
    if !skipped.is_empty() {
        f.evidence.push(crate::model::Evidence::msg(format!(
            "not checked ({CLUSTERCTL_SKIP_NAME_CHECK}): {}",
            skipped.join(", ")
        )));
    }
    f
}

fn ctx_ev(crd: &Crd, message: String) -> crate::model::Evidence {
    crate::model::Evidence {
        message,
        object: Some(crd.object_ref().into()),
        path: Some("metadata.name".into()),
        resource_version: None,
        location: Some(crd.origin.location().into()),
        source: None,
    }
}

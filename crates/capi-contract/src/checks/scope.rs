//! CRD metadata predicates: `all/crd`, `all/namespaced`, `all/list-type`, `template/list`,
//! `all/api-group`, `all/category`, `all/version-policy`.

use super::{CheckCtx, Finding};
use crate::contract::version;
use crate::inventory::ClassifiedCrd;
use crate::inventory::classify::{SIG_GROUPS, sig_group};
use crate::suite::Rule;

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

/// `all/crd`: an `apiextensions.k8s.io/v1` CRD with at least one served version.
pub fn crd_v1(_: &Rule, ctx: &CheckCtx) -> Finding {
    let c = crd_or_return!(ctx);
    if c.crd.api_version != "apiextensions.k8s.io/v1" {
        let m = format!(
            "CRD apiVersion is `{}`, not apiextensions.k8s.io/v1",
            c.crd.api_version
        );
        return Finding::fail(m.clone(), vec![ctx.ev_at("apiVersion", m)]);
    }
    if !c.crd.versions.iter().any(|v| v.served) {
        let m = "no version of the CRD is served".to_string();
        return Finding::fail(m.clone(), vec![ctx.ev_at("spec.versions", m)]);
    }
    Finding::pass(vec![
        ctx.ev("apiextensions.k8s.io/v1 CRD with a served version"),
    ])
}

pub fn namespaced(_: &Rule, ctx: &CheckCtx) -> Finding {
    let c = crd_or_return!(ctx);
    if c.crd.scope == "Namespaced" {
        Finding::pass(vec![ctx.ev("spec.scope: Namespaced")])
    } else {
        let m = format!("spec.scope is `{}`, not Namespaced", c.crd.scope);
        Finding::fail(m.clone(), vec![ctx.ev_at("spec.scope", m)])
    }
}

fn list_kind_check(ctx: &CheckCtx) -> Finding {
    let c = crd_or_return!(ctx);
    let want = format!("{}List", c.crd.kind);
    match &c.crd.list_kind {
        Some(l) if *l == want => Finding::pass(vec![ctx.ev(format!("spec.names.listKind: {l}"))]),
        Some(l) => {
            let m = format!("spec.names.listKind is `{l}`, expected `{want}`");
            Finding::fail(m.clone(), vec![ctx.ev_at("spec.names.listKind", m)])
        }
        None => {
            let m = format!("spec.names.listKind is missing, expected `{want}`");
            Finding::fail(m.clone(), vec![ctx.ev_at("spec.names.listKind", m)])
        }
    }
}

pub fn list_type(_: &Rule, ctx: &CheckCtx) -> Finding {
    list_kind_check(ctx)
}

pub fn template_list(_: &Rule, ctx: &CheckCtx) -> Finding {
    list_kind_check(ctx)
}

/// Groups that belong to core CAPI itself, never to a provider's contract kinds.
const CORE_GROUPS: [&str; 4] = [
    "cluster.x-k8s.io",
    "ipam.cluster.x-k8s.io",
    "runtime.cluster.x-k8s.io",
    "addons.cluster.x-k8s.io",
];

/// `all/api-group`: the SIG group of the role, another SIG group (core's RBAC covers every SIG
/// group, so CAPI works; reported as a note), or a custom group (then all/rbac-aggregation
/// applies). A core CAPI group fails.
pub fn api_group(_: &Rule, ctx: &CheckCtx) -> Finding {
    let c = crd_or_return!(ctx);
    let g = c.crd.group.as_str();
    if CORE_GROUPS.contains(&g) {
        let m = format!(
            "group {g} belongs to core CAPI; a {} belongs in {} or the provider's own group",
            c.role.display_name(),
            sig_group(c.role).unwrap_or("a SIG group")
        );
        return Finding::fail(m.clone(), vec![ctx.ev_at("spec.group", m)]);
    }
    if sig_group(c.role) == Some(g) {
        return Finding::pass(vec![ctx.ev(format!("SIG group {g}"))]);
    }
    if SIG_GROUPS.contains(&g) {
        return Finding::pass(vec![ctx.ev(format!(
            "SIG group {g}, not the {} one ({}); core's RBAC covers it",
            c.role.display_name(),
            sig_group(c.role).unwrap_or("?")
        ))]);
    }
    Finding::pass(vec![ctx.ev(format!(
        "custom group {g}: allowed together with an aggregated ClusterRole (all/rbac-aggregation)"
    ))])
}

pub fn category(_: &Rule, ctx: &CheckCtx) -> Finding {
    let c = crd_or_return!(ctx);
    if c.crd.categories.iter().any(|x| x == "cluster-api") {
        Finding::pass(vec![ctx.ev("spec.names.categories contains cluster-api")])
    } else {
        let m = format!(
            "spec.names.categories {:?} lacks `cluster-api`",
            c.crd.categories
        );
        Finding::fail(m.clone(), vec![ctx.ev_at("spec.names.categories", m)])
    }
}

pub fn version_policy(_: &Rule, ctx: &CheckCtx) -> Finding {
    let c = crd_or_return!(ctx);
    let bad: Vec<&str> = c
        .crd
        .versions
        .iter()
        .map(|v| v.name.as_str())
        .filter(|v| !version::is_kube_like(v))
        .collect();
    if bad.is_empty() {
        Finding::pass(vec![
            ctx.ev("every version name is Kubernetes-style (v<N>[alpha|beta<M>])"),
        ])
    } else {
        let m = format!(
            "version name(s) {} are not Kubernetes-style; they sort below every kube-like version",
            bad.join(", ")
        );
        Finding::fail(m.clone(), vec![ctx.ev_at("spec.versions", m)])
    }
}

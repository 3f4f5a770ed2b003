//! Role-specific rules implemented in code: `<role>/defined`, control-plane version and
//! machine-template shapes, topology fields of ControlPlaneTemplates, MachinePool Machines kind.

use super::schema::{FieldState, Lookup, field_state, lookup};
use super::{CheckCtx, Finding};
use crate::contract::Contract;
use crate::inventory::classify::kind_suffix;
use crate::suite::{JsonType, Rule};

/// `<role>/defined`: the kind follows the role's `<Env><Suffix>` naming with a provider prefix.
/// (Its list kind, scope and CRD-ness are separate rules: all/list-type, all/namespaced, all/crd.)
pub fn defined(_: &Rule, ctx: &CheckCtx) -> Finding {
    let Some(c) = ctx.crd else {
        return Finding::skip("provider-wide column has no CRD");
    };
    let Some(suffix) = kind_suffix(c.role) else {
        return Finding::skip("role has no kind convention");
    };
    let kind = &c.crd.kind;
    if kind.len() > suffix.len() && kind.ends_with(suffix) {
        Finding::pass(vec![ctx.ev(format!("{kind} = <Env>{suffix}"))])
    } else {
        let m = format!(
            "kind `{kind}` does not follow the {} naming `<Env>{suffix}`",
            c.role.display_name()
        );
        Finding::fail(m.clone(), vec![ctx.ev_at("spec.names.kind", m)])
    }
}

/// A problem found in a schema: the schema path it is at (`None`: not in this column's
/// schema) and what is wrong.
type Problem = (Option<&'static str>, String);

fn state_problem(
    schema: &crate::inventory::SchemaNode,
    path: &'static str,
    t: JsonType,
) -> Option<Problem> {
    let message = match field_state(schema, path, t) {
        FieldState::Ok => return None,
        FieldState::WrongType { found } => format!("`{path}` is {found}, expected {}", t.as_str()),
        FieldState::Missing { .. } => format!("`{path}` is missing"),
        FieldState::Open { at } => format!("`{path}` is open (preserve-unknown at `{at}`)"),
    };
    Some((Some(path), message))
}

fn finish(ctx: &CheckCtx, version: &str, problems: Vec<Problem>, ok: String) -> Finding {
    if problems.is_empty() {
        Finding::pass(vec![ctx.ev(ok)])
    } else {
        let ev = problems
            .iter()
            .map(|(path, m)| match path {
                Some(p) => ctx.schema_ev(version, p, m.clone()),
                None => ctx.ev(m.clone()),
            })
            .collect();
        let reason = problems
            .iter()
            .map(|(_, m)| m.as_str())
            .collect::<Vec<_>>()
            .join("; ");
        Finding::fail(reason, ev)
    }
}

/// `control-plane/status-version`: conditional on `spec.version`.
pub fn cp_status_version(_: &Rule, ctx: &CheckCtx) -> Finding {
    let (_, version, schema) = match ctx.schema() {
        Ok(x) => x,
        Err(f) => return f,
    };
    if !matches!(lookup(schema, "spec.version"), Lookup::Found(_)) {
        return Finding::skip(format!(
            "condition does not hold: no `spec.version` in the {} schema",
            version.name
        ));
    }
    let legacy = state_problem(schema, "status.version", JsonType::String);
    match ctx.contract {
        Some(Contract::V1Beta2) => {
            let versions = state_problem(schema, "status.versions", JsonType::ObjectArray)
                .or_else(|| state_problem(schema, "status.versions[].version", JsonType::String));
            match (versions, legacy) {
                (None, _) => Finding::pass(vec![ctx.ev("status.versions[].version is a string list")]),
                (Some(_), None) => Finding::pass(vec![ctx.ev(
                    "status.version (deprecated fallback) is a string; status.versions is preferred",
                )]),
                (Some(v), Some(l)) => finish(ctx, &version.name, vec![v, l], String::new()),
            }
        }
        _ => finish(
            ctx,
            &version.name,
            legacy.into_iter().collect(),
            "status.version is a string".into(),
        ),
    }
}

/// A schema path with its JSON type.
type Field = (&'static str, JsonType);

/// `control-plane/machine-template`: conditional on `spec.machineTemplate`.
pub fn cp_machine_template(_: &Rule, ctx: &CheckCtx) -> Finding {
    let (_, version, schema) = match ctx.schema() {
        Ok(x) => x,
        Err(f) => return f,
    };
    if !matches!(lookup(schema, "spec.machineTemplate"), Lookup::Found(n) if !super::schema::is_placeholder(n))
    {
        return Finding::skip(format!(
            "condition does not hold: no `spec.machineTemplate` in the {} schema (instances are not Machines)",
            version.name
        ));
    }
    let mut problems = Vec::new();
    let (required, optional): (Vec<Field>, Vec<Field>) = match ctx.contract {
        Some(Contract::V1Beta2) => (
            vec![
                (
                    "spec.machineTemplate.spec.infrastructureRef",
                    JsonType::Object,
                ),
                (
                    "spec.machineTemplate.spec.infrastructureRef.apiGroup",
                    JsonType::String,
                ),
                (
                    "spec.machineTemplate.spec.infrastructureRef.kind",
                    JsonType::String,
                ),
                (
                    "spec.machineTemplate.spec.infrastructureRef.name",
                    JsonType::String,
                ),
            ],
            vec![
                ("spec.machineTemplate.metadata", JsonType::Object),
                (
                    "spec.machineTemplate.spec.deletion.nodeDrainTimeoutSeconds",
                    JsonType::Integer,
                ),
                (
                    "spec.machineTemplate.spec.deletion.nodeVolumeDetachTimeoutSeconds",
                    JsonType::Integer,
                ),
                (
                    "spec.machineTemplate.spec.deletion.nodeDeletionTimeoutSeconds",
                    JsonType::Integer,
                ),
            ],
        ),
        _ => (
            vec![
                ("spec.machineTemplate.infrastructureRef", JsonType::Object),
                (
                    "spec.machineTemplate.infrastructureRef.kind",
                    JsonType::String,
                ),
                (
                    "spec.machineTemplate.infrastructureRef.name",
                    JsonType::String,
                ),
            ],
            vec![
                ("spec.machineTemplate.metadata", JsonType::Object),
                ("spec.machineTemplate.nodeDrainTimeout", JsonType::String),
                (
                    "spec.machineTemplate.nodeVolumeDetachTimeout",
                    JsonType::String,
                ),
                ("spec.machineTemplate.nodeDeletionTimeout", JsonType::String),
            ],
        ),
    };
    for (p, t) in required {
        problems.extend(state_problem(schema, p, t));
    }
    for (p, t) in optional {
        if let FieldState::WrongType { found } = field_state(schema, p, t) {
            problems.push((
                Some(p),
                format!("`{p}` is {found}, expected {}", t.as_str()),
            ));
        }
    }
    finish(
        ctx,
        &version.name,
        problems,
        format!(
            "machineTemplate paths of contract {} present with the right types",
            ctx.contract.map(|c| c.as_str()).unwrap_or("?")
        ),
    )
}

/// `control-plane-template/topology-fields`: the base ControlPlane kind at the template's
/// version has the fields topology writes (`spec.version` always).
pub fn cpt_topology_fields(_: &Rule, ctx: &CheckCtx) -> Finding {
    let (c, version, _) = match ctx.schema() {
        Ok(x) => x,
        Err(f) => return f,
    };
    let Some(base_kind) = c.crd.kind.strip_suffix("Template") else {
        return Finding::skip("not a template kind");
    };
    let Some(base) = ctx.inv.find_crd(&c.crd.group, base_kind) else {
        return Finding::skip(format!("base kind {base_kind} not among the inputs"));
    };
    let Some(base_schema) = base
        .crd
        .version(&version.name)
        .and_then(|v| v.schema.as_ref())
    else {
        return Finding::skip(format!(
            "base kind {base_kind} has no version {}",
            version.name
        ));
    };
    // The field is the base kind's: its CRD, not this one, is where the fix goes.
    let problems: Vec<Problem> = state_problem(base_schema, "spec.version", JsonType::String)
        .map(|(_, p)| {
            (
                None,
                format!("{base_kind}: {p} (topology always writes it)"),
            )
        })
        .into_iter()
        .collect();
    finish(
        ctx,
        &version.name,
        problems,
        format!("{base_kind} at {} has spec.version (string)", version.name),
    )
}

/// `infra-machinepool/mpm-kind`: conditional on `status.infrastructureMachineKind`.
pub fn mpm_kind(_: &Rule, ctx: &CheckCtx) -> Finding {
    let (c, version, schema) = match ctx.schema() {
        Ok(x) => x,
        Err(f) => return f,
    };
    match field_state(schema, "status.infrastructureMachineKind", JsonType::String) {
        FieldState::Missing { .. } => Finding::skip(format!(
            "condition does not hold: no `status.infrastructureMachineKind` in the {} schema (MachinePool Machines not supported)",
            version.name
        )),
        FieldState::Open { at } => {
            Finding::skip(format!("status is open (preserve-unknown at `{at}`)"))
        }
        FieldState::WrongType { found } => {
            let m = format!("`status.infrastructureMachineKind` is {found}, expected string");
            Finding::fail(
                m.clone(),
                vec![ctx.schema_ev(&version.name, "status.infrastructureMachineKind", m)],
            )
        }
        FieldState::Ok => {
            let served_machine_kinds: Vec<&str> = ctx
                .provider
                .crds
                .iter()
                .filter(|o| {
                    o.crd.group == c.crd.group
                        && o.role == crate::contract::Role::InfraMachine
                        && o.crd.version(&version.name).is_some_and(|v| v.served)
                })
                .map(|o| o.crd.kind.as_str())
                .collect();
            if served_machine_kinds.is_empty() {
                let m = format!(
                    "no InfraMachine kind is served in {} at {}, where core lists the MachinePool Machines",
                    c.crd.group, version.name
                );
                Finding::fail(m.clone(), vec![ctx.ev(m)])
            } else {
                Finding::pass(vec![ctx.ev(format!(
                    "status.infrastructureMachineKind is a string; kinds served at {}: {}",
                    version.name,
                    served_machine_kinds.join(", ")
                ))])
            }
        }
    }
}

//! Templates: `template/spec-template`, `template/clone-compatible`, `template/no-status-contract`.

use super::schema::{FieldState, Lookup, describe, field_state, lookup, type_of};
use super::{CheckCtx, Finding};
use crate::inventory::SchemaNode;
use crate::suite::{JsonType, Rule};

pub fn spec_template(_: &Rule, ctx: &CheckCtx) -> Finding {
    let (_, version, schema) = match ctx.schema() {
        Ok(x) => x,
        Err(f) => return f,
    };
    let mut problems = Vec::new();
    for (path, t) in [
        ("spec.template", JsonType::Object),
        ("spec.template.spec", JsonType::Object),
    ] {
        match field_state(schema, path, t) {
            FieldState::Ok => {}
            FieldState::WrongType { found } => {
                problems.push((path, format!("`{path}` is {found}, expected object")))
            }
            FieldState::Missing { .. } => problems.push((path, format!("`{path}` is missing"))),
            FieldState::Open { at } => problems.push((
                path,
                format!("`{path}` is open (preserve-unknown at `{at}`)"),
            )),
        }
    }
    for path in [
        "spec.template.metadata.labels",
        "spec.template.metadata.annotations",
    ] {
        if let FieldState::WrongType { found } = field_state(schema, path, JsonType::StringMap) {
            problems.push((path, format!("`{path}` is {found}, expected map of string")));
        }
    }
    if problems.is_empty() {
        Finding::pass(vec![ctx.ev(format!(
            "version {}: spec.template.spec is an object; template metadata is map[string]string",
            version.name
        ))])
    } else {
        let ev = problems
            .iter()
            .map(|(path, m)| ctx.schema_ev(&version.name, path, m.clone()))
            .collect();
        let reason = problems
            .iter()
            .map(|(_, m)| m.as_str())
            .collect::<Vec<_>>()
            .join("; ");
        Finding::fail(reason, ev)
    }
}

/// Structural subset check: every field of `tmpl` exists in `base` with the same type.
/// (Fields the base requires may be missing from the template: topology and users fill them.)
/// `path` is the walked path; it is restored before returning.
fn subset(tmpl: &SchemaNode, base: &SchemaNode, path: &mut String, out: &mut Vec<String>) {
    if out.len() >= 10 {
        return;
    }
    if base.preserve_unknown && !base.has_properties() {
        return;
    }
    if !(same_description(tmpl, base) || type_of(tmpl).is_empty() || type_of(base).is_empty()) {
        out.push(format!(
            "`{path}` is {} in the template but {} in the base kind",
            describe(tmpl),
            describe(base)
        ));
        return;
    }
    let len = path.len();
    for (k, child) in tmpl.properties() {
        match base.property(k) {
            Some(bc) => {
                path.push('.');
                path.push_str(k);
                subset(child, bc, path, out);
                path.truncate(len);
            }
            None if base.additional_properties().is_some() => {}
            None => out.push(format!(
                "`{path}.{k}` is in the template but not in the base kind's spec"
            )),
        }
    }
    if let (Some(ti), Some(bi)) = (tmpl.items(), base.items()) {
        path.push_str("[]");
        subset(ti, bi, path, out);
        path.truncate(len);
    }
    if let (Some(ta), Some(ba)) = (tmpl.additional_properties(), base.additional_properties()) {
        path.push_str(".*");
        subset(ta, ba, path, out);
        path.truncate(len);
    }
}

/// `describe(a) == describe(b)`, without building the two strings (the subset walk compares
/// every node of a template's spec).
fn same_description(a: &SchemaNode, b: &SchemaNode) -> bool {
    description_parts(a)
        .flat_map(str::bytes)
        .eq(description_parts(b).flat_map(str::bytes))
}

/// The pieces [`describe`] joins, in order.
fn description_parts(node: &SchemaNode) -> impl Iterator<Item = &str> {
    let mut next = Some(node);
    std::iter::from_fn(move || {
        let n = next.take()?;
        if n.int_or_string {
            return Some("int-or-string");
        }
        Some(match type_of(n) {
            "array" => match n.items() {
                Some(items) => {
                    next = Some(items);
                    "array of "
                }
                None => "array",
            },
            "object" => match n.additional_properties() {
                Some(ap) => {
                    next = Some(ap);
                    "map of "
                }
                None => "object",
            },
            "" if n.preserve_unknown => "open",
            "" => "untyped",
            other => other,
        })
    })
}

pub fn clone_compatible(_: &Rule, ctx: &CheckCtx) -> Finding {
    let (c, version, schema) = match ctx.schema() {
        Ok(x) => x,
        Err(f) => return f,
    };
    let Some(base_kind) = c.crd.kind.strip_suffix("Template") else {
        return Finding::skip("not a template kind");
    };
    let Some(base) = ctx.inv.find_crd(&c.crd.group, base_kind) else {
        return Finding::skip(format!(
            "base kind {base_kind} not among the inputs (see template/kind-name)"
        ));
    };
    let Some(base_schema) = base
        .crd
        .version(&version.name)
        .and_then(|v| v.schema.as_ref())
    else {
        let m = format!(
            "base kind {base_kind} has no version {} to clone into",
            version.name
        );
        return Finding::fail(m.clone(), vec![ctx.ev(m)]);
    };
    let tmpl_spec = match lookup(schema, "spec.template.spec") {
        Lookup::Found(n) => n,
        _ => {
            return Finding::skip(
                "no spec.template.spec in the template schema (see template/spec-template)",
            );
        }
    };
    let base_spec = match lookup(base_schema, "spec") {
        Lookup::Found(n) => n,
        _ => return Finding::skip(format!("base kind {base_kind} has no spec in its schema")),
    };
    let mut problems = Vec::new();
    subset(
        tmpl_spec,
        base_spec,
        &mut String::from("spec"),
        &mut problems,
    );
    if problems.is_empty() {
        Finding::pass(vec![ctx.ev(format!(
            "spec.template.spec at {} is a structural subset of {base_kind}.spec",
            version.name
        ))])
    } else {
        let ev = problems.iter().map(|p| ctx.ev(p.clone())).collect();
        Finding::fail(
            format!(
                "spec.template.spec does not fit {base_kind}.spec at {}: {}",
                version.name, problems[0]
            ),
            ev,
        )
    }
}

/// `template/no-status-contract` (MAY): informational; reports whether the template has a status.
pub fn no_status_contract(_: &Rule, ctx: &CheckCtx) -> Finding {
    let (_, version, schema) = match ctx.schema() {
        Ok(x) => x,
        Err(f) => return f,
    };
    match lookup(schema, "status") {
        Lookup::Found(_) => Finding::pass(vec![ctx.ev(format!(
            "version {} defines a status (allowed)",
            version.name
        ))]),
        _ => Finding::pass(vec![ctx.ev(format!(
            "version {} has no status; templates need none",
            version.name
        ))]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn same_description_is_describe_equality() {
        let nodes: Vec<SchemaNode> = [
            json!({"type": "string"}),
            json!({"type": "integer"}),
            json!({"x-kubernetes-int-or-string": true}),
            json!({"type": "array", "items": {"type": "string"}}),
            json!({"type": "array", "items": {"type": "array", "items": {"type": "object"}}}),
            json!({"type": "array"}),
            json!({"type": "object"}),
            json!({"type": "object", "additionalProperties": {"type": "string"}}),
            json!({"type": "object", "additionalProperties": {"x-kubernetes-int-or-string": true}}),
            json!({"x-kubernetes-preserve-unknown-fields": true}),
            json!({"type": "array of string"}),
            json!({"type": "array", "items": [1]}),
        ]
        .iter()
        .map(|v| SchemaNode::from_value(v).unwrap())
        .collect();
        for a in &nodes {
            for b in &nodes {
                assert_eq!(
                    same_description(a, b),
                    describe(a) == describe(b),
                    "{} vs {}",
                    describe(a),
                    describe(b)
                );
            }
        }
    }

    #[test]
    fn subset_names_the_walked_path() {
        let node = |v| SchemaNode::from_value(&v).unwrap();
        let tmpl = node(json!({"type": "object", "properties": {
            "a": {"type": "array", "items": {"type": "object", "properties": {"b": {"type": "string"}}}},
            "m": {"type": "object", "additionalProperties": {"type": "object", "properties": {"x": {"type": "integer"}}}},
            "extra": {"type": "string"}
        }}));
        let base = node(json!({"type": "object", "properties": {
            "a": {"type": "array", "items": {"type": "object", "properties": {"b": {"type": "integer"}}}},
            "m": {"type": "object", "additionalProperties": {"type": "object", "properties": {"x": {"type": "string"}}}}
        }}));
        let mut path = String::from("spec");
        let mut out = Vec::new();
        subset(&tmpl, &base, &mut path, &mut out);
        assert_eq!(path, "spec");
        assert_eq!(
            out,
            [
                "`spec.a[].b` is string in the template but integer in the base kind",
                "`spec.extra` is in the template but not in the base kind's spec",
                "`spec.m.*.x` is integer in the template but string in the base kind",
            ]
        );
    }
}

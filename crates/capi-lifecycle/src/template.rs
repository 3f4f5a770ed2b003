//! SC-template (docs/contract.md §4.1): server-side apply dry-run with the topology dry-run
//! annotation is admitted; `spec.template` cloned into the base kind is admitted (dryRun=All).

use super::core_sim::CLUSTER_NAME_LABEL;
use super::env::EnvError;
use super::script::ScriptRun;
use super::topology::{machine_template_kind, set_topology_fields};
use super::webhooks::resource;
use capi_contract::rule_ids as id;
use kube::api::{DynamicObject, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

pub const DRY_RUN_ANNOTATION: &str = "topology.cluster.x-k8s.io/dry-run";
/// Annotation the dry-run apply adds to `spec.template.metadata` (the spec change it tests).
pub const CHANGE_ANNOTATION: &str = "capi-conformance.io/dry-run-change";

pub async fn run(r: &mut ScriptRun<'_>) {
    let result = steps(r).await;
    r.finish(result);
}

async fn steps(r: &mut ScriptRun<'_>) -> Result<(), EnvError> {
    let p = r.prefix();
    let name = format!("{p}-t");
    let res = r.subject.resource.clone();
    let role = r.subject.role();
    // The role's own rule, where the catalog has one.
    let ssa_rule = capi_contract::rule_ids::RuleId::of(&format!("{}/ssa-dry-run", role.as_str()));

    r.step("create template");
    let created = r.env.create(&res, r.provider_object(&name, &[])).await?;

    r.step("server-side apply dry run");
    let mut applied = json!({
        "apiVersion": res.api_version,
        "kind": res.kind,
        "metadata": {"name": name, "annotations": {DRY_RUN_ANNOTATION: ""}},
        "spec": created.get("spec").cloned().unwrap_or(json!({})),
    });
    // A spec change, as the topology controller makes when ClusterClass metadata changes:
    // one more annotation in `spec.template.metadata` (when the schema has that field, which
    // template/spec-template asks for; otherwise the unchanged spec).
    if r.subject.schema.is_none() || r.subject.schema_has("spec.template.metadata") {
        add_template_annotation(&mut applied, CHANGE_ANNOTATION, "dry-run");
    }
    applied["metadata"]["labels"] = json!(r.env.run_labels());
    let pp = PatchParams::apply("capi-conformance").dry_run().force();
    match r
        .env
        .api(&res)
        .patch(&name, &pp, &Patch::Apply(&applied))
        .await
    {
        Ok(_) => {
            r.verdicts.pass(id::template::SSA_DRY_RUN);
            if let Some(rule) = ssa_rule {
                r.verdicts.pass(rule);
            }
        }
        Err(e) => {
            let reason =
                format!("dry-run server-side apply with {DRY_RUN_ANNOTATION} rejected: {e}");
            let ev = r.evidence(&name, reason.clone(), None);
            r.verdicts
                .fail(id::template::SSA_DRY_RUN, reason.clone(), ev.clone());
            if let Some(rule) = ssa_rule {
                r.verdicts.fail(rule, reason, ev);
            }
        }
    }

    r.step("clone into the base kind (dry run)");
    let Some(base) = r.subject.base.clone() else {
        r.verdicts.skip(
            id::template::CLONE_COMPATIBLE,
            "the base kind of this template is not installed",
        );
        return Ok(());
    };
    let tmpl = created
        .pointer("/spec/template")
        .cloned()
        .unwrap_or(Value::Null);
    let mut clone = json!({
        "apiVersion": base.api_version,
        "kind": base.kind,
        "metadata": {
            "name": r.env.scopes.name(&base.group, &base.kind, &format!("{p}-clone")),
            "labels": tmpl.pointer("/metadata/labels").cloned().unwrap_or(json!({})),
            "annotations": tmpl.pointer("/metadata/annotations").cloned().unwrap_or(json!({})),
        },
        "spec": tmpl.get("spec").cloned().unwrap_or(json!({})),
    });
    if let Some(ns) = r.env.namespace_of(&base) {
        clone["metadata"]["namespace"] = json!(ns);
    }
    clone["metadata"]["labels"][CLUSTER_NAME_LABEL] = json!(format!("{p}-c"));
    for (k, v) in r.env.run_labels() {
        clone["metadata"]["labels"][k] = v;
    }
    if r.subject.role() == capi_contract::contract::Role::ControlPlaneTemplate {
        let schema = base_schema(r, &base).await;
        let reference = machine_template_kind(r).await;
        if let Some(spec) = clone.get_mut("spec") {
            set_topology_fields(spec, &schema, &reference, &format!("{p}-clone"));
        }
    }
    clone["metadata"]["annotations"]["cluster.x-k8s.io/cloned-from-name"] = json!(name);
    clone["metadata"]["annotations"]["cluster.x-k8s.io/cloned-from-groupkind"] =
        json!(format!("{}.{}", res.kind, res.group));
    let obj: DynamicObject = serde_json::from_value(clone)
        .map_err(|e| EnvError::Invalid(format!("clone of {name}: {e}")))?;
    let pp = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    match r.env.api(&base).create(&pp, &obj).await {
        Ok(_) => r.verdicts.pass(id::template::CLONE_COMPATIBLE),
        Err(e) => r.verdicts.fail(
            id::template::CLONE_COMPATIBLE,
            format!(
                "creating a {} from spec.template was rejected: {e}",
                base.kind
            ),
            r.evidence(
                &name,
                "spec.template.spec does not validate as the base kind",
                Some("spec.template.spec"),
            ),
        ),
    }
    Ok(())
}

/// The `openAPIV3Schema` of `base` at its version, read from its CRD (`Null` when unknown).
async fn base_schema(r: &ScriptRun<'_>, base: &kube::discovery::ApiResource) -> Value {
    let crds: kube::Api<DynamicObject> = kube::Api::all_with(
        r.env.client.clone(),
        &resource(
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
            "customresourcedefinitions",
        ),
    );
    let Ok(crd) = crds.get(&format!("{}.{}", base.plural, base.group)).await else {
        return Value::Null;
    };
    crd.data
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|v| v.get("name").and_then(Value::as_str) == Some(base.version.as_str()))
        .and_then(|v| v.pointer("/schema/openAPIV3Schema"))
        .cloned()
        .unwrap_or(Value::Null)
}

/// Sets `spec.template.metadata.annotations[key]` (creating the maps; a no-op when
/// `spec.template` is not an object).
fn add_template_annotation(obj: &mut Value, key: &str, value: &str) {
    let Some(template) = obj
        .pointer_mut("/spec/template")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    let meta = template.entry("metadata").or_insert_with(|| json!({}));
    let Some(annotations) = meta
        .as_object_mut()
        .map(|m| m.entry("annotations").or_insert_with(|| json!({})))
    else {
        return;
    };
    if let Some(a) = annotations.as_object_mut() {
        a.insert(key.to_string(), json!(value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dry_run_change_lands_in_template_metadata() {
        let mut o = json!({"spec": {"template": {"spec": {}}}});
        add_template_annotation(&mut o, CHANGE_ANNOTATION, "dry-run");
        assert_eq!(
            o.pointer("/spec/template/metadata/annotations/capi-conformance.io~1dry-run-change"),
            Some(&json!("dry-run"))
        );
        let mut odd = json!({"spec": {"template": "x"}});
        add_template_annotation(&mut odd, CHANGE_ANNOTATION, "dry-run");
        assert_eq!(odd, json!({"spec": {"template": "x"}}));
    }
}

//! SC-webhooks: what only a provider's own webhooks decide, checked for every kind after its
//! role's script. A kind without the webhook in question skips the rule with
//! the reason.
//!
//! - `all/conversion-lossless`: the CRD converts through a webhook (`strategy: Webhook`) and
//!   serves more than one version. An object is created at the column's version with the
//!   contract's optional fields its schema declares filled in, paused so no controller changes
//!   it; for every other served version it is read there, written back there unchanged, and
//!   read again at the column's version: its `spec` must be what was created (CAPI's own
//!   conversion tests demand the same of hub ↔ spoke round trips). The other column of the kind
//!   makes the trip the other way.
//! - `all/defaulting-admitted`: a mutating webhook matches creates of the kind. The kind's
//!   minimal object (the sample's `spec` cut down to what the schema requires) is created with
//!   `dryRun=All`: whatever the defaulting webhook fills in must pass the provider's own
//!   validation (and every webhook must answer a dry run: they declare no side effects).
//!
//! Template immutability vs topology's SSA dry run is `template/ssa-dry-run` (SC-template):
//! with a validating webhook it is the webhook that decides it.

use super::env::EnvError;
use super::script::ScriptRun;
use capi_contract::contract::Role;
use capi_contract::rule_ids as id;
use kube::api::{Api, DynamicObject, PostParams};
use kube::discovery::ApiResource;
use serde_json::{Value, json};

pub const CONVERSION_RULE: capi_contract::rule_ids::RuleId = id::all::CONVERSION_LOSSLESS;
pub const DEFAULTING_RULE: capi_contract::rule_ids::RuleId = id::all::DEFAULTING_ADMITTED;

const PAUSED: &str = "cluster.x-k8s.io/paused";

/// The API of a cluster-scoped `<group>/v1` kind.
fn cluster_scoped(r: &ScriptRun<'_>, group: &str, kind: &str, plural: &str) -> Api<DynamicObject> {
    Api::all_with(r.env.client.clone(), &resource(group, "v1", kind, plural))
}

pub(super) fn resource(group: &str, version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: group.into(),
        version: version.into(),
        api_version: format!("{group}/{version}"),
        kind: kind.into(),
        plural: plural.into(),
    }
}

pub async fn run(r: &mut ScriptRun<'_>) {
    r.step("webhooks: conversion round trips");
    if let Err(e) = conversion(r).await {
        r.verdicts
            .inconclusive(CONVERSION_RULE, format!("environment: {e}"));
    }
    r.step("webhooks: defaulted object admitted");
    if let Err(e) = defaulting(r).await {
        r.verdicts
            .inconclusive(DEFAULTING_RULE, format!("environment: {e}"));
    }
    r.end_step();
}

/// The API server's message of `e` (its Status message for an API error).
fn api_message(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(s) => format!("{} ({})", s.message, s.code),
        other => other.to_string(),
    }
}

fn to_value(o: DynamicObject) -> Value {
    serde_json::to_value(o).unwrap_or(Value::Null)
}

async fn get_value(
    api: &Api<DynamicObject>,
    name: &str,
    what: &'static str,
) -> Result<Value, EnvError> {
    api.get(name)
        .await
        .map(to_value)
        .map_err(|source| EnvError::Api {
            action: what,
            object: name.to_string(),
            source,
        })
}

/// The CRD of the subject's kind, as the server has it.
async fn crd_of(r: &ScriptRun<'_>) -> Result<Value, EnvError> {
    let res = &r.subject.resource;
    let crds = cluster_scoped(
        r,
        "apiextensions.k8s.io",
        "CustomResourceDefinition",
        "customresourcedefinitions",
    );
    get_value(&crds, &format!("{}.{}", res.plural, res.group), "get CRD").await
}

/// The contract's optional spec fields the schema declares, set on `obj` when the sample has
/// none (so the round trip carries what the contract version needs).
fn fill_contract_fields(r: &ScriptRun<'_>, obj: &mut Value) {
    let template = r.subject.role().is_template();
    let (prefix, ptr) = if template {
        ("spec.template.spec.", "/spec/template/spec")
    } else {
        ("spec.", "/spec")
    };
    let role = r.subject.role();
    let cp = matches!(role, Role::ControlPlane | Role::ControlPlaneTemplate);
    if !cp {
        return;
    }
    let Some(spec) = obj.pointer_mut(ptr).and_then(Value::as_object_mut) else {
        return;
    };
    let has = |path: &str| r.subject.schema_has(&format!("{prefix}{path}"));
    let mt = spec.entry("machineTemplate").or_insert_with(|| json!({}));
    let Some(mt) = mt.as_object_mut() else {
        return;
    };
    if has("machineTemplate.infrastructureRef") {
        mt.entry("infrastructureRef").or_insert_with(|| {
            json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                   "kind": "ConformanceMachineTemplate", "name": "conversion-probe"})
        });
        if has("machineTemplate.nodeDrainTimeout") {
            mt.entry("nodeDrainTimeout").or_insert_with(|| json!("90s"));
        }
    } else if has("machineTemplate.spec.infrastructureRef") {
        let inner = mt.entry("spec").or_insert_with(|| json!({}));
        if let Some(inner) = inner.as_object_mut() {
            inner.entry("infrastructureRef").or_insert_with(|| {
                json!({"apiGroup": "infrastructure.cluster.x-k8s.io",
                       "kind": "ConformanceMachineTemplate", "name": "conversion-probe"})
            });
            if has("machineTemplate.spec.deletion.nodeDrainTimeoutSeconds") {
                let deletion = inner.entry("deletion").or_insert_with(|| json!({}));
                if let Some(d) = deletion.as_object_mut() {
                    d.entry("nodeDrainTimeoutSeconds")
                        .or_insert_with(|| json!(90));
                }
            }
        }
    } else if mt.is_empty() {
        spec.remove("machineTemplate");
    }
}

/// The `openAPIV3Schema` of `version` in `crd`.
fn version_schema<'a>(crd: &'a Value, version: &str) -> Option<&'a Value> {
    crd.pointer("/spec/versions")?
        .as_array()?
        .iter()
        .find(|v| v.get("name").and_then(Value::as_str) == Some(version))?
        .pointer("/schema/openAPIV3Schema")
}

/// How many conflicting writes of someone else the conversion round trip reads past.
const CONFLICT_RETRIES: u32 = 10;

async fn conversion(r: &mut ScriptRun<'_>) -> Result<(), EnvError> {
    let crd = crd_of(r).await?;
    let strategy = crd
        .pointer("/spec/conversion/strategy")
        .and_then(Value::as_str)
        .unwrap_or("None");
    let res = r.subject.resource.clone();
    let others: Vec<String> = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|v| v.get("served").and_then(Value::as_bool) == Some(true))
        .filter_map(|v| v.get("name").and_then(Value::as_str))
        .filter(|v| *v != res.version)
        .map(str::to_string)
        .collect();
    if strategy != "Webhook" {
        r.verdicts.skip(
            CONVERSION_RULE,
            format!("the CRD has no conversion webhook (conversion strategy {strategy})"),
        );
        return Ok(());
    }
    if others.is_empty() {
        r.verdicts.skip(
            CONVERSION_RULE,
            format!("the CRD serves only {}", res.version),
        );
        return Ok(());
    }
    let name = format!("{}-conv", r.prefix());
    let mut obj = r.column_object(&name, &[(PAUSED, "true")]).await?;
    fill_contract_fields(r, &mut obj);
    // What a write at this version keeps before any conversion: the fields its own schema
    // declares (a sample's field unknown to it is pruned on every write, not lost in conversion).
    let sent = {
        let mut kept = obj.clone();
        if let Some(schema) = version_schema(&crd, &res.version) {
            embedded_apiserver::schema::prune_resource(&mut kept, schema);
        }
        kept.get("spec").cloned().unwrap_or(Value::Null)
    };
    let created = r.env.create(&res, obj).await?;
    let before = created.get("spec").cloned().unwrap_or(Value::Null);
    // The create itself went through the storage version when that is another one.
    if let Some((path, was, now)) = first_changed(&sent, &before, "spec") {
        let reason = format!(
            "{} created at {}: {path} was sent as {was}, read back as {now} (stored at another version and converted back)",
            res.kind, res.version
        );
        let ev = r.evidence(&name, reason.clone(), Some(&path));
        r.verdicts.fail(CONVERSION_RULE, reason, ev);
        return Ok(());
    }
    let here: Api<DynamicObject> = r.env.api(&res);
    for other in &others {
        let there_res = resource(&res.group, other, &res.kind, &res.plural);
        let there: Api<DynamicObject> = r.env.api(&there_res);
        let trip = async {
            // A write in between (the provider's Paused condition on the paused object) makes
            // the write back a conflict, which says nothing about conversion: read again.
            let mut conflicts = 0;
            loop {
                let read = there
                    .get(&name)
                    .await
                    .map_err(|e| format!("reading it at {other} failed: {}", api_message(&e)))?;
                match there.replace(&name, &PostParams::default(), &read).await {
                    Ok(_) => break,
                    Err(kube::Error::Api(s)) if s.code == 409 && conflicts < CONFLICT_RETRIES => {
                        conflicts += 1;
                    }
                    Err(e) => {
                        return Err(format!(
                            "writing it back unchanged at {other} was refused: {}",
                            api_message(&e)
                        ));
                    }
                }
            }
            here.get(&name).await.map(to_value).map_err(|e| {
                format!(
                    "reading it again at {} failed: {}",
                    res.version,
                    api_message(&e)
                )
            })
        };
        let after = match trip.await {
            Ok(v) => v.get("spec").cloned().unwrap_or(Value::Null),
            Err(why) => {
                let reason = format!("{} created at {}: {why}", res.kind, res.version);
                let ev = r.evidence(&name, reason.clone(), None);
                r.verdicts.fail(CONVERSION_RULE, reason, ev);
                return Ok(());
            }
        };
        if let Some((path, was, now)) = first_difference(&before, &after, "spec") {
            let reason = format!(
                "{} created at {}, read and written back at {other}, read again at {}: {path} was {was}, is {now}",
                res.kind, res.version, res.version
            );
            let ev = r.evidence(&name, reason.clone(), Some(&path));
            r.verdicts.fail(CONVERSION_RULE, reason, ev);
            return Ok(());
        }
    }
    r.verdicts.pass(CONVERSION_RULE);
    Ok(())
}

/// Whether `a` and `b` are two spellings of one Go duration (`"90s"` and `"1m30s"`): a
/// `metav1.Duration` field comes back from any Go round trip in `time.Duration.String()`'s
/// form (CAPI's v1beta1 `nodeDrainTimeout` through v1beta2's `nodeDrainTimeoutSeconds`), which
/// loses nothing.
fn same_duration(a: &Value, b: &Value) -> bool {
    let parse = |v: &Value| {
        v.as_str()
            .filter(|s| s.chars().any(|c| c.is_ascii_alphabetic()))
            .and_then(|s| crate::duration::parse_duration(s).ok())
    };
    matches!((parse(a), parse(b)), (Some(x), Some(y)) if x == y)
}

/// The first path where `a` and `b` differ (dotted), with both values (`<absent>` when missing).
pub fn first_difference(a: &Value, b: &Value, at: &str) -> Option<(String, String, String)> {
    let show = |v: Option<&Value>| v.map_or_else(|| "<absent>".to_string(), Value::to_string);
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter().find_map(|k| match (x.get(k), y.get(k)) {
                (Some(p), Some(q)) => first_difference(p, q, &format!("{at}.{k}")),
                (p, q) => Some((format!("{at}.{k}"), show(p), show(q))),
            })
        }
        _ if a == b || same_duration(a, b) => None,
        _ => Some((at.to_string(), a.to_string(), b.to_string())),
    }
}

/// The first path of `sent` whose value `got` does not have (fields `got` adds, e.g. defaults,
/// do not count).
pub fn first_changed(sent: &Value, got: &Value, at: &str) -> Option<(String, String, String)> {
    match (sent, got) {
        (Value::Object(x), Value::Object(y)) => x.iter().find_map(|(k, v)| {
            let path = format!("{at}.{k}");
            match y.get(k) {
                Some(g) => first_changed(v, g, &path),
                None if v.is_null() => None,
                None => Some((path, v.to_string(), "<absent>".into())),
            }
        }),
        _ if sent == got || same_duration(sent, got) => None,
        _ => Some((at.to_string(), sent.to_string(), got.to_string())),
    }
}

/// Whether webhook configuration `cfg` has a webhook matching CREATE of `res`.
fn mutates_creates(cfg: &Value, res: &ApiResource) -> Option<String> {
    let has = |list: Option<&Value>, want: &[&str]| {
        list.and_then(Value::as_array).is_some_and(|l| {
            l.iter()
                .filter_map(Value::as_str)
                .any(|x| want.contains(&x))
        })
    };
    let sub = format!("{}/*", res.plural);
    cfg.get("webhooks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|w| {
            let exact = w.get("matchPolicy").and_then(Value::as_str) == Some("Exact");
            w.get("rules")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .any(|rule| {
                    has(rule.get("operations"), &["CREATE", "*"])
                        && has(rule.get("apiGroups"), &[res.group.as_str(), "*"])
                        && (!exact || has(rule.get("apiVersions"), &[res.version.as_str(), "*"]))
                        && has(
                            rule.get("resources"),
                            &[res.plural.as_str(), sub.as_str(), "*", "*/*"],
                        )
                })
        })
        .and_then(|w| w.get("name").and_then(Value::as_str).map(str::to_string))
}

/// `spec` cut down to the fields the CRD's schema at `version` requires.
fn minimal_spec(crd: &Value, version: &str, spec: &Value) -> Value {
    let Value::Object(m) = spec else {
        return spec.clone();
    };
    let required: Vec<&str> = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|v| v.get("name").and_then(Value::as_str) == Some(version))
        .and_then(|v| v.pointer("/schema/openAPIV3Schema/properties/spec/required"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    Value::Object(
        m.iter()
            .filter(|(k, _)| required.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    )
}

/// The control plane's fields the topology controller sets (its version, its machine
/// template's infrastructure reference at either contract's path), copied from the sample's
/// `spec` into the minimal one.
fn keep_topology_fields(spec: &Value, minimal: &mut Value) {
    let Some(minimal) = minimal.as_object_mut() else {
        return;
    };
    if let Some(v) = spec.get("version") {
        minimal.insert("version".into(), v.clone());
    }
    for path in [
        &["machineTemplate", "infrastructureRef"][..],
        &["machineTemplate", "spec", "infrastructureRef"][..],
    ] {
        let Some(reference) = path.iter().try_fold(spec, |at, key| at.get(*key)) else {
            continue;
        };
        let mut at = &mut *minimal;
        for key in &path[..path.len() - 1] {
            let Some(next) = at
                .entry(key.to_string())
                .or_insert_with(|| json!({}))
                .as_object_mut()
            else {
                return;
            };
            at = next;
        }
        at.insert("infrastructureRef".into(), reference.clone());
    }
}

/// Whether the control plane's `spec` names its machine template (a reference with a name,
/// at either contract's path).
fn names_machine_template(spec: &Value) -> bool {
    [
        "/machineTemplate/spec/infrastructureRef/name",
        "/machineTemplate/infrastructureRef/name",
    ]
    .iter()
    .any(|p| {
        spec.pointer(p)
            .and_then(Value::as_str)
            .is_some_and(|n| !n.is_empty())
    })
}

async fn defaulting(r: &mut ScriptRun<'_>) -> Result<(), EnvError> {
    let res = r.subject.resource.clone();
    let configs = cluster_scoped(
        r,
        "admissionregistration.k8s.io",
        "MutatingWebhookConfiguration",
        "mutatingwebhookconfigurations",
    );
    let list = configs
        .list(&Default::default())
        .await
        .map_err(|source| EnvError::Api {
            action: "list",
            object: "MutatingWebhookConfigurations".into(),
            source,
        })?;
    let Some(hook) = list
        .items
        .into_iter()
        .map(to_value)
        .find_map(|c| mutates_creates(&c, &res))
    else {
        r.verdicts.skip(
            DEFAULTING_RULE,
            format!(
                "no mutating admission webhook for creates of {}.{}",
                res.plural, res.group
            ),
        );
        return Ok(());
    };
    let name = format!("{}-dflt", r.prefix());
    let mut obj = r.column_object(&name, &[]).await?;
    if !r.subject.role().is_template() {
        let crd = crd_of(r).await?;
        let spec = obj.get("spec").cloned().unwrap_or(json!({}));
        obj["spec"] = minimal_spec(&crd, &res.version, &spec);
        if r.subject.role() == Role::ControlPlane {
            // A control plane is made by the topology controller with the Cluster's version
            // and its machine template's reference besides the template's spec
            // (topology::set_topology_fields): the sample's own, where it has them.
            // Without them in the sample, what the clone of SC-template gets.
            keep_topology_fields(&spec, &mut obj["spec"]);
            if !names_machine_template(&obj["spec"]) {
                let schema = version_schema(&crd, &res.version)
                    .cloned()
                    .unwrap_or(Value::Null);
                let reference = super::topology::machine_template_kind(r).await;
                super::topology::set_topology_fields(
                    &mut obj["spec"],
                    &schema,
                    &reference,
                    &format!("{name}-machines"),
                );
            }
        }
    }
    obj["apiVersion"] = json!(res.api_version);
    obj["kind"] = json!(res.kind);
    if let Some(ns) = r.env.namespace_of(&res) {
        obj["metadata"]["namespace"] = json!(ns);
    }
    obj["metadata"]["labels"] = Value::Object(r.env.run_labels());
    let dynamic: DynamicObject = serde_json::from_value(obj.clone())
        .map_err(|e| EnvError::Invalid(format!("{} {name}: {e}", res.kind)))?;
    let pp = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    match r.env.api(&res).create(&pp, &dynamic).await {
        Ok(_) => r.verdicts.pass(DEFAULTING_RULE),
        Err(e) => {
            let reason = format!(
                "the minimal {} (spec {}), defaulted by webhook {hook}, was not admitted (dry-run create): {}",
                res.kind,
                obj.get("spec").cloned().unwrap_or(Value::Null),
                api_message(&e)
            );
            let ev = r.evidence(&name, reason.clone(), None);
            r.verdicts.fail(DEFAULTING_RULE, reason, ev);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_minimal_control_plane_keeps_what_topology_sets() {
        // RKE2's: the schema requires only rolloutStrategy, its webhook the machine template.
        let sample = json!({
            "rolloutStrategy": {"type": "RollingUpdate"},
            "version": "v1.33.0+rke2r1",
            "registrationMethod": "control-plane-endpoint",
            "machineTemplate": {
                "infrastructureRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DevMachineTemplate", "name": "m"},
                "nodeDrainTimeout": "30s",
            },
        });
        let mut minimal = json!({"rolloutStrategy": {"type": "RollingUpdate"}});
        keep_topology_fields(&sample, &mut minimal);
        assert_eq!(
            minimal,
            json!({
                "rolloutStrategy": {"type": "RollingUpdate"},
                "version": "v1.33.0+rke2r1",
                "machineTemplate": {"infrastructureRef": sample["machineTemplate"]["infrastructureRef"]},
            })
        );
        assert!(names_machine_template(&minimal));
        // The v1beta2 path; an empty reference names nothing.
        let b2 = json!({"machineTemplate": {"spec": {"infrastructureRef": {"apiGroup": "g", "kind": "K", "name": "m"}}}});
        let mut minimal = json!({});
        keep_topology_fields(&b2, &mut minimal);
        assert_eq!(minimal, b2);
        assert!(names_machine_template(&minimal));
        assert!(!names_machine_template(
            &json!({"machineTemplate": {"infrastructureRef": {}}})
        ));
    }

    #[test]
    fn first_difference_names_the_path() {
        let a = json!({"x": {"y": 1, "z": "90s"}});
        let b = json!({"x": {"y": 1, "z": "1m31s"}});
        assert_eq!(
            first_difference(&a, &b, "spec"),
            Some(("spec.x.z".into(), "\"90s\"".into(), "\"1m31s\"".into()))
        );
        assert_eq!(first_difference(&a, &a, "spec"), None);
        // Defaults the server adds are not changes of what was sent.
        assert_eq!(
            first_changed(&a, &json!({"x": {"y": 1, "z": "90s", "d": 2}}), "spec"),
            None
        );
        assert_eq!(
            first_changed(&a, &b, "spec").map(|d| d.0),
            Some("spec.x.z".to_string())
        );
        assert_eq!(
            first_difference(&json!({}), &json!({"n": 1}), "spec"),
            Some(("spec.n".into(), "<absent>".into(), "1".into()))
        );
    }

    #[test]
    fn a_go_duration_respelled_is_the_same_value() {
        let sent = json!({"t": "90s", "n": "90"});
        assert_eq!(
            first_changed(&sent, &json!({"t": "1m30s", "n": "90"}), "spec"),
            None
        );
        assert_eq!(
            first_changed(&sent, &json!({"t": "1m31s", "n": "90"}), "spec").map(|d| d.0),
            Some("spec.t".into())
        );
        // Plain numbers stay numbers.
        assert!(first_difference(&json!("90"), &json!("1m30s"), "spec").is_some());
    }
}

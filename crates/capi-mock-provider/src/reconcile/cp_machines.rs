//! A MockControlPlane whose `spec.machineTemplate` names an InfraMachineTemplate makes its
//! instances Machines, as KCP does (`cloneConfigsAndGenerateMachine`): per instance an
//! InfraMachine cloned from the template (clone annotations, owned by the control plane until
//! core's Machine controller takes it over) and a Machine labelled `cluster-name`,
//! `control-plane` and `control-plane-name`, with the template's metadata, owned by the control
//! plane, `spec.bootstrap.dataSecretName` naming a data Secret of the control plane's. Changed
//! template metadata is written onto the existing Machines in place (KCP's `syncMachines`);
//! each new Machine goes to the Cluster's control plane failure domain with the fewest Machines
//! (KCP's `FailureDomainWithFewestMachines`); every Machine's `UpToDate` condition is kept (KCP's
//! `reconcileMachineUpToDateCondition`: its instances never need a rollout); deletion deletes the
//! Machines and waits for them to go.

use super::secrets::{self, CAPI_SECRET_TYPE, SecretSpec, controller_ref};
use super::{ReconcileError, Result, Subject};
use crate::core::CoreKind;
use crate::object::{CLUSTER_NAME_LABEL, CONTROL_PLANE_LABEL, FIELD_MANAGER};
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::discovery::ApiResource;
use kube::{Client, ResourceExt};
use serde_json::{Value, json};

/// `cluster.x-k8s.io/control-plane-name`: the control plane a Machine belongs to.
pub const CONTROL_PLANE_NAME_LABEL: &str = "cluster.x-k8s.io/control-plane-name";

/// The InfraMachineTemplate the control plane's machine template names (v1beta2
/// `spec.machineTemplate.spec.infrastructureRef {apiGroup, kind, name}`, v1beta1
/// `spec.machineTemplate.infrastructureRef {apiVersion, kind, name}`), as the resource of its
/// kind at the template's version and the template's name.
pub fn template_ref(s: &Subject) -> Option<(ApiResource, String)> {
    let latest = s.latest();
    let spec = latest.data.get("spec")?;
    // Either shape, whichever version the object was read at.
    let r = spec
        .pointer("/machineTemplate/spec/infrastructureRef")
        .or_else(|| spec.pointer("/machineTemplate/infrastructureRef"))?;
    let kind = r.get("kind")?.as_str()?;
    let name = r.get("name")?.as_str()?;
    let (group, version) = match r.get("apiVersion").and_then(Value::as_str) {
        Some(av) => av.split_once('/')?,
        None => (r.get("apiGroup")?.as_str()?, s.contract.as_str()),
    };
    let gvk = kube::api::GroupVersionKind::gvk(group, version, kind);
    let plural = format!("{}s", kind.to_lowercase());
    Some((
        ApiResource::from_gvk_with_plural(&gvk, &plural),
        name.to_string(),
    ))
}

fn machine_name(s: &Subject, index: i64) -> String {
    format!("{}-{index}", s.name)
}

/// The labels and annotations of `spec.machineTemplate.metadata`.
fn template_metadata(
    s: &Subject,
) -> (
    serde_json::Map<String, Value>,
    serde_json::Map<String, Value>,
) {
    let latest = s.latest();
    let meta = latest.data.pointer("/spec/machineTemplate/metadata");
    let get = |k: &str| {
        meta.and_then(|m| m.get(k))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    (get("labels"), get("annotations"))
}

/// What KCP's `syncMachines` writes onto an existing Machine: the template's labels and
/// annotations, and its deletion timeouts when it has any (an empty `spec.deletion` is refused
/// by core's CRD, `minProperties: 1`).
fn in_place_patch(
    labels: &serde_json::Map<String, Value>,
    annotations: &serde_json::Map<String, Value>,
    timeouts: &Value,
) -> Value {
    let mut patch = json!({"metadata": {"labels": labels, "annotations": annotations}});
    if timeouts.as_object().is_some_and(|t| !t.is_empty()) {
        patch["spec"] = json!({"deletion": timeouts});
    }
    patch
}

/// The machine template's deletion timeouts as a v1beta2 Machine's `spec.deletion` (v1beta2:
/// `spec.machineTemplate.spec.deletion`; v1beta1: the `node*Timeout` durations, in seconds).
fn template_timeouts(s: &Subject) -> Value {
    // Either shape, whichever version the object was read at (webhook mode stores v1beta2).
    let latest = s.latest();
    let t = latest.data.pointer("/spec/machineTemplate");
    let mut out = t
        .and_then(|t| t.pointer("/spec/deletion"))
        .cloned()
        .unwrap_or_else(|| json!({}));
    for (from, to) in [
        ("nodeDrainTimeout", "nodeDrainTimeoutSeconds"),
        ("nodeVolumeDetachTimeout", "nodeVolumeDetachTimeoutSeconds"),
        ("nodeDeletionTimeout", "nodeDeletionTimeoutSeconds"),
    ] {
        if let Some(secs) = t
            .and_then(|t| t.get(from))
            .and_then(Value::as_str)
            .and_then(crate::webhook::convert::parse_duration)
        {
            out[to] = json!(secs);
        }
    }
    out
}

fn machines_api(client: &Client, s: &Subject) -> Api<DynamicObject> {
    Api::namespaced_with(
        client.clone(),
        &s.namespace,
        &CoreKind::Machine.api_resource(),
    )
}

fn params() -> PatchParams {
    PatchParams {
        field_manager: Some(FIELD_MANAGER.into()),
        ..Default::default()
    }
}

/// The control plane's Machines (by the control-plane-name label).
pub async fn owned(client: &Client, s: &Subject) -> Result<Vec<DynamicObject>> {
    let list = machines_api(client, s)
        .list(&ListParams::default().labels(&format!("{CONTROL_PLANE_NAME_LABEL}={}", s.name)))
        .await?;
    Ok(list.items)
}

/// The Cluster's failure domains for control plane Machines (`status.failureDomains` entries
/// with `controlPlane: true`; a v1beta2 list or a v1beta1 map, whichever version it was read
/// at), by name.
pub fn control_plane_domains(cluster: Option<&DynamicObject>) -> Vec<String> {
    let domains = cluster.and_then(|c| c.data.pointer("/status/failureDomains"));
    let for_cp = |d: &Value| d.get("controlPlane").and_then(Value::as_bool) == Some(true);
    let mut names: Vec<String> = match domains {
        Some(Value::Array(list)) => list
            .iter()
            .filter(|d| for_cp(d))
            .filter_map(|d| d.get("name").and_then(Value::as_str).map(str::to_string))
            .collect(),
        Some(Value::Object(map)) => map
            .iter()
            .filter(|(_, d)| for_cp(d))
            .map(|(n, _)| n.clone())
            .collect(),
        _ => Vec::new(),
    };
    names.sort();
    names.dedup();
    names
}

/// The failure domain of `domains` with the fewest of `used` (the first such, by name), or
/// with the `control-plane/placement` fault the first domain always.
fn next_domain(s: &Subject, domains: &[String], used: &[String]) -> Option<String> {
    if s.fault("placement") {
        return domains.first().cloned();
    }
    domains
        .iter()
        .min_by_key(|d| used.iter().filter(|u| u == d).count())
        .cloned()
}

/// Makes the control plane's Machines `0..count` exist (one per instance, spread over the
/// control plane failure `domains`), removes those past `count`, and writes the template's
/// metadata onto each (in place).
pub async fn sync(
    client: &Client,
    s: &Subject,
    cluster: &str,
    count: i64,
    domains: &[String],
) -> Result<()> {
    let Some((template_res, template)) = template_ref(s) else {
        return Ok(());
    };
    let data_secret = format!("{}-bootstrap-data", s.name);
    secrets::ensure(
        client,
        s,
        SecretSpec {
            name: &data_secret,
            cluster: Some(cluster),
            data: vec![("value", "#cloud-config\n".to_string())],
            secret_type: CAPI_SECRET_TYPE,
            owned: true,
        },
    )
    .await?;
    let (labels, annotations) = template_metadata(s);
    let timeouts = template_timeouts(s);
    let existing = owned(client, s).await?;
    for m in &existing {
        let index = m
            .name_any()
            .rsplit('-')
            .next()
            .and_then(|i| i.parse::<i64>().ok());
        if index.is_some_and(|i| i >= count) && m.metadata.deletion_timestamp.is_none() {
            let _ = machines_api(client, s)
                .delete(&m.name_any(), &DeleteParams::background())
                .await;
            continue;
        }
        if m.metadata.deletion_timestamp.is_none() && !s.fault("min-ready-uptodate") {
            mark_up_to_date(client, s, m).await?;
        }
        if s.fault("in-place-propagation") {
            continue;
        }
        let has = |have: &Option<std::collections::BTreeMap<String, String>>,
                   want: &serde_json::Map<String, Value>| {
            want.iter().all(|(k, v)| {
                have.as_ref().and_then(|h| h.get(k)).map(String::as_str) == v.as_str()
            })
        };
        let deletion = m
            .data
            .pointer("/spec/deletion")
            .cloned()
            .unwrap_or(json!({}));
        if !has(&m.metadata.labels, &labels)
            || !has(&m.metadata.annotations, &annotations)
            || !super::contains(&deletion, &timeouts)
        {
            machines_api(client, s)
                .patch(
                    &m.name_any(),
                    &params(),
                    &Patch::Merge(in_place_patch(&labels, &annotations, &timeouts)),
                )
                .await?;
        }
    }
    let mut used: Vec<String> = existing
        .iter()
        .filter(|m| m.metadata.deletion_timestamp.is_none())
        .filter_map(|m| {
            m.data
                .pointer("/spec/failureDomain")
                .and_then(Value::as_str)
        })
        .map(str::to_string)
        .collect();
    for index in 0..count {
        let name = machine_name(s, index);
        if existing.iter().any(|m| m.name_any() == name) {
            continue;
        }
        let domain = next_domain(s, domains, &used);
        used.extend(domain.clone());
        let infra =
            create_infra_machine(client, s, cluster, &template_res, &template, &name).await?;
        create_machine(
            client,
            s,
            cluster,
            &infra,
            &name,
            &data_secret,
            (&labels, &annotations),
            &timeouts,
            domain.as_deref(),
        )
        .await?;
    }
    Ok(())
}

/// Sets the Machine's `UpToDate` condition to True, keeping the conditions others set (core's
/// Machine controller writes its own beside it); optimistic: a conflict is retried on the next
/// reconcile.
async fn mark_up_to_date(client: &Client, s: &Subject, m: &DynamicObject) -> Result<()> {
    let conditions = m
        .data
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let is_true = |c: &Value| {
        c.get("type").and_then(Value::as_str) == Some("UpToDate")
            && c.get("status").and_then(Value::as_str) == Some("True")
    };
    if conditions.iter().any(is_true) {
        return Ok(());
    }
    let mut merged: Vec<Value> = conditions
        .into_iter()
        .filter(|c| c.get("type").and_then(Value::as_str) != Some("UpToDate"))
        .collect();
    merged.push(json!({
        "type": "UpToDate",
        "status": "True",
        "reason": "UpToDate",
        "message": "",
        "lastTransitionTime": crate::conditions::now_rfc3339(),
    }));
    let patch = json!({
        "metadata": {"resourceVersion": m.metadata.resource_version},
        "status": {"conditions": merged},
    });
    machines_api(client, s)
        .patch_status(&m.name_any(), &params(), &Patch::Merge(&patch))
        .await?;
    Ok(())
}

/// The InfraMachine of one instance, cloned from the template (`external.CreateFromTemplate`).
async fn create_infra_machine(
    client: &Client,
    s: &Subject,
    cluster: &str,
    template_res: &ApiResource,
    template: &str,
    name: &str,
) -> Result<ApiResource> {
    let templates: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), &s.namespace, template_res);
    let t = templates.get(template).await?;
    let kind = template_res
        .kind
        .strip_suffix("Template")
        .unwrap_or(&template_res.kind)
        .to_string();
    let gvk = kube::api::GroupVersionKind::gvk(&template_res.group, &template_res.version, &kind);
    let resource = ApiResource::from_gvk_with_plural(&gvk, &format!("{}s", kind.to_lowercase()));
    let mut annotations = t
        .data
        .pointer("/spec/template/metadata/annotations")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    annotations.insert("cluster.x-k8s.io/cloned-from-name".into(), json!(template));
    annotations.insert(
        "cluster.x-k8s.io/cloned-from-groupkind".into(),
        json!(format!("{}.{}", template_res.kind, template_res.group)),
    );
    let obj = json!({
        "apiVersion": resource.api_version,
        "kind": resource.kind,
        "metadata": {
            "name": name,
            "namespace": s.namespace,
            "labels": labels_of(s, cluster, &Default::default()),
            "annotations": annotations,
            "ownerReferences": [controller_ref(s)],
        },
        "spec": t.data.pointer("/spec/template/spec").cloned().unwrap_or_else(|| json!({})),
    });
    let obj: DynamicObject =
        serde_json::from_value(obj).map_err(|e| ReconcileError::Invalid(e.to_string()))?;
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), &s.namespace, &resource);
    create_or_keep(&api, &obj).await?;
    Ok(resource)
}

/// What a control plane's Machine carries: the cluster, the control-plane key (empty value) and
/// the control plane's name, over the template's labels.
fn labels_of(
    s: &Subject,
    cluster: &str,
    template: &serde_json::Map<String, Value>,
) -> serde_json::Map<String, Value> {
    let mut labels = template.clone();
    labels.insert(CLUSTER_NAME_LABEL.into(), json!(cluster));
    if !s.fault("machine-label") {
        labels.insert(CONTROL_PLANE_LABEL.into(), json!(""));
    }
    labels.insert(CONTROL_PLANE_NAME_LABEL.into(), json!(s.name));
    labels
}

#[allow(clippy::too_many_arguments)]
async fn create_machine(
    client: &Client,
    s: &Subject,
    cluster: &str,
    infra: &ApiResource,
    name: &str,
    data_secret: &str,
    (labels, annotations): (
        &serde_json::Map<String, Value>,
        &serde_json::Map<String, Value>,
    ),
    timeouts: &Value,
    failure_domain: Option<&str>,
) -> Result<()> {
    let version = crate::object::string_field(&s.obj, "spec.version").unwrap_or("v0.0.0");
    let obj = json!({
        "apiVersion": CoreKind::Machine.api_resource().api_version,
        "kind": "Machine",
        "metadata": {
            "name": name,
            "namespace": s.namespace,
            "labels": labels_of(s, cluster, labels),
            "annotations": annotations,
            "ownerReferences": [controller_ref(s)],
        },
        "spec": {
            "clusterName": cluster,
            "version": version,
            "bootstrap": {"dataSecretName": data_secret},
            "infrastructureRef": {"apiGroup": infra.group, "kind": infra.kind, "name": name},
        },
    });
    // Core's v1beta2 CRD refuses an empty optional struct (`minProperties: 1`).
    let mut obj = obj;
    if timeouts.as_object().is_some_and(|t| !t.is_empty()) {
        obj["spec"]["deletion"] = timeouts.clone();
    }
    if let Some(d) = failure_domain {
        obj["spec"]["failureDomain"] = json!(d);
    }
    let obj: DynamicObject =
        serde_json::from_value(obj).map_err(|e| ReconcileError::Invalid(e.to_string()))?;
    create_or_keep(&machines_api(client, s), &obj).await
}

async fn create_or_keep(api: &Api<DynamicObject>, obj: &DynamicObject) -> Result<()> {
    let params = PostParams {
        field_manager: Some(FIELD_MANAGER.into()),
        ..Default::default()
    };
    match api.create(&params, obj).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(e)) if e.code == 409 => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Deletes the control plane's Machines; `true` once none is left.
pub async fn delete_all(client: &Client, s: &Subject) -> Result<bool> {
    let machines = owned(client, s).await?;
    for m in machines
        .iter()
        .filter(|m| m.metadata.deletion_timestamp.is_none())
    {
        let _ = machines_api(client, s)
            .delete(&m.name_any(), &DeleteParams::background())
            .await;
    }
    Ok(machines.is_empty())
}

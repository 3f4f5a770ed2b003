//! The resource type an established CRD defines: its names, scope, served versions (schema,
//! subresources, printer columns) and conversion webhook.

use std::sync::Arc;

use kube_version_order as version;
use serde_json::Value;

use super::{CUSTOM_RESOURCE_VERBS, PrinterColumn, ResourceType, ScaleDef, VersionDef};

fn str_at<'a>(v: &'a Value, ptr: &str) -> &'a str {
    v.pointer(ptr).and_then(Value::as_str).unwrap_or_default()
}

/// Builds the resource type a CRD object defines (served versions only).
pub fn from_crd(crd: &Value) -> Option<ResourceType> {
    let group = str_at(crd, "/spec/group").to_string();
    let plural = str_at(crd, "/spec/names/plural").to_string();
    let kind = str_at(crd, "/spec/names/kind").to_string();
    if group.is_empty() || plural.is_empty() || kind.is_empty() {
        return None;
    }
    let mut singular = str_at(crd, "/spec/names/singular").to_string();
    if singular.is_empty() {
        singular = kind.to_lowercase();
    }
    let mut list_kind = str_at(crd, "/spec/names/listKind").to_string();
    if list_kind.is_empty() {
        list_kind = format!("{kind}List");
    }
    let mut versions: Vec<VersionDef> = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .map(|vs| {
            vs.iter()
                .filter(|v| v.get("served").and_then(Value::as_bool).unwrap_or(false))
                .map(version_from_crd)
                .collect()
        })
        .unwrap_or_default();
    versions.sort_by(|a, b| version::compare(&b.name, &a.name));
    Some(ResourceType {
        group,
        resource: plural,
        singular,
        kind,
        list_kind,
        namespaced: str_at(crd, "/spec/scope") != "Cluster",
        short_names: crate::meta::strings_at(crd, "/spec/names/shortNames"),
        categories: crate::meta::strings_at(crd, "/spec/names/categories"),
        verbs: CUSTOM_RESOURCE_VERBS.to_vec(),
        versions,
        custom: true,
        conversion: crate::webhook::crd_conversion::ConversionWebhook::from_crd(crd).map(Arc::new),
    })
}

fn version_from_crd(v: &Value) -> VersionDef {
    let scale = v.pointer("/subresources/scale").map(|s| ScaleDef {
        spec_replicas_path: str_at(s, "/specReplicasPath").to_string(),
        status_replicas_path: str_at(s, "/statusReplicasPath").to_string(),
        label_selector_path: s
            .get("labelSelectorPath")
            .and_then(Value::as_str)
            .map(str::to_string),
    });
    let printer_columns = v
        .get("additionalPrinterColumns")
        .and_then(Value::as_array)
        .map(|cols| {
            cols.iter()
                .map(|c| PrinterColumn {
                    name: str_at(c, "/name").to_string(),
                    type_: str_at(c, "/type").to_string(),
                    json_path: str_at(c, "/jsonPath").to_string(),
                    format: str_at(c, "/format").to_string(),
                    description: str_at(c, "/description").to_string(),
                    priority: c.get("priority").and_then(Value::as_i64).unwrap_or(0),
                })
                .collect()
        })
        .unwrap_or_default();
    let selectable_fields = v
        .get("selectableFields")
        .and_then(Value::as_array)
        .map(|fs| {
            fs.iter()
                .filter_map(|f| f.get("jsonPath").and_then(Value::as_str))
                .map(|p| p.trim_start_matches('.').to_string())
                .collect()
        })
        .unwrap_or_default();
    VersionDef {
        name: str_at(v, "/name").to_string(),
        storage: v.get("storage").and_then(Value::as_bool).unwrap_or(false),
        schema: v.pointer("/schema/openAPIV3Schema").cloned(),
        status: v.pointer("/subresources/status").is_some(),
        scale,
        printer_columns,
        selectable_fields,
        deprecation_warning: if v
            .get("deprecated")
            .and_then(Value::as_bool)
            .unwrap_or(false)
        {
            Some(
                v.get("deprecationWarning")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_default(),
            )
        } else {
            None
        },
    }
}

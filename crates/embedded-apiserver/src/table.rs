//! Server-side printing (docs/embedded-apiserver.md S2): `meta.k8s.io/v1 Table` with NAME, the CRD's
//! additionalPrinterColumns and AGE.

use jsonpath_rust::JsonPath;
use serde_json::{Value, json};

use super::meta;
use super::printers::{self, Printer};
use super::registry::PrinterColumn;
use super::target::Target;

pub fn wants_table(accept: &str) -> bool {
    accept
        .split(',')
        .any(|p| p.split(';').map(str::trim).any(|x| x == "as=Table"))
}

/// Whether the Accept header asks for `PartialObjectMetadata` / `PartialObjectMetadataList`.
pub fn wants_metadata(accept: &str) -> bool {
    accept.split(',').any(|p| {
        p.split(';')
            .map(str::trim)
            .any(|x| x == "as=PartialObjectMetadata" || x == "as=PartialObjectMetadataList")
    })
}

/// An object reduced to `meta.k8s.io/v1 PartialObjectMetadata`.
pub fn partial(obj: &Value) -> Value {
    json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
           "metadata": obj.get("metadata").cloned().unwrap_or_else(|| json!({}))})
}

/// A list reduced to `PartialObjectMetadataList`.
pub fn partial_list(list: &Value) -> Value {
    let items: Vec<Value> = list
        .get("items")
        .and_then(Value::as_array)
        .map(|items| items.iter().map(partial).collect())
        .unwrap_or_default();
    // A typed ListMeta: an empty continue is left out.
    let mut metadata = list.get("metadata").cloned().unwrap_or_else(|| json!({}));
    if let Some(m) = metadata.as_object_mut()
        && m.get("continue").and_then(Value::as_str) == Some("")
    {
        m.remove("continue");
    }
    json!({"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
           "metadata": metadata, "items": items})
}

/// kube's `duration.HumanDuration`.
pub fn human_duration(secs: i64) -> String {
    if secs < -1 {
        return "<invalid>".into();
    }
    let secs = secs.max(0);
    let (m, h) = (secs / 60, secs / 3600);
    if secs < 120 {
        format!("{secs}s")
    } else if m < 10 {
        let s = secs % 60;
        if s == 0 {
            format!("{m}m")
        } else {
            format!("{m}m{s}s")
        }
    } else if m < 180 {
        format!("{m}m")
    } else if h < 8 {
        let mm = m % 60;
        if mm == 0 {
            format!("{h}h")
        } else {
            format!("{h}h{mm}m")
        }
    } else if h < 48 {
        format!("{h}h")
    } else if h < 24 * 8 {
        let (d, hh) = (h / 24, h % 24);
        if hh == 0 {
            format!("{d}d")
        } else {
            format!("{d}d{hh}h")
        }
    } else if h < 24 * 365 * 2 {
        format!("{}d", h / 24)
    } else if h < 24 * 365 * 8 {
        let (y, d) = (h / (24 * 365), (h / 24) % 365);
        if d == 0 {
            format!("{y}y")
        } else {
            format!("{y}y{d}d")
        }
    } else {
        format!("{}y", h / (24 * 365))
    }
}

fn age(obj: &Value) -> Value {
    let ts = meta::str_at(obj, "/metadata/creationTimestamp");
    match ts.parse::<jiff::Timestamp>() {
        Ok(t) => json!(human_duration(
            jiff::Timestamp::now().as_second() - t.as_second()
        )),
        Err(_) => json!("<unknown>"),
    }
}

fn column_value(obj: &Value, col: &PrinterColumn) -> Value {
    let path = format!("${}", col.json_path);
    let found: Vec<Value> = obj
        .query(&path)
        .map(|v| v.into_iter().cloned().collect())
        .unwrap_or_default();
    let Some(first) = found.into_iter().next() else {
        return Value::Null;
    };
    if col.type_ == "date"
        && let Some(s) = first.as_str()
        && let Ok(t) = s.parse::<jiff::Timestamp>()
    {
        return json!(human_duration(
            jiff::Timestamp::now().as_second() - t.as_second()
        ));
    }
    match first {
        Value::Object(_) | Value::Array(_) => json!(first.to_string()),
        other => other,
    }
}

/// The description ObjectMeta's schema gives `field` (kube's table convertor reuses them).
fn object_meta_description(field: &str) -> String {
    crate::openapi::builtin_schema("", "v1", "ConfigMap")
        .and_then(|b| {
            b.definitions
                .get("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")?
                .pointer(&format!("/properties/{field}/description"))?
                .as_str()
                .map(str::to_string)
        })
        .unwrap_or_default()
}

/// The version's printer columns, or apiextensions' default when it defines none: Age, from
/// `.metadata.creationTimestamp` (a CRD that defines columns gets no Age column of its own).
fn columns(t: &Target) -> Vec<PrinterColumn> {
    let cols =
        t.rt.version(&t.version)
            .map(|v| v.printer_columns.clone())
            .unwrap_or_default();
    if !cols.is_empty() {
        return cols;
    }
    vec![PrinterColumn {
        name: "Age".into(),
        type_: "date".into(),
        json_path: ".metadata.creationTimestamp".into(),
        format: String::new(),
        description: object_meta_description("creationTimestamp"),
        priority: 0,
    }]
}

/// tableconvertor.New: Name, then each column, described by the CRD or by its JSONPath.
fn definitions(cols: &[PrinterColumn]) -> Vec<Value> {
    let mut defs = vec![
        json!({"name": "Name", "type": "string", "format": "name", "description": object_meta_description("name"), "priority": 0}),
    ];
    for c in cols {
        let description = if c.description.is_empty() {
            format!(
                "Custom resource definition column (in JSONPath format): {}",
                c.json_path
            )
        } else {
            c.description.clone()
        };
        defs.push(json!({"name": c.name, "type": c.type_, "format": c.format, "description": description, "priority": c.priority}));
    }
    defs
}

fn row(obj: &Value, cols: &[PrinterColumn]) -> Value {
    let mut cells = vec![json!(meta::name(obj))];
    for c in cols {
        cells.push(column_value(obj, c));
    }
    let mut partial = json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1"});
    partial["metadata"] = obj.get("metadata").cloned().unwrap_or_else(|| json!({}));
    json!({"cells": cells, "object": partial})
}

/// A built-in kind's row: its cells and the object's metadata.
fn builtin_row(p: &Printer, obj: &Value) -> Value {
    let mut partial = json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1"});
    partial["metadata"] = obj.get("metadata").cloned().unwrap_or_else(|| json!({}));
    json!({"cells": p.cells(obj, &age), "object": partial})
}

/// The printer of a built-in target (CRD-defined kinds print their additionalPrinterColumns).
fn builtin_printer(t: &Target) -> Option<Printer> {
    (!t.rt.custom)
        .then(|| printers::for_kind(&t.rt.group, &t.rt.kind))
        .flatten()
}

/// Table for a list response.
pub fn list_table(t: &Target, list: &Value) -> Value {
    let items = list
        .get("items")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut md = json!({"resourceVersion": list.pointer("/metadata/resourceVersion").cloned().unwrap_or(Value::Null)});
    if let Some(c) = list
        .pointer("/metadata/continue")
        .filter(|c| c.as_str() != Some(""))
    {
        md["continue"] = c.clone();
    }
    if let Some(n) = list.pointer("/metadata/remainingItemCount") {
        md["remainingItemCount"] = n.clone();
    }
    if let Some(p) = builtin_printer(t) {
        let rows: Vec<Value> = items.iter().map(|o| builtin_row(&p, o)).collect();
        return json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": md, "columnDefinitions": p.definitions(), "rows": rows});
    }
    let cols = columns(t);
    let rows: Vec<Value> = items.iter().map(|o| row(o, &cols)).collect();
    json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": md, "columnDefinitions": definitions(&cols), "rows": rows})
}

/// Table for one object (GET or a watch event).
pub fn object_table(t: &Target, obj: &Value) -> Value {
    if let Some(p) = builtin_printer(t) {
        return json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1",
            "metadata": {"resourceVersion": meta::resource_version(obj)},
            "columnDefinitions": p.definitions(), "rows": [builtin_row(&p, obj)]});
    }
    let cols = columns(t);
    json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1",
           "metadata": {"resourceVersion": meta::resource_version(obj)},
           "columnDefinitions": definitions(&cols), "rows": [row(obj, &cols)]})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_durations_like_kubectl() {
        assert_eq!(human_duration(5), "5s");
        assert_eq!(human_duration(150), "2m30s");
        assert_eq!(human_duration(600), "10m");
        assert_eq!(human_duration(3 * 3600 + 60), "3h1m");
        assert_eq!(human_duration(50 * 3600), "2d2h");
    }

    #[test]
    fn printer_column_jsonpath() {
        let col = PrinterColumn {
            name: "Size".into(),
            type_: "string".into(),
            json_path: ".spec.size".into(),
            format: String::new(),
            description: String::new(),
            priority: 0,
        };
        assert_eq!(
            column_value(&json!({"spec": {"size": "small"}}), &col),
            json!("small")
        );
        let ready = PrinterColumn {
            json_path: ".status.conditions[?(@.type==\"Ready\")].status".into(),
            ..col
        };
        assert_eq!(
            column_value(
                &json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}}),
                &ready
            ),
            json!("True")
        );
        assert!(wants_table(
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
        ));
    }
}

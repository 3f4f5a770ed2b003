//! OpenAPI v3 (docs/embedded-apiserver.md M2): a root index with one entry per served group version,
//! and per-GV documents with a PATCH operation per resource (no strategic-merge content type) and
//! the kinds' schemas (built-ins: `builtin.rs`); `/openapi/v2` from the same registry (`v2.rs`,
//! S9).

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use serde_json::{Map, Value, json};

use super::registry::{Registry, ResourceType};

mod builtin;
mod crd;
mod merge_types;
mod structural_v2;
pub(crate) use builtin::schema as builtin_schema;
pub(crate) use merge_types::resolve as resolve_ref;
mod v2;
pub mod v2_proto;

pub use v2::document as v2_document;
pub use v2_proto::encode as v2_protobuf;

/// The protobuf media type of `/openapi/v2` (gnostic's `openapi.v2.Document`) as answered: the
/// dotted spelling, since Go's `mime.ParseMediaType` (client-go reading the response) refuses
/// the `@` of the one clients ask for.
pub const V2_PROTOBUF: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
/// The spelling client-go's `OpenAPISchema()` sends in `Accept`, accepted as well.
const V2_PROTOBUF_AT: &str = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";

/// The encodings of `/openapi/v2`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum V2Format {
    Json,
    Protobuf,
}

/// kube-openapi's negotiation for `/openapi/v2`: the media ranges of `Accept` by descending
/// quality (a missing header is `*/*`); the first that matches JSON or the protobuf document
/// decides, JSON first for wildcards; nothing acceptable is `None` (406).
pub fn v2_format(accept: &str) -> Option<V2Format> {
    let accept = if accept.trim().is_empty() {
        "*/*"
    } else {
        accept
    };
    let mut ranges: Vec<(f32, &str)> = accept
        .split(',')
        .map(|r| {
            let mut parts = r.split(';');
            let media = parts.next().unwrap_or_default().trim();
            let q = parts
                .filter_map(|p| p.trim().strip_prefix("q="))
                .find_map(|q| q.parse::<f32>().ok())
                .unwrap_or(1.0);
            (q, media)
        })
        .filter(|(q, _)| *q > 0.0)
        .collect();
    ranges.sort_by(|a, b| b.0.total_cmp(&a.0));
    let offered = [
        ("application/json", V2Format::Json),
        (V2_PROTOBUF, V2Format::Protobuf),
        (V2_PROTOBUF_AT, V2Format::Protobuf),
    ];
    for (_, media) in ranges {
        let (ty, sub) = media.split_once('/').unwrap_or((media, ""));
        for (offer, format) in offered {
            let (oty, osub) = offer.split_once('/').unwrap_or_default();
            if (ty == oty || ty == "*") && (sub == osub || sub == "*") {
                return Some(format);
            }
        }
    }
    None
}

fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

fn gv_hash(reg: &Registry, group: &str, version: &str, generation: u64) -> String {
    let mut h = DefaultHasher::new();
    (group, version, generation).hash(&mut h);
    for t in reg.in_group_version(group, version) {
        t.resource.hash(&mut h);
        if let Some(v) = t.version(version) {
            v.schema.as_ref().map(|s| s.to_string()).hash(&mut h);
        }
    }
    format!("{:016X}{:016X}", h.finish(), generation)
}

/// `GET /openapi/v3`.
pub fn root(reg: &Registry, generation: u64) -> Value {
    let mut paths = Map::new();
    let mut gvs: Vec<(String, String)> = reg
        .all()
        .flat_map(|t| t.versions.iter().map(|v| (t.group.clone(), v.name.clone())))
        .collect();
    gvs.sort();
    gvs.dedup();
    for (g, v) in gvs {
        let p = gv_path(&g, &v);
        paths.insert(
            p.clone(),
            json!({"serverRelativeURL": format!("/openapi/v3/{p}?hash={}", gv_hash(reg, &g, &v, generation))}),
        );
    }
    json!({"paths": paths})
}

fn schema_name(t: &ResourceType, version: &str) -> String {
    if t.custom {
        let rev: Vec<&str> = t.group.split('.').rev().collect();
        format!("{}.{version}.{}", rev.join("."), t.kind)
    } else if t.group.is_empty() {
        format!("io.k8s.api.core.{version}.{}", t.kind)
    } else {
        let short = t.group.split('.').next().unwrap_or_default();
        format!("io.k8s.api.{short}.{version}.{}", t.kind)
    }
}

/// `GET /openapi/v3/<gv path>`.
pub fn group_version(reg: &Registry, gv: &str) -> Option<Value> {
    let segs: Vec<&str> = gv.split('/').collect();
    let (group, version) = match segs.as_slice() {
        ["api", v] => (String::new(), v.to_string()),
        ["apis", g, v] => (g.to_string(), v.to_string()),
        _ => return None,
    };
    let types = reg.in_group_version(&group, &version);
    if types.is_empty() {
        return None;
    }
    let mut paths = Map::new();
    let mut schemas = Map::new();
    let mut custom = false;
    let prefix = format!("/{}", gv_path(&group, &version));
    for t in types {
        let gvk = json!([{"group": t.group, "version": version, "kind": t.kind}]);
        let builtin = (!t.custom)
            .then(|| builtin::schema(&t.group, &version, &t.kind))
            .flatten();
        let name = match builtin {
            Some(b) => {
                for n in b.names {
                    if let Some(d) = b.definitions.get(n) {
                        schemas.entry(n.clone()).or_insert_with(|| d.clone());
                    }
                }
                b.name.to_string()
            }
            None => schema_name(t, &version),
        };
        let schema = match builtin {
            Some(b) => {
                let mut s = b.definitions.get(b.name).cloned().unwrap_or_default();
                s["x-kubernetes-group-version-kind"] = gvk.clone();
                s
            }
            None if t.custom => {
                schemas.insert(
                    format!("{name}List"),
                    crd::list_definition(t, &version, &name, crd::Doc::V3),
                );
                custom = true;
                crd::kind_definition(t, &version, crd::Doc::V3)
            }
            None => {
                let mut s = json!({"type": "object"});
                s["x-kubernetes-group-version-kind"] = gvk.clone();
                s
            }
        };
        schemas.insert(name.clone(), schema);
        let reference = json!({"$ref": format!("#/components/schemas/{name}")});
        let body = json!({"content": {
            "application/json-patch+json": {"schema": reference},
            "application/merge-patch+json": {"schema": reference},
            "application/apply-patch+yaml": {"schema": reference},
        }});
        let params = json!([
            {"name": "dryRun", "in": "query", "schema": {"type": "string", "uniqueItems": true}},
            {"name": "fieldManager", "in": "query", "schema": {"type": "string", "uniqueItems": true}},
            {"name": "fieldValidation", "in": "query", "schema": {"type": "string", "uniqueItems": true}},
            {"name": "force", "in": "query", "schema": {"type": "boolean", "uniqueItems": true}}
        ]);
        let item = if t.namespaced {
            format!("{prefix}/namespaces/{{namespace}}/{}/{{name}}", t.resource)
        } else {
            format!("{prefix}/{}/{{name}}", t.resource)
        };
        let ok = json!({"200": {"description": "OK", "content": {"application/json": {"schema": reference}}}});
        let mut ops = json!({
            "get": {"operationId": format!("read{}", t.kind), "x-kubernetes-action": "get", "x-kubernetes-group-version-kind": gvk[0], "responses": ok},
        });
        if t.is_crud() {
            ops["patch"] = json!({"operationId": format!("patch{}", t.kind), "x-kubernetes-action": "patch",
                "x-kubernetes-group-version-kind": gvk[0], "parameters": params, "requestBody": body, "responses": ok});
            ops["put"] = json!({"operationId": format!("replace{}", t.kind), "x-kubernetes-action": "put",
                "x-kubernetes-group-version-kind": gvk[0], "parameters": params,
                "requestBody": {"content": {"application/json": {"schema": reference}}}, "responses": ok});
        }
        paths.insert(item, ops);
        let collection = if t.namespaced {
            format!("{prefix}/namespaces/{{namespace}}/{}", t.resource)
        } else {
            format!("{prefix}/{}", t.resource)
        };
        paths.insert(collection, json!({"post": {"operationId": format!("create{}", t.kind), "x-kubernetes-action": "post",
            "x-kubernetes-group-version-kind": gvk[0], "parameters": params,
            "requestBody": {"content": {"application/json": {"schema": reference}}}, "responses": ok}}));
    }
    // A CRD group's document is apiextensions' (its builder's title and version), with the
    // metadata definitions its schemas reference.
    let info = if custom {
        for (n, d) in builtin::closure(&[crd::OBJECT_META, crd::LIST_META]) {
            schemas.entry(n).or_insert(d);
        }
        json!({"title": "Kubernetes CRD Swagger", "version": "v0.1.0"})
    } else {
        json!({"title": "Kubernetes", "version": "v1.33.0"})
    };
    Some(json!({
        "openapi": "3.0.0",
        "info": info,
        "paths": paths,
        "components": {"schemas": schemas},
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_lists_core_and_groups() {
        let r = Registry::with_builtins();
        let root = root(&r, 1);
        assert!(
            root["paths"]["api/v1"]["serverRelativeURL"]
                .as_str()
                .unwrap()
                .starts_with("/openapi/v3/api/v1?hash=")
        );
        assert!(root["paths"].get("apis/apiextensions.k8s.io/v1").is_some());
        let doc = group_version(&r, "api/v1").unwrap();
        let p = &doc["paths"]["/api/v1/namespaces/{name}"]["patch"];
        assert!(
            p["requestBody"]["content"]
                .get("application/strategic-merge-patch+json")
                .is_none()
        );
        assert!(
            p["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .any(|x| x["name"] == "fieldValidation")
        );
        assert!(group_version(&r, "apis/nope/v1").is_none());
    }
}

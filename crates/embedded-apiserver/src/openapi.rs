//! Minimal OpenAPI v3 (docs/embedded-apiserver.md M2): a root index with one entry per served group version,
//! and per-GV documents with a PATCH operation per resource (no strategic-merge content type).

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use serde_json::{Map, Value, json};

use super::registry::{Registry, ResourceType};

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
    let prefix = format!("/{}", gv_path(&group, &version));
    for t in types {
        let gvk = json!([{"group": t.group, "version": version, "kind": t.kind}]);
        let name = schema_name(t, &version);
        let mut schema = t
            .version(&version)
            .and_then(|v| v.schema.clone())
            .unwrap_or_else(|| json!({"type": "object"}));
        schema["x-kubernetes-group-version-kind"] = gvk.clone();
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
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.33.0"},
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

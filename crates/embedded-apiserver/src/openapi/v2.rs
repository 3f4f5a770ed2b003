//! `GET /openapi/v2` (docs/embedded-apiserver.md L3): the Swagger 2.0 document kube-apiserver
//! aggregates, from the same registry as the v3 documents: one definition per served kind and
//! version carrying `x-kubernetes-group-version-kind` (a custom resource's schema converted as
//! apiextensions-apiserver publishes it in v2, with `apiVersion`, `kind` and `metadata` added;
//! its `<Kind>List`), and per resource the get/put/patch/post operations with their GVK, the
//! `fieldValidation` parameter (kubectl ≤ 1.28 reads it here to choose server-side validation)
//! and the JSON, merge and apply patch types (never strategic merge, §1 finding 3).

use serde_json::{Map, Value, json};

use super::{gv_path, schema_name};
use crate::registry::{Registry, ResourceType};

const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";

fn definition_ref(name: &str) -> Value {
    json!({"$ref": format!("#/definitions/{name}")})
}

fn query_param(name: &str, ty: &str) -> Value {
    json!({"uniqueItems": true, "type": ty, "name": name, "in": "query"})
}

fn path_param(name: &str) -> Value {
    json!({"uniqueItems": true, "type": "string", "name": name, "in": "path", "required": true})
}

fn body_param(schema: Value) -> Value {
    json!({"name": "body", "in": "body", "required": true, "schema": schema})
}

/// The definitions and paths one resource type contributes at `version`.
fn add_type(
    t: &ResourceType,
    version: &str,
    definitions: &mut Map<String, Value>,
    paths: &mut Map<String, Value>,
) {
    let gvk = json!({"group": t.group, "version": version, "kind": t.kind});
    let name = schema_name(t, version);
    if t.custom {
        definitions.insert(
            name.clone(),
            super::crd::kind_definition(t, version, super::crd::Doc::V2),
        );
        definitions.insert(
            format!("{name}List"),
            super::crd::list_definition(t, version, &name, super::crd::Doc::V2),
        );
    } else {
        let mut def = json!({"type": "object"});
        def["x-kubernetes-group-version-kind"] = json!([gvk]);
        definitions.insert(name.clone(), def);
    }
    let reference = definition_ref(&name);
    let ok = json!({"200": {"description": "OK", "schema": reference}, "401": {"description": "Unauthorized"}});
    let created = json!({"200": {"description": "OK", "schema": reference}, "201": {"description": "Created", "schema": reference}, "401": {"description": "Unauthorized"}});
    let prefix = format!("/{}", gv_path(&t.group, version));
    let (collection, mut scope_params) = if t.namespaced {
        (
            format!("{prefix}/namespaces/{{namespace}}/{}", t.resource),
            vec![path_param("namespace")],
        )
    } else {
        (format!("{prefix}/{}", t.resource), Vec::new())
    };
    scope_params.push(query_param("pretty", "string"));
    let op = |action: &str, id: String, params: Vec<Value>, responses: &Value| {
        let mut o = json!({
            "operationId": id,
            "consumes": ["*/*"],
            "produces": ["application/json"],
            "schemes": ["https"],
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": gvk,
            "responses": responses,
        });
        if !params.is_empty() {
            o["parameters"] = Value::Array(params);
        }
        o
    };
    let write_params = |body: Value| {
        vec![
            body_param(body),
            query_param("dryRun", "string"),
            query_param("fieldManager", "string"),
            query_param("fieldValidation", "string"),
        ]
    };
    let kind = &t.kind;
    let scope = if t.namespaced { "Namespaced" } else { "" };
    let mut item_ops = json!({
        "get": op("get", format!("read{scope}{kind}"), Vec::new(), &ok),
    });
    if t.is_crud() {
        item_ops["put"] = op(
            "put",
            format!("replace{scope}{kind}"),
            write_params(reference.clone()),
            &created,
        );
        let mut patch_params = write_params(json!({"type": "object"}));
        patch_params.push(query_param("force", "boolean"));
        let mut patch = op(
            "patch",
            format!("patch{scope}{kind}"),
            patch_params,
            &created,
        );
        patch["consumes"] = json!([
            "application/json-patch+json",
            "application/merge-patch+json",
            "application/apply-patch+yaml"
        ]);
        item_ops["patch"] = patch;
        let mut post = op(
            "post",
            format!("create{scope}{kind}"),
            write_params(reference.clone()),
            &created,
        );
        post["responses"]["202"] = json!({"description": "Accepted", "schema": reference});
        paths.insert(
            collection.clone(),
            json!({"post": post, "parameters": scope_params.clone()}),
        );
    }
    let mut item_params = vec![path_param("name")];
    item_params.extend(scope_params);
    item_ops["parameters"] = Value::Array(item_params);
    paths.insert(format!("{collection}/{{name}}"), item_ops);
}

/// `GET /openapi/v2` as JSON.
pub fn document(reg: &Registry) -> Value {
    let mut definitions = Map::new();
    let mut paths = Map::new();
    for t in reg.all() {
        for v in &t.versions {
            add_type(t, &v.name, &mut definitions, &mut paths);
        }
    }
    definitions.insert(OBJECT_META.into(), json!({"description": "ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.", "type": "object"}));
    definitions.insert(LIST_META.into(), json!({"description": "ListMeta describes metadata that synthetic resources must have, including lists and various status objects.", "type": "object"}));
    json!({
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": "v1.33.0"},
        "paths": paths,
        "definitions": definitions,
        "securityDefinitions": {"BearerToken": {"description": "Bearer Token authentication", "type": "apiKey", "name": "authorization", "in": "header"}},
        "security": [{"BearerToken": []}],
    })
}

//! Differences the differential test (the workspace's `tests/real_cluster/differential.rs`) measured between
//! this server and kube-apiserver v1.36, each one fixed: one test per difference, asserting
//! kube's answer as it was measured.

use axum::http::Method;
use serde_json::{Value, json};

use super::common::*;

#[path = "measured/deletion.rs"]
mod deletion;
#[path = "measured/discovery.rs"]
mod discovery;
#[path = "measured/reads.rs"]
mod reads;
#[path = "measured/stored.rs"]
mod stored;
#[path = "measured/writes.rs"]
mod writes;

fn resource<'a>(list: &'a Value, name: &str) -> &'a Value {
    list["resources"]
        .as_array()
        .and_then(|rs| rs.iter().find(|r| r["name"] == name))
        .unwrap_or_else(|| panic!("no {name} in {list}"))
}

fn widget_body(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name}, "spec": spec})
}

const CM: &str = "/api/v1/namespaces/default/configmaps";
const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";
const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

fn deployment(name: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})
}

fn two_version_crd() -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": [
                {"name": "v1alpha1", "served": true, "storage": false, "deprecated": true,
                 "deprecationWarning": "example.com/v1alpha1 Gadget is going away",
                 "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object",
                    "properties": {"color": {"type": "string", "default": "blue"}}}}}}},
                {"name": "v1", "served": true, "storage": true,
                 "selectableFields": [{"jsonPath": ".spec.size"}],
                 "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object",
                    "properties": {"size": {"type": "string"}, "replicas": {"type": "integer", "default": 1}}}}}}}]}})
}

//! Discovery documents (docs/embedded-apiserver.md M1, S1): `/version`, `/api`, `/apis`, `/apis/<g>`,
//! `/api/v1`, `/apis/<g>/<v>` and the aggregated v2 `APIGroupDiscoveryList`.

use serde_json::{Value, json};

use super::registry::{Registry, ResourceType};

/// Content-Type that marks an aggregated discovery answer.
pub const AGGREGATED_V2: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

pub fn version() -> Value {
    json!({
        "major": "1",
        "minor": "33",
        "gitVersion": "v1.33.0",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z",
        "goVersion": "go1.24.0",
        "compiler": "gc",
        "platform": "linux/amd64",
        "emulator": "capi-conformance"
    })
}

/// `GET /api`: `server_address` is the `host:port` the request came in on (kube's advertise
/// address and secure port; `127.0.0.1:0` for in-process requests, which have none).
pub fn api_versions(server_address: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}]
    })
}

/// kube's `discovery.StorageVersionHash`: the first 8 bytes of the SHA-256 of
/// `group/version/kind` at the version objects are stored in, base64.
pub fn storage_version_hash(group: &str, version: &str, kind: &str) -> String {
    use base64::Engine as _;
    let digest = ring::digest::digest(
        &ring::digest::SHA256,
        format!("{group}/{version}/{kind}").as_bytes(),
    );
    base64::engine::general_purpose::STANDARD.encode(&digest.as_ref()[..8])
}

/// The storage version hash of a persisted resource; None for those kube does not persist
/// (the reviews, answered and forgotten).
fn type_storage_hash(t: &ResourceType) -> Option<String> {
    if !t.is_crud() {
        return None;
    }
    // Where kube-apiserver keeps them: CustomResourceDefinitions still as v1beta1, the events
    // of events.k8s.io as core Events.
    let (group, version, kind) = match (t.group.as_str(), t.resource.as_str()) {
        ("apiextensions.k8s.io", "customresourcedefinitions") => (
            "apiextensions.k8s.io",
            "v1beta1".to_string(),
            t.kind.as_str(),
        ),
        ("events.k8s.io", "events") => ("", "v1".to_string(), "Event"),
        _ => (
            t.group.as_str(),
            t.storage_version()
                .map(|v| v.name.clone())
                .unwrap_or_default(),
            t.kind.as_str(),
        ),
    };
    Some(storage_version_hash(group, &version, kind))
}

fn group_doc(reg: &Registry, group: &str) -> Value {
    let versions: Vec<Value> = reg
        .group_versions(group)
        .iter()
        .map(|v| json!({"groupVersion": format!("{group}/{v}"), "version": v}))
        .collect();
    let preferred = versions.first().cloned().unwrap_or(Value::Null);
    json!({"name": group, "versions": versions, "preferredVersion": preferred})
}

/// The non-resource paths every server answers (besides discovery), as kube-apiserver's `/`
/// index lists them: health checks with their `ping` check, metrics, OpenAPI, the version.
const FIXED_ROOT_PATHS: &[&str] = &[
    "/healthz",
    "/healthz/ping",
    "/livez",
    "/livez/ping",
    "/metrics",
    "/openapi/v2",
    "/openapi/v3",
    "/openapi/v3/",
    "/readyz",
    "/readyz/ping",
    "/version",
];

/// `GET /` (and `/index.html`): `RootPaths`, every path the server serves at its root, sorted
/// and without duplicates as kube-apiserver's index handler (`routes.IndexLister`) lists them:
/// the discovery paths of every served group and group version (custom resources' included) and
/// the fixed non-resource paths. The service-account issuer discovery paths are absent: this
/// server issues opaque tokens, not JWTs (docs/embedded-apiserver.md S9).
pub fn root_paths(reg: &Registry) -> Value {
    let mut paths: Vec<String> = FIXED_ROOT_PATHS.iter().map(|p| p.to_string()).collect();
    paths.extend(["/api".into(), "/apis".into(), "/apis/".into()]);
    for v in reg.group_versions("") {
        paths.push(format!("/api/{v}"));
    }
    for g in reg.groups() {
        paths.push(format!("/apis/{g}"));
        for v in reg.group_versions(&g) {
            paths.push(format!("/apis/{g}/{v}"));
        }
    }
    paths.sort();
    paths.dedup();
    json!({"paths": paths})
}

pub fn api_group_list(reg: &Registry) -> Value {
    let groups: Vec<Value> = reg.groups().iter().map(|g| group_doc(reg, g)).collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

pub fn api_group(reg: &Registry, group: &str) -> Option<Value> {
    if reg.group_versions(group).is_empty() {
        return None;
    }
    let mut doc = group_doc(reg, group);
    doc["kind"] = json!("APIGroup");
    doc["apiVersion"] = json!("v1");
    Some(doc)
}

/// ServiceAccounts, whose `token` subresource (TokenRequest) the server answers.
fn is_service_accounts(t: &ResourceType) -> bool {
    t.group.is_empty() && t.resource == "serviceaccounts"
}

fn resource_entries(t: &ResourceType, version: &str) -> Vec<Value> {
    let mut main = json!({
        "name": t.resource,
        "singularName": t.singular,
        "namespaced": t.namespaced,
        "kind": t.kind,
        "verbs": t.verbs,
    });
    if !t.short_names.is_empty() {
        main["shortNames"] = json!(t.short_names);
    }
    if !t.categories.is_empty() {
        main["categories"] = json!(t.categories);
    }
    if let Some(h) = type_storage_hash(t) {
        main["storageVersionHash"] = json!(h);
    }
    let mut out = vec![main];
    if let Some(v) = t.version(version) {
        let mut subs = Vec::new();
        if v.status {
            subs.push(json!({
                "name": format!("{}/status", t.resource),
                "singularName": "",
                "namespaced": t.namespaced,
                "kind": t.kind,
                "verbs": ["get", "patch", "update"],
            }));
        }
        if v.scale.is_some() {
            subs.push(json!({
                "name": format!("{}/scale", t.resource),
                "singularName": "",
                "namespaced": t.namespaced,
                "group": "autoscaling",
                "version": "v1",
                "kind": "Scale",
                "verbs": ["get", "patch", "update"],
            }));
        }
        // Built-ins list their subresources by name (scale before status); CRDs status first.
        if !t.custom {
            subs.reverse();
        }
        out.extend(subs);
        if is_service_accounts(t) {
            out.push(json!({
                "name": "serviceaccounts/token",
                "singularName": "",
                "namespaced": true,
                "group": "authentication.k8s.io",
                "version": "v1",
                "kind": "TokenRequest",
                "verbs": ["create"],
            }));
        }
    }
    out
}

/// `APIResourceList` for a group version, or `None` when nothing is served there.
pub fn resource_list(reg: &Registry, group: &str, version: &str) -> Option<Value> {
    let types = reg.in_group_version(group, version);
    if types.is_empty() {
        return None;
    }
    let resources: Vec<Value> = types
        .iter()
        .flat_map(|t| resource_entries(t, version))
        .collect();
    // The core group's list has no apiVersion (kube writes it without one).
    Some(if group.is_empty() {
        json!({"kind": "APIResourceList", "groupVersion": version, "resources": resources})
    } else {
        json!({"kind": "APIResourceList", "apiVersion": "v1",
            "groupVersion": format!("{group}/{version}"), "resources": resources})
    })
}

fn aggregated_group(reg: &Registry, group: &str) -> Value {
    // A built-in kind's responseKind names neither group nor version (kube's built-in handlers
    // leave them empty when the kind is the resource's own); a custom resource's names both.
    let response_kind = |t: &ResourceType, v: &str| {
        if t.custom {
            json!({"group": t.group, "version": v, "kind": t.kind})
        } else {
            json!({"group": "", "version": "", "kind": t.kind})
        }
    };
    let versions: Vec<Value> = reg
        .group_versions(group)
        .iter()
        .map(|v| {
            let resources: Vec<Value> = reg
                .in_group_version(group, v)
                .iter()
                .map(|t| {
                    let mut r = json!({
                        "resource": t.resource,
                        "responseKind": response_kind(t, v),
                        "scope": if t.namespaced { "Namespaced" } else { "Cluster" },
                        "singularResource": t.singular,
                        "verbs": t.verbs,
                    });
                    if !t.short_names.is_empty() {
                        r["shortNames"] = json!(t.short_names);
                    }
                    if !t.categories.is_empty() {
                        r["categories"] = json!(t.categories);
                    }
                    let mut subs = Vec::new();
                    if let Some(vd) = t.version(v) {
                        if vd.status {
                            subs.push(json!({"subresource": "status", "responseKind": response_kind(t, v), "verbs": ["get", "patch", "update"]}));
                        }
                        if vd.scale.is_some() {
                            subs.push(json!({"subresource": "scale", "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"}, "verbs": ["get", "patch", "update"]}));
                        }
                    }
                    if !t.custom {
                        subs.reverse();
                    }
                    if is_service_accounts(t) {
                        subs.push(json!({"subresource": "token", "responseKind": {"group": "authentication.k8s.io", "version": "v1", "kind": "TokenRequest"}, "verbs": ["create"]}));
                    }
                    if !subs.is_empty() {
                        r["subresources"] = Value::Array(subs);
                    }
                    r
                })
                .collect();
            json!({"version": v, "resources": resources, "freshness": "Current"})
        })
        .collect();
    let metadata = if group.is_empty() {
        json!({})
    } else {
        json!({"name": group})
    };
    json!({"metadata": metadata, "versions": versions})
}

/// Aggregated discovery for `/api` (core only) or `/apis` (named groups).
pub fn aggregated(reg: &Registry, core: bool) -> Value {
    let items: Vec<Value> = if core {
        vec![aggregated_group(reg, "")]
    } else {
        reg.groups()
            .iter()
            .map(|g| aggregated_group(reg, g))
            .collect()
    };
    json!({"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": items})
}

/// Whether the Accept header asks for aggregated discovery v2 (v2beta1-only clients get legacy).
pub fn wants_aggregated_v2(accept: &str) -> bool {
    accept.split(',').any(|part| {
        let p: Vec<&str> = part.split(';').map(str::trim).collect();
        p.contains(&"g=apidiscovery.k8s.io")
            && p.contains(&"v=v2")
            && p.contains(&"as=APIGroupDiscoveryList")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_negotiation() {
        assert!(wants_aggregated_v2(
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
        ));
        assert!(!wants_aggregated_v2(
            "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
        ));
        assert!(!wants_aggregated_v2("application/json"));
    }

    #[test]
    fn group_list_has_preferred_versions() {
        let r = Registry::with_builtins();
        let l = api_group_list(&r);
        let ext = l["groups"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["name"] == "apiextensions.k8s.io")
            .unwrap();
        assert_eq!(ext["preferredVersion"]["version"], "v1");
        assert!(resource_list(&r, "nope.example.com", "v1").is_none());
        let core = resource_list(&r, "", "v1").unwrap();
        assert!(
            core["resources"]
                .as_array()
                .unwrap()
                .iter()
                .any(|x| x["name"] == "namespaces/status")
        );
    }
}

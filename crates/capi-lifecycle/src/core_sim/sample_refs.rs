//! A `--sample`'s references: the objects it refers to are created in the run namespace and the
//! references rewritten to them (docs/core-simulation.md).

use super::{mock_companion, sample_object};
use crate::Subject;
use crate::env::{Env, EnvError};
use crate::scope::Scopes;
use capi_contract::contract::Contract;
use serde_json::{Value, json};

/// An object a sample refers to, to create before the scenario (see
/// [`Env::resolve_sample_references`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Referenced {
    /// `<group>/<version>` and kind of the object.
    pub api_version: String,
    pub kind: String,
    /// The object to create (`metadata.name` already the run's name).
    pub object: Value,
}

/// The group of a reference: v1beta2 `apiGroup`, or the group of a v1beta1 `apiVersion`.
fn reference_group(r: &serde_json::Map<String, Value>) -> Option<String> {
    if let Some(g) = r.get("apiGroup").and_then(Value::as_str) {
        return Some(g.to_string());
    }
    let av = r.get("apiVersion").and_then(Value::as_str)?;
    Some(av.split_once('/').map_or("", |(g, _)| g).to_string())
}

/// The object references in a sample's `spec` (any mapping with `kind`, `name` and `apiGroup`
/// or `apiVersion`, e.g. a control plane's `machineTemplate.infrastructureRef`) that resolve:
/// to a `--sample` document of that group, kind and name, or to the mock's default object of a
/// mock kind. Returns the sample with those references renamed to `<prefix>-<name>` (and a
/// v1beta1 `namespace` set to the run's; a cluster-scoped kind's name tagged for the side,
/// [`Scopes::name`]), and the objects to create.
pub fn plan_sample_references(
    sample: &Value,
    documents: &[Value],
    contract: Contract,
    prefix: &str,
    (namespace, scopes): (&str, &Scopes),
) -> (Value, Vec<Referenced>) {
    let mut sample = sample.clone();
    let mut out: Vec<Referenced> = Vec::new();
    if let Some(spec) = sample.get_mut("spec") {
        walk_references(spec, &mut |r| {
            let (Some(group), Some(kind), Some(name)) = (
                reference_group(r),
                r.get("kind").and_then(Value::as_str).map(str::to_string),
                r.get("name").and_then(Value::as_str).map(str::to_string),
            ) else {
                return;
            };
            let new_name = scopes.name(&group, &kind, &truncate_name(&format!("{prefix}-{name}")));
            let from_docs = documents.iter().find(|d| {
                let av = d
                    .get("apiVersion")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                av.split_once('/').map(|(g, _)| g) == Some(group.as_str())
                    && d.get("kind").and_then(Value::as_str) == Some(kind.as_str())
                    && d.pointer("/metadata/name").and_then(Value::as_str) == Some(name.as_str())
            });
            let found = match from_docs {
                Some(d) => {
                    let mut obj = sample_object(d, &new_name);
                    if let Some(extra) = d.as_object() {
                        // Kinds without `spec` (ConfigMaps, Secrets) keep their top-level data.
                        for (k, v) in extra {
                            if !["apiVersion", "kind", "metadata", "spec", "status"]
                                .contains(&k.as_str())
                            {
                                obj[k] = v.clone();
                            }
                        }
                    }
                    d.get("apiVersion")
                        .and_then(Value::as_str)
                        .map(|av| (av.to_string(), obj))
                }
                None if group.ends_with(crate::baseline::MOCK_GROUP_SUFFIX) => {
                    let scoped = scopes.kind_is_cluster_scoped(&group, &kind);
                    crate::baseline::SCENARIO_ROLES
                        .iter()
                        .find(|role| {
                            crate::baseline::mock_kind_scoped(**role, scoped)
                                .is_some_and(|(g, k)| g == group && k == kind)
                        })
                        .and_then(|role| mock_companion(*role, contract, scoped).ok())
                        .map(|(res, s)| (res.api_version, sample_object(&s, &new_name)))
                }
                None => None,
            };
            let Some((api_version, object)) = found else {
                return;
            };
            r.insert("name".into(), json!(new_name));
            if r.contains_key("namespace") && !scopes.kind_is_cluster_scoped(&group, &kind) {
                r.insert("namespace".into(), json!(namespace));
            }
            if !out.iter().any(|o| {
                o.object.pointer("/metadata/name") == object.pointer("/metadata/name")
                    && o.kind == kind
            }) {
                out.push(Referenced {
                    api_version,
                    kind,
                    object,
                });
            }
        });
    }
    (sample, out)
}

/// The `(group, kind)` of every object reference in `spec` (see [`plan_sample_references`]).
pub fn referenced_kinds(spec: &Value) -> Vec<(String, String)> {
    let mut spec = spec.clone();
    let mut out: Vec<(String, String)> = Vec::new();
    walk_references(&mut spec, &mut |r| {
        if let (Some(g), Some(k)) = (reference_group(r), r.get("kind").and_then(Value::as_str)) {
            let gk = (g, k.to_string());
            if !out.contains(&gk) {
                out.push(gk);
            }
        }
    });
    out
}

/// The `(group, kind, name)` of every object reference in `spec` (see
/// [`plan_sample_references`]).
pub fn referenced_objects(spec: &Value) -> Vec<(String, String, String)> {
    let mut spec = spec.clone();
    let mut out = Vec::new();
    walk_references(&mut spec, &mut |r| {
        if let (Some(g), Some(k), Some(n)) = (
            reference_group(r),
            r.get("kind").and_then(Value::as_str),
            r.get("name").and_then(Value::as_str),
        ) {
            out.push((g, k.to_string(), n.to_string()));
        }
    });
    out
}

fn walk_references(v: &mut Value, f: &mut dyn FnMut(&mut serde_json::Map<String, Value>)) {
    match v {
        Value::Object(m) => {
            let is_ref = m.get("kind").is_some_and(Value::is_string)
                && m.get("name").is_some_and(Value::is_string)
                && (m.get("apiGroup").is_some_and(Value::is_string)
                    || m.get("apiVersion").is_some_and(Value::is_string));
            if is_ref {
                f(m);
                return;
            }
            for child in m.values_mut() {
                walk_references(child, f);
            }
        }
        Value::Array(items) => {
            for child in items {
                walk_references(child, f);
            }
        }
        _ => {}
    }
}

/// `name` cut to 63 characters (a label-safe object name), without a trailing `-` or `.`.
pub fn truncate_name(name: &str) -> String {
    let cut: String = name.chars().take(63).collect();
    cut.trim_end_matches(['-', '.']).to_string()
}

impl Env {
    /// Creates the objects `subject`'s sample refers to ([`plan_sample_references`]) in the run
    /// namespace and returns the subject with its sample's references rewritten to them
    /// (`None`: nothing to resolve).
    pub async fn resolve_sample_references(
        &self,
        subject: &Subject,
    ) -> Result<Option<Subject>, EnvError> {
        let Some(sample) = &subject.sample else {
            return Ok(None);
        };
        let contract = subject.column.contract.unwrap_or(Contract::V1Beta2);
        let prefix = format!(
            "{}-{}-ref",
            subject.resource.kind.to_lowercase(),
            contract.short()
        );
        let (rewritten, referenced) = plan_sample_references(
            sample,
            &subject.companions.sample_documents,
            contract,
            &prefix,
            (&self.namespace, &self.scopes),
        );
        if referenced.is_empty() {
            return Ok(None);
        }
        for r in referenced {
            let (group, version) = r
                .api_version
                .split_once('/')
                .unwrap_or(("", r.api_version.as_str()));
            let gvk = kube::api::GroupVersionKind::gvk(group, version, &r.kind);
            let (resource, _) = kube::discovery::pinned_kind(&self.client, &gvk)
                .await
                .map_err(|source| EnvError::Api {
                    action: "discover",
                    object: format!(
                        "{} (referenced by the {} sample)",
                        r.kind, subject.resource.kind
                    ),
                    source,
                })?;
            self.create(&resource, r.object).await?;
        }
        let mut resolved = subject.clone();
        resolved.sample = Some(rewritten);
        Ok(Some(resolved))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_samples_references_resolve_to_sample_documents_or_mock_defaults() {
        let sample = json!({"spec": {
            "machineTemplate": {"infrastructureRef": {"apiGroup": "infrastructure.mock.capi-conformance.io", "kind": "MockMachineTemplate", "name": "tmpl"}},
            "other": {"apiVersion": "infrastructure.foo.io/v1beta1", "kind": "FooTemplate", "name": "foo", "namespace": "default"},
            "unknown": {"apiGroup": "x.io", "kind": "X", "name": "x"},
            "replicas": 1,
        }});
        let docs = vec![
            json!({"apiVersion": "infrastructure.foo.io/v1beta1", "kind": "FooTemplate",
                               "metadata": {"name": "foo", "namespace": "elsewhere"}, "spec": {"template": {"spec": {"size": 2}}}}),
        ];
        let scopes = Scopes::default();
        let (rewritten, objs) = plan_sample_references(
            &sample,
            &docs,
            Contract::V1Beta1,
            "kcp-b1-ref",
            ("run-ns", &scopes),
        );
        assert_eq!(
            rewritten
                .pointer("/spec/machineTemplate/infrastructureRef/name")
                .unwrap(),
            "kcp-b1-ref-tmpl"
        );
        assert_eq!(
            rewritten.pointer("/spec/other/name").unwrap(),
            "kcp-b1-ref-foo"
        );
        assert_eq!(
            rewritten.pointer("/spec/other/namespace").unwrap(),
            "run-ns"
        );
        assert_eq!(rewritten.pointer("/spec/unknown/name").unwrap(), "x");
        assert_eq!(objs.len(), 2);
        assert_eq!(objs[0].kind, "MockMachineTemplate");
        assert_eq!(
            objs[0].api_version,
            "infrastructure.mock.capi-conformance.io/v1beta1"
        );
        assert!(objs[0].object.pointer("/spec/template/spec").is_some());
        assert_eq!(objs[1].api_version, "infrastructure.foo.io/v1beta1");
        assert_eq!(
            objs[1].object.pointer("/spec/template/spec/size").unwrap(),
            2
        );
        assert_eq!(
            objs[1].object.pointer("/metadata/name").unwrap(),
            "kcp-b1-ref-foo"
        );
        assert!(objs[1].object.pointer("/metadata/namespace").is_none());
    }
}

//! The built-in kinds' OpenAPI v3 schemas (docs/embedded-apiserver.md L3), generated from
//! k8s-openapi's `schemars` schemas (Kubernetes' own OpenAPI definitions, v1.33) rather than
//! written here: the kind's definition and every definition it references, named as kube names
//! them (`io.k8s.api.apps.v1.Deployment`, …), with `$ref`s into `#/components/schemas/`.
//!
//! Published in the v3 documents only, whose PATCH operations never list strategic merge: kubectl
//! then never computes a patch from them (§1 finding 3) and they serve `kubectl explain`. The v2
//! definitions of built-ins stay bare objects: kubectl ≤ 1.28 (and newer ones on their v2 path)
//! compute a built-in's strategic merge patch from a v2 schema that describes the kind, and these
//! schemas carry no `x-kubernetes-patch-*` merge keys.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use k8s_openapi::api::{
    admissionregistration, apps, authentication, authorization, batch, coordination, core, events,
    rbac,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions;
use schemars::JsonSchema;
use schemars::generate::{SchemaGenerator, SchemaSettings};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// One kind: its definition's name, the names of the definitions it needs (itself included),
/// and the definitions of every built-in kind, shared (a `PodSpec` is one definition for
/// Deployment, DaemonSet and Job).
#[derive(Clone, Copy)]
pub(crate) struct Builtin {
    pub name: &'static str,
    pub names: &'static [String],
    pub definitions: &'static Map<String, Value>,
}

/// A kind as generated: its definition's name and the names of the definitions it needs.
struct Generated {
    name: String,
    names: Vec<String>,
}

/// The definitions k8s-openapi's schemars schemas give kind `T`, with apiextensions' `JSON`
/// (a CRD schema's `default`, `example`, `enum` values: any JSON value) published without a
/// type, as kube publishes it (the schemars schema says `object`).
fn definitions_of<T: JsonSchema>() -> Map<String, Value> {
    let mut generator: SchemaGenerator = SchemaSettings::openapi3().into_generator();
    generator.subschema_for::<T>();
    let mut definitions = generator.take_definitions(true);
    if let Some(json) = definitions
        .get_mut("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON")
        .and_then(Value::as_object_mut)
    {
        json.remove("type");
    }
    definitions
}

/// The kind's definitions, with each list's and map's merge type as kube publishes it
/// (`merge_types.rs`: observed from the type's `DeepMerge`, read from the table that
/// observation wrote), added to `shared`. With `probed`, the kind is observed again and what
/// `DeepMerge` says is added there (the table's test).
fn generate<T>(
    shared: &mut Map<String, Value>,
    probed: Option<&mut Vec<(String, String, super::merge_types::MergeType)>>,
) -> Generated
where
    T: JsonSchema + k8s_openapi::Resource + k8s_openapi::DeepMerge + DeserializeOwned + Serialize,
{
    let name = T::schema_name().into_owned();
    let mut definitions = definitions_of::<T>();
    if let Some(out) = probed {
        out.extend(super::merge_types::probe::<T>(
            &definitions,
            &name,
            T::API_VERSION,
            T::KIND,
        ));
    }
    super::merge_types::annotate(&mut definitions, super::merge_types::table());
    let names = definitions.keys().cloned().collect();
    for (n, d) in definitions {
        match shared.get_mut(&n) {
            // The same type reached from another kind: keep what either probe found (a
            // definition only reached below an atomic list is not probed).
            Some(existing) => merge_annotations(existing, &d),
            None => {
                shared.insert(n, d);
            }
        }
    }
    Generated { name, names }
}

/// Copies the merge-type extensions and key defaults `from` has on its properties and `into`
/// lacks.
fn merge_annotations(into: &mut Value, from: &Value) {
    let (Some(into), Some(from)) = (
        into.get_mut("properties").and_then(Value::as_object_mut),
        from.get("properties").and_then(Value::as_object),
    ) else {
        return;
    };
    for (prop, f) in from {
        let (Some(i), Some(f)) = (
            into.get_mut(prop).and_then(Value::as_object_mut),
            f.as_object(),
        ) else {
            continue;
        };
        for (k, v) in f {
            if k.starts_with("x-kubernetes-") || k == "default" {
                i.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
    }
}

type Key = (&'static str, &'static str, &'static str);

struct All {
    definitions: Map<String, Value>,
    kinds: BTreeMap<Key, Generated>,
}

fn all(mut probed: Option<&mut Vec<(String, String, super::merge_types::MergeType)>>) -> All {
    let mut shared = Map::new();
    let mut m: BTreeMap<Key, Generated> = BTreeMap::new();
    let mut add = |k: Key, g: Generated| {
        m.insert(k, g);
    };
    add(
        ("", "v1", "Namespace"),
        generate::<core::v1::Namespace>(&mut shared, probed.as_deref_mut()),
    );
    add(
        ("", "v1", "Secret"),
        generate::<core::v1::Secret>(&mut shared, probed.as_deref_mut()),
    );
    add(
        ("", "v1", "ConfigMap"),
        generate::<core::v1::ConfigMap>(&mut shared, probed.as_deref_mut()),
    );
    add(
        ("", "v1", "ServiceAccount"),
        generate::<core::v1::ServiceAccount>(&mut shared, probed.as_deref_mut()),
    );
    add(
        ("", "v1", "Event"),
        generate::<core::v1::Event>(&mut shared, probed.as_deref_mut()),
    );
    add(
        ("", "v1", "Service"),
        generate::<core::v1::Service>(&mut shared, probed.as_deref_mut()),
    );
    let rbac_g = "rbac.authorization.k8s.io";
    add(
        (rbac_g, "v1", "Role"),
        generate::<rbac::v1::Role>(&mut shared, probed.as_deref_mut()),
    );
    add(
        (rbac_g, "v1", "ClusterRole"),
        generate::<rbac::v1::ClusterRole>(&mut shared, probed.as_deref_mut()),
    );
    add(
        (rbac_g, "v1", "RoleBinding"),
        generate::<rbac::v1::RoleBinding>(&mut shared, probed.as_deref_mut()),
    );
    add(
        (rbac_g, "v1", "ClusterRoleBinding"),
        generate::<rbac::v1::ClusterRoleBinding>(&mut shared, probed.as_deref_mut()),
    );
    add(
        ("events.k8s.io", "v1", "Event"),
        generate::<events::v1::Event>(&mut shared, probed.as_deref_mut()),
    );
    add(
        ("apps", "v1", "Deployment"),
        generate::<apps::v1::Deployment>(&mut shared, probed.as_deref_mut()),
    );
    add(
        ("apps", "v1", "DaemonSet"),
        generate::<apps::v1::DaemonSet>(&mut shared, probed.as_deref_mut()),
    );
    let adm = "admissionregistration.k8s.io";
    add(
        (adm, "v1", "MutatingWebhookConfiguration"),
        generate::<admissionregistration::v1::MutatingWebhookConfiguration>(
            &mut shared,
            probed.as_deref_mut(),
        ),
    );
    add(
        (adm, "v1", "ValidatingWebhookConfiguration"),
        generate::<admissionregistration::v1::ValidatingWebhookConfiguration>(
            &mut shared,
            probed.as_deref_mut(),
        ),
    );
    add(
        ("batch", "v1", "Job"),
        generate::<batch::v1::Job>(&mut shared, probed.as_deref_mut()),
    );
    add(
        ("coordination.k8s.io", "v1", "Lease"),
        generate::<coordination::v1::Lease>(&mut shared, probed.as_deref_mut()),
    );
    add(
        ("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
        generate::<apiextensions::v1::CustomResourceDefinition>(&mut shared, probed.as_deref_mut()),
    );
    let authz = "authorization.k8s.io";
    add(
        (authz, "v1", "SelfSubjectAccessReview"),
        generate::<authorization::v1::SelfSubjectAccessReview>(&mut shared, probed.as_deref_mut()),
    );
    add(
        (authz, "v1", "SelfSubjectRulesReview"),
        generate::<authorization::v1::SelfSubjectRulesReview>(&mut shared, probed.as_deref_mut()),
    );
    add(
        (authz, "v1", "SubjectAccessReview"),
        generate::<authorization::v1::SubjectAccessReview>(&mut shared, probed.as_deref_mut()),
    );
    add(
        ("authentication.k8s.io", "v1", "SelfSubjectReview"),
        generate::<authentication::v1::SelfSubjectReview>(&mut shared, probed),
    );
    // ListMeta for the list definitions of CRD documents (no kind's closure reaches it).
    for (n, d) in definitions_of::<k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta>() {
        shared.entry(n).or_insert(d);
    }
    for name in ATOMIC_STRUCTS {
        if let Some(d) = shared.get_mut(*name).and_then(Value::as_object_mut) {
            d.insert("x-kubernetes-map-type".into(), Value::from("atomic"));
        }
    }
    All {
        definitions: shared,
        kinds: m,
    }
}

/// The structs `k8s.io/api` v0.36 and apimachinery mark `+structType=atomic`: published with
/// `x-kubernetes-map-type: atomic`, owned and applied whole by server-side apply (a
/// LabelSelector is one field of its manager, not one per label). k8s-openapi's schemas do not
/// carry the marker.
const ATOMIC_STRUCTS: &[&str] = &[
    "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector",
    "io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference",
    "io.k8s.api.admissionregistration.v1.MatchResources",
    "io.k8s.api.admissionregistration.v1.NamedRuleWithOperations",
    "io.k8s.api.admissionregistration.v1.ParamKind",
    "io.k8s.api.admissionregistration.v1.ParamRef",
    "io.k8s.api.admissionregistration.v1.Variable",
    "io.k8s.api.autoscaling.v1.CrossVersionObjectReference",
    "io.k8s.api.core.v1.ConfigMapKeySelector",
    "io.k8s.api.core.v1.EndpointAddress",
    "io.k8s.api.core.v1.EndpointPort",
    "io.k8s.api.core.v1.FileKeySelector",
    "io.k8s.api.core.v1.LocalObjectReference",
    "io.k8s.api.core.v1.NodeSelector",
    "io.k8s.api.core.v1.NodeSelectorTerm",
    "io.k8s.api.core.v1.ObjectFieldSelector",
    "io.k8s.api.core.v1.ObjectReference",
    "io.k8s.api.core.v1.ResourceFieldSelector",
    "io.k8s.api.core.v1.ScopeSelector",
    "io.k8s.api.core.v1.SecretKeySelector",
    "io.k8s.api.core.v1.SecretReference",
    "io.k8s.api.core.v1.TopologySelectorTerm",
    "io.k8s.api.core.v1.TypedLocalObjectReference",
    "io.k8s.api.discovery.v1.EndpointPort",
    "io.k8s.api.networking.v1.ServiceBackendPort",
    "io.k8s.api.rbac.v1.RoleRef",
    "io.k8s.api.rbac.v1.Subject",
];

fn generated() -> &'static All {
    static ALL: OnceLock<All> = OnceLock::new();
    ALL.get_or_init(|| all(None))
}

/// The definitions named and every one they reference, by name.
pub(crate) fn closure(roots: &[&str]) -> Map<String, Value> {
    fn refs(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                if let Some(r) = m
                    .get("$ref")
                    .and_then(Value::as_str)
                    .and_then(|r| r.strip_prefix("#/components/schemas/"))
                {
                    out.push(r.to_string());
                }
                m.values().for_each(|x| refs(x, out));
            }
            Value::Array(a) => a.iter().for_each(|x| refs(x, out)),
            _ => {}
        }
    }
    let defs = &generated().definitions;
    let mut out = Map::new();
    let mut todo: Vec<String> = roots.iter().map(|r| r.to_string()).collect();
    while let Some(n) = todo.pop() {
        if out.contains_key(&n) {
            continue;
        }
        if let Some(d) = defs.get(&n) {
            refs(d, &mut todo);
            out.insert(n, d.clone());
        }
    }
    out
}

/// The schemas of built-in kind `group/version/kind`, generated once per process.
pub(crate) fn schema(group: &str, version: &str, kind: &str) -> Option<Builtin> {
    let all = generated();
    all.kinds
        .iter()
        .find(|((g, v, k), _)| *g == group && *v == version && *k == kind)
        .map(|(_, g)| Builtin {
            name: &g.name,
            names: &g.names,
            definitions: &all.definitions,
        })
}

#[cfg(test)]
mod tests {
    /// The table the server reads is what k8s-openapi's `DeepMerge` says now (a new
    /// k8s-openapi that changes a strategy fails here; `UPDATE_MERGE_TYPES=1` rewrites it).
    #[test]
    fn the_merge_types_table_is_what_deep_merge_says() {
        let mut probed = Vec::new();
        let _ = super::all(Some(&mut probed));
        let text = super::super::merge_types::render(&probed);
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/openapi/merge_types.tsv");
        if std::env::var_os("UPDATE_MERGE_TYPES").is_some() {
            std::fs::write(path, &text).expect("write the table");
        }
        assert_eq!(
            text,
            include_str!("merge_types.tsv"),
            "regenerate with UPDATE_MERGE_TYPES=1 cargo test -p embedded-apiserver --lib the_merge_types_table"
        );
        assert!(super::super::merge_types::table().len() > 100);
    }
}

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

/// The kind's definitions, with each list's and map's merge type as kube publishes it
/// (`merge_types.rs`: observed from the type's `DeepMerge`), added to `shared`.
fn generate<T>(shared: &mut Map<String, Value>) -> Generated
where
    T: JsonSchema + k8s_openapi::Resource + k8s_openapi::DeepMerge + DeserializeOwned + Serialize,
{
    let mut generator: SchemaGenerator = SchemaSettings::openapi3().into_generator();
    generator.subschema_for::<T>();
    let name = T::schema_name().into_owned();
    let mut definitions = generator.take_definitions(true);
    // apiextensions' `JSON` (a CRD schema's `default`, `example`, `enum` values) is any JSON
    // value; kube publishes it without a type, k8s-openapi's schemars schema says `object`.
    if let Some(json) = definitions
        .get_mut("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON")
        .and_then(Value::as_object_mut)
    {
        json.remove("type");
    }
    let found = super::merge_types::probe::<T>(&definitions, &name, T::API_VERSION, T::KIND);
    super::merge_types::annotate(&mut definitions, &found);
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

fn all() -> All {
    let mut shared = Map::new();
    let mut m: BTreeMap<Key, Generated> = BTreeMap::new();
    let mut add = |k: Key, g: Generated| {
        m.insert(k, g);
    };
    add(
        ("", "v1", "Namespace"),
        generate::<core::v1::Namespace>(&mut shared),
    );
    add(
        ("", "v1", "Secret"),
        generate::<core::v1::Secret>(&mut shared),
    );
    add(
        ("", "v1", "ConfigMap"),
        generate::<core::v1::ConfigMap>(&mut shared),
    );
    add(
        ("", "v1", "ServiceAccount"),
        generate::<core::v1::ServiceAccount>(&mut shared),
    );
    add(
        ("", "v1", "Event"),
        generate::<core::v1::Event>(&mut shared),
    );
    add(
        ("", "v1", "Service"),
        generate::<core::v1::Service>(&mut shared),
    );
    let rbac_g = "rbac.authorization.k8s.io";
    add(
        (rbac_g, "v1", "Role"),
        generate::<rbac::v1::Role>(&mut shared),
    );
    add(
        (rbac_g, "v1", "ClusterRole"),
        generate::<rbac::v1::ClusterRole>(&mut shared),
    );
    add(
        (rbac_g, "v1", "RoleBinding"),
        generate::<rbac::v1::RoleBinding>(&mut shared),
    );
    add(
        (rbac_g, "v1", "ClusterRoleBinding"),
        generate::<rbac::v1::ClusterRoleBinding>(&mut shared),
    );
    add(
        ("events.k8s.io", "v1", "Event"),
        generate::<events::v1::Event>(&mut shared),
    );
    add(
        ("apps", "v1", "Deployment"),
        generate::<apps::v1::Deployment>(&mut shared),
    );
    add(
        ("apps", "v1", "DaemonSet"),
        generate::<apps::v1::DaemonSet>(&mut shared),
    );
    let adm = "admissionregistration.k8s.io";
    add(
        (adm, "v1", "MutatingWebhookConfiguration"),
        generate::<admissionregistration::v1::MutatingWebhookConfiguration>(&mut shared),
    );
    add(
        (adm, "v1", "ValidatingWebhookConfiguration"),
        generate::<admissionregistration::v1::ValidatingWebhookConfiguration>(&mut shared),
    );
    add(
        ("batch", "v1", "Job"),
        generate::<batch::v1::Job>(&mut shared),
    );
    add(
        ("coordination.k8s.io", "v1", "Lease"),
        generate::<coordination::v1::Lease>(&mut shared),
    );
    add(
        ("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
        generate::<apiextensions::v1::CustomResourceDefinition>(&mut shared),
    );
    let authz = "authorization.k8s.io";
    add(
        (authz, "v1", "SelfSubjectAccessReview"),
        generate::<authorization::v1::SelfSubjectAccessReview>(&mut shared),
    );
    add(
        (authz, "v1", "SelfSubjectRulesReview"),
        generate::<authorization::v1::SelfSubjectRulesReview>(&mut shared),
    );
    add(
        (authz, "v1", "SubjectAccessReview"),
        generate::<authorization::v1::SubjectAccessReview>(&mut shared),
    );
    add(
        ("authentication.k8s.io", "v1", "SelfSubjectReview"),
        generate::<authentication::v1::SelfSubjectReview>(&mut shared),
    );
    All {
        definitions: shared,
        kinds: m,
    }
}

/// The schemas of built-in kind `group/version/kind`, generated once per process.
pub(crate) fn schema(group: &str, version: &str, kind: &str) -> Option<Builtin> {
    static ALL: OnceLock<All> = OnceLock::new();
    let all = ALL.get_or_init(all);
    all.kinds
        .iter()
        .find(|((g, v, k), _)| *g == group && *v == version && *k == kind)
        .map(|(_, g)| Builtin {
            name: &g.name,
            names: &g.names,
            definitions: &all.definitions,
        })
}

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

/// One kind's definition name and the definitions it needs (itself included).
pub(crate) struct Builtin {
    pub name: String,
    pub definitions: Map<String, Value>,
}

/// The kind's definitions, with each list's and map's merge type as kube publishes it
/// (`merge_types.rs`: observed from the type's `DeepMerge`).
fn generate<T>() -> Builtin
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
    Builtin { name, definitions }
}

type Key = (&'static str, &'static str, &'static str);

fn all() -> BTreeMap<Key, Builtin> {
    let mut m: BTreeMap<Key, Builtin> = BTreeMap::new();
    let mut add = |k: Key, b: Builtin| {
        m.insert(k, b);
    };
    add(("", "v1", "Namespace"), generate::<core::v1::Namespace>());
    add(("", "v1", "Secret"), generate::<core::v1::Secret>());
    add(("", "v1", "ConfigMap"), generate::<core::v1::ConfigMap>());
    add(
        ("", "v1", "ServiceAccount"),
        generate::<core::v1::ServiceAccount>(),
    );
    add(("", "v1", "Event"), generate::<core::v1::Event>());
    add(("", "v1", "Service"), generate::<core::v1::Service>());
    let rbac_g = "rbac.authorization.k8s.io";
    add((rbac_g, "v1", "Role"), generate::<rbac::v1::Role>());
    add(
        (rbac_g, "v1", "ClusterRole"),
        generate::<rbac::v1::ClusterRole>(),
    );
    add(
        (rbac_g, "v1", "RoleBinding"),
        generate::<rbac::v1::RoleBinding>(),
    );
    add(
        (rbac_g, "v1", "ClusterRoleBinding"),
        generate::<rbac::v1::ClusterRoleBinding>(),
    );
    add(
        ("events.k8s.io", "v1", "Event"),
        generate::<events::v1::Event>(),
    );
    add(
        ("apps", "v1", "Deployment"),
        generate::<apps::v1::Deployment>(),
    );
    add(
        ("apps", "v1", "DaemonSet"),
        generate::<apps::v1::DaemonSet>(),
    );
    let adm = "admissionregistration.k8s.io";
    add(
        (adm, "v1", "MutatingWebhookConfiguration"),
        generate::<admissionregistration::v1::MutatingWebhookConfiguration>(),
    );
    add(
        (adm, "v1", "ValidatingWebhookConfiguration"),
        generate::<admissionregistration::v1::ValidatingWebhookConfiguration>(),
    );
    add(("batch", "v1", "Job"), generate::<batch::v1::Job>());
    add(
        ("coordination.k8s.io", "v1", "Lease"),
        generate::<coordination::v1::Lease>(),
    );
    add(
        ("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
        generate::<apiextensions::v1::CustomResourceDefinition>(),
    );
    let authz = "authorization.k8s.io";
    add(
        (authz, "v1", "SelfSubjectAccessReview"),
        generate::<authorization::v1::SelfSubjectAccessReview>(),
    );
    add(
        (authz, "v1", "SelfSubjectRulesReview"),
        generate::<authorization::v1::SelfSubjectRulesReview>(),
    );
    add(
        (authz, "v1", "SubjectAccessReview"),
        generate::<authorization::v1::SubjectAccessReview>(),
    );
    add(
        ("authentication.k8s.io", "v1", "SelfSubjectReview"),
        generate::<authentication::v1::SelfSubjectReview>(),
    );
    m
}

/// The schemas of built-in kind `group/version/kind`, generated once per process.
pub(crate) fn schema(group: &str, version: &str, kind: &str) -> Option<&'static Builtin> {
    static ALL: OnceLock<BTreeMap<Key, Builtin>> = OnceLock::new();
    ALL.get_or_init(all)
        .iter()
        .find(|((g, v, k), _)| *g == group && *v == version && *k == kind)
        .map(|(_, b)| b)
}

//! Decoding of Kubernetes protobuf request bodies (`application/vnd.kubernetes.protobuf`) for
//! the few kinds kubectl ≥ 1.32 sends that way, into the JSON the rest of the server handles.
//!
//! Wire format: the magic `k8s\0`, then a `runtime.Unknown` message
//! `{typeMeta{apiVersion=1, kind=2}=1, raw=2, contentEncoding=3, contentType=4}` whose `raw` is
//! the typed message. Field numbers follow `k8s.io/api/*/generated.proto` and
//! `k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto` (proto2).

use base64::Engine;
use prost::Message;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

mod apps;
mod batch;
mod core_v1;
mod meta_v1;
mod rbac;
pub use apps::{
    Container, ContainerPort, Deployment, DeploymentSpec, DeploymentStrategy, PodSpec,
    PodTemplateSpec, Quantity, ResourceRequirements,
};
pub use batch::{Job, JobSpec, JobStatus};
pub use core_v1::{Service, ServicePort, ServiceSpec, ServiceStatus};
pub use meta_v1::{DeleteOptions, Preconditions};
pub use rbac::{
    AggregationRule, Binding, LabelSelector, LabelSelectorRequirement, PolicyRule, Role, RoleRef,
    Subject,
};

/// The 4-byte prefix of every Kubernetes protobuf body.
pub const MAGIC: &[u8; 4] = b"k8s\0";

/// Why a protobuf body could not be decoded. [`ProtoError::UnsupportedKind`] means the server
/// should answer 415; the others are 400.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtoError {
    #[error("protobuf body does not start with the k8s magic prefix")]
    MissingMagic,
    #[error("invalid protobuf envelope: {0}")]
    Envelope(String),
    #[error("unsupported content encoding {0:?} in protobuf envelope")]
    UnsupportedEncoding(String),
    #[error("protobuf decoding is not supported for {api_version}, Kind={kind}")]
    UnsupportedKind { api_version: String, kind: String },
    #[error("invalid protobuf {kind}: {detail}")]
    Message { kind: String, detail: String },
}

/// `runtime.TypeMeta` (protobuf form).
#[derive(Clone, PartialEq, Message)]
pub struct TypeMeta {
    #[prost(string, optional, tag = "1")]
    pub api_version: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub kind: Option<String>,
}

/// `runtime.Unknown`: the envelope.
#[derive(Clone, PartialEq, Message)]
pub struct Unknown {
    #[prost(message, optional, tag = "1")]
    pub type_meta: Option<TypeMeta>,
    #[prost(bytes = "vec", optional, tag = "2")]
    pub raw: Option<Vec<u8>>,
    #[prost(string, optional, tag = "3")]
    pub content_encoding: Option<String>,
    #[prost(string, optional, tag = "4")]
    pub content_type: Option<String>,
}

/// `metav1.OwnerReference`.
#[derive(Clone, PartialEq, Message)]
pub struct OwnerReference {
    #[prost(string, optional, tag = "1")]
    pub kind: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub name: Option<String>,
    #[prost(string, optional, tag = "4")]
    pub uid: Option<String>,
    #[prost(string, optional, tag = "5")]
    pub api_version: Option<String>,
    #[prost(bool, optional, tag = "6")]
    pub controller: Option<bool>,
    #[prost(bool, optional, tag = "7")]
    pub block_owner_deletion: Option<bool>,
}

/// `metav1.ObjectMeta` (the fields a client sends on create/update).
#[derive(Clone, PartialEq, Message)]
pub struct ObjectMeta {
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub generate_name: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub namespace: Option<String>,
    #[prost(string, optional, tag = "5")]
    pub uid: Option<String>,
    #[prost(string, optional, tag = "6")]
    pub resource_version: Option<String>,
    #[prost(int64, optional, tag = "7")]
    pub generation: Option<i64>,
    #[prost(btree_map = "string, string", tag = "11")]
    pub labels: BTreeMap<String, String>,
    #[prost(btree_map = "string, string", tag = "12")]
    pub annotations: BTreeMap<String, String>,
    #[prost(message, repeated, tag = "13")]
    pub owner_references: Vec<OwnerReference>,
    #[prost(string, repeated, tag = "14")]
    pub finalizers: Vec<String>,
}

/// `core/v1 Secret`.
#[derive(Clone, PartialEq, Message)]
pub struct Secret {
    #[prost(message, optional, tag = "1")]
    pub metadata: Option<ObjectMeta>,
    #[prost(btree_map = "string, bytes", tag = "2")]
    pub data: BTreeMap<String, Vec<u8>>,
    #[prost(string, optional, tag = "3")]
    pub r#type: Option<String>,
    #[prost(btree_map = "string, string", tag = "4")]
    pub string_data: BTreeMap<String, String>,
    #[prost(bool, optional, tag = "5")]
    pub immutable: Option<bool>,
}

/// `core/v1 ConfigMap`.
#[derive(Clone, PartialEq, Message)]
pub struct ConfigMap {
    #[prost(message, optional, tag = "1")]
    pub metadata: Option<ObjectMeta>,
    #[prost(btree_map = "string, string", tag = "2")]
    pub data: BTreeMap<String, String>,
    #[prost(btree_map = "string, bytes", tag = "3")]
    pub binary_data: BTreeMap<String, Vec<u8>>,
    #[prost(bool, optional, tag = "4")]
    pub immutable: Option<bool>,
}

/// `core/v1 NamespaceSpec`.
#[derive(Clone, PartialEq, Message)]
pub struct NamespaceSpec {
    #[prost(string, repeated, tag = "1")]
    pub finalizers: Vec<String>,
}

/// `core/v1 Namespace`.
#[derive(Clone, PartialEq, Message)]
pub struct Namespace {
    #[prost(message, optional, tag = "1")]
    pub metadata: Option<ObjectMeta>,
    #[prost(message, optional, tag = "2")]
    pub spec: Option<NamespaceSpec>,
}

/// `core/v1 ObjectReference`.
#[derive(Clone, PartialEq, Message)]
pub struct ObjectReference {
    #[prost(string, optional, tag = "1")]
    pub kind: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub namespace: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub name: Option<String>,
    #[prost(string, optional, tag = "4")]
    pub uid: Option<String>,
    #[prost(string, optional, tag = "5")]
    pub api_version: Option<String>,
    #[prost(string, optional, tag = "6")]
    pub resource_version: Option<String>,
    #[prost(string, optional, tag = "7")]
    pub field_path: Option<String>,
}

/// `core/v1 LocalObjectReference`.
#[derive(Clone, PartialEq, Message)]
pub struct LocalObjectReference {
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
}

/// `core/v1 ServiceAccount`.
#[derive(Clone, PartialEq, Message)]
pub struct ServiceAccount {
    #[prost(message, optional, tag = "1")]
    pub metadata: Option<ObjectMeta>,
    #[prost(message, repeated, tag = "2")]
    pub secrets: Vec<ObjectReference>,
    #[prost(message, repeated, tag = "3")]
    pub image_pull_secrets: Vec<LocalObjectReference>,
    #[prost(bool, optional, tag = "4")]
    pub automount_service_account_token: Option<bool>,
}

/// `authorization/v1 FieldSelectorAttributes` / `LabelSelectorAttributes` (raw form only).
#[derive(Clone, PartialEq, Message)]
pub struct SelectorAttributes {
    #[prost(string, optional, tag = "1")]
    pub raw_selector: Option<String>,
}

/// `authorization/v1 ResourceAttributes`.
#[derive(Clone, PartialEq, Message)]
pub struct ResourceAttributes {
    #[prost(string, optional, tag = "1")]
    pub namespace: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub verb: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub group: Option<String>,
    #[prost(string, optional, tag = "4")]
    pub version: Option<String>,
    #[prost(string, optional, tag = "5")]
    pub resource: Option<String>,
    #[prost(string, optional, tag = "6")]
    pub subresource: Option<String>,
    #[prost(string, optional, tag = "7")]
    pub name: Option<String>,
    #[prost(message, optional, tag = "8")]
    pub field_selector: Option<SelectorAttributes>,
    #[prost(message, optional, tag = "9")]
    pub label_selector: Option<SelectorAttributes>,
}

/// `authorization/v1 NonResourceAttributes`.
#[derive(Clone, PartialEq, Message)]
pub struct NonResourceAttributes {
    #[prost(string, optional, tag = "1")]
    pub path: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub verb: Option<String>,
}

/// `authorization/v1 SubjectAccessReviewSpec` (also the shape of the self spec, whose user
/// fields are absent).
#[derive(Clone, PartialEq, Message)]
pub struct AccessReviewSpec {
    #[prost(message, optional, tag = "1")]
    pub resource_attributes: Option<ResourceAttributes>,
    #[prost(message, optional, tag = "2")]
    pub non_resource_attributes: Option<NonResourceAttributes>,
    #[prost(string, optional, tag = "3")]
    pub user: Option<String>,
    #[prost(string, repeated, tag = "4")]
    pub groups: Vec<String>,
    #[prost(string, optional, tag = "6")]
    pub uid: Option<String>,
}

/// `authorization/v1 SelfSubjectAccessReview` / `SubjectAccessReview`.
#[derive(Clone, PartialEq, Message)]
pub struct AccessReview {
    #[prost(message, optional, tag = "1")]
    pub metadata: Option<ObjectMeta>,
    #[prost(message, optional, tag = "2")]
    pub spec: Option<AccessReviewSpec>,
}

/// `authorization/v1 SelfSubjectRulesReviewSpec`.
#[derive(Clone, PartialEq, Message)]
pub struct RulesReviewSpec {
    #[prost(string, optional, tag = "1")]
    pub namespace: Option<String>,
}

/// `authorization/v1 SelfSubjectRulesReview`.
#[derive(Clone, PartialEq, Message)]
pub struct RulesReview {
    #[prost(message, optional, tag = "1")]
    pub metadata: Option<ObjectMeta>,
    #[prost(message, optional, tag = "2")]
    pub spec: Option<RulesReviewSpec>,
}

/// `authentication/v1 SelfSubjectReview` (a client sends only metadata).
#[derive(Clone, PartialEq, Message)]
pub struct SelfSubjectReview {
    #[prost(message, optional, tag = "1")]
    pub metadata: Option<ObjectMeta>,
}

/// The kinds this module decodes, as `(apiVersion, kind)`.
pub const SUPPORTED: &[(&str, &str)] = &[
    ("v1", "Secret"),
    ("v1", "ConfigMap"),
    ("v1", "Namespace"),
    ("v1", "ServiceAccount"),
    ("v1", "Service"),
    ("authorization.k8s.io/v1", "SelfSubjectAccessReview"),
    ("authorization.k8s.io/v1", "SubjectAccessReview"),
    ("authorization.k8s.io/v1", "SelfSubjectRulesReview"),
    ("authentication.k8s.io/v1", "SelfSubjectReview"),
    ("rbac.authorization.k8s.io/v1", "Role"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
    ("apps/v1", "Deployment"),
    ("batch/v1", "Job"),
];

/// Decodes a protobuf body into the equivalent JSON object (with `apiVersion` and `kind`).
pub fn decode(body: &[u8]) -> Result<Value, ProtoError> {
    decode_with_default(body, None)
}

/// Like [`decode`], but when the envelope carries no type information uses
/// `default_type = (apiVersion, kind)` (what the request URL implies).
pub fn decode_with_default(
    body: &[u8],
    default_type: Option<(&str, &str)>,
) -> Result<Value, ProtoError> {
    let rest = body.strip_prefix(MAGIC).ok_or(ProtoError::MissingMagic)?;
    let env = Unknown::decode(rest).map_err(|e| ProtoError::Envelope(e.to_string()))?;
    if let Some(enc) = env.content_encoding.as_deref().filter(|e| !e.is_empty()) {
        return Err(ProtoError::UnsupportedEncoding(enc.to_string()));
    }
    let tm = env.type_meta.unwrap_or_default();
    let mut api_version = tm.api_version.unwrap_or_default();
    let mut kind = tm.kind.unwrap_or_default();
    if (api_version.is_empty() || kind.is_empty())
        && let Some((av, k)) = default_type
    {
        api_version = av.to_string();
        kind = k.to_string();
    }
    let raw = env.raw.unwrap_or_default();
    let msg_err = |e: prost::DecodeError| ProtoError::Message {
        kind: kind.clone(),
        detail: e.to_string(),
    };
    let mut obj = match (api_version.as_str(), kind.as_str()) {
        ("v1", "Secret") => secret_json(Secret::decode(raw.as_slice()).map_err(msg_err)?),
        ("v1", "ConfigMap") => configmap_json(ConfigMap::decode(raw.as_slice()).map_err(msg_err)?),
        ("v1", "Namespace") => namespace_json(Namespace::decode(raw.as_slice()).map_err(msg_err)?),
        ("v1", "ServiceAccount") => {
            service_account_json(ServiceAccount::decode(raw.as_slice()).map_err(msg_err)?)
        }
        ("v1", "Service") => {
            core_v1::service_json(Service::decode(raw.as_slice()).map_err(msg_err)?)
        }
        ("authorization.k8s.io/v1", "SelfSubjectAccessReview" | "SubjectAccessReview") => {
            access_review_json(AccessReview::decode(raw.as_slice()).map_err(msg_err)?)
        }
        ("authorization.k8s.io/v1", "SelfSubjectRulesReview") => {
            rules_review_json(RulesReview::decode(raw.as_slice()).map_err(msg_err)?)
        }
        ("authentication.k8s.io/v1", "SelfSubjectReview") => {
            let m = SelfSubjectReview::decode(raw.as_slice()).map_err(msg_err)?;
            with_meta(Map::new(), m.metadata)
        }
        ("rbac.authorization.k8s.io/v1", "Role" | "ClusterRole") => {
            rbac::role_json(Role::decode(raw.as_slice()).map_err(msg_err)?)
        }
        ("rbac.authorization.k8s.io/v1", "RoleBinding" | "ClusterRoleBinding") => {
            rbac::binding_json(Binding::decode(raw.as_slice()).map_err(msg_err)?)
        }
        ("apps/v1", "Deployment") => {
            apps::deployment_json(Deployment::decode(raw.as_slice()).map_err(msg_err)?)
        }
        // client-go sends DeleteOptions under meta.k8s.io/v1 (or, from a group's client, the
        // group's version: kube-apiserver accepts it in every group).
        (_, "DeleteOptions") => {
            meta_v1::delete_options_json(DeleteOptions::decode(raw.as_slice()).map_err(msg_err)?)
        }
        ("batch/v1", "Job") => {
            batch::job_json(batch::Job::decode(raw.as_slice()).map_err(msg_err)?)
        }
        _ => {
            return Err(ProtoError::UnsupportedKind { api_version, kind });
        }
    };
    obj.insert("apiVersion".into(), Value::String(api_version));
    obj.insert("kind".into(), Value::String(kind));
    Ok(Value::Object(obj))
}

/// Wraps a typed message in the envelope (for clients and tests).
pub fn encode<M: Message>(api_version: &str, kind: &str, msg: &M) -> Vec<u8> {
    let env = Unknown {
        type_meta: Some(TypeMeta {
            api_version: Some(api_version.to_string()),
            kind: Some(kind.to_string()),
        }),
        raw: Some(msg.encode_to_vec()),
        content_encoding: Some(String::new()),
        content_type: Some(String::new()),
    };
    let mut out = MAGIC.to_vec();
    out.extend(env.encode_to_vec());
    out
}

fn put_str(m: &mut Map<String, Value>, k: &str, v: Option<String>) {
    if let Some(v) = v.filter(|v| !v.is_empty()) {
        m.insert(k.into(), Value::String(v));
    }
}

fn put_bool(m: &mut Map<String, Value>, k: &str, v: Option<bool>) {
    if let Some(v) = v {
        m.insert(k.into(), Value::Bool(v));
    }
}

fn put_map(m: &mut Map<String, Value>, k: &str, v: BTreeMap<String, String>) {
    if !v.is_empty() {
        m.insert(
            k.into(),
            Value::Object(v.into_iter().map(|(k, v)| (k, Value::String(v))).collect()),
        );
    }
}

fn put_bytes_map(m: &mut Map<String, Value>, k: &str, v: BTreeMap<String, Vec<u8>>) {
    if !v.is_empty() {
        let b64 = base64::engine::general_purpose::STANDARD;
        m.insert(
            k.into(),
            Value::Object(
                v.into_iter()
                    .map(|(k, v)| (k, Value::String(b64.encode(v))))
                    .collect(),
            ),
        );
    }
}

fn put_strings(m: &mut Map<String, Value>, k: &str, v: Vec<String>) {
    if !v.is_empty() {
        m.insert(k.into(), Value::from(v));
    }
}

fn meta_json(meta: ObjectMeta) -> Value {
    let mut m = Map::new();
    put_str(&mut m, "name", meta.name);
    put_str(&mut m, "generateName", meta.generate_name);
    put_str(&mut m, "namespace", meta.namespace);
    put_str(&mut m, "uid", meta.uid);
    put_str(&mut m, "resourceVersion", meta.resource_version);
    if let Some(g) = meta.generation.filter(|g| *g != 0) {
        m.insert("generation".into(), Value::from(g));
    }
    put_map(&mut m, "labels", meta.labels);
    put_map(&mut m, "annotations", meta.annotations);
    if !meta.owner_references.is_empty() {
        let refs: Vec<Value> = meta
            .owner_references
            .into_iter()
            .map(|r| {
                let mut o = Map::new();
                put_str(&mut o, "apiVersion", r.api_version);
                put_str(&mut o, "kind", r.kind);
                put_str(&mut o, "name", r.name);
                put_str(&mut o, "uid", r.uid);
                put_bool(&mut o, "controller", r.controller);
                put_bool(&mut o, "blockOwnerDeletion", r.block_owner_deletion);
                Value::Object(o)
            })
            .collect();
        m.insert("ownerReferences".into(), Value::Array(refs));
    }
    put_strings(&mut m, "finalizers", meta.finalizers);
    Value::Object(m)
}

fn with_meta(mut m: Map<String, Value>, meta: Option<ObjectMeta>) -> Map<String, Value> {
    m.insert("metadata".into(), meta.map_or_else(|| json!({}), meta_json));
    m
}

fn secret_json(s: Secret) -> Map<String, Value> {
    let mut m = with_meta(Map::new(), s.metadata);
    put_bytes_map(&mut m, "data", s.data);
    put_map(&mut m, "stringData", s.string_data);
    put_str(&mut m, "type", s.r#type);
    put_bool(&mut m, "immutable", s.immutable);
    m
}

fn configmap_json(c: ConfigMap) -> Map<String, Value> {
    let mut m = with_meta(Map::new(), c.metadata);
    put_map(&mut m, "data", c.data);
    put_bytes_map(&mut m, "binaryData", c.binary_data);
    put_bool(&mut m, "immutable", c.immutable);
    m
}

fn namespace_json(n: Namespace) -> Map<String, Value> {
    let mut m = with_meta(Map::new(), n.metadata);
    if let Some(spec) = n.spec {
        let mut s = Map::new();
        put_strings(&mut s, "finalizers", spec.finalizers);
        m.insert("spec".into(), Value::Object(s));
    }
    m
}

fn service_account_json(sa: ServiceAccount) -> Map<String, Value> {
    let mut m = with_meta(Map::new(), sa.metadata);
    if !sa.secrets.is_empty() {
        let secrets: Vec<Value> = sa
            .secrets
            .into_iter()
            .map(|r| {
                let mut o = Map::new();
                put_str(&mut o, "kind", r.kind);
                put_str(&mut o, "namespace", r.namespace);
                put_str(&mut o, "name", r.name);
                put_str(&mut o, "uid", r.uid);
                put_str(&mut o, "apiVersion", r.api_version);
                put_str(&mut o, "resourceVersion", r.resource_version);
                put_str(&mut o, "fieldPath", r.field_path);
                Value::Object(o)
            })
            .collect();
        m.insert("secrets".into(), Value::Array(secrets));
    }
    if !sa.image_pull_secrets.is_empty() {
        let ips: Vec<Value> = sa
            .image_pull_secrets
            .into_iter()
            .map(|r| {
                let mut o = Map::new();
                put_str(&mut o, "name", r.name);
                Value::Object(o)
            })
            .collect();
        m.insert("imagePullSecrets".into(), Value::Array(ips));
    }
    put_bool(
        &mut m,
        "automountServiceAccountToken",
        sa.automount_service_account_token,
    );
    m
}

fn access_review_json(r: AccessReview) -> Map<String, Value> {
    let mut m = with_meta(Map::new(), r.metadata);
    let mut spec = Map::new();
    if let Some(s) = r.spec {
        if let Some(ra) = s.resource_attributes {
            let mut a = Map::new();
            put_str(&mut a, "namespace", ra.namespace);
            put_str(&mut a, "verb", ra.verb);
            put_str(&mut a, "group", ra.group);
            put_str(&mut a, "version", ra.version);
            put_str(&mut a, "resource", ra.resource);
            put_str(&mut a, "subresource", ra.subresource);
            put_str(&mut a, "name", ra.name);
            for (k, sel) in [
                ("fieldSelector", ra.field_selector),
                ("labelSelector", ra.label_selector),
            ] {
                if let Some(sel) = sel {
                    let mut o = Map::new();
                    put_str(&mut o, "rawSelector", sel.raw_selector);
                    a.insert(k.into(), Value::Object(o));
                }
            }
            spec.insert("resourceAttributes".into(), Value::Object(a));
        }
        if let Some(nra) = s.non_resource_attributes {
            let mut a = Map::new();
            put_str(&mut a, "path", nra.path);
            put_str(&mut a, "verb", nra.verb);
            spec.insert("nonResourceAttributes".into(), Value::Object(a));
        }
        put_str(&mut spec, "user", s.user);
        put_strings(&mut spec, "groups", s.groups);
        put_str(&mut spec, "uid", s.uid);
    }
    m.insert("spec".into(), Value::Object(spec));
    m
}

fn rules_review_json(r: RulesReview) -> Map<String, Value> {
    let mut m = with_meta(Map::new(), r.metadata);
    let mut spec = Map::new();
    if let Some(s) = r.spec {
        put_str(&mut spec, "namespace", s.namespace);
    }
    m.insert("spec".into(), Value::Object(spec));
    m
}

#[cfg(test)]
mod tests;

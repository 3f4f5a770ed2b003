//! `apps/v1 Deployment`, which `kubectl create deployment` sends as protobuf from kubectl 1.32
//! on. Field numbers follow `k8s.io/api/apps/v1/generated.proto` and
//! `k8s.io/api/core/v1/generated.proto`. Modelled: every field `kubectl create deployment` can
//! set (name, labels, replicas, selector, template labels, containers with image, command,
//! ports, resources) plus the common pod-spec scalars; the JSON written follows Go's
//! `omitempty` (zero scalars left out), as the JSON body of the same object would be.

use super::rbac::{LabelSelector, selector_json};
use super::{ObjectMeta, meta_json, put_map, put_str, put_strings, with_meta};
use prost::Message;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// `resource.Quantity` (its protobuf form is the canonical string).
#[derive(Clone, PartialEq, Message)]
pub struct Quantity {
    #[prost(string, optional, tag = "1")]
    pub string: Option<String>,
}

/// `core/v1 ResourceRequirements` (limits and requests).
#[derive(Clone, PartialEq, Message)]
pub struct ResourceRequirements {
    #[prost(btree_map = "string, message", tag = "1")]
    pub limits: BTreeMap<String, Quantity>,
    #[prost(btree_map = "string, message", tag = "2")]
    pub requests: BTreeMap<String, Quantity>,
}

/// `core/v1 ContainerPort`.
#[derive(Clone, PartialEq, Message)]
pub struct ContainerPort {
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub host_port: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub container_port: Option<i32>,
    #[prost(string, optional, tag = "4")]
    pub protocol: Option<String>,
    #[prost(string, optional, tag = "5")]
    pub host_ip: Option<String>,
}

/// `core/v1 EnvVar` (literal values).
#[derive(Clone, PartialEq, Message)]
pub struct EnvVar {
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub value: Option<String>,
}

/// `core/v1 Container`.
#[derive(Clone, PartialEq, Message)]
pub struct Container {
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub image: Option<String>,
    #[prost(string, repeated, tag = "3")]
    pub command: Vec<String>,
    #[prost(string, repeated, tag = "4")]
    pub args: Vec<String>,
    #[prost(string, optional, tag = "5")]
    pub working_dir: Option<String>,
    #[prost(message, repeated, tag = "6")]
    pub ports: Vec<ContainerPort>,
    #[prost(message, repeated, tag = "7")]
    pub env: Vec<EnvVar>,
    #[prost(message, optional, tag = "8")]
    pub resources: Option<ResourceRequirements>,
    #[prost(string, optional, tag = "13")]
    pub termination_message_path: Option<String>,
    #[prost(string, optional, tag = "14")]
    pub image_pull_policy: Option<String>,
    #[prost(string, optional, tag = "20")]
    pub termination_message_policy: Option<String>,
}

/// `core/v1 PodSpec` (containers and the common scalars).
#[derive(Clone, PartialEq, Message)]
pub struct PodSpec {
    #[prost(message, repeated, tag = "2")]
    pub containers: Vec<Container>,
    #[prost(string, optional, tag = "3")]
    pub restart_policy: Option<String>,
    #[prost(int64, optional, tag = "4")]
    pub termination_grace_period_seconds: Option<i64>,
    #[prost(string, optional, tag = "6")]
    pub dns_policy: Option<String>,
    #[prost(btree_map = "string, string", tag = "7")]
    pub node_selector: BTreeMap<String, String>,
    #[prost(string, optional, tag = "8")]
    pub service_account_name: Option<String>,
    #[prost(message, repeated, tag = "20")]
    pub init_containers: Vec<Container>,
}

/// `core/v1 PodTemplateSpec`.
#[derive(Clone, PartialEq, Message)]
pub struct PodTemplateSpec {
    #[prost(message, optional, tag = "1")]
    pub metadata: Option<ObjectMeta>,
    #[prost(message, optional, tag = "2")]
    pub spec: Option<PodSpec>,
}

/// `util/intstr IntOrString`.
#[derive(Clone, PartialEq, Message)]
pub struct IntOrString {
    #[prost(int64, optional, tag = "1")]
    pub r#type: Option<i64>,
    #[prost(int32, optional, tag = "2")]
    pub int_val: Option<i32>,
    #[prost(string, optional, tag = "3")]
    pub str_val: Option<String>,
}

/// `apps/v1 RollingUpdateDeployment`.
#[derive(Clone, PartialEq, Message)]
pub struct RollingUpdate {
    #[prost(message, optional, tag = "1")]
    pub max_unavailable: Option<IntOrString>,
    #[prost(message, optional, tag = "2")]
    pub max_surge: Option<IntOrString>,
}

/// `apps/v1 DeploymentStrategy`.
#[derive(Clone, PartialEq, Message)]
pub struct DeploymentStrategy {
    #[prost(string, optional, tag = "1")]
    pub r#type: Option<String>,
    #[prost(message, optional, tag = "2")]
    pub rolling_update: Option<RollingUpdate>,
}

/// `apps/v1 DeploymentSpec`.
#[derive(Clone, PartialEq, Message)]
pub struct DeploymentSpec {
    #[prost(int32, optional, tag = "1")]
    pub replicas: Option<i32>,
    #[prost(message, optional, tag = "2")]
    pub selector: Option<LabelSelector>,
    #[prost(message, optional, tag = "3")]
    pub template: Option<PodTemplateSpec>,
    #[prost(message, optional, tag = "4")]
    pub strategy: Option<DeploymentStrategy>,
    #[prost(int32, optional, tag = "5")]
    pub min_ready_seconds: Option<i32>,
    #[prost(int32, optional, tag = "6")]
    pub revision_history_limit: Option<i32>,
    #[prost(bool, optional, tag = "7")]
    pub paused: Option<bool>,
    #[prost(int32, optional, tag = "9")]
    pub progress_deadline_seconds: Option<i32>,
}

/// `apps/v1 DeploymentStatus`: a client's create carries it empty; its content is the
/// server's to set.
#[derive(Clone, PartialEq, Message)]
pub struct DeploymentStatus {}

/// `apps/v1 Deployment`.
#[derive(Clone, PartialEq, Message)]
pub struct Deployment {
    #[prost(message, optional, tag = "1")]
    pub metadata: Option<ObjectMeta>,
    #[prost(message, optional, tag = "2")]
    pub spec: Option<DeploymentSpec>,
    #[prost(message, optional, tag = "3")]
    pub status: Option<DeploymentStatus>,
}

/// A non-zero integer (Go `omitempty` on a value field).
fn put_int(m: &mut Map<String, Value>, k: &str, v: Option<i64>) {
    if let Some(v) = v.filter(|v| *v != 0) {
        m.insert(k.into(), Value::from(v));
    }
}

/// `true` only (Go `omitempty` on a value bool).
fn put_true(m: &mut Map<String, Value>, k: &str, v: Option<bool>) {
    if v == Some(true) {
        m.insert(k.into(), Value::Bool(true));
    }
}

pub(super) fn int_or_string(v: IntOrString) -> Value {
    match v.r#type {
        Some(1) => Value::String(v.str_val.unwrap_or_default()),
        _ => Value::from(v.int_val.unwrap_or_default()),
    }
}

fn quantities(q: BTreeMap<String, Quantity>) -> Value {
    Value::Object(
        q.into_iter()
            .map(|(k, v)| (k, Value::String(v.string.unwrap_or_default())))
            .collect(),
    )
}

fn container_json(c: Container) -> Value {
    let mut o = Map::new();
    // `name` has no omitempty in Go: always written.
    o.insert("name".into(), Value::String(c.name.unwrap_or_default()));
    put_str(&mut o, "image", c.image);
    put_strings(&mut o, "command", c.command);
    put_strings(&mut o, "args", c.args);
    put_str(&mut o, "workingDir", c.working_dir);
    if !c.ports.is_empty() {
        let ports = c
            .ports
            .into_iter()
            .map(|p| {
                let mut x = Map::new();
                put_str(&mut x, "name", p.name);
                put_int(&mut x, "hostPort", p.host_port.map(i64::from));
                x.insert(
                    "containerPort".into(),
                    Value::from(p.container_port.unwrap_or_default()),
                );
                put_str(&mut x, "protocol", p.protocol);
                put_str(&mut x, "hostIP", p.host_ip);
                Value::Object(x)
            })
            .collect();
        o.insert("ports".into(), Value::Array(ports));
    }
    if !c.env.is_empty() {
        let env = c
            .env
            .into_iter()
            .map(|e| {
                let mut x = Map::new();
                x.insert("name".into(), Value::String(e.name.unwrap_or_default()));
                put_str(&mut x, "value", e.value);
                Value::Object(x)
            })
            .collect();
        o.insert("env".into(), Value::Array(env));
    }
    // `resources` is a value struct without omitempty: kubectl's JSON carries `{}` too.
    let mut r = Map::new();
    if let Some(res) = c.resources {
        if !res.limits.is_empty() {
            r.insert("limits".into(), quantities(res.limits));
        }
        if !res.requests.is_empty() {
            r.insert("requests".into(), quantities(res.requests));
        }
    }
    o.insert("resources".into(), Value::Object(r));
    put_str(&mut o, "terminationMessagePath", c.termination_message_path);
    put_str(
        &mut o,
        "terminationMessagePolicy",
        c.termination_message_policy,
    );
    put_str(&mut o, "imagePullPolicy", c.image_pull_policy);
    Value::Object(o)
}

fn pod_spec_json(s: PodSpec) -> Value {
    let mut o = Map::new();
    if !s.init_containers.is_empty() {
        let init = s.init_containers.into_iter().map(container_json).collect();
        o.insert("initContainers".into(), Value::Array(init));
    }
    let containers = s.containers.into_iter().map(container_json).collect();
    o.insert("containers".into(), Value::Array(containers));
    put_str(&mut o, "restartPolicy", s.restart_policy);
    if let Some(g) = s.termination_grace_period_seconds {
        o.insert("terminationGracePeriodSeconds".into(), Value::from(g));
    }
    put_str(&mut o, "dnsPolicy", s.dns_policy);
    put_map(&mut o, "nodeSelector", s.node_selector);
    put_str(&mut o, "serviceAccountName", s.service_account_name);
    Value::Object(o)
}

/// JSON of a pod template (a value field: `{}` when absent).
pub(super) fn template_json(t: Option<PodTemplateSpec>) -> Value {
    let mut template = Map::new();
    if let Some(t) = t {
        if let Some(meta) = t.metadata {
            // Go's zero `metav1.Time` is written as `null` (kube 1.33 and kubectl's own
            // JSON body both carry it): the same stored object whichever encoding.
            let mut meta = meta_json(meta);
            if let Some(o) = meta.as_object_mut() {
                o.insert("creationTimestamp".into(), Value::Null);
            }
            template.insert("metadata".into(), meta);
        }
        if let Some(ps) = t.spec {
            template.insert("spec".into(), pod_spec_json(ps));
        }
    }
    Value::Object(template)
}

/// JSON of a Deployment.
pub fn deployment_json(d: Deployment) -> Map<String, Value> {
    let mut m = with_meta(Map::new(), d.metadata);
    let mut spec = Map::new();
    if let Some(s) = d.spec {
        // Pointer fields: written whenever set, zero included.
        if let Some(r) = s.replicas {
            spec.insert("replicas".into(), Value::from(r));
        }
        if let Some(sel) = s.selector {
            spec.insert("selector".into(), selector_json(sel));
        }
        spec.insert("template".into(), template_json(s.template));
        let mut strategy = Map::new();
        if let Some(st) = s.strategy {
            put_str(&mut strategy, "type", st.r#type);
            if let Some(ru) = st.rolling_update {
                let mut x = Map::new();
                if let Some(v) = ru.max_unavailable {
                    x.insert("maxUnavailable".into(), int_or_string(v));
                }
                if let Some(v) = ru.max_surge {
                    x.insert("maxSurge".into(), int_or_string(v));
                }
                strategy.insert("rollingUpdate".into(), Value::Object(x));
            }
        }
        spec.insert("strategy".into(), Value::Object(strategy));
        put_int(
            &mut spec,
            "minReadySeconds",
            s.min_ready_seconds.map(i64::from),
        );
        if let Some(v) = s.revision_history_limit {
            spec.insert("revisionHistoryLimit".into(), Value::from(v));
        }
        put_true(&mut spec, "paused", s.paused);
        if let Some(v) = s.progress_deadline_seconds {
            spec.insert("progressDeadlineSeconds".into(), Value::from(v));
        }
    }
    m.insert("spec".into(), Value::Object(spec));
    if d.status.is_some() {
        m.insert("status".into(), Value::Object(Map::new()));
    }
    m
}

#[cfg(test)]
mod tests {
    use super::super::{decode, encode};
    use super::*;
    use serde_json::json;

    #[test]
    fn deployment_with_strategy_resources_and_env() {
        let container = Container {
            name: Some("app".into()),
            image: Some("img".into()),
            env: vec![EnvVar {
                name: Some("MODE".into()),
                value: Some("fast".into()),
            }],
            resources: Some(ResourceRequirements {
                limits: BTreeMap::from([(
                    "cpu".to_string(),
                    Quantity {
                        string: Some("500m".into()),
                    },
                )]),
                requests: BTreeMap::new(),
            }),
            working_dir: Some(String::new()),
            image_pull_policy: Some(String::new()),
            ..Default::default()
        };
        let d = Deployment {
            metadata: Some(ObjectMeta {
                name: Some("d".into()),
                ..Default::default()
            }),
            spec: Some(DeploymentSpec {
                replicas: Some(0),
                template: Some(PodTemplateSpec {
                    metadata: None,
                    spec: Some(PodSpec {
                        containers: vec![container],
                        dns_policy: Some(String::new()),
                        ..Default::default()
                    }),
                }),
                strategy: Some(DeploymentStrategy {
                    r#type: Some("RollingUpdate".into()),
                    rolling_update: Some(RollingUpdate {
                        max_unavailable: Some(IntOrString {
                            r#type: Some(1),
                            int_val: Some(0),
                            str_val: Some("25%".into()),
                        }),
                        max_surge: Some(IntOrString {
                            r#type: Some(0),
                            int_val: Some(2),
                            str_val: Some(String::new()),
                        }),
                    }),
                }),
                min_ready_seconds: Some(0),
                paused: Some(false),
                ..Default::default()
            }),
            status: Some(DeploymentStatus {}),
        };
        let v = decode(&encode("apps/v1", "Deployment", &d)).unwrap();
        assert_eq!(
            v["spec"],
            json!({"replicas": 0, "strategy": {"type": "RollingUpdate",
                       "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": 2}},
                   "template": {"spec": {"containers": [{"name": "app", "image": "img",
                       "env": [{"name": "MODE", "value": "fast"}],
                       "resources": {"limits": {"cpu": "500m"}}}]}}})
        );
        assert_eq!(v["status"], json!({}));
    }
}

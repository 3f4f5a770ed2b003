//! `core/v1 Service`, which `kubectl create service clusterip|nodeport|loadbalancer|externalname`
//! sends as protobuf from kubectl 1.32 on. Field numbers follow
//! `k8s.io/api/core/v1/generated.proto` (`Service`, `ServiceSpec`, `ServicePort`,
//! `SessionAffinityConfig`, `ClientIPConfig`, `ServiceStatus`). Modelled: every `ServiceSpec`
//! field a client sets on create (up to `internalTrafficPolicy = 22`); the JSON written follows
//! Go's `omitempty` (zero scalars left out), as the JSON body of the same object would be.

use super::apps::IntOrString;
use super::{ObjectMeta, put_bool, put_map, put_str, put_strings, with_meta};
use prost::Message;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// `core/v1 ServicePort`.
#[derive(Clone, PartialEq, Message)]
pub struct ServicePort {
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub protocol: Option<String>,
    #[prost(int32, optional, tag = "3")]
    pub port: Option<i32>,
    #[prost(message, optional, tag = "4")]
    pub target_port: Option<IntOrString>,
    #[prost(int32, optional, tag = "5")]
    pub node_port: Option<i32>,
    #[prost(string, optional, tag = "6")]
    pub app_protocol: Option<String>,
}

/// `core/v1 ClientIPConfig`.
#[derive(Clone, PartialEq, Message)]
pub struct ClientIpConfig {
    #[prost(int32, optional, tag = "1")]
    pub timeout_seconds: Option<i32>,
}

/// `core/v1 SessionAffinityConfig`.
#[derive(Clone, PartialEq, Message)]
pub struct SessionAffinityConfig {
    #[prost(message, optional, tag = "1")]
    pub client_ip: Option<ClientIpConfig>,
}

/// `core/v1 ServiceSpec`.
#[derive(Clone, PartialEq, Message)]
pub struct ServiceSpec {
    #[prost(message, repeated, tag = "1")]
    pub ports: Vec<ServicePort>,
    #[prost(btree_map = "string, string", tag = "2")]
    pub selector: BTreeMap<String, String>,
    #[prost(string, optional, tag = "3")]
    pub cluster_ip: Option<String>,
    #[prost(string, optional, tag = "4")]
    pub r#type: Option<String>,
    #[prost(string, repeated, tag = "5")]
    pub external_ips: Vec<String>,
    #[prost(string, optional, tag = "7")]
    pub session_affinity: Option<String>,
    #[prost(string, optional, tag = "8")]
    pub load_balancer_ip: Option<String>,
    #[prost(string, repeated, tag = "9")]
    pub load_balancer_source_ranges: Vec<String>,
    #[prost(string, optional, tag = "10")]
    pub external_name: Option<String>,
    #[prost(string, optional, tag = "11")]
    pub external_traffic_policy: Option<String>,
    #[prost(int32, optional, tag = "12")]
    pub health_check_node_port: Option<i32>,
    #[prost(bool, optional, tag = "13")]
    pub publish_not_ready_addresses: Option<bool>,
    #[prost(message, optional, tag = "14")]
    pub session_affinity_config: Option<SessionAffinityConfig>,
    #[prost(string, optional, tag = "17")]
    pub ip_family_policy: Option<String>,
    #[prost(string, repeated, tag = "18")]
    pub cluster_ips: Vec<String>,
    #[prost(string, repeated, tag = "19")]
    pub ip_families: Vec<String>,
    #[prost(bool, optional, tag = "20")]
    pub allocate_load_balancer_node_ports: Option<bool>,
    #[prost(string, optional, tag = "21")]
    pub load_balancer_class: Option<String>,
    #[prost(string, optional, tag = "22")]
    pub internal_traffic_policy: Option<String>,
}

/// `core/v1 ServiceStatus`: a client's create carries it empty (`loadBalancer: {}`); its
/// content is the server's to set.
#[derive(Clone, PartialEq, Message)]
pub struct ServiceStatus {}

/// `core/v1 Service`.
#[derive(Clone, PartialEq, Message)]
pub struct Service {
    #[prost(message, optional, tag = "1")]
    pub metadata: Option<ObjectMeta>,
    #[prost(message, optional, tag = "2")]
    pub spec: Option<ServiceSpec>,
    #[prost(message, optional, tag = "3")]
    pub status: Option<ServiceStatus>,
}

/// A non-zero integer (Go `omitempty` on a value field).
fn put_nonzero(m: &mut Map<String, Value>, k: &str, v: Option<i32>) {
    if let Some(v) = v.filter(|v| *v != 0) {
        m.insert(k.into(), Value::from(v));
    }
}

fn port_json(p: ServicePort) -> Value {
    let mut o = Map::new();
    put_str(&mut o, "name", p.name);
    put_str(&mut o, "protocol", p.protocol);
    put_str(&mut o, "appProtocol", p.app_protocol);
    // `port` has no omitempty in Go: always written.
    o.insert("port".into(), Value::from(p.port.unwrap_or_default()));
    // A value struct in Go: its JSON carries `0` when unset, which kube defaults to `port`.
    if let Some(t) = p.target_port {
        o.insert("targetPort".into(), super::apps::int_or_string(t));
    }
    put_nonzero(&mut o, "nodePort", p.node_port);
    Value::Object(o)
}

/// JSON of a Service.
pub fn service_json(s: Service) -> Map<String, Value> {
    let mut m = with_meta(Map::new(), s.metadata);
    let mut spec = Map::new();
    if let Some(s) = s.spec {
        if !s.ports.is_empty() {
            let ports = s.ports.into_iter().map(port_json).collect();
            spec.insert("ports".into(), Value::Array(ports));
        }
        put_map(&mut spec, "selector", s.selector);
        put_str(&mut spec, "clusterIP", s.cluster_ip);
        put_strings(&mut spec, "clusterIPs", s.cluster_ips);
        put_str(&mut spec, "type", s.r#type);
        put_strings(&mut spec, "externalIPs", s.external_ips);
        put_str(&mut spec, "sessionAffinity", s.session_affinity);
        put_str(&mut spec, "loadBalancerIP", s.load_balancer_ip);
        put_strings(
            &mut spec,
            "loadBalancerSourceRanges",
            s.load_balancer_source_ranges,
        );
        put_str(&mut spec, "externalName", s.external_name);
        put_str(
            &mut spec,
            "externalTrafficPolicy",
            s.external_traffic_policy,
        );
        put_nonzero(&mut spec, "healthCheckNodePort", s.health_check_node_port);
        if s.publish_not_ready_addresses == Some(true) {
            spec.insert("publishNotReadyAddresses".into(), Value::Bool(true));
        }
        if let Some(c) = s.session_affinity_config {
            let mut o = Map::new();
            if let Some(ip) = c.client_ip {
                let mut x = Map::new();
                if let Some(t) = ip.timeout_seconds {
                    x.insert("timeoutSeconds".into(), Value::from(t));
                }
                o.insert("clientIP".into(), Value::Object(x));
            }
            spec.insert("sessionAffinityConfig".into(), Value::Object(o));
        }
        put_strings(&mut spec, "ipFamilies", s.ip_families);
        put_str(&mut spec, "ipFamilyPolicy", s.ip_family_policy);
        put_bool(
            &mut spec,
            "allocateLoadBalancerNodePorts",
            s.allocate_load_balancer_node_ports,
        );
        put_str(&mut spec, "loadBalancerClass", s.load_balancer_class);
        put_str(
            &mut spec,
            "internalTrafficPolicy",
            s.internal_traffic_policy,
        );
    }
    m.insert("spec".into(), Value::Object(spec));
    if s.status.is_some() {
        let mut status = Map::new();
        status.insert("loadBalancer".into(), Value::Object(Map::new()));
        m.insert("status".into(), Value::Object(status));
    }
    m
}

#[cfg(test)]
mod tests {
    use super::super::{decode, encode};
    use super::*;
    use serde_json::json;

    /// What `kubectl create service clusterip foo --tcp=80:8080` builds (empty strings and
    /// zeros present, as gogo-protobuf writes every non-pointer field).
    #[test]
    fn kubectl_create_service_clusterip() {
        let labels = BTreeMap::from([("app".to_string(), "foo".to_string())]);
        let s = Service {
            metadata: Some(ObjectMeta {
                name: Some("foo".into()),
                labels: labels.clone(),
                ..Default::default()
            }),
            spec: Some(ServiceSpec {
                ports: vec![ServicePort {
                    name: Some("80-8080".into()),
                    protocol: Some("TCP".into()),
                    port: Some(80),
                    target_port: Some(IntOrString {
                        r#type: Some(0),
                        int_val: Some(8080),
                        str_val: Some(String::new()),
                    }),
                    node_port: Some(0),
                    app_protocol: None,
                }],
                selector: labels,
                cluster_ip: Some(String::new()),
                r#type: Some("ClusterIP".into()),
                session_affinity: Some(String::new()),
                external_name: Some(String::new()),
                health_check_node_port: Some(0),
                publish_not_ready_addresses: Some(false),
                ..Default::default()
            }),
            status: Some(ServiceStatus {}),
        };
        let v = decode(&encode("v1", "Service", &s)).unwrap();
        assert_eq!(
            v,
            json!({"apiVersion": "v1", "kind": "Service",
                "metadata": {"name": "foo", "labels": {"app": "foo"}},
                "spec": {"ports": [{"name": "80-8080", "protocol": "TCP", "port": 80, "targetPort": 8080}],
                         "selector": {"app": "foo"}, "type": "ClusterIP"},
                "status": {"loadBalancer": {}}})
        );
    }

    #[test]
    fn named_target_ports_and_session_affinity() {
        let s = Service {
            metadata: None,
            spec: Some(ServiceSpec {
                ports: vec![ServicePort {
                    port: Some(443),
                    target_port: Some(IntOrString {
                        r#type: Some(1),
                        int_val: Some(0),
                        str_val: Some("webhook-server".into()),
                    }),
                    node_port: Some(30443),
                    ..Default::default()
                }],
                cluster_ip: Some("None".into()),
                session_affinity_config: Some(SessionAffinityConfig {
                    client_ip: Some(ClientIpConfig {
                        timeout_seconds: Some(10),
                    }),
                }),
                ..Default::default()
            }),
            status: None,
        };
        let v = decode(&encode("v1", "Service", &s)).unwrap();
        assert_eq!(
            v["spec"],
            json!({"ports": [{"port": 443, "targetPort": "webhook-server", "nodePort": 30443}],
                   "clusterIP": "None", "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 10}}})
        );
        assert!(v.get("status").is_none());
    }
}

//! `rbac.authorization.k8s.io/v1` messages (Role, ClusterRole, RoleBinding, ClusterRoleBinding),
//! which `kubectl create role|clusterrole|rolebinding|clusterrolebinding` sends as protobuf from
//! kubectl 1.32 on. Field numbers follow `k8s.io/api/rbac/v1/generated.proto` and
//! `k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto` (LabelSelector). Every field of these
//! messages is modelled, so nothing a client sends is dropped.

use super::{ObjectMeta, put_map, put_str, put_strings, with_meta};
use prost::Message;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// `rbac/v1 PolicyRule`.
#[derive(Clone, PartialEq, Message)]
pub struct PolicyRule {
    #[prost(string, repeated, tag = "1")]
    pub verbs: Vec<String>,
    #[prost(string, repeated, tag = "2")]
    pub api_groups: Vec<String>,
    #[prost(string, repeated, tag = "3")]
    pub resources: Vec<String>,
    #[prost(string, repeated, tag = "4")]
    pub resource_names: Vec<String>,
    #[prost(string, repeated, tag = "5")]
    pub non_resource_urls: Vec<String>,
}

/// `meta/v1 LabelSelectorRequirement`.
#[derive(Clone, PartialEq, Message)]
pub struct LabelSelectorRequirement {
    #[prost(string, optional, tag = "1")]
    pub key: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub operator: Option<String>,
    #[prost(string, repeated, tag = "3")]
    pub values: Vec<String>,
}

/// `meta/v1 LabelSelector`.
#[derive(Clone, PartialEq, Message)]
pub struct LabelSelector {
    #[prost(btree_map = "string, string", tag = "1")]
    pub match_labels: BTreeMap<String, String>,
    #[prost(message, repeated, tag = "2")]
    pub match_expressions: Vec<LabelSelectorRequirement>,
}

/// `rbac/v1 AggregationRule`.
#[derive(Clone, PartialEq, Message)]
pub struct AggregationRule {
    #[prost(message, repeated, tag = "1")]
    pub cluster_role_selectors: Vec<LabelSelector>,
}

/// `rbac/v1 Role` and `ClusterRole` (a Role never carries field 3).
#[derive(Clone, PartialEq, Message)]
pub struct Role {
    #[prost(message, optional, tag = "1")]
    pub metadata: Option<ObjectMeta>,
    #[prost(message, repeated, tag = "2")]
    pub rules: Vec<PolicyRule>,
    #[prost(message, optional, tag = "3")]
    pub aggregation_rule: Option<AggregationRule>,
}

/// `rbac/v1 Subject`.
#[derive(Clone, PartialEq, Message)]
pub struct Subject {
    #[prost(string, optional, tag = "1")]
    pub kind: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub api_group: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub name: Option<String>,
    #[prost(string, optional, tag = "4")]
    pub namespace: Option<String>,
}

/// `rbac/v1 RoleRef`.
#[derive(Clone, PartialEq, Message)]
pub struct RoleRef {
    #[prost(string, optional, tag = "1")]
    pub api_group: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub kind: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub name: Option<String>,
}

/// `rbac/v1 RoleBinding` and `ClusterRoleBinding`.
#[derive(Clone, PartialEq, Message)]
pub struct Binding {
    #[prost(message, optional, tag = "1")]
    pub metadata: Option<ObjectMeta>,
    #[prost(message, repeated, tag = "2")]
    pub subjects: Vec<Subject>,
    #[prost(message, optional, tag = "3")]
    pub role_ref: Option<RoleRef>,
}

fn rule_json(r: PolicyRule) -> Value {
    let mut o = Map::new();
    put_strings(&mut o, "verbs", r.verbs);
    put_strings(&mut o, "apiGroups", r.api_groups);
    put_strings(&mut o, "resources", r.resources);
    put_strings(&mut o, "resourceNames", r.resource_names);
    put_strings(&mut o, "nonResourceURLs", r.non_resource_urls);
    Value::Object(o)
}

pub(super) fn selector_json(s: LabelSelector) -> Value {
    let mut o = Map::new();
    put_map(&mut o, "matchLabels", s.match_labels);
    if !s.match_expressions.is_empty() {
        let exprs = s
            .match_expressions
            .into_iter()
            .map(|e| {
                let mut x = Map::new();
                put_str(&mut x, "key", e.key);
                put_str(&mut x, "operator", e.operator);
                put_strings(&mut x, "values", e.values);
                Value::Object(x)
            })
            .collect();
        o.insert("matchExpressions".into(), Value::Array(exprs));
    }
    Value::Object(o)
}

/// JSON of a Role / ClusterRole (empty lists omitted, as for a JSON body that leaves them out).
pub fn role_json(r: Role) -> Map<String, Value> {
    let mut m = with_meta(Map::new(), r.metadata);
    let rules: Vec<Value> = r.rules.into_iter().map(rule_json).collect();
    if !rules.is_empty() {
        m.insert("rules".into(), Value::Array(rules));
    }
    if let Some(agg) = r.aggregation_rule {
        let sels: Vec<Value> = agg
            .cluster_role_selectors
            .into_iter()
            .map(selector_json)
            .collect();
        let mut a = Map::new();
        if !sels.is_empty() {
            a.insert("clusterRoleSelectors".into(), Value::Array(sels));
        }
        m.insert("aggregationRule".into(), Value::Object(a));
    }
    m
}

/// JSON of a RoleBinding / ClusterRoleBinding.
pub fn binding_json(b: Binding) -> Map<String, Value> {
    let mut m = with_meta(Map::new(), b.metadata);
    if !b.subjects.is_empty() {
        let subjects = b
            .subjects
            .into_iter()
            .map(|s| {
                let mut o = Map::new();
                put_str(&mut o, "kind", s.kind);
                put_str(&mut o, "apiGroup", s.api_group);
                put_str(&mut o, "name", s.name);
                put_str(&mut o, "namespace", s.namespace);
                Value::Object(o)
            })
            .collect();
        m.insert("subjects".into(), Value::Array(subjects));
    }
    let mut rr = Map::new();
    if let Some(r) = b.role_ref {
        put_str(&mut rr, "apiGroup", r.api_group);
        put_str(&mut rr, "kind", r.kind);
        put_str(&mut rr, "name", r.name);
    }
    m.insert("roleRef".into(), Value::Object(rr));
    m
}

#[cfg(test)]
mod tests {
    use super::super::{decode, encode};
    use super::*;
    use serde_json::json;

    /// A RoleBinding assembled byte by byte, so the field numbers are checked independently
    /// of the prost structs.
    #[test]
    fn hand_assembled_role_binding_decodes() {
        let meta = [0x0a, 0x02, b'r', b'b'];
        let subject = [
            0x0a, 0x04, b'U', b's', b'e', b'r', 0x1a, 0x03, b'b', b'o', b'b', 0x22, 0x01, b'n',
        ];
        let role_ref = [
            0x0a, 0x01, b'g', 0x12, 0x04, b'R', b'o', b'l', b'e', 0x1a, 0x01, b'r',
        ];
        let mut raw = vec![0x0a, meta.len() as u8];
        raw.extend(meta);
        raw.extend([0x12, subject.len() as u8]);
        raw.extend(subject);
        raw.extend([0x1a, role_ref.len() as u8]);
        raw.extend(role_ref);
        let msg = Binding::decode(raw.as_slice()).unwrap();
        let v = decode(&encode("rbac.authorization.k8s.io/v1", "RoleBinding", &msg)).unwrap();
        assert_eq!(
            v,
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                   "metadata": {"name": "rb"},
                   "subjects": [{"kind": "User", "name": "bob", "namespace": "n"}],
                   "roleRef": {"apiGroup": "g", "kind": "Role", "name": "r"}})
        );
    }

    #[test]
    fn cluster_role_with_rules_and_aggregation() {
        let role = Role {
            metadata: Some(ObjectMeta {
                name: Some("agg".into()),
                ..Default::default()
            }),
            rules: vec![PolicyRule {
                verbs: vec!["get".into()],
                non_resource_urls: vec!["/healthz".into()],
                ..Default::default()
            }],
            aggregation_rule: Some(AggregationRule {
                cluster_role_selectors: vec![LabelSelector {
                    match_labels: BTreeMap::from([("team".to_string(), "a".to_string())]),
                    match_expressions: vec![LabelSelectorRequirement {
                        key: Some("tier".into()),
                        operator: Some("In".into()),
                        values: vec!["x".into()],
                    }],
                }],
            }),
        };
        let v = decode(&encode(
            "rbac.authorization.k8s.io/v1",
            "ClusterRole",
            &role,
        ))
        .unwrap();
        assert_eq!(
            v["rules"],
            json!([{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}])
        );
        assert_eq!(
            v["aggregationRule"],
            json!({"clusterRoleSelectors": [{"matchLabels": {"team": "a"},
                "matchExpressions": [{"key": "tier", "operator": "In", "values": ["x"]}]}]})
        );
        let plain = Role::default();
        let v = decode(&encode("rbac.authorization.k8s.io/v1", "Role", &plain)).unwrap();
        assert_eq!(
            v,
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {}})
        );
    }
}

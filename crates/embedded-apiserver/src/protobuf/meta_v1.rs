//! `meta/v1 DeleteOptions` (protobuf form), the body of a DELETE a client with the protobuf
//! content type sends (controller-runtime's client deleting a built-in kind, e.g. the k3s
//! bootstrap provider's init-lock ConfigMap): field numbers of
//! `k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto`.

use prost::Message;
use serde_json::{Map, Value, json};

/// `metav1.Preconditions`.
#[derive(Clone, PartialEq, Message)]
pub struct Preconditions {
    #[prost(string, optional, tag = "1")]
    pub uid: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub resource_version: Option<String>,
}

/// `metav1.DeleteOptions`.
#[derive(Clone, PartialEq, Message)]
pub struct DeleteOptions {
    #[prost(int64, optional, tag = "1")]
    pub grace_period_seconds: Option<i64>,
    #[prost(message, optional, tag = "2")]
    pub preconditions: Option<Preconditions>,
    #[prost(bool, optional, tag = "3")]
    pub orphan_dependents: Option<bool>,
    #[prost(string, optional, tag = "4")]
    pub propagation_policy: Option<String>,
    #[prost(string, repeated, tag = "5")]
    pub dry_run: Vec<String>,
    #[prost(bool, optional, tag = "6")]
    pub ignore_store_read_error_with_cluster_breaking_potential: Option<bool>,
}

/// The JSON form of `m` (what the JSON decoder of DELETE bodies reads).
pub(super) fn delete_options_json(m: DeleteOptions) -> Map<String, Value> {
    let mut out = Map::new();
    if let Some(g) = m.grace_period_seconds {
        out.insert("gracePeriodSeconds".into(), json!(g));
    }
    if let Some(p) = m.preconditions {
        let mut pre = Map::new();
        if let Some(uid) = p.uid {
            pre.insert("uid".into(), json!(uid));
        }
        if let Some(rv) = p.resource_version {
            pre.insert("resourceVersion".into(), json!(rv));
        }
        out.insert("preconditions".into(), Value::Object(pre));
    }
    if let Some(o) = m.orphan_dependents {
        out.insert("orphanDependents".into(), json!(o));
    }
    if let Some(p) = m.propagation_policy {
        out.insert("propagationPolicy".into(), json!(p));
    }
    if !m.dry_run.is_empty() {
        out.insert("dryRun".into(), json!(m.dry_run));
    }
    if let Some(i) = m.ignore_store_read_error_with_cluster_breaking_potential {
        out.insert(
            "ignoreStoreReadErrorWithClusterBreakingPotential".into(),
            json!(i),
        );
    }
    out
}

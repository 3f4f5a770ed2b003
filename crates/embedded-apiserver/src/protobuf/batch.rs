//! `batch/v1 Job`, which `kubectl create job` sends as protobuf. Field numbers follow
//! `k8s.io/api/batch/v1/generated.proto`; the pod template is `apps`' model. Modelled: the
//! scalar spec fields, the selector and the template (what `kubectl create job` and a typed
//! client set); the JSON follows Go's `omitempty` as the JSON body of the same object would.

use super::apps::{PodTemplateSpec, template_json};
use super::rbac::{LabelSelector, selector_json};
use super::{ObjectMeta, put_str, with_meta};
use prost::Message;
use serde_json::{Map, Value};

/// `batch/v1 JobSpec`.
#[derive(Clone, PartialEq, Message)]
pub struct JobSpec {
    #[prost(int32, optional, tag = "1")]
    pub parallelism: Option<i32>,
    #[prost(int32, optional, tag = "2")]
    pub completions: Option<i32>,
    #[prost(int64, optional, tag = "3")]
    pub active_deadline_seconds: Option<i64>,
    #[prost(message, optional, tag = "4")]
    pub selector: Option<LabelSelector>,
    #[prost(bool, optional, tag = "5")]
    pub manual_selector: Option<bool>,
    #[prost(message, optional, tag = "6")]
    pub template: Option<PodTemplateSpec>,
    #[prost(int32, optional, tag = "7")]
    pub backoff_limit: Option<i32>,
    #[prost(int32, optional, tag = "8")]
    pub ttl_seconds_after_finished: Option<i32>,
    #[prost(string, optional, tag = "9")]
    pub completion_mode: Option<String>,
    #[prost(bool, optional, tag = "10")]
    pub suspend: Option<bool>,
    #[prost(int32, optional, tag = "12")]
    pub backoff_limit_per_index: Option<i32>,
    #[prost(int32, optional, tag = "13")]
    pub max_failed_indexes: Option<i32>,
    #[prost(string, optional, tag = "14")]
    pub pod_replacement_policy: Option<String>,
    #[prost(string, optional, tag = "15")]
    pub managed_by: Option<String>,
}

/// `batch/v1 JobStatus`: a client's create carries it empty; its content is the controller's.
#[derive(Clone, PartialEq, Message)]
pub struct JobStatus {}

/// `batch/v1 Job`.
#[derive(Clone, PartialEq, Message)]
pub struct Job {
    #[prost(message, optional, tag = "1")]
    pub metadata: Option<ObjectMeta>,
    #[prost(message, optional, tag = "2")]
    pub spec: Option<JobSpec>,
    #[prost(message, optional, tag = "3")]
    pub status: Option<JobStatus>,
}

/// JSON of a Job.
pub fn job_json(j: Job) -> Map<String, Value> {
    let mut m = with_meta(Map::new(), j.metadata);
    let mut spec = Map::new();
    if let Some(s) = j.spec {
        // Pointer fields: written whenever set, zero included.
        let ints = [
            ("parallelism", s.parallelism.map(i64::from)),
            ("completions", s.completions.map(i64::from)),
            ("activeDeadlineSeconds", s.active_deadline_seconds),
            ("backoffLimit", s.backoff_limit.map(i64::from)),
            (
                "backoffLimitPerIndex",
                s.backoff_limit_per_index.map(i64::from),
            ),
            ("maxFailedIndexes", s.max_failed_indexes.map(i64::from)),
            (
                "ttlSecondsAfterFinished",
                s.ttl_seconds_after_finished.map(i64::from),
            ),
        ];
        for (key, value) in ints {
            if let Some(v) = value {
                spec.insert(key.into(), Value::from(v));
            }
        }
        if let Some(sel) = s.selector {
            spec.insert("selector".into(), selector_json(sel));
        }
        if let Some(v) = s.manual_selector {
            spec.insert("manualSelector".into(), Value::Bool(v));
        }
        spec.insert("template".into(), template_json(s.template));
        put_str(&mut spec, "completionMode", s.completion_mode);
        if let Some(v) = s.suspend {
            spec.insert("suspend".into(), Value::Bool(v));
        }
        put_str(&mut spec, "podReplacementPolicy", s.pod_replacement_policy);
        put_str(&mut spec, "managedBy", s.managed_by);
    }
    m.insert("spec".into(), Value::Object(spec));
    if j.status.is_some() {
        m.insert("status".into(), Value::Object(Map::new()));
    }
    m
}

#[cfg(test)]
mod tests {
    use super::super::apps::{Container, PodSpec};
    use super::super::{decode, encode};
    use super::*;
    use serde_json::json;

    /// What `kubectl create job pi --image=perl:5 -- perl -e 1` sends.
    #[test]
    fn kubectl_create_job_body() {
        let job = Job {
            metadata: Some(ObjectMeta {
                name: Some("pi".into()),
                ..Default::default()
            }),
            spec: Some(JobSpec {
                template: Some(PodTemplateSpec {
                    metadata: Some(ObjectMeta::default()),
                    spec: Some(PodSpec {
                        containers: vec![Container {
                            name: Some("pi".into()),
                            image: Some("perl:5".into()),
                            command: vec!["perl".into(), "-e".into(), "1".into()],
                            ..Default::default()
                        }],
                        restart_policy: Some("Never".into()),
                        ..Default::default()
                    }),
                }),
                ..Default::default()
            }),
            status: Some(JobStatus {}),
        };
        let v = decode(&encode("batch/v1", "Job", &job)).unwrap();
        assert_eq!(v["apiVersion"], "batch/v1");
        assert_eq!(v["kind"], "Job");
        assert_eq!(v["metadata"]["name"], "pi");
        assert_eq!(
            v["spec"]["template"]["spec"],
            json!({"containers": [{"name": "pi", "image": "perl:5",
                "command": ["perl", "-e", "1"], "resources": {}}],
                "restartPolicy": "Never"})
        );
        assert_eq!(v["status"], json!({}));
    }
}

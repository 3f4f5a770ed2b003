//! `batch/v1 Job` as kube-apiserver stores it (no controller runs it: no pods, no status):
//! the v1 defaults (`SetDefaults_Job` and the pod template's `SetDefaults_PodSpec`/`Container`
//! that manifests commonly leave out), the selector and template labels `PrepareForCreate`
//! generates from the Job's UID, `ValidateJob`'s checks of the spec, and the fields
//! `ValidateJobSpecUpdate` keeps immutable.

use super::cause::Cause;
use crate::selector::LabelSelector;
use serde_json::{Map, Value, json};

/// `batch.kubernetes.io/controller-uid`: the generated selector's key.
pub const CONTROLLER_UID_LABEL: &str = "batch.kubernetes.io/controller-uid";
/// `batch.kubernetes.io/job-name`.
pub const JOB_NAME_LABEL: &str = "batch.kubernetes.io/job-name";
const LEGACY_CONTROLLER_UID_LABEL: &str = "controller-uid";
const LEGACY_JOB_NAME_LABEL: &str = "job-name";

fn object_at<'a>(v: &'a mut Value, key: &str) -> Option<&'a mut Map<String, Value>> {
    let m = v.as_object_mut()?;
    if !m.get(key).is_some_and(Value::is_object) {
        m.insert(key.to_string(), json!({}));
    }
    m.get_mut(key).and_then(Value::as_object_mut)
}

fn default_field(m: &mut Map<String, Value>, key: &str, value: Value) {
    if m.get(key).is_none_or(Value::is_null) {
        m.insert(key.to_string(), value);
    }
}

/// kube's `imagePullPolicy` default: `Always` for `:latest` or an untagged image (by name, not
/// digest), else `IfNotPresent`.
fn pull_policy(image: &str) -> &'static str {
    if image.contains('@') {
        return "IfNotPresent";
    }
    let last = image.rsplit('/').next().unwrap_or(image);
    match last.split_once(':') {
        Some((_, "latest")) | None => "Always",
        Some(_) => "IfNotPresent",
    }
}

/// The v1 defaults of a Job (create and update: they apply to every decoded object).
pub fn default(job: &mut Value) {
    let Some(spec) = object_at(job, "spec") else {
        return;
    };
    if spec.get("completions").is_none_or(Value::is_null)
        && spec.get("parallelism").is_none_or(Value::is_null)
    {
        spec.insert("completions".into(), json!(1));
        spec.insert("parallelism".into(), json!(1));
    }
    default_field(spec, "parallelism", json!(1));
    default_field(spec, "backoffLimit", json!(6));
    default_field(spec, "completionMode", json!("NonIndexed"));
    default_field(spec, "suspend", json!(false));
    default_field(spec, "manualSelector", json!(false));
    let replacement = if spec.get("podFailurePolicy").is_some_and(|p| !p.is_null()) {
        "Failed"
    } else {
        "TerminatingOrFailed"
    };
    default_field(spec, "podReplacementPolicy", json!(replacement));
    let Some(template) = spec.get_mut("template") else {
        return;
    };
    let Some(pod) = object_at(template, "spec") else {
        return;
    };
    default_field(pod, "restartPolicy", json!("Always"));
    default_field(pod, "dnsPolicy", json!("ClusterFirst"));
    default_field(pod, "schedulerName", json!("default-scheduler"));
    default_field(pod, "terminationGracePeriodSeconds", json!(30));
    default_field(pod, "securityContext", json!({}));
    for list in ["initContainers", "containers"] {
        for c in pod
            .get_mut(list)
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            let Some(c) = c.as_object_mut() else { continue };
            let policy = pull_policy(c.get("image").and_then(Value::as_str).unwrap_or(""));
            default_field(c, "imagePullPolicy", json!(policy));
            default_field(c, "terminationMessagePath", json!("/dev/termination-log"));
            default_field(c, "terminationMessagePolicy", json!("File"));
            default_field(c, "resources", json!({}));
            for p in c
                .get_mut("ports")
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
            {
                if let Some(p) = p.as_object_mut() {
                    default_field(p, "protocol", json!("TCP"));
                }
            }
        }
    }
}

/// `PrepareForCreate`: unless `spec.manualSelector` is true, the template gets the job-name and
/// controller-uid labels (legacy and `batch.kubernetes.io/` keys, user values kept) and the
/// selector matches the controller-uid label.
pub fn prepare_create(job: &mut Value, name: &str, uid: &str) {
    // The status a client sent is dropped; what is stored is JobStatus's zero value.
    if let Some(m) = job.as_object_mut() {
        m.insert("status".into(), json!({}));
    }
    if job.pointer("/spec/manualSelector") == Some(&Value::Bool(true)) {
        return;
    }
    let Some(spec) = object_at(job, "spec") else {
        return;
    };
    if let Some(template) = object_at_mut(spec, "template")
        && let Some(meta) = object_at(template, "metadata")
        && let Some(labels) = object_at_map(meta, "labels")
    {
        for (key, value) in [
            (LEGACY_JOB_NAME_LABEL, name),
            (JOB_NAME_LABEL, name),
            (LEGACY_CONTROLLER_UID_LABEL, uid),
            (CONTROLLER_UID_LABEL, uid),
        ] {
            labels
                .entry(key.to_string())
                .or_insert_with(|| json!(value));
        }
    }
    if let Some(selector) = object_at_map(spec, "selector")
        && let Some(match_labels) = object_at_map(selector, "matchLabels")
    {
        match_labels
            .entry(CONTROLLER_UID_LABEL.to_string())
            .or_insert_with(|| json!(uid));
    }
}

fn object_at_mut<'a>(m: &'a mut Map<String, Value>, key: &str) -> Option<&'a mut Value> {
    if !m.get(key).is_some_and(Value::is_object) {
        m.insert(key.to_string(), json!({}));
    }
    m.get_mut(key)
}

fn object_at_map<'a>(
    m: &'a mut Map<String, Value>,
    key: &str,
) -> Option<&'a mut Map<String, Value>> {
    object_at_mut(m, key).and_then(Value::as_object_mut)
}

fn nonnegative(spec: &Value, field: &str, out: &mut Vec<Cause>) {
    if let Some(n) = spec.get(field).and_then(Value::as_i64)
        && n < 0
    {
        out.push(Cause::invalid(
            &format!("spec.{field}"),
            &json!(n),
            "must be greater than or equal to 0",
        ));
    }
}

/// `ValidateJob`'s checks of the spec (metadata is validated by the caller).
pub fn validate(job: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    let spec = job.get("spec").cloned().unwrap_or(Value::Null);
    for field in [
        "parallelism",
        "completions",
        "backoffLimit",
        "activeDeadlineSeconds",
    ] {
        nonnegative(&spec, field, &mut out);
    }
    match spec.get("selector").filter(|s| !s.is_null()) {
        None => out.push(Cause::required("spec.selector", "")),
        Some(selector) => match LabelSelector::from_label_selector(selector) {
            Ok(sel) => {
                let labels = spec.pointer("/template/metadata/labels");
                if !sel.matches_json(labels) {
                    out.push(Cause::invalid(
                        "spec.template.metadata.labels",
                        labels.unwrap_or(&Value::Null),
                        "`selector` does not match template `labels`",
                    ));
                }
            }
            Err(e) => out.push(Cause::invalid("spec.selector", selector, &e.0)),
        },
    }
    let restart = spec
        .pointer("/template/spec/restartPolicy")
        .cloned()
        .unwrap_or(json!(""));
    if restart != "OnFailure" && restart != "Never" {
        out.push(Cause::not_supported(
            "spec.template.spec.restartPolicy",
            &restart,
            &["OnFailure".to_string(), "Never".to_string()],
        ));
    }
    let containers = spec
        .pointer("/template/spec/containers")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    if containers == 0 {
        out.push(Cause::required("spec.template.spec.containers", ""));
    }
    for (i, c) in spec
        .pointer("/template/spec/containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        if c.get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .is_empty()
        {
            out.push(Cause::required(
                &format!("spec.template.spec.containers[{i}].name"),
                "",
            ));
        }
        if c.get("image")
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim()
            .is_empty()
        {
            out.push(Cause::required(
                &format!("spec.template.spec.containers[{i}].image"),
                "",
            ));
        }
    }
    out
}

/// `ValidateJobSpecUpdate`: the selector, the pod template and the completion mode are
/// immutable (kube allows a few scheduling fields of a suspended, never started Job; such a Job
/// cannot exist here, where none starts, so that exception is not modelled).
pub fn validate_update(new: &Value, old: &Value) -> Vec<Cause> {
    let mut out = validate(new);
    for field in ["selector", "template", "completionMode"] {
        let a = new
            .pointer(&format!("/spec/{field}"))
            .cloned()
            .unwrap_or(Value::Null);
        let b = old
            .pointer(&format!("/spec/{field}"))
            .cloned()
            .unwrap_or(Value::Null);
        if !super::validate::json_eq(&a, &b) {
            out.push(Cause::invalid(
                &format!("spec.{field}"),
                &a,
                "field is immutable",
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> Value {
        json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "n"},
            "spec": {"template": {"spec": {"restartPolicy": "Never",
                "containers": [{"name": "c", "image": "img:v1"}]}}}})
    }

    fn created() -> Value {
        let mut j = job();
        default(&mut j);
        prepare_create(&mut j, "j", "u-1");
        j
    }

    #[test]
    fn defaults_and_generated_selector() {
        let j = created();
        let spec = &j["spec"];
        assert_eq!(spec["completions"], 1);
        assert_eq!(spec["parallelism"], 1);
        assert_eq!(spec["backoffLimit"], 6);
        assert_eq!(spec["completionMode"], "NonIndexed");
        assert_eq!(spec["suspend"], false);
        assert_eq!(spec["manualSelector"], false);
        assert_eq!(spec["podReplacementPolicy"], "TerminatingOrFailed");
        assert_eq!(spec["selector"]["matchLabels"][CONTROLLER_UID_LABEL], "u-1");
        let labels = &spec["template"]["metadata"]["labels"];
        assert_eq!(labels["job-name"], "j");
        assert_eq!(labels[JOB_NAME_LABEL], "j");
        assert_eq!(labels["controller-uid"], "u-1");
        let c = &spec["template"]["spec"]["containers"][0];
        assert_eq!(c["imagePullPolicy"], "IfNotPresent");
        assert_eq!(c["terminationMessagePath"], "/dev/termination-log");
        assert_eq!(spec["template"]["spec"]["dnsPolicy"], "ClusterFirst");
        assert!(validate(&j).is_empty(), "{:?}", validate(&j));
    }

    #[test]
    fn pull_policy_defaults_like_kube() {
        assert_eq!(pull_policy("busybox"), "Always");
        assert_eq!(pull_policy("busybox:latest"), "Always");
        assert_eq!(pull_policy("registry:5000/busybox"), "Always");
        assert_eq!(pull_policy("registry:5000/busybox:1.0"), "IfNotPresent");
        assert_eq!(pull_policy("busybox@sha256:abc"), "IfNotPresent");
    }

    #[test]
    fn restart_policy_containers_and_selector_are_validated() {
        let mut j = job();
        j["spec"]["template"]["spec"]
            .as_object_mut()
            .unwrap()
            .remove("restartPolicy");
        default(&mut j);
        prepare_create(&mut j, "j", "u-1");
        let errs: Vec<String> = validate(&j).iter().map(Cause::error_string).collect();
        assert_eq!(
            errs,
            [
                "spec.template.spec.restartPolicy: Unsupported value: \"Always\": supported values: \"OnFailure\", \"Never\""
            ]
        );

        let mut j = job();
        j["spec"]["manualSelector"] = json!(true);
        j["spec"]["template"]["spec"]["containers"] = json!([]);
        default(&mut j);
        prepare_create(&mut j, "j", "u-1");
        let errs: Vec<String> = validate(&j).iter().map(Cause::error_string).collect();
        assert_eq!(
            errs,
            [
                "spec.selector: Required value",
                "spec.template.spec.containers: Required value"
            ]
        );

        let mut j = created();
        j["spec"]["selector"]["matchLabels"][CONTROLLER_UID_LABEL] = json!("other");
        let errs: Vec<String> = validate(&j).iter().map(Cause::error_string).collect();
        assert_eq!(errs.len(), 1);
        assert!(
            errs[0].ends_with("`selector` does not match template `labels`"),
            "{errs:?}"
        );
    }

    #[test]
    fn template_and_selector_are_immutable() {
        let old = created();
        let mut new = old.clone();
        assert!(validate_update(&new, &old).is_empty());
        new["spec"]["template"]["spec"]["containers"][0]["image"] = json!("img:v2");
        let errs: Vec<String> = validate_update(&new, &old)
            .iter()
            .map(Cause::error_string)
            .collect();
        assert_eq!(errs.len(), 1);
        assert!(
            errs[0].starts_with("spec.template: Invalid value"),
            "{errs:?}"
        );
        assert!(errs[0].ends_with("field is immutable"), "{errs:?}");
    }
}

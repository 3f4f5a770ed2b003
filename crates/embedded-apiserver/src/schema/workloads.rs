//! Defaults and validation of the built-in kinds a provider's components file holds besides
//! RBAC and Secrets: `v1 Service`, `apps/v1 Deployment` (kube
//! `pkg/apis/{core,apps}/{v1/defaults,validation}`), and the dispatch for the webhook
//! configurations ([`super::webhooks`]): the parts a manifest can get wrong cheaply: required
//! fields, enums, port ranges, the Deployment selector matching its template. Nothing runs
//! them: a Deployment is stored, not rolled out.

use super::cause::Cause;
use super::names;
use serde_json::{Map, Value, json};

pub(super) fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

pub(super) fn list_of<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

pub(super) fn supported(values: &[&str]) -> Vec<String> {
    values.iter().map(|s| s.to_string()).collect()
}

/// Sets `key` on an object when it is absent (or null).
pub(super) fn default_to(obj: &mut Map<String, Value>, key: &str, value: Value) {
    if obj.get(key).is_none_or(Value::is_null) {
        obj.insert(key.to_string(), value);
    }
}

/// The object at `key`, created empty when absent.
fn child<'a>(obj: &'a mut Map<String, Value>, key: &str) -> Option<&'a mut Map<String, Value>> {
    if !obj.get(key).is_some_and(Value::is_object) {
        obj.insert(key.to_string(), json!({}));
    }
    obj.get_mut(key).and_then(Value::as_object_mut)
}

/// Defaults of a built-in kind (v1 defaulting functions); `old` is the stored object on update.
pub fn apply_defaults(kind: &str, obj: &mut Value, old: Option<&Value>) {
    match kind {
        "Service" => default_service(obj, old),
        "Deployment" | "DaemonSet" => default_pod_workload(kind, obj),
        _ => {}
    }
}

/// Content validation of the kinds of this module (empty for others).
pub fn validate(kind: &str, obj: &Value) -> Vec<Cause> {
    match kind {
        "Service" => validate_service(obj),
        "Deployment" | "DaemonSet" => validate_pod_workload(kind, obj),
        _ => Vec::new(),
    }
}

/// What may not change on update (`spec.clusterIP` of a Service, a Deployment's selector).
pub fn validate_update(kind: &str, new: &Value, old: &Value) -> Vec<Cause> {
    let mut out = validate(kind, new);
    let changed = |ptr: &str| new.pointer(ptr) != old.pointer(ptr);
    match kind {
        "Service" if changed("/spec/clusterIP") && old.pointer("/spec/clusterIP").is_some() => {
            out.push(Cause::invalid(
                "spec.clusterIP",
                new.pointer("/spec/clusterIP").unwrap_or(&Value::Null),
                "field is immutable",
            ));
        }
        "Deployment" | "DaemonSet" if changed("/spec/selector") => {
            out.push(Cause::invalid(
                "spec.selector",
                new.pointer("/spec/selector").unwrap_or(&Value::Null),
                "field is immutable",
            ));
        }
        _ => {}
    }
    out
}

// --- Service ---

/// The service cluster IP range the emulator allocates from (kube's common default).
pub const SERVICE_CIDR_BASE: [u8; 2] = [10, 96];

fn default_service(obj: &mut Value, old: Option<&Value>) {
    let Some(spec) = obj.as_object_mut().and_then(|o| child(o, "spec")) else {
        return;
    };
    default_to(spec, "type", json!("ClusterIP"));
    default_to(spec, "sessionAffinity", json!("None"));
    let external_name = spec.get("type").and_then(Value::as_str) == Some("ExternalName");
    if !external_name {
        default_to(spec, "internalTrafficPolicy", json!("Cluster"));
    }
    if matches!(
        spec.get("type").and_then(Value::as_str),
        Some("NodePort" | "LoadBalancer")
    ) {
        default_to(spec, "externalTrafficPolicy", json!("Cluster"));
    }
    if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
        for p in ports.iter_mut().filter_map(Value::as_object_mut) {
            default_to(p, "protocol", json!("TCP"));
            let port = p.get("port").cloned().unwrap_or(Value::Null);
            if p.get("targetPort")
                .is_none_or(|t| t.is_null() || t == &json!(0))
            {
                p.insert("targetPort".into(), port);
            }
        }
    }
    // The allocated IP stays across updates that do not name one.
    if let Some(old_spec) = old.and_then(|o| o.get("spec")) {
        for k in ["clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"] {
            if let Some(v) = old_spec.get(k) {
                default_to(spec, k, v.clone());
            }
        }
    }
    if let Some(ip) = spec.get("clusterIP").cloned()
        && ip.is_string()
    {
        default_to(spec, "clusterIPs", json!([ip]));
    }
    if !external_name {
        let headless = spec.get("clusterIP").and_then(Value::as_str) == Some("None");
        default_to(spec, "ipFamilyPolicy", json!("SingleStack"));
        if !headless || spec.contains_key("selector") {
            default_to(spec, "ipFamilies", json!(["IPv4"]));
        }
    }
    if let Some(o) = obj.as_object_mut() {
        default_to(o, "status", json!({"loadBalancer": {}}));
    }
}

/// Whether a Service needs a cluster IP allocated (not ExternalName, not headless, none given).
pub fn needs_cluster_ip(obj: &Value) -> bool {
    obj.pointer("/spec/type").and_then(Value::as_str) != Some("ExternalName")
        && obj
            .pointer("/spec/clusterIP")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
}

/// Gives a Service `ip` as its cluster IP.
pub fn set_cluster_ip(obj: &mut Value, ip: &str) {
    if let Some(spec) = obj.pointer_mut("/spec").and_then(Value::as_object_mut) {
        spec.insert("clusterIP".into(), json!(ip));
        spec.insert("clusterIPs".into(), json!([ip]));
    }
}

pub(super) fn valid_port(v: &Value) -> bool {
    v.as_i64().is_some_and(|p| (1..=65535).contains(&p))
}

const PORT_RANGE: &str = "must be between 1 and 65535, inclusive";

fn validate_service(obj: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
    let type_ = str_of(&spec, "type");
    let types = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];
    if !types.contains(&type_) {
        out.push(Cause::not_supported(
            "spec.type",
            &json!(type_),
            &supported(&types),
        ));
    }
    let affinity = str_of(&spec, "sessionAffinity");
    if !["ClientIP", "None"].contains(&affinity) {
        out.push(Cause::not_supported(
            "spec.sessionAffinity",
            &json!(affinity),
            &supported(&["ClientIP", "None"]),
        ));
    }
    let headless = str_of(&spec, "clusterIP") == "None";
    let ports = list_of(&spec, "ports");
    if type_ == "ExternalName" {
        if str_of(&spec, "externalName").is_empty() {
            out.push(Cause::required("spec.externalName", ""));
        }
    } else if ports.is_empty() && !headless {
        out.push(Cause::required("spec.ports", ""));
    }
    let mut names: Vec<&str> = Vec::new();
    for (i, p) in ports.iter().enumerate() {
        let path = format!("spec.ports[{i}]");
        let name = str_of(p, "name");
        if name.is_empty() {
            if ports.len() > 1 {
                out.push(Cause::required(&format!("{path}.name"), ""));
            }
        } else {
            for msg in names::dns1123_label(name) {
                out.push(Cause::invalid(&format!("{path}.name"), &json!(name), &msg));
            }
            if names.contains(&name) {
                out.push(Cause::duplicate(&format!("{path}.name"), &json!(name)));
            }
            names.push(name);
        }
        let port = p.get("port").cloned().unwrap_or(json!(0));
        if !valid_port(&port) {
            out.push(Cause::invalid(&format!("{path}.port"), &port, PORT_RANGE));
        }
        let protocol = str_of(p, "protocol");
        if !["SCTP", "TCP", "UDP"].contains(&protocol) {
            out.push(Cause::not_supported(
                &format!("{path}.protocol"),
                &json!(protocol),
                &supported(&["SCTP", "TCP", "UDP"]),
            ));
        }
        match p.get("targetPort") {
            Some(Value::String(s)) => {
                for msg in port_name_errors(s) {
                    out.push(Cause::invalid(
                        &format!("{path}.targetPort"),
                        &json!(s),
                        msg,
                    ));
                }
            }
            Some(v) if !valid_port(v) => {
                out.push(Cause::invalid(&format!("{path}.targetPort"), v, PORT_RANGE));
            }
            _ => {}
        }
    }
    out
}

/// `IsValidPortName` (an IANA service name).
fn port_name_errors(name: &str) -> Vec<&'static str> {
    let mut errs = Vec::new();
    if name.len() > 15 {
        errs.push("must be no more than 15 characters");
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        errs.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
    }
    if name.contains("--") {
        errs.push("must not contain consecutive hyphens");
    }
    if !name.chars().any(|c| c.is_ascii_lowercase()) {
        errs.push("must contain at least one letter (a-z)");
    }
    if name.starts_with('-') || name.ends_with('-') {
        errs.push("must not begin or end with a hyphen");
    }
    errs
}

// --- Deployment, DaemonSet (apps/v1 kinds made of a pod template) ---

/// `SetDefaults_Deployment` / `SetDefaults_DaemonSet` (`pkg/apis/apps/v1/defaults.go`) and the
/// pod template's defaults.
fn default_pod_workload(kind: &str, obj: &mut Value) {
    // The status is a struct: Go writes its zero value (a DaemonSet's counters are not
    // omitted when zero).
    if let Some(o) = obj.as_object_mut() {
        let zero = if kind == "DaemonSet" {
            json!({"currentNumberScheduled": 0, "numberMisscheduled": 0,
                "desiredNumberScheduled": 0, "numberReady": 0})
        } else {
            json!({})
        };
        default_to(o, "status", zero);
    }
    let Some(spec) = obj.as_object_mut().and_then(|o| child(o, "spec")) else {
        return;
    };
    default_to(spec, "revisionHistoryLimit", json!(10));
    let (strategy_key, max_unavailable, max_surge) = if kind == "DaemonSet" {
        ("updateStrategy", json!(1), json!(0))
    } else {
        default_to(spec, "replicas", json!(1));
        default_to(spec, "progressDeadlineSeconds", json!(600));
        ("strategy", json!("25%"), json!("25%"))
    };
    if let Some(strategy) = child(spec, strategy_key) {
        default_to(strategy, "type", json!("RollingUpdate"));
        if strategy.get("type").and_then(Value::as_str) == Some("RollingUpdate")
            && let Some(ru) = child(strategy, "rollingUpdate")
        {
            default_to(ru, "maxUnavailable", max_unavailable);
            default_to(ru, "maxSurge", max_surge);
        }
    }
    let Some(pod) = spec
        .get_mut("template")
        .and_then(Value::as_object_mut)
        .and_then(|t| child(t, "spec"))
    else {
        return;
    };
    default_to(pod, "restartPolicy", json!("Always"));
    default_to(pod, "terminationGracePeriodSeconds", json!(30));
    default_to(pod, "dnsPolicy", json!("ClusterFirst"));
    default_to(pod, "securityContext", json!({}));
    default_to(pod, "schedulerName", json!("default-scheduler"));
    for key in ["initContainers", "containers"] {
        let Some(list) = pod.get_mut(key).and_then(Value::as_array_mut) else {
            continue;
        };
        for c in list.iter_mut().filter_map(Value::as_object_mut) {
            default_to(c, "terminationMessagePath", json!("/dev/termination-log"));
            default_to(c, "terminationMessagePolicy", json!("File"));
            // ResourceRequirements is a struct, not a pointer: Go writes its zero value.
            default_to(c, "resources", json!({}));
            let image = c.get("image").and_then(Value::as_str).unwrap_or("");
            let policy = if image_tag(image).is_none_or(|t| t == "latest") {
                "Always"
            } else {
                "IfNotPresent"
            };
            default_to(c, "imagePullPolicy", json!(policy));
            if let Some(ports) = c.get_mut("ports").and_then(Value::as_array_mut) {
                for p in ports.iter_mut().filter_map(Value::as_object_mut) {
                    default_to(p, "protocol", json!("TCP"));
                }
            }
        }
    }
}

/// The tag of an image reference (`None` without one; a digest counts as a tag).
fn image_tag(image: &str) -> Option<&str> {
    if let Some((_, digest)) = image.split_once('@') {
        return Some(digest);
    }
    let last = image.rsplit('/').next().unwrap_or(image);
    last.split_once(':').map(|(_, t)| t)
}

/// Go's `%#v` of a `map[string]string` (how kube prints template labels in an error).
/// A `map[string]string` as kube 1.36's field errors render it: JSON, keys sorted.
fn go_string_map(v: Option<&Value>) -> String {
    let body = v
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| {
                    format!(
                        "{}:{}",
                        serde_json::to_string(k).unwrap_or_default(),
                        serde_json::to_string(v.as_str().unwrap_or_default()).unwrap_or_default()
                    )
                })
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default();
    format!("{{{body}}}")
}

/// `ValidateDeploymentSpec` / `ValidateDaemonSetSpec` (`pkg/apis/apps/validation`): the selector
/// and the pod template's containers and restart policy.
fn validate_pod_workload(kind: &str, obj: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
    if let Some(r) = spec.get("replicas").and_then(Value::as_i64)
        && r < 0
    {
        out.push(Cause::invalid(
            "spec.replicas",
            &json!(r),
            "must be greater than or equal to 0",
        ));
    }
    let labels = spec.pointer("/template/metadata/labels");
    match spec.get("selector").filter(|s| !s.is_null()) {
        None => out.push(Cause::required("spec.selector", "")),
        Some(sel) => {
            let empty = sel
                .get("matchLabels")
                .and_then(Value::as_object)
                .is_none_or(Map::is_empty)
                && list_of(sel, "matchExpressions").is_empty();
            match super::super::selector::LabelSelector::from_label_selector(sel) {
                _ if empty => out.push(Cause::invalid(
                    "spec.selector",
                    sel,
                    &format!("empty selector is invalid for {}", kind.to_lowercase()),
                )),
                Err(e) => out.push(Cause::invalid("spec.selector", sel, &e.to_string())),
                Ok(s) if !s.matches_json(labels) => out.push(Cause {
                    reason: super::cause::reason::INVALID.into(),
                    message: format!(
                        "Invalid value: {}: `selector` does not match template `labels`",
                        go_string_map(labels)
                    ),
                    field: "spec.template.metadata.labels".into(),
                }),
                Ok(_) => {}
            }
        }
    }
    let pod = spec
        .pointer("/template/spec")
        .cloned()
        .unwrap_or(Value::Null);
    let containers = list_of(&pod, "containers");
    if containers.is_empty() {
        out.push(Cause::required("spec.template.spec.containers", ""));
    }
    for (i, c) in containers.iter().enumerate() {
        let path = format!("spec.template.spec.containers[{i}]");
        let name = str_of(c, "name");
        if name.is_empty() {
            out.push(Cause::required(&format!("{path}.name"), ""));
        } else {
            for msg in names::dns1123_label(name) {
                out.push(Cause::invalid(&format!("{path}.name"), &json!(name), &msg));
            }
        }
        if str_of(c, "image").trim().is_empty() {
            out.push(Cause::required(&format!("{path}.image"), ""));
        }
    }
    let restart = str_of(&pod, "restartPolicy");
    if !restart.is_empty() && restart != "Always" {
        out.push(Cause::not_supported(
            "spec.template.spec.restartPolicy",
            &json!(restart),
            &supported(&["Always"]),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(c: &[Cause]) -> Vec<(&str, &str)> {
        c.iter()
            .map(|c| (c.field.as_str(), c.reason.as_str()))
            .collect()
    }

    #[test]
    fn service_defaults_and_rules() {
        let mut svc = json!({"spec": {"ports": [{"port": 443, "targetPort": "webhook-server"}],
            "selector": {"app": "x"}}});
        apply_defaults("Service", &mut svc, None);
        assert_eq!(svc["spec"]["type"], "ClusterIP");
        assert_eq!(svc["spec"]["ports"][0]["protocol"], "TCP");
        assert_eq!(svc["spec"]["ports"][0]["targetPort"], "webhook-server");
        assert_eq!(svc["spec"]["sessionAffinity"], "None");
        assert!(needs_cluster_ip(&svc));
        set_cluster_ip(&mut svc, "10.96.0.10");
        assert!(validate("Service", &svc).is_empty());
        let mut bare = json!({"spec": {"ports": [{"port": 8443}]}});
        apply_defaults("Service", &mut bare, None);
        assert_eq!(bare["spec"]["ports"][0]["targetPort"], 8443);

        let mut bad =
            json!({"spec": {"type": "Weird", "ports": [{"port": 0}, {"port": 1, "name": "a"}]}});
        apply_defaults("Service", &mut bad, None);
        assert_eq!(
            fields(&validate("Service", &bad)),
            [
                ("spec.type", "FieldValueNotSupported"),
                ("spec.ports[0].name", "FieldValueRequired"),
                ("spec.ports[0].port", "FieldValueInvalid"),
                ("spec.ports[0].targetPort", "FieldValueInvalid"),
            ]
        );
        let mut none = json!({"spec": {}});
        apply_defaults("Service", &mut none, None);
        assert_eq!(
            fields(&validate("Service", &none)),
            [("spec.ports", "FieldValueRequired")]
        );
        // The cluster IP survives an update that leaves it out, and may not change.
        let mut upd = json!({"spec": {"ports": [{"port": 443}]}});
        apply_defaults("Service", &mut upd, Some(&svc));
        assert_eq!(upd["spec"]["clusterIP"], "10.96.0.10");
        let mut moved = upd.clone();
        moved["spec"]["clusterIP"] = json!("10.96.0.11");
        assert_eq!(
            fields(&validate_update("Service", &moved, &svc)),
            [("spec.clusterIP", "FieldValueInvalid")]
        );
    }

    #[test]
    fn deployment_defaults_and_selector_rules() {
        let mut d = json!({"spec": {"selector": {"matchLabels": {"app": "m"}},
            "template": {"metadata": {"labels": {"app": "m"}},
                "spec": {"containers": [{"name": "manager", "image": "r/m:v1"}]}}}});
        apply_defaults("Deployment", &mut d, None);
        assert_eq!(d["spec"]["replicas"], 1);
        assert_eq!(d["spec"]["strategy"]["rollingUpdate"]["maxSurge"], "25%");
        let c = &d["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(c["imagePullPolicy"], "IfNotPresent");
        assert!(validate("Deployment", &d).is_empty());

        let mut bad = d.clone();
        bad["spec"]["template"]["metadata"]["labels"] = json!({"app": "other"});
        bad["spec"]["template"]["spec"]["containers"][0]["image"] = json!("");
        let causes = validate("Deployment", &bad);
        assert_eq!(
            fields(&causes),
            [
                ("spec.template.metadata.labels", "FieldValueInvalid"),
                (
                    "spec.template.spec.containers[0].image",
                    "FieldValueRequired"
                ),
            ]
        );
        assert_eq!(
            causes[0].message,
            "Invalid value: {\"app\":\"other\"}: `selector` does not match template `labels`"
        );
        let none = json!({"spec": {"template": {"spec": {}}}});
        assert_eq!(
            fields(&validate("Deployment", &none)),
            [
                ("spec.selector", "FieldValueRequired"),
                ("spec.template.spec.containers", "FieldValueRequired"),
            ]
        );
        let mut latest =
            json!({"spec": {"template": {"spec": {"containers": [{"image": "nginx"}]}}}});
        apply_defaults("Deployment", &mut latest, None);
        assert_eq!(
            latest["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"],
            "Always"
        );
    }
}

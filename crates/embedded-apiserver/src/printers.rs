//! Server-side Table columns of the built-in kinds (kube `pkg/printers/internalversion`): what
//! `kubectl get deployments,services,…` prints. The server always fills every column, wide ones
//! (priority 1) included; kubectl shows those with `-o wide`.

use serde_json::{Value, json};

use super::meta;

/// One column definition: name, type, priority.
type Col = (&'static str, &'static str, i64);

/// Renders an object's Age cell.
type AgeFn<'a> = &'a dyn Fn(&Value) -> Value;

/// The cells of one row after Name.
type CellsFn = fn(&Value, AgeFn<'_>) -> Vec<Value>;

/// The columns of a built-in kind and how to fill a row (after Name; Age and dates are
/// rendered by the caller through `age`).
pub struct Printer {
    columns: &'static [Col],
    cells: CellsFn,
}

const AGE: Col = ("Age", "string", 0);

/// The printer of a built-in `group`/`kind`, if kube has one beyond Name/Age.
pub fn for_kind(group: &str, kind: &str) -> Option<Printer> {
    let p = |columns: &'static [Col], cells| Some(Printer { columns, cells });
    match (group, kind) {
        ("", "Namespace") => p(&[("Status", "string", 0), AGE], |o, age| {
            vec![json!(meta::str_at(o, "/status/phase")), age(o)]
        }),
        ("", "Secret") => p(
            &[("Type", "string", 0), ("Data", "string", 0), AGE],
            |o, age| {
                vec![
                    json!(meta::str_at(o, "/type")),
                    json!(count(o, "/data")),
                    age(o),
                ]
            },
        ),
        ("", "ConfigMap") => p(&[("Data", "string", 0), AGE], |o, age| {
            vec![json!(count(o, "/data") + count(o, "/binaryData")), age(o)]
        }),
        ("", "ServiceAccount") => p(&[("Secrets", "string", 0), AGE], |o, age| {
            vec![json!(count(o, "/secrets")), age(o)]
        }),
        ("", "Service") => p(
            &[
                ("Type", "string", 0),
                ("Cluster-IP", "string", 0),
                ("External-IP", "string", 0),
                ("Port(s)", "string", 0),
                AGE,
                ("Selector", "string", 1),
            ],
            service_cells,
        ),
        ("apps", "Deployment") => p(
            &[
                ("Ready", "string", 0),
                ("Up-to-date", "string", 0),
                ("Available", "string", 0),
                AGE,
                ("Containers", "string", 1),
                ("Images", "string", 1),
                ("Selector", "string", 1),
            ],
            deployment_cells,
        ),
        ("apps", "DaemonSet") => p(
            &[
                ("Desired", "integer", 0),
                ("Current", "integer", 0),
                ("Ready", "integer", 0),
                ("Up-to-date", "integer", 0),
                ("Available", "integer", 0),
                ("Node Selector", "string", 0),
                AGE,
                ("Containers", "string", 1),
                ("Images", "string", 1),
                ("Selector", "string", 1),
            ],
            daemon_set_cells,
        ),
        ("rbac.authorization.k8s.io", "Role" | "ClusterRole")
        | ("apiextensions.k8s.io", "CustomResourceDefinition") => {
            p(&[("Created At", "date", 0)], |o, _| {
                vec![json!(meta::str_at(o, "/metadata/creationTimestamp"))]
            })
        }
        ("rbac.authorization.k8s.io", "RoleBinding" | "ClusterRoleBinding") => p(
            &[
                ("Role", "string", 0),
                AGE,
                ("Users", "string", 1),
                ("Groups", "string", 1),
                ("ServiceAccounts", "string", 1),
            ],
            binding_cells,
        ),
        (
            "admissionregistration.k8s.io",
            "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration",
        ) => p(&[("Webhooks", "integer", 0), AGE], |o, age| {
            vec![json!(count(o, "/webhooks")), age(o)]
        }),
        ("coordination.k8s.io", "Lease") => p(&[("Holder", "string", 0), AGE], |o, age| {
            vec![json!(meta::str_at(o, "/spec/holderIdentity")), age(o)]
        }),
        _ => None,
    }
}

impl Printer {
    /// `columnDefinitions`, Name first.
    pub fn definitions(&self) -> Vec<Value> {
        let mut defs = vec![json!({"name": "Name", "type": "string", "format": "name",
            "description": "Name must be unique within a namespace.", "priority": 0})];
        for (name, type_, priority) in self.columns {
            defs.push(
                json!({"name": name, "type": type_, "format": "", "description": "",
                "priority": priority}),
            );
        }
        defs
    }

    /// The cells of one object's row, Name first.
    pub fn cells(&self, obj: &Value, age: &dyn Fn(&Value) -> Value) -> Vec<Value> {
        let mut cells = vec![json!(meta::name(obj))];
        cells.extend((self.cells)(obj, age));
        cells
    }
}

/// Number of entries of the map or list at `ptr`.
fn count(o: &Value, ptr: &str) -> usize {
    match o.pointer(ptr) {
        Some(Value::Object(m)) => m.len(),
        Some(Value::Array(a)) => a.len(),
        _ => 0,
    }
}

/// `labels.FormatLabels`: `k=v,…` sorted, `<none>` when empty.
fn format_labels(v: Option<&Value>) -> String {
    let mut pairs: Vec<String> = v
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default();
    if pairs.is_empty() {
        return "<none>".into();
    }
    pairs.sort();
    pairs.join(",")
}

fn service_cells(o: &Value, age: &dyn Fn(&Value) -> Value) -> Vec<Value> {
    let type_ = meta::str_at(o, "/spec/type");
    let cluster_ip = crate::meta::strings_at(o, "/spec/clusterIPs")
        .into_iter()
        .next()
        .unwrap_or_else(|| "<none>".into());
    let external_ips = crate::meta::strings_at(o, "/spec/externalIPs");
    let external = match type_ {
        "ClusterIP" | "NodePort" if !external_ips.is_empty() => external_ips.join(","),
        "ClusterIP" | "NodePort" => "<none>".into(),
        "LoadBalancer" => {
            let mut lb: Vec<String> = o
                .pointer("/status/loadBalancer/ingress")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|i| {
                            i.get("ip")
                                .or_else(|| i.get("hostname"))
                                .and_then(Value::as_str)
                                .map(str::to_string)
                        })
                        .collect()
                })
                .unwrap_or_default();
            lb.sort();
            lb.dedup();
            lb.extend(external_ips);
            if lb.is_empty() {
                "<pending>".into()
            } else {
                lb.join(",")
            }
        }
        "ExternalName" => meta::str_at(o, "/spec/externalName").to_string(),
        _ => "<unknown>".into(),
    };
    let ports: Vec<String> = o
        .pointer("/spec/ports")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|p| {
                    let port = p.get("port").and_then(Value::as_i64).unwrap_or(0);
                    let proto = p.get("protocol").and_then(Value::as_str).unwrap_or("");
                    match p.get("nodePort").and_then(Value::as_i64) {
                        Some(n) if n > 0 => format!("{port}:{n}/{proto}"),
                        _ => format!("{port}/{proto}"),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    let ports = if ports.is_empty() {
        "<none>".to_string()
    } else {
        ports.join(",")
    };
    vec![
        json!(type_),
        json!(cluster_ip),
        json!(external),
        json!(ports),
        age(o),
        json!(format_labels(o.pointer("/spec/selector"))),
    ]
}

/// The pod template's container names and images, comma-joined, and the selector, as kube's
/// printers show them for Deployments and DaemonSets.
fn template_cells(o: &Value) -> [Value; 3] {
    let containers = o
        .pointer("/spec/template/spec/containers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let join = |key: &str| {
        containers
            .iter()
            .map(|c| c.get(key).and_then(Value::as_str).unwrap_or_default())
            .collect::<Vec<_>>()
            .join(",")
    };
    let selector = o
        .pointer("/spec/selector")
        .and_then(|s| super::selector::LabelSelector::from_label_selector(s).ok())
        .map(|s| s.to_string())
        .unwrap_or_default();
    [json!(join("name")), json!(join("image")), json!(selector)]
}

fn deployment_cells(o: &Value, age: &dyn Fn(&Value) -> Value) -> Vec<Value> {
    let int = |ptr: &str| o.pointer(ptr).and_then(Value::as_i64).unwrap_or(0);
    let mut cells = vec![
        json!(format!(
            "{}/{}",
            int("/status/readyReplicas"),
            int("/spec/replicas")
        )),
        json!(int("/status/updatedReplicas")),
        json!(int("/status/availableReplicas")),
        age(o),
    ];
    cells.extend(template_cells(o));
    cells
}

/// `printDaemonSet`: the status counters, the node selector (`key=value` comma-joined, `<none>`
/// without one).
fn daemon_set_cells(o: &Value, age: &dyn Fn(&Value) -> Value) -> Vec<Value> {
    let int = |ptr: &str| json!(o.pointer(ptr).and_then(Value::as_i64).unwrap_or(0));
    let node_selector = o
        .pointer("/spec/template/spec/nodeSelector")
        .and_then(Value::as_object)
        .filter(|m| !m.is_empty())
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_else(|| "<none>".to_string());
    let mut cells = vec![
        int("/status/desiredNumberScheduled"),
        int("/status/currentNumberScheduled"),
        int("/status/numberReady"),
        int("/status/updatedNumberScheduled"),
        int("/status/numberAvailable"),
        json!(node_selector),
        age(o),
    ];
    cells.extend(template_cells(o));
    cells
}

fn binding_cells(o: &Value, age: &dyn Fn(&Value) -> Value) -> Vec<Value> {
    let subjects = o
        .get("subjects")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let of = |kind: &str| {
        subjects
            .iter()
            .filter(|s| s.get("kind").and_then(Value::as_str) == Some(kind))
            .map(|s| {
                let name = s.get("name").and_then(Value::as_str).unwrap_or_default();
                match s.get("namespace").and_then(Value::as_str) {
                    Some(ns) if kind == "ServiceAccount" => format!("{ns}/{name}"),
                    _ => name.to_string(),
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    vec![
        json!(format!(
            "{}/{}",
            meta::str_at(o, "/roleRef/kind"),
            meta::str_at(o, "/roleRef/name")
        )),
        age(o),
        json!(of("User")),
        json!(of("Group")),
        json!(of("ServiceAccount")),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(group: &str, kind: &str, o: &Value) -> Vec<Value> {
        for_kind(group, kind).unwrap().cells(o, &|_| json!("1s"))
    }

    #[test]
    fn services_deployments_and_webhooks_print_like_kube() {
        let svc = json!({"metadata": {"name": "capd-webhook-service"}, "spec": {"type": "ClusterIP",
            "clusterIPs": ["10.96.0.10"], "ports": [{"port": 443, "protocol": "TCP"}],
            "selector": {"cluster.x-k8s.io/provider": "infrastructure-docker"}}});
        assert_eq!(
            row("", "Service", &svc),
            [
                "capd-webhook-service",
                "ClusterIP",
                "10.96.0.10",
                "<none>",
                "443/TCP",
                "1s",
                "cluster.x-k8s.io/provider=infrastructure-docker"
            ]
        );
        let d = json!({"metadata": {"name": "m"}, "spec": {"replicas": 1,
            "selector": {"matchLabels": {"control-plane": "controller-manager"}},
            "template": {"spec": {"containers": [{"name": "manager", "image": "r/m:v1"}]}}}});
        assert_eq!(
            row("apps", "Deployment", &d),
            [
                json!("m"),
                json!("0/1"),
                json!(0),
                json!(0),
                json!("1s"),
                json!("manager"),
                json!("r/m:v1"),
                json!("control-plane=controller-manager")
            ]
        );
        let w = json!({"metadata": {"name": "v"}, "webhooks": [{}, {}]});
        assert_eq!(
            row(
                "admissionregistration.k8s.io",
                "ValidatingWebhookConfiguration",
                &w
            ),
            [json!("v"), json!(2), json!("1s")]
        );
        let p = for_kind("", "ServiceAccount").unwrap();
        let names: Vec<String> = p
            .definitions()
            .iter()
            .filter_map(|d| d["name"].as_str().map(str::to_string))
            .collect();
        assert_eq!(names, ["Name", "Secrets", "Age"]);
        assert!(for_kind("example.com", "Widget").is_none());
    }
}

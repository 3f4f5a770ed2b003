//! Which Services a provider's components send webhook calls to, and where each Service port
//! really goes.
//!
//! References come from `webhooks[].clientConfig.service` of Mutating/ValidatingWebhook-
//! Configurations and from `spec.conversion.webhook.clientConfig.service` of CRDs whose
//! conversion strategy is `Webhook` (port 443 when unset, as the v1 APIs default it). A Service
//! port's `targetPort` is a number, absent (= the port), or the *name* of a container port of
//! the Pods the Service selects: resolved through the components' Deployments, as the
//! endpoints controller does.

use serde_json::Value;

/// A Service port that webhook calls go to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookService {
    pub namespace: String,
    pub name: String,
    /// The Service port the configurations name.
    pub port: u16,
    /// Where the provider's Pods listen for it: the resolved `targetPort` (`None`: the Service is
    /// not among the components, the port is not listed, or a named port no Deployment has).
    pub target_port: Option<u16>,
    /// Whether the components define the Service (a reference to one they do not define fails
    /// on any cluster: `service "x" not found`).
    pub defined: bool,
    /// The objects that reference it (`Kind name`), for messages.
    pub used_by: Vec<String>,
}

impl WebhookService {
    /// The DNS names kube-apiserver and cert-manager use for the Service.
    pub fn dns_names(&self) -> [String; 2] {
        [
            format!("{}.{}.svc", self.name, self.namespace),
            format!("{}.{}.svc.cluster.local", self.name, self.namespace),
        ]
    }
}

fn str_at<'a>(v: &'a Value, ptr: &str) -> &'a str {
    v.pointer(ptr).and_then(Value::as_str).unwrap_or_default()
}

fn kind(v: &Value) -> &str {
    str_at(v, "/kind")
}

fn group(v: &Value) -> &str {
    str_at(v, "/apiVersion")
        .rsplit_once('/')
        .map_or("", |(g, _)| g)
}

/// Whether `v` is a Mutating/ValidatingWebhookConfiguration.
pub fn is_webhook_configuration(v: &Value) -> bool {
    group(v) == "admissionregistration.k8s.io"
        && matches!(
            kind(v),
            "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration"
        )
}

/// Whether `v` is a CRD with `spec.conversion.strategy: Webhook`.
pub fn is_webhook_converted_crd(v: &Value) -> bool {
    group(v) == "apiextensions.k8s.io"
        && kind(v) == "CustomResourceDefinition"
        && str_at(v, "/spec/conversion/strategy") == "Webhook"
}

/// The `clientConfig` objects of a webhook configuration or a webhook-converted CRD.
pub fn client_configs(v: &Value) -> Vec<&Value> {
    if is_webhook_configuration(v) {
        v.get("webhooks")
            .and_then(Value::as_array)
            .map(|ws| ws.iter().filter_map(|w| w.get("clientConfig")).collect())
            .unwrap_or_default()
    } else if is_webhook_converted_crd(v) {
        v.pointer("/spec/conversion/webhook/clientConfig")
            .into_iter()
            .collect()
    } else {
        Vec::new()
    }
}

fn port_of(service_ref: &Value) -> u16 {
    service_ref
        .get("port")
        .and_then(Value::as_u64)
        .and_then(|p| u16::try_from(p).ok())
        .unwrap_or(443)
}

/// Every Service port the documents' webhooks call, in order of first reference.
pub fn webhook_services(docs: &[Value]) -> Vec<WebhookService> {
    let mut out: Vec<WebhookService> = Vec::new();
    for doc in docs {
        let who = format!("{} {}", kind(doc), str_at(doc, "/metadata/name"));
        for cc in client_configs(doc) {
            let Some(svc) = cc.get("service") else {
                continue;
            };
            let (namespace, name, port) = (
                str_at(svc, "/namespace").to_string(),
                str_at(svc, "/name").to_string(),
                port_of(svc),
            );
            if name.is_empty() {
                continue;
            }
            match out
                .iter_mut()
                .find(|s| s.namespace == namespace && s.name == name && s.port == port)
            {
                Some(s) => {
                    if !s.used_by.contains(&who) {
                        s.used_by.push(who.clone());
                    }
                }
                None => out.push(WebhookService {
                    target_port: target_port(docs, &namespace, &name, port),
                    defined: docs.iter().any(|d| {
                        is_core(d, "Service")
                            && in_namespace(d, &namespace)
                            && str_at(d, "/metadata/name") == name
                    }),
                    namespace,
                    name,
                    port,
                    used_by: vec![who.clone()],
                }),
            }
        }
    }
    out
}

fn is_core(v: &Value, k: &str) -> bool {
    str_at(v, "/apiVersion") == "v1" && kind(v) == k
}

fn in_namespace(v: &Value, ns: &str) -> bool {
    str_at(v, "/metadata/namespace") == ns
}

/// Where Service `ns/name` sends port `port` (see the module doc).
fn target_port(docs: &[Value], ns: &str, name: &str, port: u16) -> Option<u16> {
    let svc = docs.iter().find(|d| {
        is_core(d, "Service") && in_namespace(d, ns) && str_at(d, "/metadata/name") == name
    })?;
    let entry = svc
        .pointer("/spec/ports")
        .and_then(Value::as_array)?
        .iter()
        .find(|p| p.get("port").and_then(Value::as_u64) == Some(u64::from(port)))?;
    match entry.get("targetPort") {
        None | Some(Value::Null) => Some(port),
        Some(Value::Number(n)) => n.as_u64().and_then(|n| u16::try_from(n).ok()),
        Some(Value::String(named)) => match named.parse::<u16>() {
            Ok(n) => Some(n),
            Err(_) => named_container_port(docs, ns, svc.pointer("/spec/selector"), named),
        },
        Some(_) => None,
    }
}

/// The container port called `port_name` in a workload of namespace `ns` whose Pod labels match
/// `selector` (Deployments, StatefulSets, DaemonSets).
fn named_container_port(
    docs: &[Value],
    ns: &str,
    selector: Option<&Value>,
    port_name: &str,
) -> Option<u16> {
    let selector = selector.and_then(Value::as_object)?;
    if selector.is_empty() {
        return None;
    }
    docs.iter()
        .filter(|d| {
            str_at(d, "/apiVersion") == "apps/v1"
                && matches!(kind(d), "Deployment" | "StatefulSet" | "DaemonSet")
                && in_namespace(d, ns)
        })
        .filter(|d| {
            let labels = d.pointer("/spec/template/metadata/labels");
            selector
                .iter()
                .all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v))
        })
        .flat_map(|d| {
            d.pointer("/spec/template/spec/containers")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        })
        .flat_map(|c| {
            c.get("ports")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        })
        .find(|p| p.get("name").and_then(Value::as_str) == Some(port_name))
        .and_then(|p| p.get("containerPort").and_then(Value::as_u64))
        .and_then(|n| u16::try_from(n).ok())
}

/// The SANs a serving certificate for `services` needs, plus the DNS names of the components'
/// cert-manager Certificates (which the provider's manifests ask to be issued).
pub fn serving_names(docs: &[Value], services: &[WebhookService]) -> Vec<String> {
    let mut names: Vec<String> = services.iter().flat_map(|s| s.dns_names()).collect();
    for cert in docs.iter().filter(|d| is_certificate(d)) {
        if let Some(dns) = cert.pointer("/spec/dnsNames").and_then(Value::as_array) {
            names.extend(dns.iter().filter_map(Value::as_str).map(str::to_string));
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    names.retain(|n| !n.is_empty() && !n.contains('$') && seen.insert(n.clone()));
    names
}

/// Whether `v` is a cert-manager Certificate.
pub fn is_certificate(v: &Value) -> bool {
    group(v) == "cert-manager.io" && kind(v) == "Certificate"
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn components() -> Vec<Value> {
        vec![
            json!({"apiVersion": "v1", "kind": "Service",
                   "metadata": {"name": "p-webhook-service", "namespace": "p-system"},
                   "spec": {"selector": {"control-plane": "p"},
                            "ports": [{"port": 443, "targetPort": "webhook-server"}]}}),
            json!({"apiVersion": "apps/v1", "kind": "Deployment",
                   "metadata": {"name": "p-manager", "namespace": "p-system"},
                   "spec": {"template": {"metadata": {"labels": {"control-plane": "p", "x": "y"}},
                            "spec": {"containers": [{"name": "manager",
                                     "ports": [{"name": "webhook-server", "containerPort": 9443},
                                               {"name": "healthz", "containerPort": 9440}]}]}}}}),
            json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
                   "metadata": {"name": "p-vwc"},
                   "webhooks": [
                       {"name": "a.p.io", "clientConfig": {"service": {"name": "p-webhook-service", "namespace": "p-system", "path": "/validate-a"}}},
                       {"name": "b.p.io", "clientConfig": {"service": {"name": "p-webhook-service", "namespace": "p-system", "path": "/validate-b"}}},
                       {"name": "c.p.io", "clientConfig": {"url": "https://example.invalid/x"}}]}),
            json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                   "metadata": {"name": "things.p.io"},
                   "spec": {"conversion": {"strategy": "Webhook", "webhook": {"clientConfig":
                       {"service": {"name": "other", "namespace": "p-system", "port": 8443}}}}}}),
            json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                   "metadata": {"name": "none.p.io"},
                   "spec": {"conversion": {"strategy": "None", "webhook": {"clientConfig":
                       {"service": {"name": "ignored", "namespace": "p-system"}}}}}}),
            json!({"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
                   "metadata": {"name": "p-serving-cert", "namespace": "p-system"},
                   "spec": {"dnsNames": ["p-webhook-service.p-system.svc", "extra.example"]}}),
        ]
    }

    #[test]
    fn services_of_configurations_and_webhook_crds_with_target_ports() {
        let s = webhook_services(&components());
        assert_eq!(s.len(), 2, "{s:?}");
        assert_eq!(
            (s[0].name.as_str(), s[0].port, s[0].target_port),
            ("p-webhook-service", 443, Some(9443))
        );
        assert_eq!(s[0].used_by, ["ValidatingWebhookConfiguration p-vwc"]);
        // A Service not among the components: no target port.
        assert_eq!(
            (s[1].name.as_str(), s[1].port, s[1].target_port),
            ("other", 8443, None)
        );
        assert!(s[0].defined && !s[1].defined);
        assert_eq!(
            s[0].dns_names(),
            [
                "p-webhook-service.p-system.svc",
                "p-webhook-service.p-system.svc.cluster.local"
            ]
        );
        let names = serving_names(&components(), &s);
        assert_eq!(
            names,
            [
                "p-webhook-service.p-system.svc",
                "p-webhook-service.p-system.svc.cluster.local",
                "other.p-system.svc",
                "other.p-system.svc.cluster.local",
                "extra.example"
            ]
        );
    }

    #[test]
    fn target_ports_numeric_absent_and_unresolvable() {
        let svc = |tp: Value| {
            vec![json!({"apiVersion": "v1", "kind": "Service",
                        "metadata": {"name": "s", "namespace": "n"},
                        "spec": {"selector": {"app": "none"}, "ports": [{"port": 443, "targetPort": tp}]}})]
        };
        assert_eq!(target_port(&svc(json!(9443)), "n", "s", 443), Some(9443));
        assert_eq!(target_port(&svc(json!("9000")), "n", "s", 443), Some(9000));
        assert_eq!(target_port(&svc(Value::Null), "n", "s", 443), Some(443));
        assert_eq!(target_port(&svc(json!("webhook")), "n", "s", 443), None);
        assert_eq!(target_port(&svc(json!(9443)), "n", "s", 80), None);
    }
}

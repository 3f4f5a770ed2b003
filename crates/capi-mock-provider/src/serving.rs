//! What serving the mock's webhooks takes in every mode: its CRDs convert through the webhook
//! Service ([`crate::crds::CONVERSION_SERVICE`]), so its components carry the Service, the
//! serving certificate cert-manager issues, the CA injection, and a Deployment that serves them
//! ([`add_webhook_serving`]). `mock-provider manifests` adds these; webhook mode
//! ([`crate::webhook::components`]) adds the defaulting and validating configurations too.

use serde_json::{Value, json};

/// The webhook Service.
pub const SERVICE_NAME: &str = "capi-conformance-mock-webhook-service";
/// The Certificate whose CA is injected.
pub const CERTIFICATE_NAME: &str = "capi-conformance-mock-serving-cert";
/// The manager's webhook port.
pub const WEBHOOK_PORT: u16 = 9443;
pub(crate) fn service_ref(ns: &str, path: &str) -> Value {
    json!({"service": {"namespace": ns, "name": SERVICE_NAME, "path": path, "port": 443}})
}

pub(crate) fn inject_annotation(ns: &str) -> Value {
    json!({"cert-manager.io/inject-ca-from": format!("{ns}/{CERTIFICATE_NAME}")})
}

/// What serving the mock's webhooks takes in every mode (its CRDs convert through the webhook
/// Service): each two-version CRD in `ns` with cert-manager's CA injection, the Deployment
/// named `deployment` serving webhooks with the certificate's Secret, the self-signed Issuer, the Certificate and
/// the Service.
pub fn add_webhook_serving(docs: &mut Vec<Value>, ns: &str, deployment: &str) {
    for doc in docs.iter_mut() {
        match doc.get("kind").and_then(Value::as_str) {
            // The IPAM pool CRD has one version: nothing to convert.
            Some("CustomResourceDefinition")
                if doc.pointer("/spec/group").and_then(Value::as_str)
                    != Some(crate::api::IPAM_GROUP) =>
            {
                webhook_crd(doc, ns)
            }
            Some("Deployment")
                if doc.pointer("/metadata/name").and_then(Value::as_str) == Some(deployment) =>
            {
                webhook_deployment(doc)
            }
            _ => {}
        }
    }
    let selector = json!({ "app.kubernetes.io/name": "capi-conformance-mock" });
    let labels = json!({
        "cluster.x-k8s.io/provider": crate::kinds::provider_label(crate::api::INFRASTRUCTURE_GROUP),
    });
    docs.push(json!({
        "apiVersion": "cert-manager.io/v1", "kind": "Issuer",
        "metadata": {"name": "capi-conformance-mock-selfsigned-issuer", "namespace": ns, "labels": labels},
        "spec": {"selfSigned": {}},
    }));
    docs.push(json!({
        "apiVersion": "cert-manager.io/v1", "kind": "Certificate",
        "metadata": {"name": CERTIFICATE_NAME, "namespace": ns, "labels": labels},
        "spec": {
            "dnsNames": [format!("{SERVICE_NAME}.{ns}.svc"), format!("{SERVICE_NAME}.{ns}.svc.cluster.local")],
            "issuerRef": {"kind": "Issuer", "name": "capi-conformance-mock-selfsigned-issuer"},
            "secretName": "capi-conformance-mock-webhook-service-cert",
        },
    }));
    docs.push(json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": SERVICE_NAME, "namespace": ns, "labels": labels},
        "spec": {"selector": selector, "ports": [{"port": 443, "targetPort": "webhook-server"}]},
    }));
}

/// A CRD of the mock (which converts through the webhook Service already,
/// [`crate::crds::CONVERSION_SERVICE`]) as webhook mode installs it: in `ns`, its CA injected by
/// cert-manager.
fn webhook_crd(crd: &mut Value, ns: &str) {
    crd["metadata"]["annotations"] = inject_annotation(ns);
    if let Some(svc) = crd.pointer_mut("/spec/conversion/webhook/clientConfig/service") {
        svc["namespace"] = json!(ns);
    }
}

fn webhook_deployment(d: &mut Value) {
    let Some(c) = d.pointer_mut("/spec/template/spec/containers/0") else {
        return;
    };
    if let Some(args) = c.get_mut("args").and_then(Value::as_array_mut) {
        args.push(json!(
            "--webhook-cert-dir=/tmp/k8s-webhook-server/serving-certs"
        ));
        args.push(json!(format!("--webhook-port={WEBHOOK_PORT}")));
    }
    c["ports"] =
        json!([{"name": "webhook-server", "containerPort": WEBHOOK_PORT, "protocol": "TCP"}]);
    c["volumeMounts"] = json!([{"name": "cert", "mountPath": "/tmp/k8s-webhook-server/serving-certs", "readOnly": true}]);
    d["spec"]["template"]["spec"]["volumes"] = json!([{"name": "cert", "secret": {"secretName": "capi-conformance-mock-webhook-service-cert"}}]);
}

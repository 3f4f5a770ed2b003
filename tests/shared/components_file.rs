//! Shared by the test binaries that install a provider's whole components file: our own
//! components file (generated from our conformant fixture plus the kinds real ones also hold),
//! and the corpus providers with values for their variables that have no default.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The twelve corpus providers, with values for their variables that have no default.
pub const CORPUS: &[(&str, &[&str])] = &[
    ("aws", &["AWS_B64ENCODED_CREDENTIALS=Y3JlZHM="]),
    ("azure", &[]),
    ("capd", &[]),
    ("capi-bootstrap-kubeadm", &[]),
    ("capi-controlplane-kubeadm", &[]),
    ("capi-core", &[]),
    ("gcp", &["GCP_B64ENCODED_CREDENTIALS=Y3JlZHM="]),
    ("metal3", &[]),
    ("openstack", &[]),
    ("talos-bootstrap", &[]),
    ("talos-controlplane", &[]),
    ("vsphere", &["VSPHERE_USERNAME=u", "VSPHERE_PASSWORD=p"]),
];

/// Our conformant provider's components file plus what real components files also hold: a
/// webhook Service, webhook configurations, cert-manager's Certificate and Issuer, a credentials
/// Secret with a required variable `FOO_CREDENTIALS` and one with a default.
pub fn our_components(dir: &Path) -> PathBuf {
    let base = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/conformant-v1beta2/infrastructure-components.yaml"),
    )
    .unwrap();
    let webhook = |kind: &str, name: &str| {
        format!(
            "apiVersion: admissionregistration.k8s.io/v1\nkind: {kind}\nmetadata:\n  name: foo-{name}-webhook-configuration\n  annotations:\n    cert-manager.io/inject-ca-from: foo-system/foo-serving-cert\nwebhooks:\n- name: {name}.foomachine.infrastructure.foo.example.io\n  admissionReviewVersions: [v1]\n  sideEffects: None\n  clientConfig:\n    service: {{name: foo-webhook-service, namespace: foo-system, path: /{name}}}\n  rules:\n  - {{apiGroups: [infrastructure.foo.example.io], apiVersions: [v1beta2], operations: [CREATE, UPDATE], resources: [foomachines]}}\n"
        )
    };
    let extra = [
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: foo-webhook-service\n  namespace: foo-system\nspec:\n  ports:\n  - port: 443\n    targetPort: webhook-server\n  selector:\n    control-plane: controller-manager\n".to_string(),
        webhook("ValidatingWebhookConfiguration", "validating"),
        webhook("MutatingWebhookConfiguration", "mutating"),
        "apiVersion: cert-manager.io/v1\nkind: Issuer\nmetadata:\n  name: foo-selfsigned-issuer\n  namespace: foo-system\nspec:\n  selfSigned: {}\n".to_string(),
        "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata:\n  name: foo-serving-cert\n  namespace: foo-system\nspec:\n  dnsNames: [foo-webhook-service.foo-system.svc]\n  issuerRef: {kind: Issuer, name: foo-selfsigned-issuer}\n  secretName: foo-webhook-service-cert\n".to_string(),
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: foo-manager-bootstrap-credentials\n  namespace: foo-system\ntype: Opaque\ndata:\n  credentials: ${FOO_CREDENTIALS}\n  region: ${FOO_REGION_B64:=ZXUtd2VzdA==}\n".to_string(),
    ];
    let text = format!("{base}\n---\n{}", extra.join("---\n"));
    let path = dir.join("infrastructure-components.yaml");
    std::fs::write(&path, text).unwrap();
    path
}

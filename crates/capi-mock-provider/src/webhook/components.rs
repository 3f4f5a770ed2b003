//! The mock's webhook serving, shaped like a Cluster API provider's release manifest: every CRD
//! converts through the webhook Service (`conversion: Webhook`, in every mode:
//! [`add_webhook_serving`]); in webhook mode (`mock-provider manifests --webhooks`) a mutating
//! and a validating configuration call the same Service,
//! cert-manager's `inject-ca-from` names the Certificate whose CA goes into them, and the
//! Service reaches the manager's named container port `webhook-server` (9443).
//!
//! The CRDs convert as in every mode ([`crate::crds`]); here they name the Certificate whose CA
//! cert-manager injects.

use super::super::manifests::{ManifestError, ManifestOptions, manifests};
use super::{DEFAULTED_KINDS, mutate_path, validate_path};
use crate::kinds::ALL;
pub use crate::serving::{CERTIFICATE_NAME, SERVICE_NAME, WEBHOOK_PORT};
use crate::serving::{inject_annotation, service_ref};
use serde_json::{Value, json};

/// The webhook configurations' name.
pub const MUTATING_NAME: &str = "capi-conformance-mock-mutating-webhook-configuration";
pub const VALIDATING_NAME: &str = "capi-conformance-mock-validating-webhook-configuration";
/// `timeoutSeconds` of the defaulting webhook (kube's default is 10).
pub const MUTATING_TIMEOUT_SECONDS: u32 = 2;

/// Every document of the webhook-mode components, in apply order: the components of every
/// mode ([`manifests`], which serve conversion) and the defaulting and validating webhook
/// configurations.
pub fn webhook_manifests(opts: &ManifestOptions) -> Result<Vec<Value>, ManifestError> {
    let ns = opts.namespace.as_str();
    let mut docs = manifests(opts)?;
    // One webhook per kind, named and pathed as controller-runtime's builder and kubebuilder's
    // markers make them (`default.<kind>.<group>` at `/mutate-<group-with-dashes>-<version>-<kind>`).
    let hook = |prefix: &str, k: &crate::kinds::MockKind, path: String| {
        json!({
            "name": format!("{prefix}.{}.{}", k.kind.to_lowercase(), k.group),
            "admissionReviewVersions": ["v1"],
            "clientConfig": service_ref(ns, &path),
            "failurePolicy": "Fail",
            "matchPolicy": "Equivalent",
            "sideEffects": "None",
            "rules": [{"apiGroups": [k.group], "apiVersions": ["v1beta2"],
                       "operations": ["CREATE", "UPDATE"], "resources": [k.plural]}],
        })
    };
    let mutating: Vec<Value> = ALL
        .iter()
        .filter(|k| DEFAULTED_KINDS.contains(&k.kind))
        .map(|k| {
            let mut h = hook("default", k, mutate_path(k.group, "v1beta2", k.kind));
            h["timeoutSeconds"] = json!(MUTATING_TIMEOUT_SECONDS);
            h
        })
        .collect();
    docs.push(json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": MUTATING_NAME, "annotations": inject_annotation(ns)},
        "webhooks": mutating,
    }));
    let validating: Vec<Value> = ALL
        .iter()
        .map(|k| hook("validation", k, validate_path(k.group, "v1beta2", k.kind)))
        .collect();
    docs.push(json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": VALIDATING_NAME, "annotations": inject_annotation(ns)},
        "webhooks": validating,
    }));
    Ok(docs)
}

/// The webhook-mode components as one multi-document YAML stream.
pub fn webhook_manifests_yaml(opts: &ManifestOptions) -> Result<String, ManifestError> {
    let docs = webhook_manifests(opts)?;
    serde_saphyr::to_string_multiple(&docs).map_err(|e| ManifestError::Yaml(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_crd_converts_through_the_service_and_configurations_are_injected() {
        let docs = webhook_manifests(&ManifestOptions::default()).unwrap();
        let crds: Vec<&Value> = docs
            .iter()
            .filter(|d| d["kind"] == "CustomResourceDefinition")
            .filter(|d| d["spec"]["group"] != crate::api::IPAM_GROUP)
            .collect();
        assert_eq!(crds.len(), ALL.len());
        let pool = docs
            .iter()
            .find(|d| d["spec"]["group"] == crate::api::IPAM_GROUP)
            .unwrap();
        assert!(pool["spec"].get("conversion").is_none());
        for crd in &crds {
            assert_eq!(crd["spec"]["conversion"]["strategy"], "Webhook");
            assert_eq!(
                crd["metadata"]["annotations"]["cert-manager.io/inject-ca-from"],
                "capi-conformance-mock-system/capi-conformance-mock-serving-cert"
            );
        }
        for kind in [
            "MutatingWebhookConfiguration",
            "ValidatingWebhookConfiguration",
            "Service",
            "Certificate",
        ] {
            assert!(docs.iter().any(|d| d["kind"] == kind), "{kind}");
        }
        let validating = docs
            .iter()
            .find(|d| d["kind"] == "ValidatingWebhookConfiguration")
            .unwrap();
        let machine = validating["webhooks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["name"] == "validation.mockmachine.infrastructure.mock.capi-conformance.io")
            .unwrap();
        assert_eq!(
            machine["clientConfig"]["service"]["path"],
            "/validate-infrastructure-mock-capi-conformance-io-v1beta2-mockmachine"
        );
        webhook_manifests_yaml(&ManifestOptions::default()).unwrap();
    }
}

//! cert-manager's CA injector, applied to a provider's components before they are installed.
//!
//! As cainjector does it (`pkg/controller/cainjector`): an injectable (Mutating/Validating-
//! WebhookConfiguration, CustomResourceDefinition) names its CA source in one annotation:
//!
//! - `cert-manager.io/inject-ca-from: <namespace>/<Certificate>`: the CA of that Certificate
//!   (a value without `namespace/` is refused);
//! - `cert-manager.io/inject-ca-from-secret: <namespace>/<Secret>`: the `ca.crt` of that Secret,
//!   which must carry `cert-manager.io/allow-direct-injection: "true"`.
//!
//! The CA goes into `caBundle` of every webhook of a configuration, and of a CRD only when its
//! conversion strategy is `Webhook`. Here every Certificate of the components is issued by the
//! run's CA (the embedded server has no cert-manager), so a source resolves when the
//! Certificate is among the components, or, for a Secret, when a Certificate of the components
//! writes it (`spec.secretName`) with the direct-injection annotation in its `secretTemplate`.
//! Objects without an annotation are left as they are (cainjector does not touch them); when one
//! calls a webhook with no `caBundle`, the outcome says so.

use super::components::{client_configs, is_certificate, is_webhook_configuration};
use serde_json::Value;

pub const INJECT_CA_FROM: &str = "cert-manager.io/inject-ca-from";
pub const INJECT_CA_FROM_SECRET: &str = "cert-manager.io/inject-ca-from-secret";
pub const ALLOW_DIRECT_INJECTION: &str = "cert-manager.io/allow-direct-injection";

/// What injection did to one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Injection {
    /// `Kind name`.
    pub object: String,
    /// `Ok(n)`: the CA was written into `n` client configurations; `Err`: why not.
    pub outcome: Result<usize, String>,
}

fn str_at<'a>(v: &'a Value, ptr: &str) -> &'a str {
    v.pointer(ptr).and_then(Value::as_str).unwrap_or_default()
}

fn annotation<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.pointer("/metadata/annotations")
        .and_then(|a| a.get(key))
        .and_then(Value::as_str)
}

fn split_ref(value: &str) -> Option<(&str, &str)> {
    value
        .split_once('/')
        .filter(|(ns, name)| !ns.is_empty() && !name.is_empty())
}

/// Whether the CA source an injectable names resolves among `docs` (see the module doc).
fn source_resolves(docs: &[Value], v: &Value) -> Result<(), String> {
    if let Some(value) = annotation(v, INJECT_CA_FROM) {
        let Some((ns, name)) = split_ref(value) else {
            return Err(format!(
                "{INJECT_CA_FROM}: {value:?}: invalid certificate name: needs a namespace/ prefix"
            ));
        };
        return if docs.iter().any(|d| {
            is_certificate(d)
                && str_at(d, "/metadata/namespace") == ns
                && str_at(d, "/metadata/name") == name
        }) {
            Ok(())
        } else {
            Err(format!(
                "{INJECT_CA_FROM}: Certificate {ns}/{name} is not among the components, so no CA is issued for it"
            ))
        };
    }
    if let Some(value) = annotation(v, INJECT_CA_FROM_SECRET) {
        let Some((ns, name)) = split_ref(value) else {
            return Err(format!(
                "{INJECT_CA_FROM_SECRET}: {value:?}: invalid secret name: needs a namespace/ prefix"
            ));
        };
        let issuer = docs.iter().find(|d| {
            is_certificate(d)
                && str_at(d, "/metadata/namespace") == ns
                && str_at(d, "/spec/secretName") == name
        });
        return match issuer {
            None => Err(format!(
                "{INJECT_CA_FROM_SECRET}: no Certificate of the components writes Secret {ns}/{name}"
            )),
            Some(c)
                if c.pointer("/spec/secretTemplate/annotations")
                    .and_then(|a| a.get(ALLOW_DIRECT_INJECTION))
                    .and_then(Value::as_str)
                    != Some("true") =>
            {
                Err(format!(
                    "{INJECT_CA_FROM_SECRET}: Secret {ns}/{name} would not carry {ALLOW_DIRECT_INJECTION}: \"true\" (Certificate {} spec.secretTemplate.annotations), so cainjector refuses it",
                    str_at(c, "/metadata/name")
                ))
            }
            Some(_) => Ok(()),
        };
    }
    Err("no cert-manager.io/inject-ca-from annotation".into())
}

/// Injects `ca_bundle` (base64 PEM) into `docs` as cainjector would; one entry per injectable
/// that calls a webhook (a CRD with strategy `Webhook`, a webhook configuration).
pub fn inject_ca(docs: &mut [Value], ca_bundle: &str) -> Vec<Injection> {
    let mut out = Vec::new();
    let decisions: Vec<Option<Result<(), String>>> = docs
        .iter()
        .map(|d| (!client_configs(d).is_empty()).then(|| source_resolves(docs, d)))
        .collect();
    for (doc, decision) in docs.iter_mut().zip(decisions) {
        let Some(decision) = decision else {
            continue;
        };
        let object = format!("{} {}", str_at(doc, "/kind"), str_at(doc, "/metadata/name"));
        let outcome = match decision {
            Ok(()) => Ok(write_bundle(doc, ca_bundle)),
            Err(why) => {
                let missing = client_configs(doc)
                    .iter()
                    .any(|cc| str_at(cc, "/caBundle").is_empty());
                Err(if missing {
                    format!(
                        "{why}: not injected, and it has no caBundle (its webhook calls will not trust the provider's serving certificate)"
                    )
                } else {
                    format!("{why}: not injected (its own caBundle is kept)")
                })
            }
        };
        out.push(Injection { object, outcome });
    }
    out
}

fn write_bundle(doc: &mut Value, ca_bundle: &str) -> usize {
    let set = |cc: &mut Value| {
        if let Some(m) = cc.as_object_mut() {
            m.insert("caBundle".into(), Value::String(ca_bundle.to_string()));
            1
        } else {
            0
        }
    };
    if is_webhook_configuration(doc) {
        doc.get_mut("webhooks")
            .and_then(Value::as_array_mut)
            .map(|ws| {
                ws.iter_mut()
                    .filter_map(|w| w.get_mut("clientConfig"))
                    .map(set)
                    .sum()
            })
            .unwrap_or(0)
    } else {
        doc.pointer_mut("/spec/conversion/webhook/clientConfig")
            .map(set)
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crd(strategy: &str, annotations: Value) -> Value {
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
               "metadata": {"name": "xs.p.io", "annotations": annotations},
               "spec": {"conversion": {"strategy": strategy, "webhook": {"clientConfig":
                   {"service": {"name": "s", "namespace": "n"}}}}}})
    }

    fn vwc(annotations: Value) -> Value {
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
               "metadata": {"name": "v", "annotations": annotations},
               "webhooks": [{"name": "a.p.io", "clientConfig": {"service": {"name": "s", "namespace": "n"}}},
                            {"name": "b.p.io", "clientConfig": {"url": "https://x.invalid"}}]})
    }

    fn cert(secret_annotations: Value) -> Value {
        json!({"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
               "metadata": {"name": "serving-cert", "namespace": "n"},
               "spec": {"secretName": "webhook-cert", "secretTemplate": {"annotations": secret_annotations}}})
    }

    #[test]
    fn inject_ca_from_reaches_every_webhook_and_webhook_crds_only() {
        let from = json!({INJECT_CA_FROM: "n/serving-cert"});
        let mut docs = vec![
            cert(json!({})),
            vwc(from.clone()),
            crd("Webhook", from.clone()),
            crd("None", from),
        ];
        let out = inject_ca(&mut docs, "Q0E=");
        assert_eq!(out.len(), 2, "{out:?}");
        assert!(out.iter().all(|i| i.outcome.is_ok()));
        assert_eq!(docs[1]["webhooks"][0]["clientConfig"]["caBundle"], "Q0E=");
        assert_eq!(docs[1]["webhooks"][1]["clientConfig"]["caBundle"], "Q0E=");
        assert_eq!(
            docs[2]
                .pointer("/spec/conversion/webhook/clientConfig/caBundle")
                .unwrap(),
            "Q0E="
        );
        assert!(
            docs[3]
                .pointer("/spec/conversion/webhook/clientConfig/caBundle")
                .is_none()
        );
    }

    #[test]
    fn unresolvable_sources_are_named_and_not_injected() {
        for (annotations, certs, want) in [
            (
                json!({INJECT_CA_FROM: "serving-cert"}),
                vec![cert(json!({}))],
                "needs a namespace/ prefix",
            ),
            (
                json!({INJECT_CA_FROM: "n/other"}),
                vec![cert(json!({}))],
                "Certificate n/other is not among the components",
            ),
            (
                json!({INJECT_CA_FROM_SECRET: "n/webhook-cert"}),
                vec![cert(json!({}))],
                "cainjector refuses it",
            ),
            (
                json!({INJECT_CA_FROM_SECRET: "n/nope"}),
                vec![],
                "no Certificate of the components writes Secret n/nope",
            ),
            (
                json!({}),
                vec![],
                "no cert-manager.io/inject-ca-from annotation",
            ),
        ] {
            let mut docs = certs;
            docs.push(vwc(annotations));
            let out = inject_ca(&mut docs, "Q0E=");
            let why = out[0].outcome.clone().unwrap_err();
            assert!(
                why.contains(want) && why.contains("has no caBundle"),
                "{why}"
            );
            assert!(
                docs.last().unwrap()["webhooks"][0]["clientConfig"]
                    .get("caBundle")
                    .is_none()
            );
        }
    }

    #[test]
    fn inject_ca_from_secret_with_direct_injection() {
        let mut docs = vec![
            cert(json!({ALLOW_DIRECT_INJECTION: "true"})),
            crd("Webhook", json!({INJECT_CA_FROM_SECRET: "n/webhook-cert"})),
        ];
        let out = inject_ca(&mut docs, "Q0E=");
        assert_eq!(out[0].outcome, Ok(1));
    }
}

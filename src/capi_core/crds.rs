//! The core CRDs an embedded run installs, with their conversion pointed at the tool's
//! conversion webhook ([`super::webhook`]):
//!
//! - **minimal** (default): Cluster, Machine, MachinePool, IPAddressClaim, IPAddress of our own
//!   (open schemas, v1beta2 stored, v1beta1 served), `conversion: Webhook` through CAPI's
//!   Service name ([`core_route`], routed to the webhook) with the webhook's CA; MachineSet and
//!   MachineDeployment beside them with conversion None (no run creates one:
//!   [`capi_mock_provider::core_crds::UNCONVERTED_KINDS`]);
//! - **released** (`--core-crds FILE`): CAPI core's own CRDs from its components file, as a
//!   typed Go client expects them. Their conversion names a Service (`capi-system/
//!   capi-webhook-service`, path `/convert`) and asks cert-manager for the CA
//!   (`cert-manager.io/inject-ca-from`): the Service is stored and routed to the webhook
//!   ([`embedded_apiserver::EmbeddedServer::route_service`]), and the CA is injected into every
//!   CRD that asks for it, as cert-manager's CA injector does.

use base64::Engine;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// cert-manager's CA injection annotations (`cainjector`).
pub const INJECT_CA_FROM: &str = "cert-manager.io/inject-ca-from";
pub const INJECT_CA_FROM_SECRET: &str = "cert-manager.io/inject-ca-from-secret";

/// The core CRDs the scenarios need from any core CRD set.
pub const REQUIRED: [&str; 3] = [
    "clusters.cluster.x-k8s.io",
    "machines.cluster.x-k8s.io",
    "machinepools.cluster.x-k8s.io",
];

/// Which core CRDs a run installs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoreCrds {
    Minimal,
    /// A released components file (`--core-crds`), kustomize roots rendered by the second.
    Released(PathBuf, crate::documents::Kustomize),
}

/// A Service port the conversion webhook must be reachable as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceRoute {
    pub namespace: String,
    pub name: String,
    pub port: u16,
}

impl ServiceRoute {
    /// The DNS names kube-apiserver verifies the webhook's certificate for.
    pub fn dns_names(&self) -> Vec<String> {
        vec![
            format!("{}.{}.svc", self.name, self.namespace),
            format!("{}.{}.svc.cluster.local", self.name, self.namespace),
        ]
    }
}

/// Released core CRDs read from a file, before the webhook's CA is known.
#[derive(Debug, Clone)]
pub struct Released {
    pub file: PathBuf,
    /// CRDs, then the Namespaces and Services their conversion names.
    pub crds: Vec<Value>,
    pub services: Vec<Value>,
    pub routes: Vec<ServiceRoute>,
}

#[derive(Debug, thiserror::Error)]
pub enum CoreCrdError {
    #[error("--core-crds {file}: {message}")]
    Load { file: String, message: String },
    #[error(
        "--core-crds {file}: not CAPI core's CRDs: missing {missing} (pass CAPI core's components file, e.g. cluster-api-components.yaml)"
    )]
    Missing { file: String, missing: String },
    #[error(
        "--core-crds {file}: {crd} does not serve cluster.x-k8s.io/v1beta2 (the scenarios need CAPI core v1.11 or newer)"
    )]
    NoV1Beta2 { file: String, crd: String },
}

fn name_of(d: &Value) -> &str {
    d.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn kind_of(d: &Value) -> &str {
    d.get("kind").and_then(Value::as_str).unwrap_or_default()
}

/// Reads CAPI core's CRDs (and the Services their conversion names) from `file`, a components
/// file or any YAML stream of CRDs (a kustomize root rendered by `kustomize`).
pub fn load_released(
    file: &Path,
    kustomize: &crate::documents::Kustomize,
) -> Result<Released, CoreCrdError> {
    let shown = file.display().to_string();
    let options = crate::documents::LoadOptions {
        keep_going: false,
        form: capi_contract::inventory::SchemaForm::Whole,
        kustomize: kustomize.clone(),
    };
    let loaded =
        crate::documents::load_paths_with(&[file.to_path_buf()], &options).map_err(|e| {
            CoreCrdError::Load {
                file: shown.clone(),
                message: e.to_string(),
            }
        })?;
    let docs: Vec<Value> = loaded.documents.into_iter().map(|d| d.value).collect();
    released_from(&shown, file, docs)
}

fn released_from(shown: &str, file: &Path, docs: Vec<Value>) -> Result<Released, CoreCrdError> {
    let crds: Vec<Value> = docs
        .iter()
        .filter(|d| kind_of(d) == "CustomResourceDefinition")
        .cloned()
        .collect();
    let missing: Vec<&str> = REQUIRED
        .iter()
        .filter(|n| !crds.iter().any(|c| name_of(c) == **n))
        .copied()
        .collect();
    if !missing.is_empty() {
        return Err(CoreCrdError::Missing {
            file: shown.to_string(),
            missing: missing.join(", "),
        });
    }
    for crd in crds.iter().filter(|c| REQUIRED.contains(&name_of(c))) {
        let serves = crd
            .pointer("/spec/versions")
            .and_then(Value::as_array)
            .is_some_and(|vs| {
                vs.iter().any(|v| {
                    v.get("name").and_then(Value::as_str) == Some("v1beta2")
                        && v.get("served").and_then(Value::as_bool) == Some(true)
                })
            });
        if !serves {
            return Err(CoreCrdError::NoV1Beta2 {
                file: shown.to_string(),
                crd: name_of(crd).to_string(),
            });
        }
    }
    let mut routes: Vec<ServiceRoute> = Vec::new();
    for crd in &crds {
        if let Some(svc) = crd.pointer("/spec/conversion/webhook/clientConfig/service") {
            let route = ServiceRoute {
                namespace: svc
                    .get("namespace")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                name: svc
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                port: svc
                    .get("port")
                    .and_then(Value::as_u64)
                    .and_then(|p| u16::try_from(p).ok())
                    .unwrap_or(443),
            };
            if !routes.contains(&route) {
                routes.push(route);
            }
        }
    }
    // The Services (and their Namespaces) as the file declares them, else as CAPI's would be.
    let mut services = Vec::new();
    for r in &routes {
        let ns = docs
            .iter()
            .find(|d| kind_of(d) == "Namespace" && name_of(d) == r.namespace)
            .cloned()
            .unwrap_or_else(|| {
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": r.namespace}})
            });
        if !services.contains(&ns) {
            services.push(ns);
        }
        let declared = docs.iter().find(|d| {
            kind_of(d) == "Service"
                && name_of(d) == r.name
                && d.pointer("/metadata/namespace").and_then(Value::as_str)
                    == Some(r.namespace.as_str())
        });
        let lists_port = declared.is_some_and(|s| {
            s.pointer("/spec/ports")
                .and_then(Value::as_array)
                .is_some_and(|ps| {
                    ps.iter()
                        .any(|p| p.get("port").and_then(Value::as_u64) == Some(u64::from(r.port)))
                })
        });
        let svc = match declared {
            Some(s) if lists_port => s.clone(),
            _ => json!({
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": r.name, "namespace": r.namespace},
                "spec": {"ports": [{"port": r.port, "targetPort": 9443}]},
            }),
        };
        if !services.contains(&svc) {
            services.push(svc);
        }
    }
    Ok(Released {
        file: file.to_path_buf(),
        crds,
        services,
        routes,
    })
}

impl Released {
    /// The CRDs with the webhook's CA injected where cert-manager would inject it, then the
    /// Namespaces and Services.
    pub fn documents(&self, ca_pem: &str) -> Vec<Value> {
        let bundle = base64::engine::general_purpose::STANDARD.encode(ca_pem.as_bytes());
        let mut out: Vec<Value> = self
            .crds
            .iter()
            .map(|crd| {
                let mut crd = crd.clone();
                let annotations = crd.pointer("/metadata/annotations");
                let asks = annotations.is_some_and(|a| {
                    a.get(INJECT_CA_FROM).is_some() || a.get(INJECT_CA_FROM_SECRET).is_some()
                });
                if asks
                    && let Some(cc) = crd.pointer_mut("/spec/conversion/webhook/clientConfig")
                    && let Some(cc) = cc.as_object_mut()
                {
                    cc.insert("caBundle".into(), Value::String(bundle.clone()));
                }
                crd
            })
            .collect();
        out.extend(self.services.iter().cloned());
        out
    }
}

/// The Service CAPI core's CRDs name for conversion (`capi-system/capi-webhook-service:443`,
/// path `/convert`); the minimal CRDs name it too, so CAPI's own CRDs installed over them
/// (`--crds` of CAPI's components file, merged as clusterctl merges) keep one valid client
/// config.
pub fn core_route() -> ServiceRoute {
    ServiceRoute {
        namespace: "capi-system".into(),
        name: "capi-webhook-service".into(),
        port: 443,
    }
}

/// The Service the mock provider's CRDs convert through
/// ([`capi_mock_provider::crds::CONVERSION_SERVICE`]); the run routes it to its webhook for the
/// baseline.
pub fn mock_route() -> ServiceRoute {
    let (namespace, name) = capi_mock_provider::crds::CONVERSION_SERVICE;
    ServiceRoute {
        namespace: namespace.into(),
        name: name.into(),
        port: capi_mock_provider::crds::CONVERSION_SERVICE_PORT,
    }
}

/// The Namespace and Service of `route` (a Service with no selector: nothing in a cluster
/// serves it; the run routes it).
pub fn route_documents(route: &ServiceRoute) -> Vec<Value> {
    vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": route.namespace}}),
        json!({
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": route.name, "namespace": route.namespace},
            "spec": {"ports": [{"port": route.port, "targetPort": 9443}]},
        }),
    ]
}

/// The minimal core CRDs with `conversion: Webhook` through [`core_route`], trusting `ca_pem`,
/// then that Service's Namespace and Service.
pub fn minimal(ca_pem: &str) -> Vec<Value> {
    let bundle = base64::engine::general_purpose::STANDARD.encode(ca_pem.as_bytes());
    let route = core_route();
    let mut docs: Vec<Value> = capi_mock_provider::core_crds::core_crd_documents()
        .into_iter()
        .map(|mut crd| {
            let kind = crd["spec"]["names"]["kind"].as_str().unwrap_or_default();
            if capi_mock_provider::core_crds::UNCONVERTED_KINDS.contains(&kind) {
                return crd;
            }
            crd["spec"]["conversion"] = json!({
                "strategy": "Webhook",
                "webhook": {
                    "clientConfig": {
                        "service": {"namespace": route.namespace, "name": route.name,
                                    "path": super::webhook::PATH, "port": route.port},
                        "caBundle": bundle,
                    },
                    "conversionReviewVersions": ["v1"],
                },
            });
            crd
        })
        .collect();
    docs.extend(route_documents(&route));
    docs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd(name: &str, versions: &[&str], service: bool, annotated: bool) -> Value {
        let mut c = json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": name},
            "spec": {"versions": versions.iter().map(|v| json!({"name": v, "served": true})).collect::<Vec<_>>()},
        });
        if service {
            c["spec"]["conversion"] = json!({"strategy": "Webhook", "webhook": {"clientConfig": {
                "service": {"name": "capi-webhook-service", "namespace": "capi-system", "path": "/convert"}},
                "conversionReviewVersions": ["v1"]}});
        }
        if annotated {
            c["metadata"]["annotations"] = json!({INJECT_CA_FROM: "capi-system/capi-serving-cert"});
        }
        c
    }

    #[test]
    fn released_crds_get_the_ca_and_a_routed_service() {
        let docs = vec![
            crd(
                "clusters.cluster.x-k8s.io",
                &["v1beta1", "v1beta2"],
                true,
                true,
            ),
            crd(
                "machines.cluster.x-k8s.io",
                &["v1beta1", "v1beta2"],
                true,
                true,
            ),
            crd(
                "machinepools.cluster.x-k8s.io",
                &["v1beta1", "v1beta2"],
                true,
                false,
            ),
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "capi-webhook-service", "namespace": "capi-system"},
                   "spec": {"ports": [{"port": 443, "targetPort": "webhook-server"}]}}),
        ];
        let r = released_from("f", Path::new("f"), docs).unwrap();
        assert_eq!(
            r.routes,
            vec![ServiceRoute {
                namespace: "capi-system".into(),
                name: "capi-webhook-service".into(),
                port: 443
            }]
        );
        let out = r.documents("PEM");
        let bundles: Vec<bool> = out[..3]
            .iter()
            .map(|c| {
                c.pointer("/spec/conversion/webhook/clientConfig/caBundle")
                    .is_some()
            })
            .collect();
        // Only the annotated CRDs get the CA (cert-manager's behaviour).
        assert_eq!(bundles, [true, true, false]);
        assert!(out.iter().any(|d| kind_of(d) == "Namespace"));
        assert!(out.iter().any(|d| kind_of(d) == "Service"));
    }

    #[test]
    fn a_file_without_core_crds_or_v1beta2_is_refused() {
        let e = released_from("f", Path::new("f"), vec![]).unwrap_err();
        assert!(e.to_string().contains("clusters.cluster.x-k8s.io"), "{e}");
        let docs = vec![
            crd("clusters.cluster.x-k8s.io", &["v1beta1"], true, true),
            crd("machines.cluster.x-k8s.io", &["v1beta1"], true, true),
            crd("machinepools.cluster.x-k8s.io", &["v1beta1"], true, true),
        ];
        let e = released_from("f", Path::new("f"), docs).unwrap_err();
        assert!(e.to_string().contains("v1.11"), "{e}");
    }

    #[test]
    fn minimal_crds_convert_through_capis_service() {
        let docs = minimal("PEM");
        // Cluster, Machine, MachinePool, MachineSet, MachineDeployment, IPAddressClaim,
        // IPAddress; the Namespace and Service.
        assert_eq!(docs.len(), 9);
        assert_eq!(
            docs[5]["metadata"]["name"],
            "ipaddressclaims.ipam.cluster.x-k8s.io"
        );
        for d in docs[..3].iter().chain(&docs[5..7]) {
            assert_eq!(d["spec"]["conversion"]["strategy"], "Webhook");
            let cc = &d["spec"]["conversion"]["webhook"]["clientConfig"];
            assert_eq!(cc["service"]["name"], "capi-webhook-service");
            assert_eq!(cc["service"]["path"], "/convert");
            assert!(cc.get("url").is_none());
        }
        for d in &docs[3..5] {
            assert!(d["spec"].get("conversion").is_none(), "{d}");
        }
        assert_eq!(kind_of(&docs[7]), "Namespace");
        assert_eq!(kind_of(&docs[8]), "Service");
    }
}

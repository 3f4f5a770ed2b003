//! Installing a provider's manifests into a cluster the way `clusterctl init` does: objects
//! sorted for creation (Namespaces, then CRDs, then Secrets, ConfigMaps and ServiceAccounts,
//! then the rest in file order: CAPI's `util/resource.SortForCreate`), each created or, when it
//! exists, merge-patched; custom resources only once their CRD is Established (watched, not
//! polled). Objects of a kind no API serves (cert-manager's `Certificate`/`Issuer` when
//! cert-manager is not installed) are skipped with the reason, not an error.

use capi_contract::inventory::Document;
use futures::future::join_all;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use kube::discovery::{ApiCapabilities, ApiResource, Discovery, Scope};
use serde_json::Value;
use std::time::Duration;
use thiserror::Error;

/// The field manager the installer writes as.
pub const FIELD_MANAGER: &str = "capi-conformance";

/// An object of the inputs that was not installed, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// `apiVersion Kind namespace/name`.
    pub object: String,
    /// Where it came from (`file#index`).
    pub origin: String,
    pub reason: String,
}

/// What [`install`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InstallReport {
    /// Objects created or updated, as `apiVersion Kind namespace/name`, in order.
    pub applied: Vec<String>,
    pub skipped: Vec<Skipped>,
}

/// Why installing stopped (the inputs are wrong for this cluster, or the cluster failed).
#[derive(Debug, Error)]
pub enum InstallError {
    #[error("{origin}: {object}: {message}")]
    Rejected {
        origin: String,
        object: String,
        message: String,
    },
    #[error("{origin}: {message}")]
    Malformed { origin: String, message: String },
    #[error(
        "CustomResourceDefinition {name} ({origin}) is not Established after {timeout:?}{detail}"
    )]
    NotEstablished {
        name: String,
        origin: String,
        timeout: Duration,
        detail: String,
    },
    #[error("API discovery failed: {0}")]
    Discovery(String),
}

/// clusterctl's creation priority (lower first; everything else 0, kept in file order).
pub fn create_priority(kind: &str) -> i32 {
    match kind {
        "Namespace" => -100,
        "CustomResourceDefinition" => -99,
        "StorageClass" => -98,
        "PersistentVolume" => -97,
        "PersistentVolumeClaim" => -96,
        "Secret" => -95,
        "ConfigMap" => -94,
        "ServiceAccount" => -93,
        "LimitRange" => -92,
        "Pod" => -91,
        "ReplicaSet" => -90,
        "Endpoint" => -89,
        _ => 0,
    }
}

fn kind_of(v: &Value) -> &str {
    v.get("kind").and_then(Value::as_str).unwrap_or_default()
}

fn str_at<'a>(v: &'a Value, ptr: &str) -> &'a str {
    v.pointer(ptr).and_then(Value::as_str).unwrap_or_default()
}

/// `apiVersion Kind namespace/name` (or `… name` for cluster-scoped objects).
pub fn describe(v: &Value) -> String {
    let ns = str_at(v, "/metadata/namespace");
    let name = str_at(v, "/metadata/name");
    let id = if ns.is_empty() {
        name.to_string()
    } else {
        format!("{ns}/{name}")
    };
    format!("{} {} {id}", str_at(v, "/apiVersion"), kind_of(v))
}

fn gvk_of(doc: &Document) -> Result<GroupVersionKind, InstallError> {
    let api_version = str_at(&doc.value, "/apiVersion");
    let kind = kind_of(&doc.value);
    if api_version.is_empty() || kind.is_empty() || str_at(&doc.value, "/metadata/name").is_empty()
    {
        return Err(InstallError::Malformed {
            origin: doc.origin.location(),
            message: "not a Kubernetes object (apiVersion, kind and metadata.name are required)"
                .into(),
        });
    }
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    Ok(GroupVersionKind::gvk(group, version, kind))
}

/// Installs `docs` through `client` (see the module doc). Errors name the object and where it
/// came from; nothing is rolled back (the caller owns the cluster: a throw-away embedded server).
pub async fn install(
    client: &kube::Client,
    docs: Vec<Document>,
    crd_timeout: Duration,
) -> Result<InstallReport, InstallError> {
    install_into(client, docs, crd_timeout, None).await
}

/// [`install`] on a cluster the run does not own: with `installation`, every object created
/// carries the run label and every change is recorded, to be put back after the run
/// ([`super::installation::Installation::restore`]).
pub async fn install_into(
    client: &kube::Client,
    docs: Vec<Document>,
    crd_timeout: Duration,
    installation: Option<&super::installation::Installation>,
) -> Result<InstallReport, InstallError> {
    let mut docs: Vec<Document> = docs
        .into_iter()
        .filter(|d| d.value.as_object().is_some_and(|m| !m.is_empty()))
        .collect();
    docs.sort_by_key(|d| create_priority(kind_of(&d.value)));
    let mut report = InstallReport::default();
    let split = docs
        .iter()
        .position(|d| create_priority(kind_of(&d.value)) > -99)
        .unwrap_or(docs.len());
    let rest = docs.split_off(split);
    // Namespaces and CRDs: their APIs are always served.
    let mut discovery = discover(client).await?;
    apply_all(client, &discovery, &docs, &mut report, installation).await?;
    let crds: Vec<&Document> = docs
        .iter()
        .filter(|d| kind_of(&d.value) == "CustomResourceDefinition")
        .collect();
    if !crds.is_empty() {
        wait_established(client, &crds, crd_timeout).await?;
        discovery = discover(client).await?;
    }
    apply_all(client, &discovery, &rest, &mut report, installation).await?;
    Ok(report)
}

/// How many objects of one creation tier are created at once.
const CONCURRENT_CREATES: usize = 8;

/// Applies `docs` (sorted by [`create_priority`]) tier by tier, as `clusterctl init` orders
/// them; the objects of one tier do not depend on each other and are created concurrently (a
/// provider's components are dozens of objects, one round trip each). The report keeps the
/// documents' order, except that a tier's webhook configurations come after the rest of it
/// (so no hook starts intercepting objects created beside it); the first error in that order
/// is returned.
async fn apply_all(
    client: &kube::Client,
    discovery: &Discovery,
    docs: &[Document],
    report: &mut InstallReport,
    installation: Option<&super::installation::Installation>,
) -> Result<(), InstallError> {
    let is_hook = |d: &&Document| kind_of(&d.value).ends_with("WebhookConfiguration");
    let tiers = docs
        .chunk_by(|a, b| create_priority(kind_of(&a.value)) == create_priority(kind_of(&b.value)));
    for tier in tiers {
        let (hooks, rest): (Vec<&Document>, Vec<&Document>) = tier.iter().partition(is_hook);
        apply_tier(client, discovery, &rest, report, installation).await?;
        apply_tier(client, discovery, &hooks, report, installation).await?;
    }
    Ok(())
}

/// [`apply_all`]'s concurrent part: `docs` at once, their outcomes in order.
async fn apply_tier(
    client: &kube::Client,
    discovery: &Discovery,
    docs: &[&Document],
    report: &mut InstallReport,
    installation: Option<&super::installation::Installation>,
) -> Result<(), InstallError> {
    use futures::StreamExt;
    let outcomes: Vec<Result<Applied, InstallError>> = futures::stream::iter(docs)
        .map(|doc| apply(client, discovery, doc, installation))
        .buffered(CONCURRENT_CREATES)
        .collect()
        .await;
    for outcome in outcomes {
        match outcome? {
            Applied::Done(object) => report.applied.push(object),
            Applied::Skipped(s) => report.skipped.push(s),
        }
    }
    Ok(())
}

/// What became of one document.
enum Applied {
    Done(String),
    Skipped(Skipped),
}

async fn discover(client: &kube::Client) -> Result<Discovery, InstallError> {
    Discovery::new(client.clone())
        .run_aggregated()
        .await
        .map_err(|e| InstallError::Discovery(e.to_string()))
}

/// Why nothing serves a kind.
fn unserved_reason(gvk: &GroupVersionKind, group_served: bool) -> String {
    if gvk.group == "cert-manager.io" {
        "not served: cert-manager is not installed (its CRDs are not among the inputs), so the provider's webhook certificates are not issued".into()
    } else if group_served {
        format!(
            "not served: group {} is, but not kind {} in version {}",
            gvk.group, gvk.kind, gvk.version
        )
    } else {
        "not served: no CustomResourceDefinition for it among the inputs or on the cluster".into()
    }
}

async fn apply(
    client: &kube::Client,
    discovery: &Discovery,
    doc: &Document,
    installation: Option<&super::installation::Installation>,
) -> Result<Applied, InstallError> {
    let gvk = gvk_of(doc)?;
    let object = describe(&doc.value);
    let Some((ar, caps)) = discovery.resolve_gvk(&gvk) else {
        let group_served = discovery.has_group(&gvk.group);
        return Ok(Applied::Skipped(Skipped {
            object,
            origin: doc.origin.location(),
            reason: unserved_reason(&gvk, group_served),
        }));
    };
    let mut value = doc.value.clone();
    if let Some(i) = installation {
        // Webhooks of Services the run routes already call this machine.
        i.rewrite(&mut value, false);
    }
    let api = api_for(client, &ar, &caps, &mut value);
    let rejected = |e: kube::Error| InstallError::Rejected {
        origin: doc.origin.location(),
        object: object.clone(),
        message: api_message(&e),
    };
    let obj: DynamicObject =
        serde_json::from_value(value).map_err(|e| InstallError::Malformed {
            origin: doc.origin.location(),
            message: format!("{object}: {e}"),
        })?;
    let name = obj.metadata.name.clone().unwrap_or_default();
    let post = PostParams {
        field_manager: Some(FIELD_MANAGER.into()),
        ..PostParams::default()
    };
    let namespace = obj.metadata.namespace.clone();
    let mut created = obj.clone();
    let mut fresh = false;
    if let Some(i) = installation {
        let mut labelled = serde_json::to_value(&created).map_err(|e| InstallError::Malformed {
            origin: doc.origin.location(),
            message: format!("{object}: {e}"),
        })?;
        i.label(&mut labelled);
        created = serde_json::from_value(labelled).map_err(|e| InstallError::Malformed {
            origin: doc.origin.location(),
            message: format!("{object}: {e}"),
        })?;
        fresh = i.created(&ar, namespace.as_deref(), &name);
    }
    match api.create(&post, &created).await {
        Ok(_) => {}
        Err(kube::Error::Api(s)) if s.code == 409 => {
            if let Some(i) = installation {
                if fresh {
                    i.not_created(&ar, namespace.as_deref(), &name);
                }
                let before = api.get(&name).await.map_err(rejected)?;
                let before =
                    serde_json::to_value(&before).map_err(|e| InstallError::Malformed {
                        origin: doc.origin.location(),
                        message: format!("{object}: {e}"),
                    })?;
                i.changing(&ar, namespace.as_deref(), &before);
            }
            // clusterctl: the object exists, so it is merge-patched with the manifest's content.
            let params = PatchParams {
                field_manager: Some(FIELD_MANAGER.into()),
                ..PatchParams::default()
            };
            let mut patch = serde_json::to_value(&obj).map_err(|e| InstallError::Malformed {
                origin: doc.origin.location(),
                message: format!("{object}: {e}"),
            })?;
            if let Some(i) = installation {
                i.rewrite(&mut patch, true);
            }
            api.patch(&name, &params, &Patch::Merge(&patch))
                .await
                .map_err(rejected)?;
        }
        Err(e) => return Err(rejected(e)),
    }
    Ok(Applied::Done(object))
}

/// The API for the object's resource; namespaced objects without a namespace go to the
/// client's default namespace (as kubectl does), cluster-scoped ones lose a stray namespace.
fn api_for(
    client: &kube::Client,
    ar: &ApiResource,
    caps: &ApiCapabilities,
    value: &mut Value,
) -> Api<DynamicObject> {
    let meta = value.get_mut("metadata").and_then(Value::as_object_mut);
    if caps.scope == Scope::Namespaced {
        let ns = meta
            .as_ref()
            .and_then(|m| m.get("namespace"))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .unwrap_or_else(|| client.default_namespace().to_string());
        if let Some(m) = meta {
            m.insert("namespace".into(), Value::String(ns.clone()));
        }
        Api::namespaced_with(client.clone(), &ns, ar)
    } else {
        if let Some(m) = meta {
            m.remove("namespace");
        }
        Api::all_with(client.clone(), ar)
    }
}

/// The API server's message for a refused request.
fn api_message(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(s) => s.message.clone(),
        other => other.to_string(),
    }
}

/// Waits (watching) until every CRD is Established.
async fn wait_established(
    client: &kube::Client,
    crds: &[&Document],
    timeout: Duration,
) -> Result<(), InstallError> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let waits = crds.iter().map(|d| {
        let api = api.clone();
        async move {
            let name = str_at(&d.value, "/metadata/name").to_string();
            // A watch error (a 410 Expired, a dropped connection) ends `await_condition`:
            // watch again, as an informer would, until the deadline.
            let last_error = std::sync::Mutex::new(None::<String>);
            let established = async {
                loop {
                    let cond = kube::runtime::wait::conditions::is_crd_established();
                    match kube::runtime::wait::await_condition(api.clone(), &name, cond).await {
                        Ok(_) => return,
                        Err(e) => {
                            *last_error.lock().unwrap_or_else(|p| p.into_inner()) =
                                Some(e.to_string());
                            tokio::time::sleep(Duration::from_millis(50)).await;
                        }
                    }
                }
            };
            match tokio::time::timeout(timeout, established).await {
                Ok(()) => Ok(()),
                Err(_) => {
                    let detail = api
                        .get_opt(&name)
                        .await
                        .ok()
                        .flatten()
                        .and_then(|c| c.status)
                        .and_then(|s| s.conditions)
                        .unwrap_or_default()
                        .into_iter()
                        .filter(|c| c.status != "True")
                        .map(|c| format!("{}: {}", c.type_, c.message.unwrap_or_default()))
                        .collect::<Vec<_>>()
                        .join("; ");
                    let last = last_error.lock().unwrap_or_else(|p| p.into_inner()).take();
                    let detail = match (detail.is_empty(), last) {
                        (true, None) => String::new(),
                        (false, None) => format!(" ({detail})"),
                        (true, Some(e)) => format!(" (last watch error: {e})"),
                        (false, Some(e)) => format!(" ({detail}; last watch error: {e})"),
                    };
                    Err(not_established(d, &name, timeout, detail))
                }
            }
        }
    });
    join_all(waits).await.into_iter().collect()
}

fn not_established(d: &Document, name: &str, timeout: Duration, detail: String) -> InstallError {
    InstallError::NotEstablished {
        name: name.to_string(),
        origin: d.origin.location(),
        timeout,
        detail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creation_order_is_clusterctls() {
        let mut kinds = vec![
            "Deployment",
            "Service",
            "CustomResourceDefinition",
            "Secret",
            "Namespace",
            "ServiceAccount",
            "ClusterRole",
            "ConfigMap",
        ];
        kinds.sort_by_key(|k| create_priority(k));
        assert_eq!(
            kinds,
            [
                "Namespace",
                "CustomResourceDefinition",
                "Secret",
                "ConfigMap",
                "ServiceAccount",
                "Deployment",
                "Service",
                "ClusterRole"
            ]
        );
    }

    #[test]
    fn objects_are_described_for_messages() {
        let v = serde_json::json!({"apiVersion": "cert-manager.io/v1", "kind": "Issuer",
            "metadata": {"name": "i", "namespace": "ns"}});
        assert_eq!(describe(&v), "cert-manager.io/v1 Issuer ns/i");
        let gvk = GroupVersionKind::gvk("cert-manager.io", "v1", "Issuer");
        assert!(unserved_reason(&gvk, false).contains("cert-manager is not installed"));
        let gvk = GroupVersionKind::gvk("apps", "v2", "Deployment");
        assert_eq!(
            unserved_reason(&gvk, true),
            "not served: group apps is, but not kind Deployment in version v2"
        );
    }
}

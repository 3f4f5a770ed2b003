//! `--sample` objects checked against the installed CRDs before any scenario runs: each target
//! subject's sample is created with `dryRun=All` (the server prunes, defaults and validates it
//! as it would the scenario's object, nothing is stored). A sample the CRD rejects is a usage
//! error naming the sample, the kind and the server's message, not a column of
//! "environment" cells.

use super::Subject;
use super::core_sim::sample_object;
use kube::api::{Api, DynamicObject, PostParams};
use serde_json::Value;

/// The name the dry-run objects get.
const CHECK_NAME: &str = "capi-conformance-sample-check";

/// The kinds the server serves, by group, asked once per group (discovery).
#[derive(Default)]
struct ServedKinds {
    groups: std::collections::BTreeMap<String, Vec<String>>,
}

impl ServedKinds {
    /// Whether `group` serves `kind` at any version. A discovery error other than "no such
    /// group" counts as served: the scenarios report what the environment does.
    async fn serves(&mut self, client: &kube::Client, group: &str, kind: &str) -> bool {
        if !self.groups.contains_key(group) {
            let kinds = match kube::discovery::group(client, group).await {
                Ok(g) => g
                    .versions()
                    .flat_map(|v| g.versioned_resources(v))
                    .map(|(r, _)| r.kind)
                    .collect(),
                Err(kube::Error::Api(s)) if s.code == 404 => Vec::new(),
                Err(kube::Error::Discovery(_)) => Vec::new(),
                Err(_) => vec![kind.to_string()],
            };
            self.groups.insert(group.to_string(), kinds);
        }
        self.groups
            .get(group)
            .is_some_and(|k| k.iter().any(|k| k == kind))
    }
}

/// A sample the installed CRD rejects.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "--sample {files}: the {kind} sample is not valid for the installed CRDs ({api_version}): {message}"
)]
pub struct BadSample {
    pub files: String,
    pub kind: String,
    pub api_version: String,
    /// The API server's message.
    pub message: String,
}

/// Dry-runs the creation of every subject's sample in `namespace` (one that exists). Only
/// rejections of the object itself (422 Invalid, 400 BadRequest) are the sample's fault;
/// anything else (a provider webhook not started yet, a server hiccup) is left to the
/// scenarios, which report it as the environment.
pub async fn dry_run_samples(
    client: &kube::Client,
    namespace: &str,
    subjects: &[Subject],
    files: &str,
) -> Result<(), BadSample> {
    let mut served = ServedKinds::default();
    for s in subjects {
        let Some(sample) = &s.sample else {
            continue;
        };
        // A reference to a kind nothing serves cannot resolve on any cluster: the provider of
        // that kind is missing from the run.
        for (group, kind) in
            super::core_sim::referenced_kinds(sample.get("spec").unwrap_or(&Value::Null))
        {
            if group.is_empty() || group.ends_with(crate::baseline::MOCK_GROUP_SUFFIX) {
                continue;
            }
            if !served.serves(client, &group, &kind).await {
                return Err(BadSample {
                    files: files.to_string(),
                    kind: s.resource.kind.clone(),
                    api_version: s.resource.api_version.clone(),
                    message: format!(
                        "it references a {kind} ({group}), a kind no installed CRD serves: install the provider that serves it in the same run (add its components with another --crds, and its manager with --provider-cmd), or reference a kind that is installed"
                    ),
                });
            }
        }
        // Validated at the version it is written in (a v1beta1 sample against the v1beta1
        // schema); the scenarios create it there too and the server reaches the subject's
        // version through the provider's conversion, never by rewriting `apiVersion`.
        let mut obj = sample_object(sample, CHECK_NAME);
        let resource = super::env::written_at(obj.get("apiVersion"), &s.resource);
        obj["apiVersion"] = Value::String(resource.api_version.clone());
        obj["kind"] = Value::String(resource.kind.clone());
        // A cluster-scoped kind (its CRD's scope) is created without a namespace.
        let cluster_scoped = s
            .companions
            .cluster_scoped
            .contains(&resource.group, &resource.kind);
        if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
            if cluster_scoped {
                meta.remove("namespace");
            } else {
                meta.insert("namespace".into(), Value::String(namespace.to_string()));
            }
        }
        let bad = |message: String| BadSample {
            files: files.to_string(),
            kind: resource.kind.clone(),
            api_version: resource.api_version.clone(),
            message,
        };
        let dynamic: DynamicObject =
            serde_json::from_value(obj).map_err(|e| bad(format!("not an object: {e}")))?;
        let api: Api<DynamicObject> = if cluster_scoped {
            Api::all_with(client.clone(), &resource)
        } else {
            Api::namespaced_with(client.clone(), namespace, &resource)
        };
        let params = PostParams {
            dry_run: true,
            ..PostParams::default()
        };
        match api.create(&params, &dynamic).await {
            Err(kube::Error::Api(status)) if status.code == 422 || status.code == 400 => {
                return Err(bad(status.message));
            }
            _ => {}
        }
    }
    Ok(())
}

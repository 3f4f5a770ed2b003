//! The embedded API server as a source: what every embedded run installs (CAPI core's CRDs and
//! RBAC, the mock provider's CRDs and ClusterRoles) and the provider's own manifests (`--crds`:
//! its components file or `config/`, installed as `clusterctl init` would,
//! [`crate::manifests`]). The documents are then read back like a cluster's
//! ([`super::cluster::read_documents`]).
//!
//! When the run serves the provider's webhooks (`--provider-cmd`), the components' webhooks get
//! a serving certificate whose CA is injected first, as cert-manager would ([`crate::serving`]);
//! what would route the baseline mock's objects through the target's webhooks is kept for when
//! the target starts ([`split_shared`]).
//!
//! CAPI core's CRDs (the tool's minimal ones, or CAPI's released ones with `--core-crds`) are
//! those of a started [`EmbeddedCore`] ([`start_core`]): served at v1beta1 and v1beta2, their
//! conversion pointed at the tool's webhook (docs/core-simulation.md).

use crate::capi_core::EmbeddedCore;
use crate::capi_core::crds::CoreCrds;
use crate::plan::subjects::MOCK_GROUP_SUFFIX;
use crate::run::management::Management;
use anyhow::Context;
use capi_contract::inventory::{Document, Origin};
use capi_mock_provider::core_crds::core_crd_documents;
use capi_mock_provider::crds::mock_crds;
use capi_mock_provider::manifests::{aggregated_cluster_role, manager_cluster_role};
use embedded_apiserver::EmbeddedServer;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

mod launches;
mod webhooks;
use launches::manager_launches;
pub use launches::pair_commands;
use webhooks::{is_mock_crd, split_shared, webhook_serving};

/// What the embedded server is given beyond the base documents.
#[derive(Debug, Clone, Default)]
pub struct EmbeddedInputs {
    /// `--crds`: the provider's manifests.
    pub crds: Vec<PathBuf>,
    /// `--var NAME=VALUE`: clusterctl variables of those manifests.
    pub vars: Vec<String>,
    /// `--server-faults`: fault injection in the server.
    pub server_faults: Option<String>,
    /// The run serves the components' webhooks (`--provider-cmd`): issue their serving
    /// certificate, inject its CA, and keep back what would route the baseline through them.
    pub serve_webhooks: bool,
    /// `--core-crds`: CAPI core's released CRDs (its components file) instead of the tool's
    /// minimal ones.
    pub core_crds: Option<PathBuf>,
    /// `--kustomize`: renders the kustomize roots among `crds` and `core_crds`.
    pub kustomize: crate::documents::Kustomize,
    /// Each `--provider-cmd` with the Deployment's args and env (`--no-deployment-args`,
    /// `--no-deployment-env`): run each manager as its components' Deployment runs it
    /// ([`manager_launches`] pairs commands with Deployments).
    pub managers: Vec<crate::run::manager_launch::LaunchRequest>,
}

/// What installing the `--crds` components gave the run.
#[derive(Default)]
pub struct Installed {
    /// Report notes: objects nothing serves (skipped), CA injections that could not be done.
    pub notes: Vec<crate::report::Note>,
    /// The provider's webhook serving (`--provider-cmd` with webhooks).
    pub serving: Option<crate::serving::Plan>,
    /// Components installed when the target starts ([`split_shared`]).
    pub deferred: Vec<Document>,
    /// The components are the mock's own (its webhook mode): the mock's kinds are the target.
    pub mock_components: bool,
    /// How each `--provider-cmd` manager (same order) runs as its components' Deployment runs
    /// it ([`crate::run::manager_launch`]; `None`: as the command says, nothing added).
    pub launches: Vec<Option<crate::run::manager_launch::ManagerLaunch>>,
    /// Where the `--crds` input declared each Role and ClusterRole it installed, by
    /// [`RoleKey`]: read back from the server, they keep that origin ([`input_origins`]).
    pub input_roles: BTreeMap<RoleKey, Origin>,
}

/// A Role or ClusterRole: (kind, namespace — empty for a ClusterRole —, name).
pub type RoleKey = (String, String, String);

fn role_key(v: &Value, default_namespace: &str) -> Option<RoleKey> {
    let kind = v.get("kind").and_then(Value::as_str)?;
    let name = v.pointer("/metadata/name").and_then(Value::as_str)?;
    let namespace = match kind {
        "ClusterRole" => "",
        "Role" => v
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .unwrap_or(default_namespace),
        _ => return None,
    };
    Some((kind.to_string(), namespace.to_string(), name.to_string()))
}

/// Gives the Roles and ClusterRoles read back from the server that the `--crds` input
/// installed the input's origin (file and line) instead of `cluster:…`. They are the input's
/// roles as `lint` of the same files reads them: an unlabelled one is the provider's own
/// (`clusterctl init` would label it), where an unlabelled role found on a cluster is nobody's
/// in particular (`capi_contract::checks::rbac::RbacIndexes::of_provider`). The base
/// documents' roles (core's, the mock's) keep their `cluster:` origin.
pub fn input_origins(docs: &mut [Document], installed: &Installed) {
    if installed.input_roles.is_empty() {
        return;
    }
    for doc in docs {
        if let Some(origin) = role_key(&doc.value, "").and_then(|k| installed.input_roles.get(&k)) {
            doc.origin = origin.clone();
        }
    }
}

/// Starts CAPI core's part for `server` (the conversion webhook, the core CRDs of `inputs`
/// pointed at it, the Services they name routed to it). The caller shuts it down after the run.
pub async fn start_core(
    server: &EmbeddedServer,
    inputs: &EmbeddedInputs,
) -> anyhow::Result<EmbeddedCore> {
    let core = EmbeddedCore::start(server.client(), core_crds(inputs)).await?;
    core.route(server);
    Ok(core)
}

/// The core CRDs `inputs` ask for: CAPI's released ones (`--core-crds`) or the tool's minimal
/// ones.
pub fn core_crds(inputs: &EmbeddedInputs) -> CoreCrds {
    match &inputs.core_crds {
        Some(file) => CoreCrds::Released(file.clone(), inputs.kustomize.clone()),
        None => CoreCrds::Minimal,
    }
}

/// Fills a fresh `server` (through `client`, one of its clients): its faults, the base documents
/// with `core`'s CRDs, the provider's manifests.
pub async fn install(
    management: Management<'_>,
    client: &kube::Client,
    inputs: &EmbeddedInputs,
    core: &EmbeddedCore,
) -> anyhow::Result<Installed> {
    if let Some(spec) = &inputs.server_faults {
        let Management::Embedded(server) = management else {
            anyhow::bail!(
                "--server-faults needs --embedded (it injects faults into the embedded API server)"
            );
        };
        server
            .faults()
            .apply_spec(spec)
            .context("--server-faults")?;
    }
    // CAPI core installed on the cluster keeps its own CRDs and RBAC.
    let with_core_crds = !matches!(management, Management::Cluster(c) if c.core_installed);
    management
        .install_base(client, base_documents_with(core, with_core_crds)?)
        .await?;
    if let Management::Cluster(_) = management {
        core.route_on(management, client, with_core_crds).await?;
    }
    let installed = install_provider_manifests(management, client, inputs).await?;
    if let Some(i) = management.installation() {
        // The effective-RBAC rule asks the cluster what core's manager may do: only once the
        // cluster has aggregated the roles the run installed.
        crate::manifests::aggregation::wait_aggregated(
            client,
            &i.names_of("ClusterRole"),
            crate::manifests::CRD_TIMEOUT,
        )
        .await
        .context("the ClusterRoles the run installed")?;
    }
    Ok(installed)
}

/// The documents every embedded run installs (core CRDs, the mock's CRDs and ClusterRoles,
/// core's RBAC), with no conversion webhook serving them: for static reading, and for objects
/// only ever written and read at their storage version.
pub fn base_documents() -> anyhow::Result<Vec<Value>> {
    let mut docs = core_crd_documents();
    for crd in mock_crds().context("building the mock provider CRDs")? {
        docs.push(serde_json::to_value(crd)?);
    }
    docs.extend(base_roles());
    Ok(docs)
}

/// What a run with `core` installs: core's CRDs (and the Services their conversion names)
/// unless `with_core_crds` is false (CAPI core installed on the cluster keeps its own, and its
/// RBAC), the mock's CRDs converted by `core`'s webhook, the mock's ClusterRoles.
pub fn base_documents_with(
    core: &EmbeddedCore,
    with_core_crds: bool,
) -> anyhow::Result<Vec<Value>> {
    let mut docs = if with_core_crds {
        core.documents.clone()
    } else {
        Vec::new()
    };
    docs.extend(core.mock_documents()?);
    docs.push(aggregated_cluster_role());
    docs.push(manager_cluster_role());
    if with_core_crds {
        docs.extend(core_manager_rbac());
    }
    Ok(docs)
}

fn base_roles() -> Vec<Value> {
    let mut docs = vec![aggregated_cluster_role(), manager_cluster_role()];
    docs.extend(core_manager_rbac());
    docs
}

/// What CAPI core's own RBAC contributes (its manager role, aggregated role and binding; see
/// [`capi_mock_provider::core_rbac`]), so the effective-RBAC rule asks the same question as on a real
/// cluster.
pub fn core_manager_rbac() -> Vec<Value> {
    capi_mock_provider::core_rbac::core_manager_rbac()
}

/// Installs the `--crds` manifests as `clusterctl init` would (variables substituted, creation
/// order, CRDs Established first); objects of kinds nothing serves are skipped: each is named on
/// stderr and returned as a report note. With [`EmbeddedInputs::serve_webhooks`], the
/// components' webhooks get a serving certificate whose CA is injected first
/// ([`webhook_serving`]), and what would route the baseline through them is deferred
/// ([`split_shared`]).
async fn install_provider_manifests(
    management: Management<'_>,
    client: &kube::Client,
    inputs: &EmbeddedInputs,
) -> anyhow::Result<Installed> {
    if inputs.crds.is_empty() {
        if !inputs.vars.is_empty() {
            anyhow::bail!("--var needs --crds (it sets clusterctl variables of those manifests)");
        }
        return Ok(Installed::default());
    }
    let vars = crate::manifests::Variables::from_flags(&inputs.vars)?;
    // Each input on its own: a provider's components are one input (`--provider-cmd` pairs
    // with them in order).
    let mut per_input = Vec::with_capacity(inputs.crds.len());
    for path in &inputs.crds {
        match crate::manifests::load(std::slice::from_ref(path), &vars, &inputs.kustomize) {
            Ok(docs) => per_input.push(docs),
            Err(first) => {
                // One error for every input (all the variables without a value, in every
                // file), as loading them together gives it.
                let all = crate::manifests::load(&inputs.crds, &vars, &inputs.kustomize)
                    .err()
                    .unwrap_or(first);
                return Err(anyhow::Error::new(all)
                    .context(format!("installing --crds {}", management.where_())));
            }
        }
    }
    let mut notes = Vec::new();
    let (launches, unrun) = manager_launches(&per_input, &inputs.crds, &inputs.managers)?;
    if let Some(message) = unrun {
        eprintln!("--provider-cmd: {message}");
        notes.push(crate::report::Note {
            source: "--provider-cmd".into(),
            message,
        });
    }
    for (i, l) in launches.iter().enumerate() {
        let Some(l) = l else { continue };
        let source = if inputs.managers.len() > 1 {
            format!("--provider-cmd #{}", i + 1)
        } else {
            "--provider-cmd".into()
        };
        eprintln!("{source}: {}", l.note);
        notes.push(crate::report::Note {
            source,
            message: l.note.clone(),
        });
    }
    // On a cluster the managers run here, not in the cluster: the Deployments of the inputs
    // a --provider-cmd runs are not installed (a cluster with nodes would run them too).
    let mut run_here = Vec::new();
    if let Management::Cluster(_) = management {
        let values: Vec<Vec<Value>> = per_input
            .iter()
            .map(|docs| docs.iter().map(|d| d.value.clone()).collect())
            .collect();
        for input in pair_commands(&values, inputs.managers.len())
            .into_iter()
            .flatten()
        {
            let (deployments, rest): (Vec<Document>, Vec<Document>) =
                std::mem::take(&mut per_input[input])
                    .into_iter()
                    .partition(|d| {
                        d.value.get("apiVersion").and_then(Value::as_str) == Some("apps/v1")
                            && d.value.get("kind").and_then(Value::as_str) == Some("Deployment")
                    });
            per_input[input] = rest;
            run_here.extend(deployments);
        }
    }
    let mut docs: Vec<Document> = per_input.into_iter().flatten().collect();
    let serving = if inputs.serve_webhooks {
        webhook_serving(&mut docs, &mut notes)?
    } else {
        None
    };
    let mock_components = docs.iter().any(is_mock_crd);
    let input_roles = docs
        .iter()
        .filter_map(|d| {
            role_key(&d.value, client.default_namespace()).map(|k| (k, d.origin.clone()))
        })
        .collect();
    let deferred = if inputs.serve_webhooks {
        split_shared(&mut docs)
    } else {
        Vec::new()
    };
    if !run_here.is_empty() {
        for d in run_here {
            let message = format!(
                "{}: not installed: the run starts this manager here (--provider-cmd), as `make run` runs a manager beside a cluster",
                crate::manifests::install::describe(&d.value)
            );
            eprintln!("--crds: {message}");
            notes.push(crate::report::Note {
                source: "--crds".into(),
                message,
            });
        }
    }
    let mut report = management
        .install_components(client, docs)
        .await
        .with_context(|| format!("installing --crds {}", management.where_()))?;
    if let Some(plan) = &serving {
        // cert-manager's part is played by the run: its kinds are not needed.
        for s in &mut report.skipped {
            if s.object.starts_with("cert-manager.io/") {
                s.reason = format!(
                    "not installed: cert-manager is not, and the run issued the webhook serving certificate itself (for {}) and injected its CA",
                    plan.certs.names.join(", ")
                );
            }
        }
    }
    notes.extend(
        crate::manifests::skipped_lines(&report)
            .into_iter()
            .map(|(source, message)| {
                eprintln!("{source}: {message}");
                crate::report::Note { source, message }
            }),
    );
    Ok(Installed {
        notes,
        serving,
        deferred,
        mock_components,
        launches,
        input_roles,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use capi_contract::inventory::Origin;
    use serde_json::json;

    fn doc(v: Value) -> Document {
        Document::new(v, Origin::new("components.yaml", 0, 1))
    }

    #[test]
    fn roles_installed_from_the_input_keep_the_inputs_origin() {
        let cluster = |v: Value| {
            let name = v["metadata"]["name"].as_str().unwrap().to_string();
            Document::new(v, Origin::new(format!("cluster:ClusterRole/{name}"), 0, 1))
        };
        let file = Origin::new("components.yaml", 3, 40);
        let mut installed = Installed::default();
        for v in [
            json!({"kind": "ClusterRole", "metadata": {"name": "mine"}}),
            json!({"kind": "Role", "metadata": {"name": "leader"}}),
        ] {
            installed
                .input_roles
                .insert(role_key(&v, "tiny-system").unwrap(), file.clone());
        }
        let mut docs = vec![
            cluster(json!({"kind": "ClusterRole", "metadata": {"name": "mine"}})),
            cluster(json!({"kind": "ClusterRole", "metadata": {"name": "core"}})),
            cluster(
                json!({"kind": "Role", "metadata": {"name": "leader", "namespace": "tiny-system"}}),
            ),
            cluster(json!({"kind": "Role", "metadata": {"name": "leader", "namespace": "other"}})),
        ];
        input_origins(&mut docs, &installed);
        let files: Vec<&str> = docs.iter().map(|d| d.origin.file.as_str()).collect();
        assert_eq!(
            files,
            [
                "components.yaml",
                "cluster:ClusterRole/core",
                "components.yaml",
                "cluster:ClusterRole/leader"
            ]
        );
        assert_eq!(docs[0].origin.line, 40);
    }

    #[test]
    fn what_would_route_the_baseline_through_the_target_waits_for_the_target() {
        let mock_crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "mockmachines.infrastructure.mock.capi-conformance.io"},
            "spec": {"group": "infrastructure.mock.capi-conformance.io",
                     "conversion": {"strategy": "Webhook", "webhook": {"clientConfig": {"service": {"name": "s", "namespace": "n"}}}}}});
        let other_crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "xs.infrastructure.example.com"},
            "spec": {"group": "infrastructure.example.com",
                     "conversion": {"strategy": "Webhook", "webhook": {"clientConfig": {"service": {"name": "s", "namespace": "n"}}}}}});
        let vwc = |group: &str| {
            json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": format!("v-{group}")},
            "webhooks": [{"name": "v.x.io", "rules": [{"apiGroups": [group]}]}]})
        };
        let service = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "n"}});

        // A provider of its own groups: nothing waits.
        let mut docs = vec![
            doc(other_crd.clone()),
            doc(vwc("infrastructure.example.com")),
        ];
        assert!(split_shared(&mut docs).is_empty());
        assert_eq!(docs.len(), 2);

        // The mock's own components: its CRDs now without conversion, the full CRD and the
        // configurations for its groups (or every group) at target start.
        let mut docs = vec![
            doc(mock_crd.clone()),
            doc(other_crd),
            doc(vwc("infrastructure.mock.capi-conformance.io")),
            doc(vwc("*")),
            doc(vwc("infrastructure.example.com")),
            doc(service),
        ];
        let deferred = split_shared(&mut docs);
        let names = |ds: &[Document]| -> Vec<String> {
            ds.iter()
                .map(|d| d.value["metadata"]["name"].as_str().unwrap().to_string())
                .collect()
        };
        assert_eq!(
            names(&deferred),
            [
                "mockmachines.infrastructure.mock.capi-conformance.io",
                "v-infrastructure.mock.capi-conformance.io",
                "v-*"
            ]
        );
        assert_eq!(deferred[0].value, mock_crd);
        assert!(docs[0].value["spec"].get("conversion").is_none());
        assert_eq!(
            names(&docs),
            [
                "mockmachines.infrastructure.mock.capi-conformance.io",
                "xs.infrastructure.example.com",
                "v-infrastructure.example.com",
                "s"
            ]
        );
    }
}

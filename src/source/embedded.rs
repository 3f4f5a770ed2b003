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

/// Whether `doc` is a CRD of the mock's groups.
fn is_mock_crd(doc: &Document) -> bool {
    doc.value.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition")
        && doc
            .value
            .pointer("/spec/group")
            .and_then(Value::as_str)
            .is_some_and(|g| g.ends_with(MOCK_GROUP_SUFFIX))
}

/// Whether webhook configuration `doc` has a rule for a mock group (or every group).
fn hooks_mock_groups(doc: &Document) -> bool {
    crate::serving::components::is_webhook_configuration(&doc.value)
        && doc
            .value
            .get("webhooks")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .flat_map(|w| {
                w.get("rules")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
            })
            .flat_map(|r| {
                r.get("apiGroups")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
            })
            .filter_map(Value::as_str)
            .any(|g| g == "*" || g.ends_with(MOCK_GROUP_SUFFIX))
}

/// The baseline (the in-process mock) and a target that is the mock itself in webhook mode
/// share the mock's CRDs. So that the baseline runs on the mock's CRDs as it always does (and a
/// target's faulty webhook cannot fail it), what would route the baseline's objects through the
/// target's webhooks waits until the target starts: webhook configurations with rules for the
/// mock's groups, and the conversion settings of the mock's CRDs (installed now without them).
/// Returns the documents to install at target start; `docs` keeps what is installed now.
fn split_shared(docs: &mut Vec<Document>) -> Vec<Document> {
    if !docs.iter().any(is_mock_crd) {
        return Vec::new();
    }
    let mut deferred = Vec::new();
    let mut now = Vec::new();
    for doc in docs.drain(..) {
        if hooks_mock_groups(&doc) {
            deferred.push(doc);
        } else if is_mock_crd(&doc)
            && crate::serving::components::is_webhook_converted_crd(&doc.value)
        {
            // Until then the CRD keeps the run's conversion of the baseline's CRDs.
            let mut without = doc.clone();
            if let Some(spec) = without.value.get_mut("spec").and_then(Value::as_object_mut) {
                spec.remove("conversion");
            }
            now.push(without);
            deferred.push(doc);
        } else {
            now.push(doc);
        }
    }
    *docs = now;
    deferred
}

/// Issues the serving certificate of the components' webhooks and injects its CA into `docs`
/// (as cert-manager would); a CA injection that cannot be done and a webhook Service the
/// components do not define are report notes. `None` when
/// the components have neither webhook Services nor CA injections.
fn webhook_serving(
    docs: &mut [Document],
    notes: &mut Vec<crate::report::Note>,
) -> anyhow::Result<Option<crate::serving::Plan>> {
    let mut values: Vec<Value> = docs.iter().map(|d| d.value.clone()).collect();
    let plan = crate::serving::Plan::for_components(&mut values)
        .context("issuing the provider's webhook serving certificate")?;
    for (doc, value) in docs.iter_mut().zip(values) {
        doc.value = value;
    }
    for i in &plan.injections {
        if let Err(why) = &i.outcome {
            let message = format!("CA injection: {}: {why}", i.object);
            eprintln!("{message}");
            notes.push(crate::report::Note {
                source: "--crds".into(),
                message,
            });
        }
    }
    for svc in plan.services.iter().filter(|s| !s.defined) {
        let message = format!(
            "{} call(s) Service {}/{}, which the components do not define: calls to it fail (service \"{}\" not found), here as on any cluster",
            svc.used_by.join(", "),
            svc.namespace,
            svc.name,
            svc.name
        );
        eprintln!("{message}");
        notes.push(crate::report::Note {
            source: "--crds".into(),
            message,
        });
    }
    let used = !plan.services.is_empty() || plan.injections.iter().any(|i| i.outcome.is_ok());
    Ok(used.then_some(plan))
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

/// Which `--provider-cmd` runs which Deployment, as `clusterctl init` installs providers: one
/// provider per `--crds` input. The inputs that hold a Deployment are the providers, in
/// command-line order; the i-th command runs the i-th of them. One command with one such input
/// is the common case; an input with several Deployments chooses as
/// [`crate::run::manager_launch::ManagerLaunch::from_components`] says. A command with no
/// provider left runs as written; a provider with no command is installed and not run (both
/// said in a note).
pub fn pair_commands(per_input: &[Vec<Value>], commands: usize) -> Vec<Option<usize>> {
    let providers: Vec<usize> = per_input
        .iter()
        .enumerate()
        .filter(|(_, docs)| {
            docs.iter().any(|d| {
                d.get("apiVersion").and_then(Value::as_str) == Some("apps/v1")
                    && d.get("kind").and_then(Value::as_str) == Some("Deployment")
            })
        })
        .map(|(i, _)| i)
        .collect();
    (0..commands).map(|i| providers.get(i).copied()).collect()
}

/// How each `--provider-cmd` manager runs as its components' Deployment runs it
/// ([`pair_commands`]); `None` for a command without a Deployment, or with both parts turned
/// off. The note of each says which input's Deployment it runs; the second value names the
/// inputs whose Deployment no command runs.
type Launches = (
    Vec<Option<crate::run::manager_launch::ManagerLaunch>>,
    Option<String>,
);
fn manager_launches(
    per_input: &[Vec<Document>],
    paths: &[PathBuf],
    requests: &[crate::run::manager_launch::LaunchRequest],
) -> anyhow::Result<Launches> {
    let values: Vec<Vec<Value>> = per_input
        .iter()
        .map(|docs| docs.iter().map(|d| d.value.clone()).collect())
        .collect();
    let pairs = pair_commands(&values, requests.len());
    let mut launches = Vec::with_capacity(requests.len());
    for (request, input) in requests.iter().zip(&pairs) {
        let Some(input) = *input else {
            launches.push(None);
            continue;
        };
        let mut launch =
            crate::run::manager_launch::ManagerLaunch::from_components(&values[input], request)?;
        if let (Some(l), true) = (&mut launch, requests.len() > 1) {
            l.note = format!("from {}: {}", paths[input].display(), l.note);
        }
        launches.push(launch);
    }
    let unrun: Vec<String> = pair_commands(&values, values.len())
        .into_iter()
        .flatten()
        .skip(requests.len())
        .map(|i| paths[i].display().to_string())
        .collect();
    let unrun = (!requests.is_empty() && !unrun.is_empty()).then(|| {
        format!(
            "installed, not run (no --provider-cmd for it; give one per provider, in the order of their --crds): the Deployment of {}; nothing reconciles its kinds unless another command does",
            unrun.join(", ")
        )
    });
    Ok((launches, unrun))
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

//! `check --embedded`: the embedded API server with CAPI core CRDs and the mock provider
//! installed; the mock runs in-process as the baseline. The target is the mock itself (no
//! `--crds`/`--provider-cmd`), or a provider's CRDs (`--crds`) reconciled by its own controller
//! (`--provider-cmd`, started against the server's TCP kubeconfig).

use super::{
    environment_inconclusive, filter_subjects, lint_options, load_samples, merge_into, new_run_id,
    progress, report_dir, report_leftovers, selected_scenarios, settings, static_matrix,
};
use crate::apiserver::{EmbeddedServer, ServerOptions};
use crate::cli::CheckArgs;
use crate::client_retry::RetryPolicy;
use crate::inventory::Inventory;
use crate::mock::core_crds::core_crd_documents;
use crate::mock::crds::mock_crds;
use crate::mock::manifests::{aggregated_cluster_role, manager_cluster_role};
use crate::mock::{FaultSet, MockOptions, MockProvider};
use crate::report::Matrix;
use crate::scenarios::cleanup::CleanupGuard;
use crate::scenarios::plan::{self, MOCK_GROUP_SUFFIX, PlanOptions};
use crate::scenarios::runner::{RunPlan, Side, run_all};
use crate::scenarios::{Settings, Subject};
use crate::suite::Catalog;
use anyhow::Context;
use serde_json::Value;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

/// What `check --embedded` runs, beyond the command-line flags (tests set the mock's faults).
#[derive(Debug, Clone, Default)]
pub struct EmbeddedOptions {
    /// Provider-wide faults of the in-process target mock.
    pub target_faults: String,
}

/// The documents every embedded run installs: core CRDs, the mock's CRDs and ClusterRoles.
pub fn base_documents() -> anyhow::Result<Vec<Value>> {
    let mut docs = core_crd_documents();
    for crd in mock_crds().context("building the mock provider CRDs")? {
        docs.push(serde_json::to_value(crd)?);
    }
    docs.push(aggregated_cluster_role());
    docs.push(manager_cluster_role());
    docs.extend(core_manager_rbac());
    Ok(docs)
}

/// What CAPI core's own RBAC contributes: its manager ClusterRole aggregating every ClusterRole
/// labelled `cluster.x-k8s.io/aggregate-to-manager: "true"`, bound to the manager's
/// ServiceAccount (so the effective-RBAC rule asks the same question as on a real cluster).
pub fn core_manager_rbac() -> Vec<Value> {
    let role = "capi-conformance-core-aggregated-manager";
    vec![
        serde_json::json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": role},
            "aggregationRule": {"clusterRoleSelectors": [
                {"matchLabels": {"cluster.x-k8s.io/aggregate-to-manager": "true"}}
            ]},
            "rules": [],
        }),
        serde_json::json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "capi-conformance-core-manager"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": "capi-manager", "namespace": "capi-system"}],
        }),
    ]
}

/// A started `--provider-cmd` process, its log streamed to a file.
struct ProviderProcess {
    child: tokio::process::Child,
}

impl ProviderProcess {
    async fn stop(mut self) {
        #[cfg(unix)]
        if let Some(pid) = self.child.id()
            && let Ok(pid) = i32::try_from(pid)
        {
            // SIGTERM first so the controller can shut down; then kill.
            let _ = std::process::Command::new("kill")
                .arg("-TERM")
                .arg(pid.to_string())
                .status();
            if tokio::time::timeout(Duration::from_secs(3), self.child.wait())
                .await
                .is_ok()
            {
                return;
            }
        }
        let _ = self.child.kill().await;
    }
}

/// Replaces `{kubeconfig}`, `{namespace}` and `{watch_filter}` in the command.
pub fn expand_command(cmd: &str, kubeconfig: &str, namespace: &str, watch_filter: &str) -> String {
    cmd.replace("{kubeconfig}", kubeconfig)
        .replace("{namespace}", namespace)
        .replace("{watch_filter}", watch_filter)
}

fn start_provider(cmd: &str, log: &std::path::Path) -> anyhow::Result<ProviderProcess> {
    if let Some(dir) = log.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let out =
        std::fs::File::create(log).with_context(|| format!("cannot create {}", log.display()))?;
    let err = out.try_clone()?;
    let child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .stdin(Stdio::null())
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("cannot start --provider-cmd {cmd:?}"))?;
    Ok(ProviderProcess { child })
}

/// Runs `check --embedded` and returns the matrix (outputs are the caller's).
pub async fn embedded_matrix(args: &CheckArgs, extra: &EmbeddedOptions) -> anyhow::Result<Matrix> {
    embedded_matrix_on(&EmbeddedServer::new(ServerOptions::default()), args, extra).await
}

/// [`embedded_matrix`] on a given (fresh) server, which outlives the run (tests inspect it).
pub async fn embedded_matrix_on(
    server: &EmbeddedServer,
    args: &CheckArgs,
    extra: &EmbeddedOptions,
) -> anyhow::Result<Matrix> {
    let catalog = Catalog::embedded()?;
    let rules = catalog.rules().to_vec();
    if let Some(spec) = &args.server_faults {
        server
            .faults()
            .apply_spec(spec)
            .context("--server-faults")?;
    }
    let settings = settings(args, Settings::EMBEDDED)?;
    server
        .apply_documents(base_documents()?)
        .await
        .context("installing core and mock CRDs on the embedded server")?;
    let provider_docs = if args.crds.is_empty() {
        Vec::new()
    } else {
        crate::commands::serve::load_documents(&args.crds)?
    };
    if !provider_docs.is_empty() {
        server
            .apply_documents(provider_docs.clone())
            .await
            .context("installing --crds on the embedded server")?;
    }
    let client = server.client_with(RetryPolicy::within(settings.step_timeout));
    let opts = lint_options(&args.report, "embedded".into())?;
    let (mut matrix, docs) = static_matrix(&client, &opts, &rules, &args.capi_manager).await?;
    let selection = selected_scenarios(args.scenarios.as_deref());
    if args.static_only || selection.as_ref().is_some_and(Vec::is_empty) {
        return Ok(matrix);
    }
    let run_id = new_run_id();
    matrix.context.run_id = Some(run_id.clone());
    let mock_is_target = args.crds.is_empty();
    let (inv, _) = Inventory::build(docs, &opts.roles, true)?;
    let baseline_subjects = plan::baseline_subjects(&inv);
    let mut subjects: Vec<Subject> = plan::subjects(
        &inv,
        &PlanOptions {
            provider: args.provider.clone(),
            contract: args.report.contract,
            samples: load_samples(args)?,
        },
    )
    .into_iter()
    .filter(|s| s.resource.group.ends_with(MOCK_GROUP_SUFFIX) == mock_is_target)
    .collect();
    subjects = filter_subjects(subjects, &selection);
    plan::fill_samples_from_cluster(&client, &mut subjects).await;

    let guard = CleanupGuard::default();
    let baseline_ns = format!("capi-conformance-{run_id}-baseline");
    let baseline_filter = format!("capi-conformance-baseline-{run_id}");
    let target_ns = format!("capi-conformance-{run_id}");
    let target_filter = format!("capi-conformance-target-{run_id}");
    let side = |ns: &str, filter: Option<String>| Side {
        client: client.clone(),
        namespace: ns.to_string(),
        run_id: run_id.clone(),
        watch_filter: filter,
        pause_core: false,
        settings,
        guard: guard.clone(),
    };
    let baseline = side(&baseline_ns, Some(baseline_filter.clone()));
    // Target objects carry the target filter when the target controller filters on it.
    let filtered = args
        .provider_cmd
        .as_deref()
        .map_or(mock_is_target, |c| c.contains("{watch_filter}"));
    let target = side(&target_ns, filtered.then(|| target_filter.clone()));
    baseline.create_namespace().await?;
    target.create_namespace().await?;

    let baseline_mock = MockProvider::start(
        client.clone(),
        MockOptions {
            watch_namespace: Some(baseline_ns.clone()),
            watch_filter: Some(baseline_filter),
            ..MockOptions::default()
        },
    );
    let mut target_mock = None;
    let mut provider = None;
    let mut listener = None;
    let mut private_kubeconfig = None;
    let mut broken_env = None;
    if let Some(cmd) = &args.provider_cmd {
        let l = server.listen("127.0.0.1:0".parse()?).await?;
        let dir = args
            .report_dir
            .clone()
            .unwrap_or_else(|| PathBuf::from("reports"));
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        // The kubeconfig holds the server's token: a private temp file, not the report dir.
        let kc = super::private_file::PrivateFile::create(
            &format!("capi-conformance-{run_id}.kubeconfig"),
            &l.kubeconfig_yaml(),
        )?;
        let kubeconfig = kc.path().to_path_buf();
        private_kubeconfig = Some(kc);
        let expanded = expand_command(
            cmd,
            &kubeconfig.display().to_string(),
            &target_ns,
            &target_filter,
        );
        let log = dir.join(format!("provider-{run_id}.log"));
        match start_provider(&expanded, &log) {
            Ok(p) => provider = Some(p),
            Err(e) => broken_env = Some(format!("{e:#}")),
        }
        listener = Some(l);
    } else if mock_is_target {
        target_mock = Some(MockProvider::start(
            client.clone(),
            MockOptions {
                watch_namespace: Some(target_ns.clone()),
                watch_filter: Some(target_filter.clone()),
                faults: FaultSet::parse(&extra.target_faults),
                ..MockOptions::default()
            },
        ));
    }

    let out = match broken_env {
        Some(reason) => crate::scenarios::runner::RunOutput {
            results: environment_inconclusive(&rules, &subjects, &reason),
            columns: subjects.iter().map(|s| s.column.clone()).collect(),
            ..Default::default()
        },
        None => {
            let plan = RunPlan {
                baseline,
                target,
                targets: subjects,
                with_baseline: true,
                baseline_subjects,
                parallel: args.parallel,
                rules: rules.clone(),
                progress: progress(&args.progress),
            };
            match super::interrupt::run_guarded(run_all(&plan)).await {
                Some(out) => out,
                None => {
                    guard
                        .cleanup(&client, Duration::from_millis(500), true)
                        .await;
                    anyhow::bail!("interrupted (run {run_id})");
                }
            }
        }
    };
    let leftovers = guard
        .cleanup(&client, Duration::from_millis(500), true)
        .await;
    report_leftovers(&run_id, &leftovers);
    if let Some(p) = provider {
        p.stop().await;
    }
    if let Some(l) = listener {
        l.shutdown().await;
    }
    drop(private_kubeconfig);
    if let Some(m) = target_mock {
        m.shutdown().await;
    }
    baseline_mock.shutdown().await;
    if let Some(dir) = &args.report_dir {
        report_dir::write(dir, &out)?;
    }
    merge_into(&mut matrix, &out, &rules);
    Ok(matrix)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_placeholders_expand() {
        assert_eq!(
            expand_command(
                "m --kubeconfig {kubeconfig} -n {namespace} -f {watch_filter}",
                "/k",
                "ns",
                "f"
            ),
            "m --kubeconfig /k -n ns -f f"
        );
    }
}

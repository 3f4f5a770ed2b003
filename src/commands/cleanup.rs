//! `cleanup --run ID | --all`: removes what earlier (killed) runs left behind: every namespace
//! labelled `capi-conformance.io/run` (with that id) and the labelled objects in it, and the
//! labelled objects of every cluster-scoped custom kind (their CRD's `spec.scope`: a pool of
//! an IPAM provider's global kind lives in no namespace), and the labelled CRDs, RBAC and
//! webhook configurations a run installed with `--crds`. Objects without the label are never
//! touched (what a killed run had changed of objects that existed before it is not restored:
//! only the run itself knew their earlier state).

use crate::cli::CleanupArgs;
use crate::scenarios::cleanup::cleanup_runs;
use crate::scenarios::core_sim::{
    cluster_resource, machine_pool_resource, machine_resource, secret_resource,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ListParams};
use kube::discovery::ApiResource;
use std::time::Duration;

/// The kinds whose labelled objects are deleted: CAPI core's, Secrets, and every CRD that
/// declares a CAPI contract (provider kinds, the mock's included).
pub async fn resources(client: &kube::Client) -> anyhow::Result<Vec<ApiResource>> {
    let mut out = vec![
        cluster_resource(),
        machine_resource(),
        machine_pool_resource(),
        secret_resource(),
    ];
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in crds.list(&ListParams::default()).await?.items {
        let labels = crd.metadata.labels.clone().unwrap_or_default();
        if !labels
            .keys()
            .any(|k| k.starts_with("cluster.x-k8s.io/v1beta"))
        {
            continue;
        }
        out.extend(storage_resource(&crd));
    }
    Ok(out)
}

/// The kind a CRD defines, at its storage version (`None` without one).
fn storage_resource(crd: &CustomResourceDefinition) -> Option<ApiResource> {
    let version = crd.spec.versions.iter().find(|v| v.storage)?;
    let group = crd.spec.group.clone();
    Some(ApiResource {
        api_version: format!("{group}/{}", version.name),
        group,
        version: version.name.clone(),
        kind: crd.spec.names.kind.clone(),
        plural: crd.spec.names.plural.clone(),
    })
}

/// The cluster-scoped custom kinds (every CRD with `spec.scope: Cluster`) at their storage
/// version: a run's objects of these kinds are in no namespace.
pub async fn cluster_scoped_resources(client: &kube::Client) -> anyhow::Result<Vec<ApiResource>> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let mut out = Vec::new();
    for crd in crds.list(&ListParams::default()).await?.items {
        if crd.spec.scope != crate::scenarios::scope::CLUSTER_SCOPE {
            continue;
        }
        out.extend(storage_resource(&crd));
    }
    Ok(out)
}

pub async fn run(args: CleanupArgs) -> anyhow::Result<i32> {
    if args.run.is_none() && !args.all {
        anyhow::bail!("say which runs to remove: --run ID or --all");
    }
    let conn = crate::kubeconn::connect(&args.kube.options()).await?;
    let client = conn.client()?;
    let kinds = resources(&client).await?;
    let cluster_kinds = cluster_scoped_resources(&client).await?;
    let report = cleanup_runs(
        &client,
        args.run.as_deref(),
        (&kinds, &cluster_kinds),
        Duration::from_secs(30),
        args.force_cleanup,
    )
    .await?;
    for r in &report.removed {
        println!("removed: {r}");
    }
    let leftovers = report.leftovers;
    for l in &leftovers.0 {
        println!("leftover: {l}");
    }
    if leftovers.0.is_empty() {
        println!(
            "removed {} object(s); nothing left from {}",
            report.removed.len(),
            args.run.as_deref().unwrap_or("any run")
        );
        Ok(0)
    } else {
        if !args.force_cleanup {
            println!("finalizers block deletion; --force-cleanup strips them");
        }
        Ok(1)
    }
}

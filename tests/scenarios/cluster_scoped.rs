//! Cluster-scoped kinds (a CRD with `spec.scope: Cluster`, as the in-cluster IPAM provider's
//! `GlobalInClusterIPPool`): the scenarios create, read, watch and delete their objects without
//! a namespace, the pools a sample names and the samples' dry runs included. The mock's
//! `MockGlobalIPPool` is such a kind, with its own baseline and target columns.

use super::common::{check_args, embedded, lifecycle};
use capi_conformance::commands::check::embedded_matrix_on;
use capi_conformance::report::{Matrix, Outcome, RuleResult};
use kube::api::{Api, DynamicObject, ListParams};
use kube::discovery::ApiResource;

const GLOBAL_POOL: &str = "MockGlobalIPPool";

fn global_pool_resource() -> ApiResource {
    ApiResource {
        group: "ipam.mock.capi-conformance.io".into(),
        version: "v1alpha1".into(),
        api_version: "ipam.mock.capi-conformance.io/v1alpha1".into(),
        kind: GLOBAL_POOL.into(),
        plural: "mockglobalippools".into(),
    }
}

/// The lifecycle cells of the `kind` column on one side.
fn column_cells<'a>(m: &'a Matrix, kind: &str, baseline: bool) -> Vec<&'a RuleResult> {
    lifecycle(m, baseline)
        .filter(|r| r.column.kind.as_str() == kind)
        .collect()
}

/// SC-ipam on the mock's cluster-scoped pool: the pool is created at the cluster level (a
/// namespaced path answers 404, and every cell of the column was inconclusive), the claims of
/// the run's namespace take their addresses from it, it is watched and deleted there, and
/// nothing of it is left. Its name carries the side's tag, so the baseline's and the target's
/// pools (both cluster-wide) do not meet; the report names it without the tag.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_scoped_pool_kind_is_judged_at_the_cluster_level() {
    let server = capi_conformance::apiserver::EmbeddedServer::new(Default::default());
    let args = check_args(&[
        "--embedded",
        "--progress",
        "never",
        "--scenarios",
        "SC-ipam",
    ]);
    let m = embedded_matrix_on(&server, &args, "").await.unwrap();
    for baseline in [false, true] {
        let cells = column_cells(&m, GLOBAL_POOL, baseline);
        assert!(cells.len() >= 9, "baseline {baseline}: {cells:#?}");
        let not_passed: Vec<_> = cells
            .iter()
            .filter(|r| r.outcome != Outcome::Pass)
            .map(|r| (r.rule_id.as_str(), r.outcome, r.reason.as_deref()))
            .collect();
        assert!(
            not_passed.is_empty(),
            "baseline {baseline}: {not_passed:#?}"
        );
    }
    let target = m
        .scenarios
        .iter()
        .find(|s| !s.column.baseline && s.column.kind.as_str() == GLOBAL_POOL)
        .expect("the global pool's scenario record");
    let pool = "MockGlobalIPPool/mockglobalippool-b2-pool";
    for event in ["tool: create", "ADDED"] {
        assert!(
            target
                .timeline
                .iter()
                .any(|e| e.object == pool && e.event == event),
            "{event} of {pool}: {:#?}",
            target.timeline
        );
    }
    let left = Api::<DynamicObject>::all_with(server.client(), &global_pool_resource())
        .list(&ListParams::default())
        .await
        .unwrap();
    assert!(left.items.is_empty(), "{:#?}", left.items);
}

/// A fault of the cluster-scoped pool's column fails it there as in the namespaced pool's: the
/// column's rules can fail.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fault_fails_the_cluster_scoped_pool_column() {
    let m = embedded(&["--scenarios", "SC-ipam"], "ipam/address-finalizer").await;
    let failed: Vec<&str> = column_cells(&m, GLOBAL_POOL, false)
        .into_iter()
        .filter(|r| r.outcome == Outcome::Fail)
        .map(|r| r.rule_id.as_str())
        .collect();
    assert_eq!(failed, ["ipam/address-finalizer"]);
    assert!(
        column_cells(&m, GLOBAL_POOL, true)
            .iter()
            .all(|r| r.outcome == Outcome::Pass)
    );
}

/// A machine whose sample names a cluster-scoped pool: the pool (from its own `--sample`
/// document) is created at the cluster level, and the machine's claim, in the run namespace,
/// is fulfilled from it (ipam/consumer-claim judged, not stopped by a 404).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_machine_claims_from_the_cluster_scoped_pool_its_sample_names() {
    let dir = tempfile::tempdir().unwrap();
    let sample = dir.path().join("samples.yaml");
    std::fs::write(
        &sample,
        r#"apiVersion: infrastructure.mock.capi-conformance.io/v1beta2
kind: MockMachine
metadata:
  name: machine
  annotations:
    mock.capi-conformance.io/contract: v1beta2
spec:
  addressesFromPools:
  - apiGroup: ipam.mock.capi-conformance.io
    kind: MockGlobalIPPool
    name: shared
---
apiVersion: ipam.mock.capi-conformance.io/v1alpha1
kind: MockGlobalIPPool
metadata:
  name: shared
spec:
  addresses: ["198.51.100.10-198.51.100.20"]
  prefix: 24
  gateway: 198.51.100.1
"#,
    )
    .unwrap();
    let m = embedded(
        &[
            "--scenarios",
            "SC-inframachine",
            "--contract",
            "v1beta2",
            "--kinds",
            "MockMachine",
            "--sample",
            sample.to_str().unwrap(),
        ],
        "",
    )
    .await;
    let consumer: Vec<_> = column_cells(&m, "MockMachine", false)
        .into_iter()
        .filter(|r| r.rule_id == "ipam/consumer-claim")
        .map(|r| (r.outcome, r.reason.clone()))
        .collect();
    assert_eq!(consumer.len(), 1, "{consumer:#?}");
    assert_eq!(consumer[0].0, Outcome::Pass, "{consumer:#?}");
    let inconclusive: Vec<_> = column_cells(&m, "MockMachine", false)
        .into_iter()
        .filter(|r| r.outcome == Outcome::Inconclusive)
        .map(|r| (r.rule_id.as_str(), r.reason.as_deref()))
        .collect();
    assert!(inconclusive.is_empty(), "{inconclusive:#?}");
}

/// A `--sample` of a cluster-scoped kind is dry-run at the cluster level: one the CRD rejects
/// stops the run with a usage error naming it (at a namespaced path the dry run met a 404 and
/// the bad sample went through unchecked).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_scoped_sample_the_crd_rejects_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let sample = dir.path().join("pool.yaml");
    std::fs::write(
        &sample,
        "apiVersion: ipam.mock.capi-conformance.io/v1alpha1\nkind: MockGlobalIPPool\n\
         metadata:\n  name: shared\nspec:\n  addresses: [198.51.100.10]\n  prefix: 500\n",
    )
    .unwrap();
    let args = check_args(&[
        "--embedded",
        "--progress",
        "never",
        "--scenarios",
        "SC-ipam",
        "--sample",
        sample.to_str().unwrap(),
    ]);
    let Err(err) = capi_conformance::commands::check::embedded_matrix(&args, "").await else {
        panic!("the cluster-scoped sample the CRD rejects was accepted");
    };
    let message = format!("{err:#}");
    assert!(
        message.contains("MockGlobalIPPool") && message.contains("not valid"),
        "{message}"
    );
}

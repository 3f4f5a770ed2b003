//! Reading CAPI core's objects (Cluster, Machine, MachinePool) the way a provider does: by name
//! at `cluster.x-k8s.io/v1beta2` (tolerant of both contracts' field spellings), or, in the
//! v1beta1-client mode of [`CoreReads`], at `v1beta1` with that version's field paths only, as
//! a provider built on CAPI v1.9/v1.10 reads them through core's conversion.

use super::core_crds::{CORE_GROUP, CORE_VERSION};
use super::object::{bool_field, string_field};
use kube::Client;
use kube::api::Api;
use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
use std::time::Duration;

/// The core kinds the mock reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CoreKind {
    Cluster,
    Machine,
    MachinePool,
}

impl CoreKind {
    pub fn kind(self) -> &'static str {
        match self {
            CoreKind::Cluster => "Cluster",
            CoreKind::Machine => "Machine",
            CoreKind::MachinePool => "MachinePool",
        }
    }

    pub fn plural(self) -> &'static str {
        match self {
            CoreKind::Cluster => "clusters",
            CoreKind::Machine => "machines",
            CoreKind::MachinePool => "machinepools",
        }
    }

    /// At `cluster.x-k8s.io/v1beta2`.
    pub fn api_resource(self) -> ApiResource {
        self.api_resource_at(CORE_VERSION)
    }

    /// At `cluster.x-k8s.io/<version>`.
    pub fn api_resource_at(self, version: &str) -> ApiResource {
        let gvk = GroupVersionKind::gvk(CORE_GROUP, version, self.kind());
        ApiResource::from_gvk_with_plural(&gvk, self.plural())
    }
}

/// How the mock reads CAPI core's objects, beyond the default (v1beta2, tolerant): modes that
/// behave as CAPI's own providers do, so the tool's core simulation is tested on what they need
/// (docs/core-simulation.md "The mock's CAPI-like modes").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CoreReads {
    /// Read and watch core objects at `cluster.x-k8s.io/v1beta1` with v1beta1's field paths
    /// only (`status.infrastructureReady`, v1beta1 conditions, `ObjectReference`s), as a
    /// provider of CAPI v1.9/v1.10 does.
    pub v1beta1: bool,
    /// The InfraMachine reconciler reads the InfraCluster named by
    /// `Cluster.spec.infrastructureRef` (CAPI's in-memory provider does; a Cluster without the
    /// reference stops it, as the nil pointer stops that provider).
    pub infrastructure_ref: bool,
    /// The bootstrap reconciler decides init / control-plane join / worker join by the owner
    /// Machine's `cluster.x-k8s.io/control-plane` label as CABPK does: the init config of a
    /// control-plane Machine does not wait for `ControlPlaneInitialized`; a worker gets no data
    /// before it, nor without the Cluster's `<cluster>-ca` Secret (`tls.crt` and `tls.key`) and
    /// a bootstrap token Secret created in `kube-system` of the workload cluster
    /// `<cluster>-kubeconfig` points at (`reconcile::worker_join`).
    pub worker_join: bool,
    /// Every reconciler with a finalizer adds it first, before the owner, cluster and pause
    /// gates, and returns (CAPI's own controllers: `finalizers.EnsureFinalizer`).
    pub finalizer_first: bool,
    /// Read Clusters from an informer-like cache whose every event arrives this long after the
    /// server sent it ([`crate::cluster_cache`]): a change of the provider's own object can be
    /// seen before an earlier change of its Cluster, as in a controller-runtime manager.
    pub informer_lag: Option<Duration>,
    /// Retry a failed reconcile as controller-runtime's workqueue does ([`crate::backoff`]),
    /// and treat what CAPI's providers treat as errors (the Cluster not found, the InfraCluster
    /// not there yet) as failures, not as a fixed recheck.
    pub workqueue_backoff: bool,
    /// Resolve the owner (Machine, MachinePool, Cluster) through the ownerReference's
    /// `apiVersion` in a scheme that knows only the core version read: an owner reference at
    /// another core version is an error ("no kind Machine is registered for version
    /// cluster.x-k8s.io/v1beta2 in scheme"), as in a provider built on CAPI v1.9/v1.10 reading
    /// a v1.11 core's references.
    pub owner_version: bool,
    /// Write an annotation into `metadata.annotations` without creating the map first (CAPI
    /// v1.9's in-memory InfraCluster reconciler): an InfraCluster or InfraMachine without
    /// annotations makes the reconcile fail ("assignment to entry in nil map", a panic that
    /// controller-runtime recovers into an error), so it never provisions. Objects CAPI clones
    /// from templates always carry annotations.
    pub annotations_unguarded: bool,
    /// The InfraCluster's `spec.controlPlaneEndpoint.host` is the process's `POD_IP` (empty
    /// when unset), as CAPI's in-memory backend takes the address it serves the workload API
    /// servers on from the variable its Deployment sets from `status.podIP`: run outside a Pod
    /// without it, the endpoint has no host.
    pub pod_ip_endpoint: bool,
}

impl CoreReads {
    /// Every CAPI-like behaviour (without an informer lag), reading at v1beta2 (`v1beta1`: at
    /// v1beta1).
    pub fn capi_like(v1beta1: bool) -> Self {
        CoreReads {
            v1beta1,
            infrastructure_ref: true,
            worker_join: true,
            finalizer_first: true,
            informer_lag: None,
            workqueue_backoff: true,
            owner_version: false,
            annotations_unguarded: false,
            pod_ip_endpoint: false,
        }
    }

    /// Parses `v1beta1,infrastructure-ref,worker-join,finalizer-first,workqueue-backoff,
    /// owner-version,annotations-unguarded,pod-ip-endpoint,informer-lag=<n>ms` (any subset; `capi-like` = all but `v1beta1` and the lag); unknown
    /// words are errors.
    pub fn parse(spec: &str) -> Result<Self, String> {
        let mut out = CoreReads::default();
        for word in spec.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            if let Some(lag) = word.strip_prefix("informer-lag=") {
                out.informer_lag = Some(parse_millis(lag)?);
                continue;
            }
            match word {
                "v1beta1" => out.v1beta1 = true,
                "infrastructure-ref" => out.infrastructure_ref = true,
                "worker-join" => out.worker_join = true,
                "finalizer-first" => out.finalizer_first = true,
                "workqueue-backoff" => out.workqueue_backoff = true,
                "owner-version" => out.owner_version = true,
                "annotations-unguarded" => out.annotations_unguarded = true,
                "pod-ip-endpoint" => out.pod_ip_endpoint = true,
                "capi-like" => {
                    out.infrastructure_ref = true;
                    out.worker_join = true;
                    out.finalizer_first = true;
                    out.workqueue_backoff = true;
                }
                other => {
                    return Err(format!(
                        "unknown core read mode {other:?} (v1beta1, infrastructure-ref, worker-join, finalizer-first, workqueue-backoff, owner-version, annotations-unguarded, pod-ip-endpoint, capi-like, informer-lag=<n>ms)"
                    ));
                }
            }
        }
        Ok(out)
    }

    /// The core API version read.
    pub fn version(self) -> &'static str {
        if self.v1beta1 {
            "v1beta1"
        } else {
            CORE_VERSION
        }
    }
}

/// `<n>ms` or `<n>s`.
fn parse_millis(s: &str) -> Result<Duration, String> {
    let bad = || format!("informer-lag: {s:?} is not a duration like 500ms or 2s");
    if let Some(ms) = s.strip_suffix("ms") {
        return ms.parse().map(Duration::from_millis).map_err(|_| bad());
    }
    s.strip_suffix('s')
        .ok_or_else(bad)?
        .parse()
        .map(Duration::from_secs)
        .map_err(|_| bad())
}

/// Gets a core object at the version `reads` reads; `Ok(None)` when it does not exist.
pub async fn get(
    client: &Client,
    reads: CoreReads,
    kind: CoreKind,
    ns: &str,
    name: &str,
) -> kube::Result<Option<DynamicObject>> {
    let api: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), ns, &kind.api_resource_at(reads.version()));
    api.get_opt(name).await
}

/// `Cluster.spec.paused`.
pub fn cluster_paused(cluster: &DynamicObject) -> bool {
    bool_field(cluster, "spec.paused")
}

/// Whether `obj` was read at `cluster.x-k8s.io/v1beta1`.
fn is_v1beta1(obj: &DynamicObject) -> bool {
    obj.types
        .as_ref()
        .is_some_and(|t| t.api_version.ends_with("/v1beta1"))
}

/// The cluster infrastructure gate: read at v1beta1, `status.infrastructureReady`; at v1beta2,
/// `status.initialization.infrastructureProvisioned` (or the v1beta1 spelling, for a core that
/// writes both).
pub fn cluster_infrastructure_provisioned(cluster: &DynamicObject) -> bool {
    if is_v1beta1(cluster) {
        return bool_field(cluster, "status.infrastructureReady");
    }
    bool_field(cluster, "status.initialization.infrastructureProvisioned")
        || bool_field(cluster, "status.infrastructureReady")
}

/// `Cluster.spec.infrastructureRef.name` (the same path at both versions).
pub fn cluster_infrastructure_ref_name(cluster: &DynamicObject) -> Option<&str> {
    string_field(cluster, "spec.infrastructureRef.name")
}

/// `Cluster.spec.infrastructureRef`'s group: v1beta2 `apiGroup`, v1beta1 the group of
/// `apiVersion`.
pub fn cluster_infrastructure_ref_group(cluster: &DynamicObject) -> Option<&str> {
    if is_v1beta1(cluster) {
        return string_field(cluster, "spec.infrastructureRef.apiVersion")
            .and_then(|v| v.split_once('/'))
            .map(|(g, _)| g);
    }
    string_field(cluster, "spec.infrastructureRef.apiGroup")
}

/// Whether the Cluster's condition `ControlPlaneInitialized` is True where a provider reading
/// at that version finds it: v1beta1 `status.conditions` (v1beta1 conditions), v1beta2
/// `status.conditions`.
pub fn cluster_control_plane_initialized(cluster: &DynamicObject) -> bool {
    super::object::field(cluster, "status.conditions")
        .and_then(serde_json::Value::as_array)
        .is_some_and(|cs| {
            cs.iter().any(|c| {
                c.get("type").and_then(serde_json::Value::as_str) == Some("ControlPlaneInitialized")
                    && c.get("status").and_then(serde_json::Value::as_str) == Some("True")
            })
        })
}

/// `Cluster.spec.controlPlaneEndpoint` when valid (host and port set).
pub fn cluster_endpoint(cluster: &DynamicObject) -> Option<(String, i64)> {
    let host = string_field(cluster, "spec.controlPlaneEndpoint.host")?;
    let port = super::object::field(cluster, "spec.controlPlaneEndpoint.port")?.as_i64()?;
    (port != 0).then(|| (host.to_string(), port))
}

/// `Machine.spec.bootstrap.dataSecretName` when set.
pub fn machine_data_secret_name(machine: &DynamicObject) -> Option<&str> {
    string_field(machine, "spec.bootstrap.dataSecretName")
}

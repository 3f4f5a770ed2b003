//! capi-lifecycle: the lifecycle engine. It plays CAPI core against a provider's live
//! reconcilers, records what they do and judges the timeline, rule by rule (docs/architecture.md
//! "Lifecycle scenarios", docs/contract.md §4).
//!
//! - [`core_sim`]: Cluster / Machine / MachinePool objects, owner references, gates, built on
//!   [`capi_core`] (conversion, PKI, workload clusters) as CAPI core provides them.
//! - [`observer`] + [`timeline`]: a watch per object under test → timeline of transitions.
//! - one file per script: [`infra_cluster`], [`infra_machine`], [`bootstrap`],
//!   [`control_plane`], [`machine_pool`], [`template`], [`ipam`].
//! - [`cleanup`]: the guard that removes what a run created.
//! - [`runner`]: baseline (mock) first, then the target; verdicts → matrix cells.
//! - [`client_retry`]: the retrying client every request of a run goes through, and [`events`]:
//!   what a run tells while it works.
//!
//! It takes plain data (subjects, settings, clients) and returns the result model of
//! [`capi_contract::model`]; it never parses a command line and never depends on the CLI crate.

pub mod capi_core;
pub mod client_retry;
pub mod duration;
pub mod events;

pub mod acting;
pub mod baseline;
pub mod bootstrap;
pub mod cleanup;
pub mod control_plane;
pub mod core_reference;
pub mod core_sim;
pub mod env;
pub mod infra_cluster;
pub mod infra_machine;
pub mod ip_consumer;
pub mod ipam;
pub mod json;
pub mod machine_pool;
pub mod observer;
pub mod pause;
pub mod round_trips;
pub mod runner;
pub mod samples;
pub mod scope;
pub mod script;
pub mod server_trouble;
pub mod template;
pub mod timeline;
pub mod topology;
pub mod verdicts;
pub mod webhooks;

use capi_contract::contract::Role;
use capi_contract::model::Column;
use kube::discovery::ApiResource;
use serde_json::Value;
use std::time::Duration;

pub use capi_contract::model::labels::{RUN_LABEL, WATCH_FILTER_LABEL};

/// Timing knobs of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// How long "must not act" assertions watch for evidence.
    pub quiet_window: Duration,
    /// Deadline of each step that waits for the provider.
    pub step_timeout: Duration,
    /// How long a provider gets to see a change of its Cluster (a pause) in its own caches,
    /// counted from when a watch shows the change, before the tool makes a change the provider
    /// must judge by it (stretched to three round trips on a slow server). A
    /// controller-runtime provider reads the Cluster from an informer fed by its own watch, so
    /// it can see its own object's next change first (docs/core-simulation.md "Timing").
    pub propagation: Duration,
    /// How far a step's deadline grows with the time the scenario kept gates closed in front
    /// of the provider (must-not-act windows, the wait for a pause to reach it): a
    /// controller-runtime provider retries a failed reconcile with a doubling backoff (5 ms,
    /// 10 ms, … up to 1000 s), so after failing on a closed gate for a time `t` it next looks
    /// about `t` later when no watch event wakes it sooner. A step's deadline is the step
    /// timeout or that time, whichever is longer, the latter capped at this (zero: the fixed
    /// step timeout; docs/core-simulation.md "Timing").
    pub backoff_allowance: Duration,
    /// How far a step's deadline grows while the API server fails requests: a provider's
    /// list/watch that failed waits before it lists again (client-go's reflector and
    /// kube-runtime's watcher: 800 ms doubling up to 30 s, jittered, forgotten after two
    /// minutes without a failure), so a change it would see at once on a healthy server
    /// reaches it that much later. The tool's own requests tell: each attempt that met a 429,
    /// a 5xx or a broken connection in the last two minutes counts as one failure of the
    /// ladder ([`server_trouble::watch_backoff`]), capped at this (zero: no allowance).
    pub fault_allowance: Duration,
}

impl Settings {
    /// Defaults for the embedded server and the in-process mock.
    pub const EMBEDDED: Settings = Settings {
        quiet_window: Duration::from_millis(300),
        step_timeout: Duration::from_secs(10),
        propagation: Duration::from_millis(50),
        backoff_allowance: Duration::ZERO,
        fault_allowance: server_trouble::WATCH_BACKOFF_BOUND,
    };
    /// Defaults for the embedded server with a provider's own manager (`--provider-cmd`):
    /// the embedded timing, with a quiet window for a pause to reach the manager's informer
    /// and step deadlines that grow with the backoff a controller-runtime manager may have
    /// reached.
    ///
    /// The step timeout covers the fixed requeues of CAPI's own managers that no watch event
    /// shortens (CABPK re-checks `ControlPlaneInitialized` every 30 s, KCP requeues every 20 s,
    /// core a missing reference after 30 s, ClusterCache retries a connection after 30 s:
    /// docs/core-simulation.md "Timing"), so their verdicts need no `--timeout`. A provider that
    /// acts waits no longer for it: every wait ends at the evidence.
    pub const EMBEDDED_PROVIDER: Settings = Settings {
        step_timeout: Duration::from_secs(45),
        propagation: Duration::from_millis(300),
        backoff_allowance: Duration::from_secs(120),
        ..Settings::EMBEDDED
    };
    /// Defaults for a real cluster and a real provider.
    pub const REAL: Settings = Settings {
        quiet_window: Duration::from_secs(30),
        step_timeout: Duration::from_secs(120),
        propagation: Duration::from_secs(10),
        backoff_allowance: Duration::from_secs(300),
        fault_allowance: server_trouble::WATCH_BACKOFF_BOUND,
    };

    /// The deadline of a step that waits for the provider, after the scenario kept gates
    /// closed for `held` (see [`Settings::backoff_allowance`]) and while the tool's requests
    /// met `faults` server faults in the last two minutes (see [`Settings::fault_allowance`]).
    pub fn step_deadline(&self, held: Duration, faults: usize) -> Duration {
        self.step_timeout.max(held.min(self.backoff_allowance))
            + server_trouble::watch_backoff(faults).min(self.fault_allowance)
    }
}

#[cfg(test)]
mod settings_tests {
    use super::*;

    /// A provider failing on a gate the scenario kept closed retries about that long after; the
    /// deadline covers it up to the allowance, and the mock's defaults keep the fixed deadline.
    #[test]
    fn step_deadlines_cover_the_backoff_reached_during_the_scenario() {
        let s = Settings::EMBEDDED_PROVIDER;
        assert_eq!(s.step_deadline(Duration::from_secs(3), 0), s.step_timeout);
        assert_eq!(
            s.step_deadline(Duration::from_secs(57), 0),
            Duration::from_secs(57)
        );
        // CAPI's managers' fixed 30 s requeues fit the default deadline.
        assert!(s.step_timeout > Duration::from_secs(30));
        assert_eq!(
            s.step_deadline(Duration::from_secs(900), 0),
            Duration::from_secs(120)
        );
        let m = Settings::EMBEDDED;
        assert_eq!(m.step_deadline(Duration::from_secs(37), 0), m.step_timeout);
        // The ladder: failing for ~41 s (13 doublings from 5 ms), the next retry is 40.96 s
        // away: about the time already spent failing.
        let waited: Duration = (0..13).map(|n| Duration::from_millis(5 << n)).sum();
        assert!(
            waited < Duration::from_secs(41)
                && Duration::from_millis(5 << 13) <= waited + Duration::from_millis(5)
        );
    }

    /// Server faults the tool met lengthen the deadline by the watch backoff a provider may be
    /// in, up to the allowance; an explicit deadline (`fault_allowance` zero) stays fixed.
    #[test]
    fn step_deadlines_cover_the_watch_backoff_of_a_failing_server() {
        let m = Settings::EMBEDDED;
        assert_eq!(m.step_deadline(Duration::ZERO, 0), m.step_timeout);
        assert_eq!(
            m.step_deadline(Duration::ZERO, 3),
            m.step_timeout + Duration::from_millis(6400)
        );
        assert_eq!(
            m.step_deadline(Duration::ZERO, 500),
            m.step_timeout + server_trouble::WATCH_BACKOFF_BOUND
        );
        let fixed = Settings {
            fault_allowance: Duration::ZERO,
            ..m
        };
        assert_eq!(fixed.step_deadline(Duration::ZERO, 500), m.step_timeout);
    }
}

/// One provider kind under one contract, as a scenario drives it.
#[derive(Debug, Clone)]
pub struct Subject {
    pub column: Column,
    /// The kind at the API version its contract label maps to.
    pub resource: ApiResource,
    /// For template kinds: the base kind (same group and version).
    pub base: Option<ApiResource>,
    /// The object body to create (`spec`, optional `metadata.annotations/labels`), from
    /// `--sample`, an existing template, or the mock's defaults. `None`: skip "no sample object".
    pub sample: Option<Value>,
    /// The `openAPIV3Schema` of the kind at that version, when known (decides conditional
    /// rules: a provider whose schema declares `status.addresses` surfaces addresses).
    pub schema: Option<capi_contract::inventory::SchemaNode>,
    /// Other provider kinds the subject's core objects reference, and the `--sample`
    /// documents its sample's references may name ([`core_sim`]).
    pub companions: Companions,
    /// The `cluster.x-k8s.io` version CAPI core of the provider's line runs, which its owner
    /// references name: `v1beta2` for a provider that declares the v1beta2 contract (CAPI
    /// v1.11+), `v1beta1` for one that declares only v1beta1 (built on CAPI v1.9/v1.10, whose
    /// scheme knows only core v1beta1) ([`core_version_for`]).
    pub core_version: &'static str,
}

/// The core version a provider declaring `declared` contracts is paired with
/// ([`Subject::core_version`]); nothing declared (a forced `--contract`): the current core.
pub fn core_version_for(declared: &[capi_contract::contract::Contract]) -> &'static str {
    use crate::capi_core::conversion::{V1BETA1, V1BETA2};
    use capi_contract::contract::Contract;
    if !declared.is_empty() && !declared.contains(&Contract::V1Beta2) {
        V1BETA1
    } else {
        V1BETA2
    }
}

/// What the core objects of a subject's scenario reference besides the subject
/// (docs/core-simulation.md "What each scenario creates").
#[derive(Debug, Clone, Default)]
pub struct Companions {
    /// The InfraCluster a scenario's Cluster references: the provider's own InfraCluster kind
    /// under the subject's contract with its sample; `None`: the mock's MockCluster.
    pub infra_cluster: Option<(ApiResource, Value)>,
    /// Every `--sample` document (the objects a sample's references may name).
    pub sample_documents: Vec<Value>,
    /// The IP address pool kinds (group, kind) known to the run: a machine whose sample names
    /// one consumes IPs (ipam/consumer-claim).
    pub pool_kinds: Vec<(String, String)>,
    /// The kinds of the run whose CRDs are cluster-scoped ([`scope`]).
    pub cluster_scoped: scope::ClusterScopedKinds,
}

impl Subject {
    pub fn role(&self) -> Role {
        self.column.role
    }

    /// Whether the subject's kind is cluster-scoped (its CRD's `spec.scope`).
    pub fn is_cluster_scoped(&self) -> bool {
        self.companions
            .cluster_scoped
            .contains(&self.resource.group, &self.resource.kind)
    }

    /// The baseline's key for this subject: role, contract, and whether its mock kind is
    /// cluster-scoped ([`baseline::baseline_is_cluster_scoped`]).
    pub fn baseline_key(&self) -> (Role, Option<capi_contract::contract::Contract>, bool) {
        let role = self.role();
        (
            role,
            self.column.contract,
            baseline::baseline_is_cluster_scoped(role, self.is_cluster_scoped()),
        )
    }

    /// Whether the schema declares the dotted `path` (e.g. `status.addresses`).
    pub fn schema_has(&self, path: &str) -> bool {
        let Some(mut cur) = self.schema.as_ref() else {
            return false;
        };
        for key in path.split('.') {
            match cur.property(key) {
                Some(next) => cur = next,
                None => return false,
            }
        }
        true
    }
}

/// The script that exercises a role.
pub fn script_for(role: Role) -> Option<&'static str> {
    Some(match role {
        Role::InfraCluster => "SC-infracluster",
        Role::InfraMachine => "SC-inframachine",
        Role::BootstrapConfig => "SC-bootstrap",
        Role::ControlPlane => "SC-controlplane",
        Role::InfraMachinePool => "SC-machinepool",
        Role::IpamPool => "SC-ipam",
        r if r.is_template() => "SC-template",
        _ => return None,
    })
}

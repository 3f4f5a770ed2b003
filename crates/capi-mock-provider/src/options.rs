//! How the mock provider is run.

use super::faults::FaultSet;
use std::time::Duration;

/// Default simulated provisioning delay.
pub const DEFAULT_PROVISION_DELAY: Duration = Duration::from_millis(5);

/// Options of [`super::MockProvider::start`].
#[derive(Debug, Clone)]
pub struct MockOptions {
    /// Only reconcile objects in this namespace (`None`: all namespaces).
    pub watch_namespace: Option<String>,
    /// Only reconcile objects labelled `cluster.x-k8s.io/watch-filter=<value>`.
    pub watch_filter: Option<String>,
    /// Provider-wide faults.
    pub faults: FaultSet,
    /// Simulated infrastructure provisioning delay.
    pub provision_delay: Duration,
    /// How core objects are read (CAPI-like modes).
    pub core: super::core::CoreReads,
}

impl Default for MockOptions {
    fn default() -> Self {
        MockOptions {
            watch_namespace: None,
            watch_filter: None,
            faults: FaultSet::default(),
            provision_delay: DEFAULT_PROVISION_DELAY,
            core: super::core::CoreReads::default(),
        }
    }
}

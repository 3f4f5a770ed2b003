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
    /// Only reconcile objects matching this Kubernetes label selector as well (e.g.
    /// `!cluster.x-k8s.io/watch-filter`: none of the objects another controller's watch filter
    /// claims, such as the in-process baseline's).
    pub label_selector: Option<String>,
    /// Provider-wide faults.
    pub faults: FaultSet,
    /// Simulated infrastructure provisioning delay.
    pub provision_delay: Duration,
    /// How core objects are read (CAPI-like modes).
    pub core: super::core::CoreReads,
}

impl MockOptions {
    /// The label selector of the mock's watches of its own kinds: the watch filter and
    /// [`Self::label_selector`] together (`None`: every object).
    pub fn own_selector(&self, filter_label: &str) -> Option<String> {
        let parts: Vec<String> = self
            .watch_filter
            .as_deref()
            .filter(|f| !f.is_empty())
            .map(|f| format!("{filter_label}={f}"))
            .into_iter()
            .chain(self.label_selector.clone().filter(|s| !s.trim().is_empty()))
            .collect();
        (!parts.is_empty()).then(|| parts.join(","))
    }
}

impl Default for MockOptions {
    fn default() -> Self {
        MockOptions {
            watch_namespace: None,
            watch_filter: None,
            label_selector: None,
            faults: FaultSet::default(),
            provision_delay: DEFAULT_PROVISION_DELAY,
            core: super::core::CoreReads::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_selector_joins_the_watch_filter_and_the_label_selector() {
        let label = "cluster.x-k8s.io/watch-filter";
        let mut o = MockOptions::default();
        assert_eq!(o.own_selector(label), None);
        o.watch_filter = Some("a".into());
        assert_eq!(
            o.own_selector(label).as_deref(),
            Some("cluster.x-k8s.io/watch-filter=a")
        );
        o.label_selector = Some("!x".into());
        assert_eq!(
            o.own_selector(label).as_deref(),
            Some("cluster.x-k8s.io/watch-filter=a,!x")
        );
        o.watch_filter = None;
        assert_eq!(o.own_selector(label).as_deref(), Some("!x"));
    }
}

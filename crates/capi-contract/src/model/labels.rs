//! Labels a run puts on what it creates, read by every layer that finds or cleans up those
//! objects (the scenarios, cleanup, the retrying client, the mock provider).

/// Label on every object (and namespace) a run creates; its value is the run id.
pub const RUN_LABEL: &str = "capi-conformance.io/run";
/// CAPI's multi-instance label; mock instances reconcile only objects carrying their value.
pub const WATCH_FILTER_LABEL: &str = "cluster.x-k8s.io/watch-filter";

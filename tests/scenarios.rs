//! `check` and the lifecycle scenarios against the embedded API server.

#[path = "scenarios/bootstrap_samples.rs"]
mod bootstrap_samples;
#[path = "shared/cells.rs"]
mod cells;
#[path = "scenarios/cluster_scoped.rs"]
mod cluster_scoped;
#[path = "scenarios/common.rs"]
mod common;
#[path = "scenarios/components.rs"]
mod components;
#[path = "shared/components_file.rs"]
mod components_file;
#[path = "scenarios/core_objects.rs"]
mod core_objects;
#[path = "scenarios/deployment.rs"]
mod deployment;
#[path = "scenarios/embedded.rs"]
mod embedded;
#[path = "scenarios/faults.rs"]
mod faults;
#[path = "scenarios/manager_help.rs"]
mod manager_help;
#[path = "shared/manifests.rs"]
mod manifests;
#[path = "scenarios/one_verdict.rs"]
mod one_verdict;
#[path = "scenarios/pause_touch.rs"]
mod pause_touch;
#[path = "scenarios/process.rs"]
mod process;
#[path = "plugin/python_tools.rs"]
mod python_tools;
#[path = "shared/shared_data.rs"]
mod shared_data;
#[path = "shared/signals.rs"]
mod signals;
#[path = "scenarios/static_only.rs"]
mod static_only;
#[path = "scenarios/unjudged.rs"]
mod unjudged;
#[path = "scenarios/webhooks.rs"]
mod webhooks;
#[path = "shared/without_shared.rs"]
mod without_shared;
#[path = "scenarios/workload_clusters.rs"]
mod workload_clusters;

/// `static_only`'s corpus tests on a fresh clone (no shared data): one skip line each and a
/// pass, or a failure each under `CAPI_CONFORMANCE_REQUIRE_SHARED=1`.
#[test]
fn fresh_clone_static_only_corpus_tests_skip_or_fail_without_shared_data() {
    without_shared::assert_skip_or_fail_without_shared(
        "static_only::",
        &["static_only_on_serve_load_equals_lint_for_every_corpus_provider"],
    );
    without_shared::assert_skip_or_fail_without_shared(
        "components::",
        &[
            "minimal_core_grants_what_capi_core_grants",
            "corpus_components_through_check_embedded_match_lint",
        ],
    );
}

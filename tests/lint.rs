//! Integration tests of the static engine and `lint`: fixtures, the catalog walk over
//! violations, the real-provider corpus, bad input, determinism.

#[path = "lint/generate.rs"]
mod generate;
#[path = "shared/shared_data.rs"]
mod shared_data;
#[path = "lint/support.rs"]
mod support;
#[path = "shared/without_shared.rs"]
mod without_shared;

#[path = "lint/bad_input.rs"]
mod bad_input;
#[path = "lint/conformant.rs"]
mod conformant;
#[path = "lint/corpus.rs"]
mod corpus;
#[path = "lint/ipam.rs"]
mod ipam;
#[path = "lint/kustomize.rs"]
mod kustomize;
#[path = "lint/repos.rs"]
mod repos;
#[path = "lint/sarif.rs"]
mod sarif;
#[path = "lint/violations.rs"]
mod violations;
#[path = "lint/waivers.rs"]
mod waivers;

/// The corpus tests on a fresh clone (no shared data): one skip line each and a pass, or a
/// failure each under `CAPI_CONFORMANCE_REQUIRE_SHARED=1`.
#[test]
fn fresh_clone_corpus_tests_skip_or_fail_without_shared_data() {
    without_shared::assert_skip_or_fail_without_shared(
        "corpus::",
        &[
            "every_provider_lints_without_tool_error",
            "compact_and_whole_reading_give_the_same_matrix",
            "reference_providers_have_no_must_failure",
            "capd_dev_machine_pool_lacks_initialization_provisioned_at_should_level",
            "metal3_data_naming_is_waived_by_clusterctl_annotation",
            "capa_label_resolution_picks_served_v1beta2",
            "managed_control_planes_without_replicas_skip_scale_rules",
            "talos_control_plane_labels_resolve_to_v1alpha3",
            "capa_envsubst_operators_are_accepted_as_variables",
            "multi_instance_flags_need_help_output_when_args_do_not_set_them",
        ],
    );
}

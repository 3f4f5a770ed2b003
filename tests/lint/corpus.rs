//! The real-provider corpus (`../shared/corpus`, read in place). Without it each test prints
//! one skip line naming the provider it needed (a failure under
//! `CAPI_CONFORMANCE_REQUIRE_SHARED=1`).

use crate::support::*;
use capi_conformance::contract::{Contract, Level};
use capi_conformance::report::{Matrix, Outcome};

fn lint_provider(name: &str, test: &str) -> Option<Matrix> {
    let dir = corpus_provider(name, test)?;
    Some(lint_dir(&dir))
}

const PROVIDERS: [&str; 12] = [
    "aws",
    "azure",
    "capd",
    "capi-bootstrap-kubeadm",
    "capi-controlplane-kubeadm",
    "capi-core",
    "gcp",
    "metal3",
    "openstack",
    "talos-bootstrap",
    "talos-controlplane",
    "vsphere",
];

#[test]
fn every_provider_lints_without_tool_error() {
    if corpus("every_provider_lints_without_tool_error").is_none() {
        return;
    }
    for p in PROVIDERS {
        let docs = load(&corpus_provider(p, "every_provider_lints_without_tool_error").unwrap());
        let m = capi_conformance::checks::evaluate(docs, &Default::default(), catalog());
        assert!(m.is_ok(), "{p}: {:?}", m.err());
    }
}

/// `lint` reads each CRD into its compact form as it parses the file; the verdicts are exactly
/// those of the CRDs read from whole documents.
#[test]
fn compact_and_whole_reading_give_the_same_matrix() {
    let test = "compact_and_whole_reading_give_the_same_matrix";
    let providers = if corpus(test).is_some() {
        &PROVIDERS[..]
    } else {
        &[]
    };
    for p in providers {
        let dir = corpus_provider(p, test).unwrap();
        let opts = capi_conformance::checks::LintOptions::default();
        let compact = lint_docs(load(&dir), &opts);
        let whole = lint_docs(load_whole(&dir), &opts);
        assert_eq!(compact.results, whole.results, "{p}");
    }
    for fixture in ["conformant-v1beta1", "conformant-v1beta2"] {
        let dir = fixtures().join(fixture);
        let opts = capi_conformance::checks::LintOptions::default();
        assert_eq!(
            lint_docs(load(&dir), &opts).results,
            lint_docs(load_whole(&dir), &opts).results,
            "{fixture}"
        );
    }
}

#[test]
fn reference_providers_have_no_must_failure() {
    if corpus("reference_providers_have_no_must_failure").is_none() {
        return;
    }
    for p in [
        "capi-bootstrap-kubeadm",
        "capi-controlplane-kubeadm",
        "capd",
    ] {
        let m = lint_provider(p, "reference_providers_have_no_must_failure").unwrap();
        let must: Vec<String> = m
            .results
            .iter()
            .filter(|r| r.outcome == Outcome::Fail && r.level == Level::Must)
            .map(|r| format!("{} {} {:?}", r.rule_id, r.column.id(), r.reason))
            .collect();
        assert!(must.is_empty(), "{p}: {must:#?}");
        assert!(m.results.iter().any(|r| r.outcome == Outcome::Pass));
    }
}

#[test]
fn capd_dev_machine_pool_lacks_initialization_provisioned_at_should_level() {
    let Some(m) = lint_provider(
        "capd",
        "capd_dev_machine_pool_lacks_initialization_provisioned_at_should_level",
    ) else {
        return;
    };
    let cells: Vec<_> = cell(
        &m,
        "infra-machinepool/initialization-provisioned",
        "DevMachinePool",
    )
    .into_iter()
    .filter(|r| r.column.contract == Some(Contract::V1Beta2))
    .collect();
    assert_eq!(cells.len(), 1, "{cells:?}");
    assert_eq!(cells[0].outcome, Outcome::Fail);
    assert_eq!(cells[0].level, Level::Should);
    let ready: Vec<_> = cell(&m, "infra-machinepool/ready", "DevMachinePool")
        .into_iter()
        .filter(|r| r.column.contract == Some(Contract::V1Beta2))
        .collect();
    assert_eq!(ready.len(), 1);
    assert_eq!(ready[0].outcome, Outcome::Pass, "{ready:?}");
}

#[test]
fn metal3_data_naming_is_waived_by_clusterctl_annotation() {
    let Some(m) = lint_provider(
        "metal3",
        "metal3_data_naming_is_waived_by_clusterctl_annotation",
    ) else {
        return;
    };
    // Metal3Data is not a contract kind: the naming rule is visible through the provider-wide
    // clusterctl preflight rule, and per CRD when it is classified (forced here by --role).
    let pre = cells(&m, "clusterctl/crd-name-preflight");
    assert!(!pre.is_empty());
    assert!(pre.iter().all(|r| r.outcome != Outcome::Fail), "{pre:?}");
    let opts = capi_conformance::checks::LintOptions {
        roles: [(
            "Metal3Data".to_string(),
            capi_conformance::contract::Role::InfraMachine,
        )]
        .into(),
        ..Default::default()
    };
    let m = lint_docs(
        load(
            &corpus_provider(
                "metal3",
                "metal3_data_naming_is_waived_by_clusterctl_annotation",
            )
            .unwrap(),
        ),
        &opts,
    );
    let named = cell(&m, "all/crd-name", "Metal3Data");
    assert!(!named.is_empty());
    for r in named {
        assert_eq!(r.outcome, Outcome::Waived, "{r:?}");
        assert!(
            r.reason
                .as_deref()
                .unwrap()
                .contains("skip-crd-name-preflight-check")
        );
    }
}

#[test]
fn capa_label_resolution_picks_served_v1beta2() {
    let Some(m) = lint_provider("aws", "capa_label_resolution_picks_served_v1beta2") else {
        return;
    };
    let r = cell(&m, "all/contract-label-versions", "AWSMachine");
    assert!(!r.is_empty());
    for x in &r {
        assert_eq!(x.outcome, Outcome::Pass, "{x:?}");
    }
    assert!(
        r.iter().any(|x| x
            .evidence
            .iter()
            .any(|e| e.message.contains("resolves to served version v1beta2"))),
        "{r:?}"
    );
}

#[test]
fn managed_control_planes_without_replicas_skip_scale_rules() {
    if corpus("managed_control_planes_without_replicas_skip_scale_rules").is_none() {
        return;
    }
    for (p, kind) in [
        ("aws", "AWSManagedControlPlane"),
        ("azure", "AzureManagedControlPlane"),
        ("gcp", "GCPManagedControlPlane"),
    ] {
        let m = lint_provider(
            p,
            "managed_control_planes_without_replicas_skip_scale_rules",
        )
        .unwrap();
        let r = cell(&m, "control-plane/scale-subresource", kind);
        assert!(!r.is_empty(), "{p} {kind}");
        for x in r {
            assert_eq!(x.outcome, Outcome::Skip, "{p} {kind}: {x:?}");
            assert!(x.reason.as_deref().unwrap().contains("spec.replicas"));
        }
        // Their `spec.machineTemplate` is an empty placeholder: not Machine-based.
        for x in cell(&m, "control-plane/machine-template", kind) {
            assert_ne!(x.outcome, Outcome::Fail, "{p} {kind}: {x:?}");
        }
    }
}

#[test]
fn talos_control_plane_labels_resolve_to_v1alpha3() {
    let Some(m) = lint_provider(
        "talos-controlplane",
        "talos_control_plane_labels_resolve_to_v1alpha3",
    ) else {
        return;
    };
    let r = cell(&m, "all/contract-label-versions", "TalosControlPlane");
    assert!(!r.is_empty());
    for x in r {
        assert_eq!(x.outcome, Outcome::Pass, "{x:?}");
        assert!(
            x.evidence.iter().any(|e| e.message.contains("v1alpha3")),
            "{x:?}"
        );
    }
}

#[test]
fn capa_envsubst_operators_are_accepted_as_variables() {
    let Some(m) = lint_provider("aws", "capa_envsubst_operators_are_accepted_as_variables") else {
        return;
    };
    let r = cells(&m, "clusterctl/variables");
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].outcome, Outcome::Pass, "{r:?}");
}

/// Real managers accept `--namespace`/`--watch-filter` without setting them in their
/// Deployment: the manifests alone cannot decide the rule (inconclusive, never a false fail);
/// the manager's `--help` output given with `--manager-help` decides it.
#[test]
fn multi_instance_flags_need_help_output_when_args_do_not_set_them() {
    let Some(m) = lint_provider(
        "capd",
        "multi_instance_flags_need_help_output_when_args_do_not_set_them",
    ) else {
        return;
    };
    let r = cells(&m, "all/multi-instance-flags");
    assert!(!r.is_empty());
    for x in &r {
        assert_eq!(x.outcome, Outcome::Inconclusive, "{x:?}");
        assert!(
            x.reason.as_deref().unwrap().contains("--manager-help"),
            "{x:?}"
        );
    }
    for (help, want) in [
        (
            "  --namespace string\n  --watch-filter string   label value\n",
            Outcome::Pass,
        ),
        ("  --namespace string\n  --leader-elect\n", Outcome::Fail),
    ] {
        let opts = capi_conformance::checks::LintOptions {
            manager_help: Some(help.to_string()),
            ..Default::default()
        };
        let m = lint_docs(
            load(
                &corpus_provider(
                    "capd",
                    "multi_instance_flags_need_help_output_when_args_do_not_set_them",
                )
                .unwrap(),
            ),
            &opts,
        );
        for x in cells(&m, "all/multi-instance-flags") {
            assert_eq!(x.outcome, want, "{help:?}: {x:?}");
        }
    }
}

//! The matrix of a `lint`-like run of one provider, kustomize-mapped to source lines, that the
//! SARIF tests place and fingerprint.

use super::*;
use crate::fixtures::{self, B1, B2, col, result, rule};
use capi_conformance::contract::{Level, Role};
use capi_conformance::report::{Evidence, Matrix, Outcome, Phase, Problem};
use capi_conformance::suite::RuleKind;

/// A `lint`-like run of one provider after kustomize mapped its findings to source lines:
/// every outcome, waivers of both kinds, a baseline, an input problem.
pub(super) fn provider_run() -> Matrix {
    use Outcome::*;
    use Phase::*;
    let machine = col("foo", "FooMachine", Role::InfraMachine, B2, false);
    let machine_b1 = col("foo", "FooMachine", Role::InfraMachine, B1, false);
    let cluster = col("foo", "FooCluster", Role::InfraCluster, B2, false);
    let provider = col("foo", "*", Role::Provider, None, false);
    let mock = col("mock", "MockMachine", Role::InfraMachine, B2, true);
    let fields = rule(
        "infra-machine/provider-id",
        "InfraMachine has spec.providerID",
        Level::Must,
        &[Role::InfraMachine],
        RuleKind::Static,
    );
    let category = rule(
        "all/category",
        "CRD is in the cluster-api category",
        Level::May,
        &[Role::InfraMachine, Role::InfraCluster],
        RuleKind::Static,
    );
    let conditions = rule(
        "all/conditions",
        "Status has conditions",
        Level::Should,
        &[Role::InfraMachine, Role::InfraCluster],
        RuleKind::Static,
    );
    let rbac = rule(
        "all/rbac-owner-finalizers",
        "Core may set owner finalizers",
        Level::Should,
        &[Role::Provider],
        RuleKind::Static,
    );
    let terminal = rule(
        "all/terminal-failures",
        "Terminal failures are reported",
        Level::Should,
        &[Role::InfraMachine],
        RuleKind::Scenario,
    );

    let mut missing = ev(
        "`spec.providerID` is missing (no `providerID` in the schema)",
        CRD,
        Some("spec.versions[v1beta2].schema.openAPIV3Schema: spec.providerID"),
    );
    missing.location = Some("config/default#4".into());
    missing.source = at(BASES, 412);
    let mut missing_too = missing.clone();
    missing_too.message = "`status.addresses` is missing".into();
    missing_too.path = Some("spec.versions[v1beta2].schema.openAPIV3Schema: status".into());
    missing_too.source = at(BASES, 530);

    let mut category_ev = ev("spec.names.categories [] lacks `cluster-api`", CRD, None);
    category_ev.location = Some("config/default#4".into());
    category_ev.source = at(BASES, 17);

    let waived_annotation = with(
        result(&conditions.id, &machine, Level::Should, Static, Waived),
        "waived by annotation capi-conformance.io/waive: conditions come in v1beta3",
        vec![
            Evidence::msg("outcome without the waiver: fail (`status.conditions` is missing)"),
            {
                let mut e = ev("`status.conditions` is missing", CRD, Some("status"));
                e.source = at(BASES, 600);
                e
            },
        ],
    );
    let waived_config = with(
        result(&conditions.id, &cluster, Level::Should, Static, Waived),
        "waived by config: tracked in issue 12",
        vec![
            Evidence::msg("outcome without the waiver: fail (`status.conditions` is missing)"),
            {
                let mut e = ev(
                    "`status.conditions` is missing",
                    "CustomResourceDefinition/fooclusters.infrastructure.foo.io",
                    Some("status"),
                );
                e.location = Some("config/default#2".into());
                e
            },
        ],
    );
    let waived_pass = with(
        result(&category.id, &cluster, Level::May, Static, Waived),
        "waived by config: not needed",
        vec![Evidence::msg("outcome without the waiver: pass")],
    );

    Matrix {
        context: {
            let mut c = fixtures::context();
            c.command = "lint".into();
            c.source = "config/".into();
            c.server_version = None;
            c.run_id = None;
            c
        },
        rules: vec![
            fields.clone(),
            category.clone(),
            conditions.clone(),
            rbac.clone(),
            terminal.clone(),
        ],
        columns: vec![
            machine.clone(),
            machine_b1.clone(),
            cluster.clone(),
            provider.clone(),
            mock.clone(),
        ],
        results: vec![
            with(
                result(&fields.id, &machine, Level::Must, Static, Fail),
                "`spec.providerID` is missing (no `providerID` in the schema); `status.addresses` is missing",
                vec![missing, missing_too],
            ),
            with(
                result(&fields.id, &machine_b1, Level::Must, Static, Skip),
                "no such field under v1beta1",
                Vec::new(),
            ),
            with(
                result(&category.id, &machine, Level::May, Static, Fail),
                "spec.names.categories [] lacks `cluster-api`",
                vec![category_ev],
            ),
            waived_pass,
            waived_annotation,
            waived_config,
            with(
                result(&rbac.id, &provider, Level::Should, Static, Fail),
                "no role grants update on foomachines/finalizers",
                vec![Evidence::msg(
                    "no role grants update on foomachines/finalizers",
                )],
            ),
            with(
                result(
                    &terminal.id,
                    &machine,
                    Level::Should,
                    Lifecycle,
                    Inconclusive,
                ),
                "the API server dropped the watch 3 times",
                Vec::new(),
            ),
            with(
                result(&terminal.id, &mock, Level::Should, Lifecycle, Fail),
                "the built-in mock never reported the failure",
                Vec::new(),
            ),
            result(&category.id, &cluster, Level::May, Static, Pass),
        ],
        problems: vec![Problem {
            source: "config/broken.yaml#1".into(),
            message: "document is not a mapping".into(),
        }],
        notes: Vec::new(),
        scenarios: Vec::new(),
    }
}

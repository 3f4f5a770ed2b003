//! Test matrices with fixed timestamps (no clock).

use capi_conformance::contract::{Contract, FailOn, Level, Role};
use capi_conformance::report::{
    Column, Evidence, Matrix, Note, Outcome, Phase, Problem, RuleResult, RunContext,
    ScenarioRecord, StepRecord, TimelineEntry,
};
use capi_conformance::suite::{Rule, RuleKind};
use std::collections::BTreeMap;

pub fn started_at() -> jiff::Timestamp {
    "2026-01-02T03:04:05Z".parse().unwrap()
}

pub fn context() -> RunContext {
    RunContext {
        tool_version: "0.1.0".into(),
        command: "check".into(),
        source: "https://127.0.0.1:6443".into(),
        started_at: started_at(),
        server_version: Some("v1.33.0".into()),
        fail_on: FailOn::Level(Level::Must),
        run_id: Some("r1".into()),
    }
}

pub fn rule(id: &str, title: &str, level: Level, roles: &[Role], kind: RuleKind) -> Rule {
    Rule {
        id: id.into(),
        title: title.into(),
        level,
        levels: BTreeMap::new(),
        condition: None,
        contracts: Contract::ALL.to_vec(),
        roles: roles.to_vec(),
        kind,
        doc: format!("https://cluster-api.sigs.k8s.io/developer/providers/contracts/overview#{id}"),
        description: format!("Checks that {title}."),
        remediation: format!("Make sure that {title}."),
        check: None,
        field_check: Default::default(),
        scenario: None,
        faults: Vec::new(),
    }
}

pub fn col(
    provider: &str,
    kind: &str,
    role: Role,
    contract: Option<Contract>,
    baseline: bool,
) -> Column {
    Column {
        provider: provider.into(),
        kind: kind.into(),
        role,
        contract,
        baseline,
    }
}

pub fn result(
    rule_id: &str,
    column: &Column,
    level: Level,
    phase: Phase,
    outcome: Outcome,
) -> RuleResult {
    RuleResult {
        rule_id: rule_id.into(),
        column: column.clone(),
        level,
        phase,
        outcome,
        reason: None,
        evidence: Vec::new(),
        duration_ms: None,
    }
}

fn with_reason(mut r: RuleResult, reason: &str) -> RuleResult {
    r.reason = Some(reason.into());
    r
}

pub const B1: Option<Contract> = Some(Contract::V1Beta1);
pub const B2: Option<Contract> = Some(Contract::V1Beta2);

/// Every outcome, a baseline, a below-fail-on failure, a per-contract level, a conditional rule,
/// an input problem, a secret-looking evidence value and a scenario record with timelines.
pub fn synthetic() -> Matrix {
    use Level::*;
    use Outcome::*;
    use Phase::*;
    let cluster = col("acme", "AcmeCluster", Role::InfraCluster, B2, false);
    let machine_b1 = col("acme", "AcmeMachine", Role::InfraMachine, B1, false);
    let machine_b2 = col("acme", "AcmeMachine", Role::InfraMachine, B2, false);
    let provider = col("acme", "*", Role::Provider, None, false);
    let mock_cluster = col("mock", "MockCluster", Role::InfraCluster, B2, true);
    let mock_machine = col("mock", "MockMachine", Role::InfraMachine, B2, true);

    let label = rule(
        "all/crd-contract-label",
        "CRD carries the contract label",
        Must,
        &[Role::InfraCluster, Role::InfraMachine],
        RuleKind::Static,
    );
    let mut provider_id = rule(
        "infra-machine/provider-id",
        "InfraMachine sets spec.providerID",
        Must,
        &[Role::InfraMachine],
        RuleKind::Scenario,
    );
    provider_id.scenario = Some("SC-inframachine".into());
    let mut terminal = rule(
        "all/terminal-failures",
        "Terminal failures are reported",
        Should,
        &[Role::InfraMachine],
        RuleKind::Scenario,
    );
    terminal.levels.insert(Contract::V1Beta2, May);
    let mut endpoint = rule(
        "infra-cluster/control-plane-endpoint",
        "InfraCluster sets spec.controlPlaneEndpoint",
        Must,
        &[Role::InfraCluster],
        RuleKind::Static,
    );
    endpoint.condition = Some("the provider manages the control plane endpoint".into());
    let rbac = rule(
        "provider/rbac-aggregation",
        "Core can manage every kind",
        Must,
        &[Role::Provider],
        RuleKind::Static,
    );
    let metadata = rule(
        "provider/clusterctl-metadata",
        "metadata.yaml lists the contract",
        Should,
        &[Role::Provider],
        RuleKind::Static,
    );

    let mut label_fail = with_reason(
        result(&label.id, &machine_b2, Must, Static, Fail),
        "label cluster.x-k8s.io/v1beta2 is missing",
    );
    label_fail.evidence.push(Evidence {
        message: "labels: {cluster.x-k8s.io/v1beta1: v1alpha1}".into(),
        object: Some("CustomResourceDefinition/acmemachines.infrastructure.acme.io".into()),
        path: Some("metadata.labels".into()),
        resource_version: None,
        location: Some("components.yaml#4".into()),
        source: None,
    });
    let mut pid_fail = with_reason(
        result(&provider_id.id, &machine_b2, Must, Lifecycle, Fail),
        "spec.providerID never set within 10s",
    );
    pid_fail.duration_ms = Some(10_000);
    pid_fail.evidence.push(Evidence {
        message: "last seen without providerID; bootstrapToken: s3cr3t-value".into(),
        object: Some("AcmeMachine capi-conformance-r1/m-1".into()),
        path: Some("spec.providerID".into()),
        resource_version: Some("42".into()),
        location: None,
        source: None,
    });
    let mut pid_base = result(&provider_id.id, &mock_machine, Must, Lifecycle, Pass);
    pid_base.duration_ms = Some(120);
    let mut terminal_inc = with_reason(
        result(&terminal.id, &machine_b1, Should, Lifecycle, Inconclusive),
        "watch dropped 3 times; the API server was unreachable",
    );
    terminal_inc.duration_ms = Some(2_500);
    let mut terminal_pass = result(&terminal.id, &machine_b2, May, Lifecycle, Pass);
    terminal_pass.duration_ms = Some(800);

    let results = vec![
        result(&label.id, &cluster, Must, Static, Pass),
        result(&label.id, &machine_b1, Must, Static, Pass),
        label_fail,
        result(&label.id, &mock_cluster, Must, Static, Pass),
        result(&label.id, &mock_machine, Must, Static, Pass),
        with_reason(
            result(&provider_id.id, &machine_b1, Must, Static, Skip),
            "needs a live provider",
        ),
        pid_fail,
        pid_base,
        terminal_inc,
        terminal_pass,
        with_reason(
            result(&endpoint.id, &cluster, Must, Static, Waived),
            "waived by CRD annotation capi-conformance.io/waive: endpoint comes from a load balancer",
        ),
        result(&endpoint.id, &mock_cluster, Must, Static, Pass),
        result(&rbac.id, &provider, Must, Static, Pass),
        with_reason(
            result(&metadata.id, &provider, Should, Static, Fail),
            "metadata.yaml lists no release for contract v1beta2",
        ),
    ];

    let steps = |d: [u64; 3], last: Outcome| {
        vec![
            StepRecord {
                name: "create".into(),
                outcome: Pass,
                at_ms: Some(0),
                duration_ms: Some(d[0]),
            },
            StepRecord {
                name: "provision".into(),
                outcome: last,
                at_ms: Some(d[0]),
                duration_ms: Some(d[1]),
            },
            StepRecord {
                name: "delete".into(),
                outcome: Pass,
                at_ms: Some(d[0] + d[1]),
                duration_ms: Some(d[2]),
            },
        ]
    };
    let entry = |at_ms: u64, rv: &str, event: &str, changed: &[&str]| TimelineEntry {
        at_ms,
        object: "InfraMachine m-1".into(),
        resource_version: rv.into(),
        event: event.into(),
        changed: changed.iter().map(|s| s.to_string()).collect(),
    };
    let scenarios = vec![
        ScenarioRecord {
            scenario: "SC-inframachine".into(),
            column: mock_machine.clone(),
            steps: steps([3, 40, 12], Pass),
            timeline: vec![
                entry(0, "10", "ADDED", &[]),
                entry(2, "11", "tool: set owner", &["metadata.ownerReferences"]),
                entry(
                    35,
                    "12",
                    "MODIFIED",
                    &["spec.providerID", "status.initialization.provisioned"],
                ),
                entry(60, "13", "DELETED", &[]),
            ],
        },
        ScenarioRecord {
            scenario: "SC-inframachine".into(),
            column: machine_b2.clone(),
            steps: steps([5, 10_000, 30], Fail),
            timeline: vec![
                entry(0, "40", "ADDED", &[]),
                entry(4, "41", "tool: set owner", &["metadata.ownerReferences"]),
                entry(900, "42", "MODIFIED", &["metadata.finalizers"]),
                entry(10_040, "43", "DELETED", &[]),
            ],
        },
    ];

    Matrix {
        context: context(),
        rules: vec![label, provider_id, terminal, endpoint, rbac, metadata],
        columns: vec![
            cluster,
            machine_b1,
            machine_b2,
            provider,
            mock_cluster,
            mock_machine,
        ],
        results,
        problems: vec![Problem {
            source: "broken.yaml#2".into(),
            message: "document is not a mapping".into(),
        }],
        notes: vec![Note {
            source: "config/crd/patches/webhook_in_acmemachines.yaml#0".into(),
            message: "CustomResourceDefinition acmemachines.infrastructure.acme.io is a kustomize patch (no spec.group, spec.names or spec.versions): lint the kustomization that uses it; skipped".into(),
        }],
        scenarios,
    }
}

/// Two kinds, one contract, everything passes; a `lint` run without scenarios.
pub fn all_pass() -> Matrix {
    let cluster = col("acme", "AcmeCluster", Role::InfraCluster, B2, false);
    let machine = col("acme", "AcmeMachine", Role::InfraMachine, B2, false);
    let label = rule(
        "all/crd-contract-label",
        "CRD carries the contract label",
        Level::Must,
        &[Role::InfraCluster, Role::InfraMachine],
        RuleKind::Static,
    );
    let status = rule(
        "all/status-subresource",
        "CRD enables the status subresource",
        Level::Should,
        &[Role::InfraCluster, Role::InfraMachine],
        RuleKind::Static,
    );
    let mut context = context();
    context.command = "lint".into();
    context.source = "fixtures/conformant-v1beta2".into();
    context.server_version = None;
    context.run_id = None;
    let results = [&label, &status]
        .iter()
        .flat_map(|r| {
            [&cluster, &machine].map(|c| result(&r.id, c, r.level, Phase::Static, Outcome::Pass))
        })
        .collect();
    Matrix {
        context,
        rules: vec![label, status],
        columns: vec![cluster, machine],
        results,
        problems: Vec::new(),
        notes: Vec::new(),
        scenarios: Vec::new(),
    }
}

/// A provider with `kinds` CRDs (roles cycling) under both contracts, every rule passing except
/// one failure per tenth kind.
pub fn large(kinds: usize) -> Matrix {
    let roles = [
        Role::InfraCluster,
        Role::InfraClusterTemplate,
        Role::InfraMachine,
        Role::InfraMachineTemplate,
        Role::Other,
    ];
    let rules: Vec<Rule> = (0..12)
        .map(|i| {
            let role = roles[i % roles.len()];
            rule(
                &format!("{}/rule-{i:02}", role.as_str()),
                &format!("Rule number {i} holds"),
                if i % 3 == 0 {
                    Level::Should
                } else {
                    Level::Must
                },
                &[role],
                RuleKind::Static,
            )
        })
        .collect();
    let mut columns = Vec::new();
    let mut results = Vec::new();
    for k in 0..kinds {
        let role = roles[k % roles.len()];
        for contract in [B1, B2] {
            let c = col(
                "bigcloud",
                &format!("BigCloudThing{k:02}"),
                role,
                contract,
                false,
            );
            for r in rules.iter().filter(|r| r.roles.contains(&role)) {
                let outcome = if k % 10 == 0 && contract == B2 {
                    Outcome::Fail
                } else {
                    Outcome::Pass
                };
                let mut res = result(&r.id, &c, r.level, Phase::Static, outcome);
                if outcome == Outcome::Fail {
                    res.reason = Some("field missing".into());
                }
                results.push(res);
            }
            columns.push(c);
        }
    }
    Matrix {
        context: context(),
        rules,
        columns,
        results,
        problems: Vec::new(),
        notes: Vec::new(),
        scenarios: Vec::new(),
    }
}

/// A `check --embedded --crds … --provider-cmd …` without `--sample` for one kind: every static
/// cell passes, AcmeMachine's lifecycle rule was judged (pass), AcmeCluster's lifecycle rules
/// skipped "no sample object" (one MUST, one SHOULD), another skipped for another reason; the
/// mock baseline passed. No failure, but not PASS: inconclusive, exit 3.
pub fn no_sample() -> Matrix {
    use capi_conformance::report::model::NO_SAMPLE_REASON;
    let cluster = col("acme", "AcmeCluster", Role::InfraCluster, B2, false);
    let machine = col("acme", "AcmeMachine", Role::InfraMachine, B2, false);
    let mock_cluster = col("mock", "MockCluster", Role::InfraCluster, B2, true);
    let label = rule(
        "all/crd-contract-label",
        "CRD carries the contract label",
        Level::Must,
        &[Role::InfraCluster, Role::InfraMachine],
        RuleKind::Static,
    );
    let ready = rule(
        "infra-cluster/provisioned",
        "InfraCluster reports provisioned",
        Level::Must,
        &[Role::InfraCluster],
        RuleKind::Scenario,
    );
    let paused = rule(
        "infra-cluster/pause",
        "InfraCluster honours pause",
        Level::Should,
        &[Role::InfraCluster],
        RuleKind::Scenario,
    );
    let pid = rule(
        "infra-machine/provider-id",
        "InfraMachine sets spec.providerID",
        Level::Must,
        &[Role::InfraMachine],
        RuleKind::Scenario,
    );
    let addresses = rule(
        "infra-machine/addresses",
        "InfraMachine reports addresses",
        Level::May,
        &[Role::InfraMachine],
        RuleKind::Scenario,
    );
    let lc = |r: &Rule, c: &Column, o: Outcome, why: Option<&str>| {
        let mut x = result(&r.id, c, r.level, Phase::Lifecycle, o);
        x.reason = why.map(str::to_string);
        x
    };
    let results = vec![
        result(
            &label.id,
            &cluster,
            Level::Must,
            Phase::Static,
            Outcome::Pass,
        ),
        result(
            &label.id,
            &machine,
            Level::Must,
            Phase::Static,
            Outcome::Pass,
        ),
        lc(&ready, &cluster, Outcome::Skip, Some(NO_SAMPLE_REASON)),
        lc(&ready, &mock_cluster, Outcome::Pass, None),
        lc(&paused, &cluster, Outcome::Skip, Some(NO_SAMPLE_REASON)),
        lc(&pid, &machine, Outcome::Pass, None),
        lc(
            &addresses,
            &machine,
            Outcome::Skip,
            Some("not driven by SC-inframachine (needs a workload cluster or real infrastructure)"),
        ),
    ];
    Matrix {
        context: context(),
        rules: vec![label, ready, paused, pid, addresses],
        columns: vec![cluster, machine, mock_cluster],
        results,
        problems: Vec::new(),
        notes: Vec::new(),
        scenarios: Vec::new(),
    }
}

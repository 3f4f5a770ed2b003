//! Helpers: `check` in-process from command-line words, matrices made comparable.

#![allow(dead_code)]

use capi_conformance::cli::{CheckArgs, Cli, Command};
use capi_conformance::commands::check::embedded_matrix;
use capi_conformance::report::Matrix;
use clap::Parser;

/// The determinism test compares whole histories (what the provider wrote, in order), which a
/// machine loaded by this binary's other tests (server faults, process kills, every run at
/// full speed on 2 cores) changes: a provider answering slower than the windows leaves a
/// different, equally valid history. It runs alone; the other tests share the machine.
static MACHINE: tokio::sync::RwLock<()> = tokio::sync::RwLock::const_new(());

/// Held by a test that may run beside the others.
pub async fn sharing_the_machine() -> tokio::sync::RwLockReadGuard<'static, ()> {
    MACHINE.read().await
}

/// [`sharing_the_machine`] for a test outside a runtime.
pub fn sharing_the_machine_blocking() -> tokio::sync::RwLockReadGuard<'static, ()> {
    MACHINE.blocking_read()
}

/// Held by the test that must have the machine to itself.
pub async fn alone_on_the_machine() -> tokio::sync::RwLockWriteGuard<'static, ()> {
    MACHINE.write().await
}

pub fn check_args(words: &[&str]) -> CheckArgs {
    let mut argv = vec!["capi-conformance", "check"];
    argv.extend_from_slice(words);
    match Cli::try_parse_from(argv).unwrap().command {
        Command::Check(a) => *a,
        _ => unreachable!(),
    }
}

/// `check --embedded <words>` in-process.
pub async fn embedded(words: &[&str]) -> anyhow::Result<Matrix> {
    let mut w = vec!["--embedded", "--progress", "never"];
    w.extend_from_slice(words);
    embedded_matrix(&check_args(&w), "").await
}

/// The matrix with everything run-specific removed (timings, start time, run id).
pub fn comparable(m: &Matrix) -> Matrix {
    let mut m = m.without_timings();
    m.context.run_id = None;
    m
}

/// [`comparable`] without the scenarios' timelines: for runs under server faults, where the
/// verdicts and steps must match the clean run's but the timelines need not. Injected latency
/// and throttling delay the controllers, so an object the tool deletes right after a
/// must-not-act check may be gone before the provider first reconciled it (no finalizer or
/// condition in that run's timeline), and a dropped or expired watch resumes past events of an
/// object already gone.
pub fn comparable_verdicts(m: &Matrix) -> Matrix {
    let mut m = comparable(m);
    for s in &mut m.scenarios {
        s.timeline.clear();
    }
    m
}

/// A readable list of what differs between two comparable matrices.
pub fn differences(a: &Matrix, b: &Matrix) -> Vec<String> {
    let mut out = Vec::new();
    for r in a.results.iter().filter(|r| !b.results.contains(r)) {
        out.push(format!(
            "first only: {} {} {:?} {:?}",
            r.rule_id,
            r.column.id(),
            r.outcome,
            r.reason
        ));
    }
    for r in b.results.iter().filter(|r| !a.results.contains(r)) {
        out.push(format!(
            "second only: {} {} {:?} {:?}",
            r.rule_id,
            r.column.id(),
            r.outcome,
            r.reason
        ));
    }
    if a.scenarios != b.scenarios {
        out.push("scenario records differ".into());
        out.extend(record_differences(a, b));
    }
    if out.is_empty() && a != b {
        out.push("matrices differ outside results and scenarios".into());
    }
    out
}

/// Which scenario records differ, and how (steps, timeline entries only in one of them).
fn record_differences(a: &Matrix, b: &Matrix) -> Vec<String> {
    let mut out = Vec::new();
    let key = |r: &capi_conformance::report::ScenarioRecord| (r.scenario.clone(), r.column.id());
    for ra in &a.scenarios {
        let Some(rb) = b.scenarios.iter().find(|rb| key(rb) == key(ra)) else {
            out.push(format!("first only: record {:?}", key(ra)));
            continue;
        };
        if ra == rb {
            continue;
        }
        if ra.steps != rb.steps {
            out.push(format!("{:?}: steps differ", key(ra)));
        }
        let show = |e: &capi_conformance::report::TimelineEntry| {
            format!("{} {} {:?}", e.object, e.event, e.changed)
        };
        for e in ra.timeline.iter().filter(|e| !rb.timeline.contains(e)) {
            out.push(format!("{:?}: first only: {}", key(ra), show(e)));
        }
        for e in rb.timeline.iter().filter(|e| !ra.timeline.contains(e)) {
            out.push(format!("{:?}: second only: {}", key(ra), show(e)));
        }
        // The whole history of each object whose entries differ, in both runs, to read why.
        let objects: std::collections::BTreeSet<&str> = ra
            .timeline
            .iter()
            .filter(|e| !rb.timeline.contains(e))
            .chain(rb.timeline.iter().filter(|e| !ra.timeline.contains(e)))
            .map(|e| e.object.as_str())
            .collect();
        for o in objects {
            for (which, r) in [("first", ra), ("second", rb)] {
                let history: Vec<String> = r
                    .timeline
                    .iter()
                    .filter(|e| e.object == o)
                    .map(|e| format!("{} {:?}", e.event, e.changed))
                    .collect();
                out.push(format!(
                    "{:?}: {which} history of {o}: {history:#?}",
                    key(ra)
                ));
            }
        }
    }
    for rb in &b.scenarios {
        if !a.scenarios.iter().any(|ra| key(ra) == key(rb)) {
            out.push(format!("second only: record {:?}", key(rb)));
        }
    }
    out
}

/// `check --embedded <words>` in-process on `server` (which the test inspects afterwards).
pub async fn embedded_on(
    server: &capi_conformance::apiserver::EmbeddedServer,
    words: &[&str],
    target_faults: &str,
) -> anyhow::Result<Matrix> {
    let mut w = vec!["--embedded", "--progress", "never"];
    w.extend_from_slice(words);
    capi_conformance::commands::check::embedded_matrix_on(server, &check_args(&w), target_faults)
        .await
}

pub fn new_server() -> capi_conformance::apiserver::EmbeddedServer {
    capi_conformance::apiserver::EmbeddedServer::new(
        capi_conformance::apiserver::ServerOptions::default(),
    )
}

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_capi-conformance")
}

/// Every object carrying the run label (any run): namespaces plus the kinds `cleanup` knows
/// (CAPI core, Secrets, every CRD with a contract label, every cluster-scoped CRD).
pub async fn labelled_objects(client: &kube::Client) -> Vec<String> {
    use capi_conformance::scenarios::RUN_LABEL;
    use kube::api::{Api, DynamicObject, ListParams};
    let mut kinds = capi_conformance::commands::cleanup::resources(client)
        .await
        .unwrap();
    kinds.extend(
        capi_conformance::commands::cleanup::cluster_scoped_resources(client)
            .await
            .unwrap(),
    );
    kinds.push(kube::discovery::ApiResource {
        group: String::new(),
        version: "v1".into(),
        api_version: "v1".into(),
        kind: "Namespace".into(),
        plural: "namespaces".into(),
    });
    let mut out = Vec::new();
    for k in kinds {
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &k);
        let list = api
            .list(&ListParams::default().labels(RUN_LABEL))
            .await
            .unwrap();
        out.extend(list.items.into_iter().map(|o| {
            format!(
                "{} {}/{}",
                k.kind,
                o.metadata.namespace.unwrap_or_default(),
                o.metadata.name.unwrap_or_default()
            )
        }));
    }
    out
}

/// A pseudo-random number (no RNG crate in dev-deps): clock nanoseconds mixed with `salt`.
pub fn random(salt: u64) -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let mut x = nanos ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^ (x >> 33)
}

/// The `n` longest steps of the target's scenarios, longest first, as `duration scenario column
/// step`: how long the provider made the tool wait (what step deadlines must
/// cover).
pub fn longest_steps(m: &Matrix, n: usize) -> Vec<String> {
    let mut steps: Vec<(u64, String)> = m
        .scenarios
        .iter()
        .filter(|r| !r.column.baseline)
        .flat_map(|r| {
            r.steps.iter().map(move |s| {
                (
                    s.duration_ms.unwrap_or(0),
                    format!("{} {} {}", r.scenario, r.column.id(), s.name),
                )
            })
        })
        .collect();
    steps.sort_by_key(|s| std::cmp::Reverse(s.0));
    steps
        .into_iter()
        .take(n)
        .map(|(ms, s)| format!("{ms} ms {s}"))
        .collect()
}

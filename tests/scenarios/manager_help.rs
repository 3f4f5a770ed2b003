//! `all/multi-instance-flags` from the manager's own `--help`: `check --embedded
//! --provider-cmd` runs each command with `--help` appended and judges its usage text (whatever
//! its exit code); `--manager-help FILE` stands in for a manager the tool cannot run.

use super::common::{check_args, embedded};
use capi_conformance::report::{Matrix, Outcome};

/// Our conformant v1beta2 components with the manager's `--namespace` and `--watch-filter`
/// args taken out (the flags are opt-in: a Deployment need not set them).
fn components_without_the_flags(dir: &std::path::Path) -> std::path::PathBuf {
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/conformant-v1beta2/infrastructure-components.yaml");
    let text = std::fs::read_to_string(&fixture).unwrap();
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| {
            let t = l.trim_start();
            !(t.starts_with("- --namespace=") || t.starts_with("- --watch-filter="))
        })
        .collect();
    assert!(
        kept.len() + 2 == text.lines().count(),
        "both args were in the fixture"
    );
    let out = dir.join("components.yaml");
    std::fs::write(&out, kept.join("\n")).unwrap();
    out
}

/// The provider's `all/multi-instance-flags` cell (outcome, reason, evidence messages).
fn flags_cell(m: &Matrix) -> (Outcome, String, Vec<String>) {
    let r = m
        .results
        .iter()
        .find(|r| {
            r.rule_id == "all/multi-instance-flags"
                && r.column.provider.as_str() == "infrastructure-foo"
        })
        .expect("the provider's all/multi-instance-flags cell");
    (
        r.outcome,
        r.reason.clone().unwrap_or_default(),
        r.evidence.iter().map(|e| e.message.clone()).collect(),
    )
}

/// `check --embedded --static-only` of those components with `cmd` as the manager (and
/// `extra` words).
async fn judged_with(cmd: &str, extra: &[&str]) -> (Outcome, String, Vec<String>) {
    flags_cell(&judged_matrix(cmd, extra).await)
}

/// The whole matrix of [`judged_with`]'s run.
async fn judged_matrix(cmd: &str, extra: &[&str]) -> Matrix {
    let dir = tempfile::tempdir().unwrap();
    let components = components_without_the_flags(dir.path());
    let mut words = vec![
        "--static-only",
        "--rules",
        "all/multi-instance-flags",
        "--crds",
        components.to_str().unwrap(),
        "--provider-cmd",
        cmd,
    ];
    words.extend_from_slice(extra);
    embedded(&words, "").await
}

/// A usage text listing both flags passes, whatever the exit code (pflag exits 2 after its
/// usage, Go's flag package 0); one lacking a flag fails, naming the command and the flag.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_managers_own_help_decides_the_multi_instance_flags() {
    // `#` comments out the `--help` the run appends: these stand-ins print a fixed usage.
    let both =
        "printf 'Usage of manager:\\n  --namespace string\\n  --watch-filter string\\n'; exit 2 #";
    let (outcome, reason, evidence) = judged_with(both, &[]).await;
    assert_eq!(outcome, Outcome::Pass, "{reason} {evidence:?}");
    assert!(
        evidence
            .iter()
            .any(|e| e.contains("--help output of `printf")),
        "{evidence:?}"
    );
    let lacking = "printf 'Usage of manager:\\n  -namespace string\\n  -leader-elect\\n' #";
    let m = judged_matrix(lacking, &[]).await;
    let (outcome, reason, _) = flags_cell(&m);
    assert_eq!(outcome, Outcome::Fail, "{reason}");
    assert!(reason.contains("does not list --watch-filter"), "{reason}");
    // The manager is the provider's (its Deployment carries cluster.x-k8s.io/provider:
    // infrastructure-foo): the columns of the other providers in the run (the tool's own core
    // and mock kinds) are not judged by its usage text.
    let others: Vec<_> = m
        .results
        .iter()
        .filter(|r| {
            r.rule_id == "all/multi-instance-flags"
                && r.column.provider.as_str() != "infrastructure-foo"
        })
        .collect();
    assert!(!others.is_empty(), "the run has other providers' columns");
    for r in others {
        assert_eq!(
            r.outcome,
            Outcome::Skip,
            "{}: {:?}",
            r.column.provider,
            r.reason
        );
        assert!(
            r.reason
                .as_deref()
                .unwrap_or_default()
                .contains("no Deployment of provider"),
            "{:?}",
            r.reason
        );
    }
}

/// A command that prints no usage leaves the rule inconclusive, saying why; `--manager-help
/// FILE` is used instead of running the manager.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_usage_text_the_rule_is_inconclusive_and_manager_help_wins() {
    let (outcome, reason, _) = judged_with("true #", &[]).await;
    assert_eq!(outcome, Outcome::Inconclusive, "{reason}");
    assert!(
        reason.contains("printed no usage text") && reason.contains("--manager-help FILE"),
        "{reason}"
    );
    let dir = tempfile::tempdir().unwrap();
    let help = dir.path().join("help.txt");
    std::fs::write(&help, "  --namespace string\n  --watch-filter string\n").unwrap();
    let (outcome, reason, evidence) =
        judged_with("true #", &["--manager-help", help.to_str().unwrap()]).await;
    assert_eq!(outcome, Outcome::Pass, "{reason}");
    assert!(
        evidence
            .iter()
            .any(|e| e.contains("(--manager-help)") || e.contains("--help output lists")),
        "{evidence:?}"
    );
    // The same flags are parsed the same way without --embedded: no manager runs there.
    let args = check_args(&["--static-only", "--provider-cmd", "true #"]);
    assert!(args.options().unwrap().statics.manager_help_runs.is_empty());
}

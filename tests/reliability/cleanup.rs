//! Item 3: nothing labelled is left after a rule failure, a step timeout, a provider crash and
//! SIGINT at random moments; `cleanup --run ID | --all` removes what a SIGKILLed run left.

use super::common::{bin, embedded_on, labelled_objects, new_server, random};
use super::serve;
use super::signals::{sigint, wait_until_catching_sigint};
use capi_conformance::client_retry::RetryingClient;
use capi_conformance::report::{Outcome, Verdict};
use capi_conformance::scenarios::RUN_LABEL;
use std::process::Command;
use std::time::{Duration, Instant};

fn lifecycle_outcomes(m: &capi_conformance::report::Matrix) -> Vec<Outcome> {
    m.results
        .iter()
        .filter(|r| {
            r.phase == capi_conformance::report::Phase::Lifecycle
                && !r.column.baseline
                && r.rule_id != "all/rbac-aggregation"
        })
        .map(|r| r.outcome)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rule_failure_leaves_nothing_behind() {
    let _shared = super::common::sharing_the_machine().await;
    let server = new_server();
    let m = embedded_on(
        &server,
        &["--scenarios", "SC-inframachine"],
        "infra-machine/provider-id",
    )
    .await
    .unwrap();
    assert_eq!(m.verdict(), Verdict::Fail);
    let left = labelled_objects(&server.retrying_client()).await;
    assert!(left.is_empty(), "left after a rule failure: {left:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn step_timeout_with_a_provider_that_never_acts_leaves_nothing_behind() {
    let _shared = super::common::sharing_the_machine().await;
    let dir = tempfile::tempdir().unwrap();
    let server = new_server();
    let report_dir = dir.path().display().to_string();
    // The shell forks the "provider" (no exec): stopping the shell alone would orphan it.
    let marker = format!("120.{}", std::process::id());
    let cmd = format!("sleep {marker}; exit 0");
    // The stand-in has no --help of its own: its usage is given, not asked for.
    let help = dir.path().join("help.txt");
    std::fs::write(&help, "  --namespace string\n  --watch-filter string\n").unwrap();
    let m = embedded_on(
        &server,
        &[
            "--scenarios",
            "SC-inframachine",
            "--timeout",
            "1s",
            "--provider-cmd",
            &cmd,
            "--manager-help",
            help.to_str().unwrap(),
            "--report-dir",
            &report_dir,
        ],
        "",
    )
    .await
    .unwrap();
    let outcomes = lifecycle_outcomes(&m);
    assert!(outcomes.contains(&Outcome::Fail), "{outcomes:?}");
    assert_ne!(m.verdict(), Verdict::Pass);
    let left = labelled_objects(&server.retrying_client()).await;
    assert!(left.is_empty(), "left after a step timeout: {left:?}");
    let survivors = processes_with_argument(&marker);
    assert!(
        survivors.is_empty(),
        "--provider-cmd processes left running: {survivors:?}"
    );
}

/// Ctrl-C twice aborts at once (130), but the `--provider-cmd` provider does not outlive the
/// tool, even one that ignores SIGTERM (so the first Ctrl-C's cleanup is still waiting for it).
#[test]
fn second_sigint_aborts_and_takes_the_provider_along() {
    let _shared = super::common::sharing_the_machine_blocking();
    let marker = format!("121.{}", std::process::id());
    let cmd = format!("trap '' TERM; sleep {marker}; exit 0");
    // The stand-in has no --help of its own: its usage is given, not asked for (the first
    // process with the marker is then the provider itself).
    let dir = tempfile::tempdir().unwrap();
    let help = dir.path().join("help.txt");
    std::fs::write(&help, "  --namespace string\n  --watch-filter string\n").unwrap();
    let check = Command::new(bin())
        .args([
            "check",
            "--embedded",
            "--scenarios",
            "SC-inframachine",
            "--timeout",
            "60s",
            "--provider-cmd",
            &cmd,
            "--manager-help",
            help.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut check = check;
    let deadline = Instant::now() + Duration::from_secs(60);
    while processes_with_argument(&marker).is_empty() {
        let ended = check.try_wait().unwrap();
        if ended.is_some() || Instant::now() > deadline {
            let _ = check.kill();
            panic!("the provider never started (the run: {ended:?})");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    sigint(&check);
    std::thread::sleep(Duration::from_millis(300));
    sigint(&check);
    let out = check.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut survivors = processes_with_argument(&marker);
    while !survivors.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        survivors = processes_with_argument(&marker);
    }
    for pid in &survivors {
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
    assert!(
        survivors.is_empty(),
        "--provider-cmd processes left running after the abort: {survivors:?}"
    );
}

/// Pids of live processes with `arg` among their arguments (Linux /proc).
fn processes_with_argument(arg: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let zombie = std::fs::read_to_string(entry.path().join("stat")).is_ok_and(|s| {
            s.rsplit(')')
                .next()
                .is_some_and(|r| r.trim_start().starts_with('Z'))
        });
        if !zombie && cmdline.split(|b| *b == 0).any(|a| a == arg.as_bytes()) {
            out.push(pid);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_process_crash_mid_run_leaves_nothing_behind() {
    let _shared = super::common::sharing_the_machine().await;
    let dir = tempfile::tempdir().unwrap();
    let server = new_server();
    let report_dir = dir.path().display().to_string();
    // The mock as the provider process, killed (SIGKILL: its finalizers stay) 1 s in; the
    // 1.5 s quiet windows keep the scripts running well past that moment.
    let cmd = format!(
        "{} mock-provider run --kubeconfig {{kubeconfig}} --watch-namespace {{namespace}} & p=$!; sleep 1; kill -9 $p; exit 1",
        bin()
    );
    let m = embedded_on(
        &server,
        &[
            "--scenarios",
            "SC-infracluster,SC-inframachine",
            "--timeout",
            "2s",
            "--quiet-window",
            "1500ms",
            "--provider-cmd",
            &cmd,
            "--report-dir",
            &report_dir,
        ],
        "",
    )
    .await
    .unwrap();
    assert_ne!(m.verdict(), Verdict::Pass);
    let left = labelled_objects(&server.retrying_client()).await;
    assert!(left.is_empty(), "left after the provider crashed: {left:?}");
}

/// Kill moments: 5 by default, `RELIABILITY_KILLS` for more (`scripts/kill-test.sh N`).
fn kills() -> u64 {
    std::env::var("RELIABILITY_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_at_random_moments_leaves_nothing_behind() {
    let _shared = super::common::sharing_the_machine().await;
    let dir = tempfile::tempdir().unwrap();
    let s = serve::start(dir.path());
    let client = serve::client(&s.kubeconfig).await;
    let mut interrupted = 0;
    for i in 0..kills() {
        let delay = Duration::from_millis(random(i) % 3000);
        let mut check = serve::spawn_check(&s.kubeconfig);
        // The moments count from when the process handles Ctrl-C (exec and runtime start
        // before that can take long on a loaded machine; a signal then kills by default).
        assert!(
            wait_until_catching_sigint(check.id(), Duration::from_secs(60)),
            "kill {i}: check never installed its Ctrl-C handling"
        );
        tokio::time::sleep(delay).await;
        let finished_first = check.try_wait().unwrap().is_some();
        if !finished_first {
            sigint(&check);
            interrupted += 1;
        }
        let out = check.wait_with_output().unwrap();
        let code = out.status.code();
        // Never killed by the signal; an interrupted run never reports a passing verdict.
        assert!(code.is_some(), "kill {i} at {delay:?}: {:?}", out.status);
        if !finished_first {
            assert_ne!(code, Some(0), "kill {i} at {delay:?} reported a pass");
        }
        let left = labelled_objects(&client).await;
        assert!(
            left.is_empty(),
            "kill {i}: left after SIGINT at {delay:?}: {left:?}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    println!(
        "{interrupted} of {} runs interrupted, zero leftovers",
        kills()
    );
    assert!(interrupted > 0);
}

/// Ctrl-C right after the run's first object appears, while it is still setting up (RBAC,
/// baseline namespace: slow here, every request takes 150 ms), is handled like any other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_while_the_run_sets_up_leaves_nothing_behind() {
    let _shared = super::common::sharing_the_machine().await;
    use futures::TryStreamExt;
    use k8s_openapi::api::core::v1::Namespace;
    use kube::runtime::watcher;
    let dir = tempfile::tempdir().unwrap();
    let s = serve::start_with_faults(dir.path(), Some("latency=150ms"));
    let client = serve::client(&s.kubeconfig).await;
    let namespaces: kube::Api<Namespace> = kube::Api::all(client.clone());
    let mut created = std::pin::pin!(watcher(
        namespaces,
        watcher::Config::default().labels(RUN_LABEL)
    ));
    // The watch is established (initial list done) before the run starts.
    while !matches!(
        created.try_next().await.unwrap(),
        Some(watcher::Event::InitDone)
    ) {}
    let check = serve::spawn_check(&s.kubeconfig);
    let first = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            match created.try_next().await.unwrap() {
                Some(watcher::Event::Apply(ns)) => break ns.metadata.name,
                Some(_) => {}
                None => panic!("the namespace watch ended"),
            }
        }
    })
    .await
    .expect("the run created no namespace within 60 s");
    sigint(&check);
    let out = check.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code().is_some_and(|c| c != 0),
        "SIGINT after {first:?} appeared: {:?}\n{stderr}",
        out.status
    );
    let left = labelled_objects(&client).await;
    assert!(
        left.is_empty(),
        "left after SIGINT during setup: {left:?}\n{stderr}"
    );
}

/// Starts a run and SIGKILLs it once it has created labelled objects; returns its run id and
/// what it left.
async fn killed_run(kubeconfig: &std::path::Path, client: &kube::Client) -> (String, Vec<String>) {
    let before = labelled_objects(client).await;
    let mut check = serve::spawn_check(kubeconfig);
    let deadline = Instant::now() + Duration::from_secs(60);
    let left = loop {
        let now = labelled_objects(client).await;
        let new: Vec<String> = now.into_iter().filter(|o| !before.contains(o)).collect();
        if new.len() >= 4 {
            break new;
        }
        assert!(Instant::now() < deadline, "the run created nothing");
        assert!(check.try_wait().unwrap().is_none(), "the run ended early");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    check.kill().unwrap();
    check.wait().unwrap();
    let ns: kube::Api<k8s_openapi::api::core::v1::Namespace> = kube::Api::all(client.clone());
    let run = ns
        .list(&kube::api::ListParams::default().labels(RUN_LABEL))
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|n| n.metadata.labels?.get(RUN_LABEL).cloned())
        .find(|id| left.iter().any(|o| o.contains(id.as_str())))
        .expect("a labelled namespace of the killed run");
    (run, left)
}

fn cleanup(kubeconfig: &std::path::Path, which: &[&str]) -> String {
    let out = Command::new(bin())
        .arg("cleanup")
        .args(which)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cleanup_removes_what_a_sigkilled_run_left_and_says_what() {
    let _shared = super::common::sharing_the_machine().await;
    let dir = tempfile::tempdir().unwrap();
    let s = serve::start(dir.path());
    let client = serve::client(&s.kubeconfig).await;
    for which in ["--run", "--all"] {
        let (run, _) = killed_run(&s.kubeconfig, &client).await;
        let still: Vec<String> = labelled_objects(&client)
            .await
            .into_iter()
            .filter(|o| o.contains(run.as_str()))
            .collect();
        assert!(!still.is_empty(), "SIGKILL left nothing to clean");
        let args: Vec<&str> = if which == "--run" {
            vec!["--run", run.as_str()]
        } else {
            vec!["--all"]
        };
        let said = cleanup(&s.kubeconfig, &args);
        assert!(
            said.contains(&format!("removed: Namespace capi-conformance-{run}")),
            "{said}"
        );
        // Every namespaced object the run left is named (`Kind ns/name`).
        for o in still.iter().filter(|o| !o.starts_with("Namespace ")) {
            assert!(
                said.contains(&format!("removed: {o}")),
                "{o} not in:\n{said}"
            );
        }
        let after = labelled_objects(&client).await;
        assert!(after.is_empty(), "left after cleanup {which}: {after:?}");
    }
}

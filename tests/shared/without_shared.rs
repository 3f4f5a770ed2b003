//! A fresh clone, simulated in place: runs some tests of this very test binary again in a child
//! process whose shared data directory (`CAPI_CONFORMANCE_SHARED_DIR`) is an empty directory.
//! Without `CAPI_CONFORMANCE_REQUIRE_SHARED` they pass, each printing its skip line; with it set
//! to 1 they fail. (`.ci/run` also does this on a real `git clone` with no `../shared` beside it.)

use crate::shared_data::{REQUIRE_SHARED, SHARED_DIR};
use std::process::{Command, Output};

fn run(filter: &str, empty: &std::path::Path, require: bool) -> Output {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([filter, "--test-threads", "2"])
        .env(SHARED_DIR, empty)
        .env_remove(REQUIRE_SHARED);
    if require {
        cmd.env(REQUIRE_SHARED, "1");
    }
    cmd.output().unwrap()
}

/// Counts `N <word>` in libtest's `test result:` line.
fn result_count(stdout: &str, word: &str) -> usize {
    let Some(line) = stdout.lines().find(|l| l.starts_with("test result:")) else {
        return 0;
    };
    line.split(';')
        .filter_map(|part| {
            let part = part.trim().trim_start_matches("test result: ok. ");
            let part = part.trim_start_matches("test result: FAILED. ");
            let (n, w) = part.split_once(' ')?;
            (w.trim() == word).then(|| n.parse().ok()).flatten()
        })
        .next()
        .unwrap_or(0)
}

/// The tests matching `filter` that need shared data (`needing` of them, by name) skip with one
/// line each and pass without it, and fail when it is required.
pub fn assert_skip_or_fail_without_shared(filter: &str, needing: &[&str]) {
    let empty = tempfile::tempdir().unwrap();
    let out = run(filter, empty.path(), false);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(result_count(&stdout, "passed") >= needing.len(), "{stdout}");
    for test in needing {
        let lines = stderr
            .lines()
            .filter(|l| l.starts_with(&format!("skipped: {test}")))
            .count();
        assert_eq!(lines, 1, "{test}: one skip line expected\n{stderr}");
    }

    let out = run(filter, empty.path(), true);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(!out.status.success(), "{stdout}\n{stderr}");
    assert_eq!(
        result_count(&stdout, "failed"),
        needing.len(),
        "{stdout}\n{stderr}"
    );
    // libtest prints a failing test's panic message with its captured output, on stdout.
    assert!(
        stdout.contains(&format!("{REQUIRE_SHARED}=1 requires it")),
        "{stdout}"
    );
}

/// The tests matching `filter` pass with no shared data even when it is required (they need none).
#[allow(dead_code)] // not every test binary including this module has such tests
pub fn assert_passes_without_shared(filter: &str) {
    let empty = tempfile::tempdir().unwrap();
    let out = run(filter, empty.path(), true);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(result_count(&stdout, "passed") >= 1, "{stdout}");
}

//! Python tools no one here wrote, used as independent readers of our output (e.g. junitparser
//! for JUnit). `.ci/run` installs them in a virtualenv (`target/ci-venv`) and points
//! `CAPI_CONFORMANCE_PYTHON` at its interpreter; without them a test prints one skip line, and
//! with `CAPI_CONFORMANCE_REQUIRE_PYTHON_TOOLS=1` (set by `.ci/run`) it fails instead.

use std::io::Write;
use std::path::PathBuf;
use std::process::Command;

/// The interpreter to use (else `python3` on PATH).
pub const PYTHON_ENV: &str = "CAPI_CONFORMANCE_PYTHON";
/// Turns a missing Python tool into a failure.
pub const REQUIRE_PYTHON_TOOLS: &str = "CAPI_CONFORMANCE_REQUIRE_PYTHON_TOOLS";

/// A Python interpreter that can `import module`, or `None` after the skip line of `test`.
pub fn python_with(module: &str, test: &str) -> Option<PathBuf> {
    let python = std::env::var_os(PYTHON_ENV)
        .filter(|p| !p.is_empty())
        .map_or_else(|| PathBuf::from("python3"), PathBuf::from);
    let ok = Command::new(&python)
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        return Some(python);
    }
    let why = format!(
        "{}: cannot import the Python module {module} (pip install {module}, or set {PYTHON_ENV})",
        python.display()
    );
    if std::env::var(REQUIRE_PYTHON_TOOLS).as_deref() == Ok("1") {
        panic!("{test}: {why}, and {REQUIRE_PYTHON_TOOLS}=1 requires it");
    }
    // Past libtest's capture, so the skip shows in every `cargo test` output.
    let _ = writeln!(std::io::stderr(), "skipped: {test}: {why}");
    None
}

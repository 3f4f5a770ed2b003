//! The real-provider data beside the project (`../shared`: `corpus/`, `repos/`).
//!
//! A fresh clone has no `../shared`: tests that need it print one line naming what they skipped
//! and why, and pass. CI sets `CAPI_CONFORMANCE_REQUIRE_SHARED=1`, under which a missing file or
//! directory fails the test instead, so a CI that lost its data never stays green having tested
//! nothing real. `CAPI_CONFORMANCE_SHARED_DIR` names another directory to read instead of
//! `../shared` (the fresh-clone test points it at an empty one).

use std::path::PathBuf;

/// The environment variable that turns a missing `../shared` path into a test failure.
pub const REQUIRE_SHARED: &str = "CAPI_CONFORMANCE_REQUIRE_SHARED";
/// The environment variable naming the shared directory instead of `../shared`.
pub const SHARED_DIR: &str = "CAPI_CONFORMANCE_SHARED_DIR";

/// The shared directory: `$CAPI_CONFORMANCE_SHARED_DIR`, else `../shared` from the project root
/// (the workspace root: the crates in `crates/` read the same directory).
pub fn shared_root() -> PathBuf {
    match std::env::var_os(SHARED_DIR) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => project_root().join("../shared"),
    }
}

/// The workspace root: the nearest directory at or above this crate's holding `Cargo.lock`.
pub fn project_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .find(|d| d.join("Cargo.lock").is_file())
        .unwrap_or(&manifest)
        .to_path_buf()
}

/// `<shared>/<rel>` (the path need not exist).
pub fn shared_path(rel: &str) -> PathBuf {
    shared_root().join(rel)
}

/// `<shared>/<rel>` when it exists. Otherwise prints `skipped: <what>: <path> not found …` (to
/// the process's stderr, uncaptured) and returns `None`, or panics when [`REQUIRE_SHARED`] is `1`.
pub fn shared_or_skip(rel: &str, what: &str) -> Option<PathBuf> {
    let path = shared_path(rel);
    if path.exists() {
        return Some(path);
    }
    if std::env::var(REQUIRE_SHARED).as_deref() == Ok("1") {
        panic!(
            "{what}: {} not found, and {REQUIRE_SHARED}=1 requires it",
            path.display()
        );
    }
    // Straight to the process's stderr, not through `eprintln!`, which the test harness captures
    // for passing tests: the skip line shows in every `cargo test` output.
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "skipped: {what}: {} not found (no shared data; set {REQUIRE_SHARED}=1 to fail instead)",
        path.display()
    );
    None
}

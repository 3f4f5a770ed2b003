//! The real-provider data beside the project (`../shared`: `corpus/`, `repos/`, `flect-golden.tsv`).
//!
//! A fresh clone has no `../shared`: tests that need it print one line naming what they skipped
//! and why, and pass. CI sets `CAPI_CONFORMANCE_REQUIRE_SHARED=1`, under which a missing file or
//! directory fails the test instead, so a CI that lost its data never stays green having tested
//! nothing real.

use std::path::PathBuf;

/// The environment variable that turns a missing `../shared` path into a test failure.
pub const REQUIRE_SHARED: &str = "CAPI_CONFORMANCE_REQUIRE_SHARED";

/// `../shared/<rel>` from the project root (the path need not exist).
pub fn shared_path(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared")
        .join(rel)
}

/// `../shared/<rel>` when it exists. Otherwise prints `skipped: <what>: <path> not found …` and
/// returns `None`, or panics when [`REQUIRE_SHARED`] is `1`.
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
    eprintln!(
        "skipped: {what}: {} not found (no ../shared beside the project; set {REQUIRE_SHARED}=1 to fail instead)",
        path.display()
    );
    None
}

//! Shared by the test binaries that start `capi-conformance serve --load`: writes JSON objects as
//! one multi-document YAML manifest.

use serde_json::Value;
use std::path::{Path, PathBuf};

/// Writes `docs` to `dir/name` as `---`-separated documents (JSON is YAML) and returns the path.
pub fn write_docs(dir: &Path, name: &str, docs: &[Value]) -> PathBuf {
    let path = dir.join(name);
    let text: String = docs
        .iter()
        .map(|d| format!("---\n{}\n", serde_json::to_string(d).unwrap()))
        .collect();
    std::fs::write(&path, text).unwrap();
    path
}

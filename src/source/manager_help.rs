//! `--manager-help FILE`: the provider manager's `--help` output, an input of the static rule
//! `all/multi-instance-flags` beside the manifests.

use anyhow::Context;
use std::path::Path;

/// Largest `--manager-help` file read (a `--help` text is a few KiB).
const MAX_MANAGER_HELP: u64 = 1 << 20;

/// Reads `--manager-help FILE`, if given.
pub fn read(path: Option<&Path>) -> anyhow::Result<Option<String>> {
    let Some(path) = path else {
        return Ok(None);
    };
    let len = std::fs::metadata(path)
        .with_context(|| format!("--manager-help {}: cannot read the file", path.display()))?
        .len();
    if len > MAX_MANAGER_HELP {
        anyhow::bail!(
            "--manager-help {}: {len} bytes is not a --help text (limit {MAX_MANAGER_HELP} bytes)",
            path.display()
        );
    }
    let bytes = std::fs::read(path)
        .with_context(|| format!("--manager-help {}: cannot read the file", path.display()))?;
    Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
}

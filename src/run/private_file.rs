//! A file only the current user can read, removed when dropped: the `--provider-cmd`
//! kubeconfig (it holds the embedded server's bearer token, so it never goes to the report
//! directory, which CI jobs publish).

use anyhow::Context;
use std::io::Write;
use std::path::{Path, PathBuf};

pub struct PrivateFile(PathBuf);

impl PrivateFile {
    /// Writes `contents` to `$TMPDIR/<name>` with mode 0600.
    pub fn create(name: &str, contents: &str) -> anyhow::Result<Self> {
        let path = std::env::temp_dir().join(crate::report::paths::safe_component(name));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut f = options
            .open(&path)
            .with_context(|| format!("cannot create {}", path.display()))?;
        f.write_all(contents.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
        Ok(PrivateFile(path))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for PrivateFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_and_removed_on_drop() {
        let f = PrivateFile::create("capi-conformance-private-file-test", "token: x").unwrap();
        let path = f.path().to_path_buf();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "token: x");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o077, 0, "readable by others: {mode:o}");
        }
        drop(f);
        assert!(!path.exists());
    }
}

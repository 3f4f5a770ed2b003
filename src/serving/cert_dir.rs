//! The `{webhook-cert-dir}` of a `--provider-cmd` run: `tls.crt`, `tls.key` (controller-runtime's
//! default file names) and `ca.crt` (cert-manager's Secret key) in a private temporary directory
//! (mode 0700, files 0600), removed when dropped. The key never goes to the report directory.

use super::certs::ServingCerts;
use std::io::Write;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// File names in the directory.
pub const CERT_FILE: &str = "tls.crt";
pub const KEY_FILE: &str = "tls.key";
pub const CA_FILE: &str = "ca.crt";

#[derive(Debug, Error)]
#[error("cannot write the webhook serving certificate to {path}: {source}")]
pub struct CertDirError {
    path: String,
    source: std::io::Error,
}

/// A private directory holding a serving certificate; removed (with its files) on drop.
#[derive(Debug)]
pub struct CertDir {
    dir: tempfile::TempDir,
}

impl CertDir {
    /// Creates `$TMPDIR/<prefix>XXXXXX` (0700) and writes the three files (0600).
    pub fn create(prefix: &str, certs: &ServingCerts) -> Result<Self, CertDirError> {
        let err = |path: &Path, source| CertDirError {
            path: path.display().to_string(),
            source,
        };
        let tmp = std::env::temp_dir();
        let dir = tempfile::Builder::new()
            .prefix(prefix)
            .tempdir()
            .map_err(|e| err(&tmp, e))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700))
                .map_err(|e| err(dir.path(), e))?;
        }
        for (name, contents) in [
            (CERT_FILE, &certs.cert_pem),
            (KEY_FILE, &certs.key_pem),
            (CA_FILE, &certs.ca_pem),
        ] {
            let path = dir.path().join(name);
            write_private(&path, contents).map_err(|e| err(&path, e))?;
        }
        Ok(CertDir { dir })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn cert_path(&self) -> PathBuf {
        self.dir.path().join(CERT_FILE)
    }

    pub fn key_path(&self) -> PathBuf {
        self.dir.path().join(KEY_FILE)
    }

    pub fn ca_path(&self) -> PathBuf {
        self.dir.path().join(CA_FILE)
    }
}

fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut f = options.open(path)?;
    f.write_all(contents.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_files_removed_on_drop() {
        let certs = ServingCerts::generate(&[]).unwrap();
        let dir = CertDir::create("capi-conformance-certdir-test-", &certs).unwrap();
        let path = dir.path().to_path_buf();
        assert_eq!(
            std::fs::read_to_string(dir.cert_path()).unwrap(),
            certs.cert_pem
        );
        assert_eq!(
            std::fs::read_to_string(dir.key_path()).unwrap(),
            certs.key_pem
        );
        assert_eq!(
            std::fs::read_to_string(dir.ca_path()).unwrap(),
            certs.ca_pem
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&path), 0o700);
            assert_eq!(mode(&dir.key_path()), 0o600);
        }
        drop(dir);
        assert!(!path.exists());
    }
}

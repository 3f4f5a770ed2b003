//! `check --sonobuoy`: the Sonobuoy plugin contract. The JUnit report goes into Sonobuoy's
//! results directory (`$SONOBUOY_RESULTS_DIR`, else `/tmp/sonobuoy/results`), then the `done`
//! file there names it: Sonobuoy's worker, beside the plugin in the pod, waits for `done` and
//! sends the file it names to the aggregator. The `done` file is written last and atomically
//! (a rename), so the worker never reads a partial path or a partial report. A run that ends in
//! an error (exit 2) reports that error as one JUnit `<error>` test case, so the Sonobuoy run
//! ends with the reason instead of waiting for its timeout.

use anyhow::Context;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The environment variable Sonobuoy sets in the plugin container.
pub const RESULTS_DIR_ENV: &str = "SONOBUOY_RESULTS_DIR";
/// Sonobuoy's default results directory.
pub const DEFAULT_RESULTS_DIR: &str = "/tmp/sonobuoy/results";
/// The JUnit file written into the results directory.
pub const JUNIT_FILE: &str = "capi-conformance-junit.xml";
/// The file Sonobuoy's worker waits for.
pub const DONE_FILE: &str = "done";

/// Sonobuoy mode: where the results go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sonobuoy {
    dir: PathBuf,
    junit: PathBuf,
}

impl Sonobuoy {
    /// Sonobuoy mode when `--sonobuoy` is given or `SONOBUOY_RESULTS_DIR` is set (`env`); the
    /// JUnit file is `--junit` when given (it must lie in the results directory: the worker
    /// sees only that volume), else [`JUNIT_FILE`] there.
    pub fn resolve(
        flag: bool,
        env: Option<OsString>,
        junit: Option<&Path>,
    ) -> anyhow::Result<Option<Self>> {
        let env = env.filter(|d| !d.is_empty());
        if !flag && env.is_none() {
            return Ok(None);
        }
        let dir = env
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(DEFAULT_RESULTS_DIR));
        let dir = std::path::absolute(&dir)
            .with_context(|| format!("Sonobuoy results directory {}", dir.display()))?;
        let junit = match junit {
            None => dir.join(JUNIT_FILE),
            Some(path) => {
                let path = std::path::absolute(path)
                    .with_context(|| format!("--junit {}", path.display()))?;
                if !path.starts_with(&dir) {
                    anyhow::bail!(
                        "--junit {} is outside Sonobuoy's results directory {} ({RESULTS_DIR_ENV}); Sonobuoy's worker only sees that directory",
                        path.display(),
                        dir.display()
                    );
                }
                path
            }
        };
        Ok(Some(Sonobuoy { dir, junit }))
    }

    /// The JUnit report's path (absolute).
    pub fn junit(&self) -> &Path {
        &self.junit
    }

    /// The results directory (absolute).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes the `done` file naming the JUnit report (after the report is complete).
    pub fn done(&self) -> anyhow::Result<()> {
        std::fs::create_dir_all(&self.dir)
            .with_context(|| format!("cannot create {}", self.dir.display()))?;
        let tmp = self.dir.join(".done.tmp");
        let done = self.dir.join(DONE_FILE);
        // The bare path, no newline: Sonobuoy's older workers open the file's content as is.
        std::fs::write(&tmp, self.junit.as_os_str().as_encoded_bytes())
            .with_context(|| format!("cannot write {}", tmp.display()))?;
        std::fs::rename(&tmp, &done).with_context(|| format!("cannot write {}", done.display()))
    }

    /// The run failed with `err` (exit 2): a JUnit report with that error, then `done`.
    pub fn failed(&self, err: &anyhow::Error) -> anyhow::Result<()> {
        std::fs::write(&self.junit, error_junit(&format!("{err:#}"))?)
            .with_context(|| format!("cannot write {}", self.junit.display()))?;
        self.done()
    }
}

/// One suite, one test case `capi-conformance check` with an `<error>`: the run gave no verdict.
fn error_junit(message: &str) -> anyhow::Result<String> {
    use junit_report::{Duration, ReportBuilder, TestCase, TestSuiteBuilder};
    let case = TestCase::error(
        "capi-conformance check",
        Duration::ZERO,
        "error",
        &format!("the run ended without a verdict (exit 2): {message}"),
    );
    let suite = TestSuiteBuilder::new("capi-conformance")
        .add_testcase(case)
        .build();
    let report = ReportBuilder::new().add_testsuite(suite).build();
    let mut out = Vec::new();
    report
        .write_xml(&mut out)
        .context("cannot render the error as JUnit")?;
    String::from_utf8(out).context("JUnit is not UTF-8")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_without_flag_or_environment() {
        assert_eq!(Sonobuoy::resolve(false, None, None).unwrap(), None);
        assert_eq!(
            Sonobuoy::resolve(false, Some(OsString::new()), None).unwrap(),
            None
        );
    }

    #[test]
    fn flag_defaults_to_sonobuoys_results_dir_and_env_wins() {
        let s = Sonobuoy::resolve(true, None, None).unwrap().unwrap();
        assert_eq!(s.dir(), Path::new(DEFAULT_RESULTS_DIR));
        assert_eq!(s.junit(), Path::new(DEFAULT_RESULTS_DIR).join(JUNIT_FILE));
        let dir = tempfile::tempdir().unwrap();
        let s = Sonobuoy::resolve(false, Some(dir.path().into()), None)
            .unwrap()
            .unwrap();
        assert_eq!(s.dir(), dir.path());
    }

    #[test]
    fn junit_outside_the_results_dir_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let err = Sonobuoy::resolve(true, Some(dir.path().into()), Some(Path::new("/x.xml")))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("outside Sonobuoy's results directory"),
            "{err}"
        );
        let inside = dir.path().join("sub/j.xml");
        let s = Sonobuoy::resolve(true, Some(dir.path().into()), Some(&inside))
            .unwrap()
            .unwrap();
        assert_eq!(s.junit(), inside);
    }

    #[test]
    fn done_names_the_report_and_errors_become_a_junit_error() {
        let dir = tempfile::tempdir().unwrap();
        let s = Sonobuoy::resolve(true, Some(dir.path().into()), None)
            .unwrap()
            .unwrap();
        s.failed(&anyhow::anyhow!(
            "forbidden: list customresourcedefinitions"
        ))
        .unwrap();
        let done = std::fs::read_to_string(dir.path().join(DONE_FILE)).unwrap();
        assert_eq!(done, s.junit().to_str().unwrap());
        let xml = std::fs::read_to_string(s.junit()).unwrap();
        assert!(xml.contains("<error"), "{xml}");
        assert!(
            xml.contains("forbidden: list customresourcedefinitions"),
            "{xml}"
        );
        assert!(!dir.path().join(".done.tmp").exists());
    }
}

//! The provider manager's `--help` output, an input of the static rule
//! `all/multi-instance-flags` beside the manifests: `--manager-help FILE`, or (`check --embedded
//! --provider-cmd`, without that flag) what the tool gets by running each manager's command line
//! with `--help` ([`help_runs`]).

use anyhow::Context;
use capi_contract::checks::HelpRun;
use std::path::Path;
use std::time::Duration;

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

/// How long a manager's `--help` run may take (a Go manager prints its usage in milliseconds;
/// one that ignores `--help` and starts is stopped then).
pub const HELP_TIMEOUT: Duration = Duration::from_secs(5);

/// What a `--help` run may print at most (more is cut; a usage text is a few KiB).
const MAX_HELP_OUTPUT: usize = 1 << 20;

/// Runs each `--provider-cmd` with `--help` (for `all/multi-instance-flags`): the command by
/// `sh -c`, as the run starts it, its placeholders filled with values that reach nothing (no
/// kubeconfig, no cluster: `KUBECONFIG` and `HOME` point into an empty temporary directory and
/// the in-cluster variables are unset, so a manager that ignores `--help` cannot reach a
/// cluster), stopped with its process group after [`HELP_TIMEOUT`]. pflag exits 2 after its
/// usage, Go's `flag` package 0: the output decides, not the exit code.
pub fn help_runs(commands: &[String]) -> Vec<HelpRun> {
    commands.iter().map(|c| help_run(c, HELP_TIMEOUT)).collect()
}

/// [`help_runs`] for one command, with `timeout`.
pub fn help_run(command: &str, timeout: Duration) -> HelpRun {
    let empty = match tempfile::Builder::new()
        .prefix("capi-conformance-help-")
        .tempdir()
    {
        Ok(d) => d,
        Err(e) => {
            return HelpRun {
                command: format!("{command} --help"),
                output: Err(format!("cannot create a temporary directory: {e}")),
            };
        }
    };
    let dir = empty.path().display().to_string();
    let placeholders = crate::serving::Placeholders {
        kubeconfig: format!("{dir}/kubeconfig"),
        namespace: "capi-conformance-help".into(),
        watch_filter: "capi-conformance-help".into(),
        webhook_cert_dir: Some(dir.clone()),
        webhook_cert_path: Some(format!("{dir}/tls.crt")),
        webhook_key_path: Some(format!("{dir}/tls.key")),
        webhook_ca_path: Some(format!("{dir}/ca.crt")),
        webhook_port: Some(9443),
        metrics_addr: Some(std::net::SocketAddr::from(([127, 0, 0, 1], 0))),
        health_addr: Some(std::net::SocketAddr::from(([127, 0, 0, 1], 0))),
    };
    let line = format!("{} --help", placeholders.expand(command));
    let shown = format!("{command} --help");
    let output = run_for_help(&line, empty.path(), timeout).and_then(|(code, text)| {
        if is_usage(&text) {
            Ok(text)
        } else {
            Err(format!(
                "printed no usage text ({}; {} bytes of output)",
                code.map_or_else(|| "no exit code".to_string(), |c| format!("exit {c}")),
                text.len()
            ))
        }
    });
    HelpRun {
        command: shown,
        output,
    }
}

/// Whether `text` reads as a command's usage: it says "usage" and lists a flag.
fn is_usage(text: &str) -> bool {
    text.to_ascii_lowercase().contains("usage")
        && text
            .split_whitespace()
            .any(|t| t.starts_with('-') && t.trim_start_matches('-').len() > 1)
}

/// Runs `line` by `sh -c` in its own process group, with `home` as `HOME` and a `KUBECONFIG`
/// in it that does not exist; returns its exit code and what it printed (stdout, then stderr).
fn run_for_help(
    line: &str,
    home: &std::path::Path,
    timeout: Duration,
) -> Result<(Option<i32>, String), String> {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    let mut child = std::process::Command::new("sh")
        .arg("-c")
        .arg(line)
        .env("HOME", home)
        .env("KUBECONFIG", home.join("kubeconfig"))
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env_remove("KUBERNETES_SERVICE_PORT")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start it: {e}"))?;
    let group = child.id();
    // An interrupt while it runs takes it along (the run has not started anything else yet).
    let _abort = crate::run::interrupt::kill_group_on_abort(group);
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(p) = pipe {
                let _ = p.take(MAX_HELP_OUTPUT as u64).read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = reader(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = reader(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let deadline = std::time::Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            _ => break None,
        }
    };
    // Whatever it started goes with it (a manager that ignored --help, `go run`'s child).
    crate::run::interrupt::signal_group("KILL", group);
    let _ = child.wait();
    let mut text = out.join().unwrap_or_default();
    text.extend(err.join().unwrap_or_default());
    let text = String::from_utf8_lossy(&text).into_owned();
    match status {
        Some(s) => Ok((s.code(), text)),
        None => Err(format!(
            "did not exit within {}s ({} bytes of output)",
            timeout.as_secs(),
            text.len()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// pflag prints its usage and exits 2, Go's flag package exits 0: both are usage texts.
    #[test]
    fn a_help_run_takes_the_usage_whatever_the_exit_code() {
        for code in [0, 2] {
            let cmd = format!(
                "printf 'Usage of manager:\\n      --namespace string\\n' >&2; exit {code} #"
            );
            let run = help_run(&cmd, Duration::from_secs(5));
            assert!(run.command.ends_with(" --help"));
            let text = run.output.expect("a usage text");
            assert!(text.contains("--namespace"), "{text}");
        }
    }

    /// A command that ignores `--help` and keeps running is stopped at the timeout; one that
    /// prints no usage gives none. Neither has a usage text, and the placeholders are filled
    /// with nothing a cluster answers at.
    #[test]
    fn no_usage_text_is_no_help_output() {
        let started = std::time::Instant::now();
        let run = help_run("sleep 30 #", Duration::from_millis(300));
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(run.output.unwrap_err().contains("did not exit"));
        let run = help_run("echo {kubeconfig} $KUBECONFIG #", Duration::from_secs(5));
        let why = run.output.unwrap_err();
        assert!(why.contains("no usage text"), "{why}");
    }
}

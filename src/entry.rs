//! The process entry shared by both binaries: `capi-conformance` and the kubectl plugin
//! `kubectl-capi_conformance` (`cargo install --path .` installs both).
//!
//! kubectl finds a plugin by its file name (`kubectl-capi_conformance` answers
//! `kubectl capi-conformance`) and passes it only argv and the environment, so the one thing the
//! plugin does differently is how it names itself in help, usage and version lines.

use crate::cli::Cli;
use clap::{CommandFactory, FromArgMatches};
use std::ffi::OsString;
use std::path::Path;

/// The name the tool gives itself when kubectl runs it as a plugin.
pub const PLUGIN_DISPLAY_NAME: &str = "kubectl capi-conformance";

/// Environment variable kubectl sets for the plugins it runs (newer kubectl versions).
pub const KUBECTL_PLUGINS_CALLER: &str = "KUBECTL_PLUGINS_CALLER";

/// True when the process runs as a kubectl plugin: its executable's file name starts with
/// `kubectl-`, or kubectl announced itself through `KUBECTL_PLUGINS_CALLER`.
pub fn invoked_as_plugin(argv0: Option<&OsString>, plugins_caller: Option<&OsString>) -> bool {
    let by_name = argv0
        .and_then(|arg| Path::new(arg).file_name())
        .and_then(|name| name.to_str())
        .is_some_and(|name| name.starts_with("kubectl-"));
    let by_env = plugins_caller.is_some_and(|value| !value.is_empty());
    by_name || by_env
}

/// The clap command, renamed to `kubectl capi-conformance` for the plugin.
pub fn command(invoked_as_plugin: bool) -> clap::Command {
    let command = Cli::command();
    if invoked_as_plugin {
        command
            .bin_name(PLUGIN_DISPLAY_NAME)
            .display_name(PLUGIN_DISPLAY_NAME)
    } else {
        command
    }
}

/// Parses `args` (argv, program name first) as either binary would.
pub fn parse_from<I, T>(args: I, invoked_as_plugin: bool) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let mut command = command(invoked_as_plugin);
    let matches = command.try_get_matches_from_mut(args)?;
    Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut command))
}

/// The whole `main` of both binaries: parse argv, run the command on a tokio runtime, exit with
/// its code (clap's own exit for `--help`/usage errors; 2 for errors that reach here).
pub fn run_main(invoked_as_plugin: bool) -> ! {
    let cli = match parse_from(std::env::args_os(), invoked_as_plugin) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            std::process::exit(2);
        }
    };
    let code = match runtime.block_on(crate::commands::run(cli)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            2
        }
    };
    std::process::exit(code);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(s: &str) -> OsString {
        OsString::from(s)
    }

    #[test]
    fn plugin_detected_by_executable_name() {
        assert!(invoked_as_plugin(
            Some(&os("/usr/local/bin/kubectl-capi_conformance")),
            None
        ));
        assert!(invoked_as_plugin(
            Some(&os("kubectl-capi_conformance")),
            None
        ));
    }

    #[test]
    fn plugin_detected_by_kubectl_env() {
        assert!(invoked_as_plugin(
            Some(&os("/usr/bin/capi-conformance")),
            Some(&os("/usr/bin/kubectl"))
        ));
        assert!(!invoked_as_plugin(
            Some(&os("/usr/bin/capi-conformance")),
            Some(&os(""))
        ));
    }

    #[test]
    fn plain_binary_is_not_a_plugin() {
        assert!(!invoked_as_plugin(
            Some(&os("/usr/bin/capi-conformance")),
            None
        ));
        assert!(!invoked_as_plugin(
            Some(&os("/opt/kubectl/capi-conformance")),
            None
        ));
        assert!(!invoked_as_plugin(None, None));
    }

    #[test]
    fn plugin_help_and_usage_say_kubectl_capi_conformance() {
        let help = command(true).render_help().to_string();
        assert!(
            help.contains("Usage: kubectl capi-conformance <COMMAND>"),
            "{help}"
        );
        let err = parse_from(["kubectl-capi_conformance", "lint"], true).unwrap_err();
        let text = err.render().to_string();
        assert!(text.contains("kubectl capi-conformance lint"), "{text}");
        let version = command(true).render_version();
        assert!(
            version.starts_with("kubectl capi-conformance "),
            "{version}"
        );
    }

    #[test]
    fn plain_help_says_capi_conformance() {
        let help = command(false).render_help().to_string();
        assert!(help.contains("Usage: capi-conformance <COMMAND>"), "{help}");
        assert!(!help.contains("kubectl capi-conformance"), "{help}");
    }

    #[test]
    fn both_binaries_parse_the_same_arguments() {
        for plugin in [false, true] {
            let cli = parse_from(["x", "rbac", "--static-only"], plugin).unwrap();
            assert!(matches!(
                cli.command,
                crate::cli::Command::Rbac(ref args) if args.static_only
            ));
        }
    }

    #[test]
    fn progress_is_one_of_three_modes_and_a_bad_one_is_a_clap_error() {
        use crate::run::progress::Progress;
        let mode = |cli: crate::cli::Cli| match cli.command {
            crate::cli::Command::Check(args) => Progress::from(args.progress),
            _ => unreachable!("parsed a check"),
        };
        let cli = parse_from(["x", "check", "--embedded"], false).unwrap();
        assert_eq!(mode(cli), Progress::Auto);
        for (flag, want) in [("always", Progress::Always), ("never", Progress::Never)] {
            let cli = parse_from(["x", "check", "--progress", flag], false).unwrap();
            assert_eq!(mode(cli), want);
        }
        let err = parse_from(["x", "check", "--progress", "sometimes"], false).unwrap_err();
        let text = err.render().to_string();
        assert!(
            text.contains("invalid value 'sometimes' for '--progress <PROGRESS>'")
                && text.contains("[possible values: auto, always, never]"),
            "{text}"
        );
    }
}

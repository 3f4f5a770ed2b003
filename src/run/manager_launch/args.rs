//! The manager container's `args` merged into the user's command: appended after it, except
//! what the command sets itself (flag names compared, `--x=v` and `--x v` alike, one or two
//! dashes), with the run's own values in place of in-cluster ones (addresses, ports, the webhook
//! certificate directory, the kubeconfig), leader election off, and in-cluster file paths (under
//! the container's `volumeMounts`) dropped.

/// A value the run supplies in place of the Deployment's in-cluster one: the `--provider-cmd`
/// placeholder of the same meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunValue {
    MetricsAddr,
    HealthAddr,
    WebhookPort,
    WebhookCertDir,
    Kubeconfig,
}

impl RunValue {
    /// The placeholder whose value the run gives.
    pub fn placeholder(self) -> &'static str {
        match self {
            RunValue::MetricsAddr => "{metrics-addr}",
            RunValue::HealthAddr => "{health-addr}",
            RunValue::WebhookPort => "{webhook-port}",
            RunValue::WebhookCertDir => "{webhook-cert-dir}",
            RunValue::Kubeconfig => "{kubeconfig}",
        }
    }

    /// The run's value for flag `name`, if the flag is one the run supplies.
    pub fn for_flag(name: &str) -> Option<RunValue> {
        Some(match name {
            // CAPI's managers; kubebuilder's scaffolds (v2/v3 `--metrics-addr`,
            // `--metrics-bind-address`); older CAPI providers (`--metrics-bind-addr`).
            "diagnostics-address"
            | "metrics-bind-address"
            | "metrics-bind-addr"
            | "metrics-addr"
            | "metrics-address" => RunValue::MetricsAddr,
            "health-addr"
            | "health-probe-bind-address"
            | "health-probe-addr"
            | "health-address" => RunValue::HealthAddr,
            "webhook-port" => RunValue::WebhookPort,
            // kubebuilder v4's `--webhook-cert-path` is a directory too.
            "webhook-cert-dir" | "webhook-cert-path" => RunValue::WebhookCertDir,
            "kubeconfig" => RunValue::Kubeconfig,
            _ => return None,
        })
    }
}

/// A word appended to the command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Word {
    /// As the Deployment has it (after `$(VAR)` expansion).
    Literal(String),
    /// `prefix` followed by the run's value (`--diagnostics-address=` + `{metrics-addr}`).
    Run { prefix: String, value: RunValue },
}

impl Word {
    /// The word with the run's value written as its placeholder (for notes and tests).
    pub fn shown(&self) -> String {
        match self {
            Word::Literal(w) => w.clone(),
            Word::Run { prefix, value } => format!("{prefix}{}", value.placeholder()),
        }
    }
}

/// What became of the Deployment's args, for the report note.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ArgsOutcome {
    /// Appended, in order.
    pub words: Vec<Word>,
    /// `(the Deployment's arg, what replaced it, why)`.
    pub replaced: Vec<(String, String, String)>,
    /// Flags the command sets itself (the Deployment's are not appended).
    pub kept: Vec<String>,
    /// `(the Deployment's arg, why it was not appended)`.
    pub dropped: Vec<(String, String)>,
}

/// One flag (or positional word) of the Deployment's argv.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Arg {
    /// The flag as written, dashes included (`--x`); `None`: a positional word.
    flag: Option<String>,
    /// Its value: inline (`--x=v`), the next word (`--x v`) or none (a boolean flag).
    value: Option<String>,
    inline: bool,
}

impl Arg {
    fn name(&self) -> Option<&str> {
        self.flag.as_deref().map(|f| f.trim_start_matches('-'))
    }

    fn text(&self) -> String {
        match (&self.flag, &self.value) {
            (Some(f), Some(v)) if self.inline => format!("{f}={v}"),
            (Some(f), Some(v)) => format!("{f} {v}"),
            (Some(f), None) => f.clone(),
            (None, v) => v.clone().unwrap_or_default(),
        }
    }

    fn words(&self) -> Vec<String> {
        match (&self.flag, &self.value) {
            (Some(f), Some(v)) if self.inline => vec![format!("{f}={v}")],
            (Some(f), Some(v)) => vec![f.clone(), v.clone()],
            (Some(f), None) => vec![f.clone()],
            (None, v) => vec![v.clone().unwrap_or_default()],
        }
    }
}

/// `word`'s flag and inline value: `--x=v` → (`--x`, `v`), `-x` → (`-x`, none); `None` for a
/// positional word, `-`, `--` and negative numbers.
pub fn split_flag(word: &str) -> Option<(&str, Option<&str>)> {
    let body = word.strip_prefix("--").or_else(|| word.strip_prefix('-'))?;
    if body.is_empty() || body.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return None;
    }
    Some(match word.split_once('=') {
        Some((f, v)) => (f, Some(v)),
        None => (word, None),
    })
}

/// The flag name (dashes stripped) of `word`, if it is a flag.
pub fn flag_name(word: &str) -> Option<&str> {
    split_flag(word).map(|(f, _)| f.trim_start_matches('-'))
}

/// Reads an argv: `--x=v`; `--x v` when the next word is not a flag; `--x`; positional words;
/// everything after `--` positional.
fn read_args(words: &[String]) -> Vec<Arg> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut positional_only = false;
    while i < words.len() {
        let w = &words[i];
        i += 1;
        if positional_only {
            out.push(positional(w));
            continue;
        }
        if w == "--" {
            positional_only = true;
            continue;
        }
        match split_flag(w) {
            Some((flag, Some(v))) => out.push(Arg {
                flag: Some(flag.to_string()),
                value: Some(v.to_string()),
                inline: true,
            }),
            Some((flag, None)) => {
                let value = words
                    .get(i)
                    .filter(|n| n.as_str() != "--" && split_flag(n).is_none())
                    .cloned();
                if value.is_some() {
                    i += 1;
                }
                out.push(Arg {
                    flag: Some(flag.to_string()),
                    value,
                    inline: false,
                });
            }
            None => out.push(positional(w)),
        }
    }
    out
}

fn positional(w: &str) -> Arg {
    Arg {
        flag: None,
        value: Some(w.to_string()),
        inline: false,
    }
}

/// Leader election flags (controller-runtime scaffolds and CAPI).
const LEADER_ELECTION: [&str; 3] = ["leader-elect", "enable-leader-election", "leader-election"];

/// Why leader election is turned off.
pub const LEADER_ELECTION_WHY: &str = "one manager runs, outside a cluster: controller-runtime's leader election needs the in-cluster namespace file (\"unable to find leader election namespace: not running in-cluster\")";

/// Merges the Deployment's argv (`command[1..]` then `args`) into a command that sets the flags
/// `command_flags` (names, dashes stripped). `mounts`: the container's volume mount paths.
pub fn merge(
    deployment_args: &[String],
    command_flags: &[String],
    mounts: &[String],
) -> ArgsOutcome {
    let mut out = ArgsOutcome::default();
    for arg in read_args(deployment_args) {
        let text = arg.text();
        let Some(name) = arg.name().map(str::to_string) else {
            out.dropped.push((
                text,
                "a positional argument (the command names its own program and subcommands)".into(),
            ));
            continue;
        };
        if command_flags.contains(&name) {
            out.kept.push(format!("--{name}"));
            continue;
        }
        let flag = arg.flag.clone().unwrap_or_default();
        if let Some(value) = RunValue::for_flag(&name) {
            let (words, now) = if arg.inline || arg.value.is_none() {
                let w = Word::Run {
                    prefix: format!("{flag}="),
                    value,
                };
                let shown = w.shown();
                (vec![w], shown)
            } else {
                (
                    vec![
                        Word::Literal(flag.clone()),
                        Word::Run {
                            prefix: String::new(),
                            value,
                        },
                    ],
                    format!("{flag} {}", value.placeholder()),
                )
            };
            out.words.extend(words);
            out.replaced
                .push((text, now, "the run's own value".to_string()));
            continue;
        }
        if LEADER_ELECTION.contains(&name.as_str()) {
            if arg.value.as_deref() == Some("false") {
                out.words.push(Word::Literal(text));
            } else {
                let now = format!("{flag}=false");
                out.words.push(Word::Literal(now.clone()));
                out.replaced.push((text, now, LEADER_ELECTION_WHY.into()));
            }
            continue;
        }
        if let Some(mount) = arg
            .value
            .as_deref()
            .and_then(|v| mounts.iter().find(|m| under(v, m)))
        {
            out.dropped.push((
                text,
                format!("a path in the Pod's volume mounted at {mount}, which does not exist here"),
            ));
            continue;
        }
        out.words.extend(arg.words().into_iter().map(Word::Literal));
    }
    out
}

/// Whether `path` is `mount` or below it.
fn under(path: &str, mount: &str) -> bool {
    let mount = mount.trim_end_matches('/');
    !mount.is_empty()
        && path
            .strip_prefix(mount)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|w| w.to_string()).collect()
    }

    fn shown(o: &ArgsOutcome) -> Vec<String> {
        o.words.iter().map(Word::shown).collect()
    }

    #[test]
    fn flags_and_values_in_both_forms() {
        assert_eq!(split_flag("--x=1"), Some(("--x", Some("1"))));
        assert_eq!(split_flag("-x"), Some(("-x", None)));
        assert_eq!(split_flag("--x="), Some(("--x", Some(""))));
        assert_eq!(split_flag("-1"), None);
        assert_eq!(split_flag("--"), None);
        assert_eq!(split_flag("run"), None);
        let args = read_args(&s(&["run", "--a", "1", "--b", "--c=2", "--", "--d"]));
        let texts: Vec<String> = args.iter().map(Arg::text).collect();
        assert_eq!(texts, ["run", "--a 1", "--b", "--c=2", "--d"]);
        assert_eq!(args[4].flag, None);
    }

    #[test]
    fn capi_manager_args_become_the_runs() {
        let deployment = s(&[
            "--leader-elect",
            "--diagnostics-address=:8443",
            "--insecure-diagnostics=false",
            "--feature-gates=MachinePool=true,ClusterTopology=true",
            "--health-addr",
            ":9440",
        ]);
        let o = merge(&deployment, &s(&["kubeconfig", "webhook-port"]), &[]);
        assert_eq!(
            shown(&o),
            [
                "--leader-elect=false",
                "--diagnostics-address={metrics-addr}",
                "--insecure-diagnostics=false",
                "--feature-gates=MachinePool=true,ClusterTopology=true",
                "--health-addr",
                "{health-addr}",
            ]
        );
        assert_eq!(o.replaced.len(), 3);
        assert_eq!(o.replaced[1].0, "--diagnostics-address=:8443");
        assert!(o.kept.is_empty() && o.dropped.is_empty());
    }

    #[test]
    fn the_commands_own_flags_win_in_either_form() {
        let deployment = s(&[
            "--diagnostics-address=:8443",
            "--webhook-port",
            "9443",
            "-v=2",
            "--leader-elect=false",
        ]);
        let o = merge(
            &deployment,
            &s(&["diagnostics-address", "webhook-port", "v"]),
            &[],
        );
        assert_eq!(shown(&o), ["--leader-elect=false"]);
        assert!(o.replaced.is_empty());
        assert_eq!(o.kept, ["--diagnostics-address", "--webhook-port", "--v"]);
    }

    #[test]
    fn positional_words_and_mounted_paths_are_not_appended() {
        let deployment = s(&[
            "mock-provider",
            "run",
            "--namespace=",
            "--metrics-cert-path=/tmp/k8s-metrics-server/metrics-certs",
            "--webhook-cert-path=/tmp/k8s-webhook-server/serving-certs",
            "--config",
            "/etc/cfg/config.yaml",
            "--other=/etcx",
        ]);
        let o = merge(
            &deployment,
            &[],
            &s(&["/tmp/k8s-metrics-server/metrics-certs", "/etc/cfg/"]),
        );
        assert_eq!(
            shown(&o),
            [
                "--namespace=",
                "--webhook-cert-path={webhook-cert-dir}",
                "--other=/etcx"
            ]
        );
        let dropped: Vec<&str> = o.dropped.iter().map(|(a, _)| a.as_str()).collect();
        assert_eq!(
            dropped,
            [
                "mock-provider",
                "run",
                "--metrics-cert-path=/tmp/k8s-metrics-server/metrics-certs",
                "--config /etc/cfg/config.yaml"
            ]
        );
    }
}

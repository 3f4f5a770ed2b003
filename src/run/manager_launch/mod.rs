//! Runs a `--provider-cmd` manager as the components' Deployment runs it (`check --embedded
//! --crds … --provider-cmd …`): the manager container's `args` appended to the command, its
//! `env` given to the process, and one report note saying what was set and where it came from.
//!
//! - Which container: the provider's one Deployment (with several, the only one with a container
//!   named `manager`), its container named `manager`, else its only (first) one.
//! - [`args`]: the Deployment's flags, except those the command sets itself, with the run's own
//!   values in place of in-cluster ones and leader election off.
//! - [`env`]: `value`, `valueFrom` (`fieldRef`: `status.podIP` is `127.0.0.1`, a Pod name and
//!   UID of our own; Secrets and ConfigMaps of the components; `resourceFieldRef`), `envFrom`.
//!   The process's variables are the tool's environment with these over it; a variable the
//!   command assigns itself (`NAME=VALUE ./manager …`) wins, as `sh` makes it.
//! - [`shell`]: reading the command as `sh` does.
//!
//! Everything here is pure: [`ManagerLaunch::from_components`] reads documents and a command,
//! the run ([`super::embedded`]) renders the words with its placeholder values and starts the
//! process.

pub mod args;
pub mod env;
pub mod resources;
pub mod shell;

use args::{RunValue, Word};
use env::{EnvError, EnvVar, PodFacts};
use serde_json::Value;
use thiserror::Error;

/// What the run is asked: the command, and whether to take the Deployment's args and env
/// (`--no-deployment-args`, `--no-deployment-env` turn them off).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchRequest {
    pub command: String,
    pub args: bool,
    pub env: bool,
}

/// Why the manager cannot be run as its Deployment runs it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LaunchError {
    #[error(
        "Deployment {deployment} container {container}: {error}; a Pod of it would not start (CreateContainerConfigError): add the object to --crds, set the variable in --provider-cmd (NAME=VALUE before the program), or pass --no-deployment-env"
    )]
    Env {
        deployment: String,
        container: String,
        error: Box<EnvError>,
    },
}

/// How the manager is started: words appended to the command, its environment, and the note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManagerLaunch {
    /// `namespace/name` of the Deployment (empty when none was chosen).
    pub deployment: String,
    pub container: String,
    /// Appended to the command (shell-quoted when rendered).
    pub words: Vec<Word>,
    /// Set in the process's environment, over the tool's.
    pub env: Vec<EnvVar>,
    /// The report note: what was appended, replaced, kept, dropped, and set.
    pub note: String,
}

fn str_at<'a>(v: &'a Value, ptr: &str) -> &'a str {
    v.pointer(ptr).and_then(Value::as_str).unwrap_or_default()
}

fn is_deployment(v: &Value) -> bool {
    str_at(v, "/apiVersion") == "apps/v1" && str_at(v, "/kind") == "Deployment"
}

fn containers(d: &Value) -> &[Value] {
    d.pointer("/spec/template/spec/containers")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn has_manager(d: &Value) -> bool {
    containers(d)
        .iter()
        .any(|c| str_at(c, "/name") == "manager")
}

fn id(d: &Value) -> String {
    format!(
        "{}/{}",
        str_at(d, "/metadata/namespace"),
        str_at(d, "/metadata/name")
    )
}

/// The Deployment whose manager the command runs: the only one, else the only one with a
/// container named `manager`. `Err`: the candidates, when that does not decide.
fn choose(docs: &[Value]) -> Result<Option<&Value>, Vec<String>> {
    let all: Vec<&Value> = docs.iter().filter(|d| is_deployment(d)).collect();
    if all.len() <= 1 {
        return Ok(all.first().copied());
    }
    let managers: Vec<&Value> = all.iter().copied().filter(|d| has_manager(d)).collect();
    match managers.as_slice() {
        [one] => Ok(Some(one)),
        _ => Err(all.iter().map(|d| id(d)).collect()),
    }
}

/// A Pod name as a ReplicaSet would give one (`<deployment>-<hash>-<suffix>`) and a UID.
fn pod_identity(deployment: &str) -> (String, String) {
    let uid = uuid::Uuid::new_v4();
    let hex = uid.simple().to_string();
    let mut name = format!("{deployment}-{}-{}", &hex[..10], &hex[10..15]);
    name.truncate(63);
    (name.trim_end_matches('-').to_string(), uid.to_string())
}

impl ManagerLaunch {
    /// How to run `request.command` as the components' Deployment runs its manager. `None`:
    /// nothing to do (no Deployment, or both parts turned off).
    pub fn from_components(
        docs: &[Value],
        request: &LaunchRequest,
    ) -> Result<Option<ManagerLaunch>, LaunchError> {
        if !request.args && !request.env {
            return Ok(None);
        }
        let deployment = match choose(docs) {
            Ok(Some(d)) => d,
            Ok(None) => return Ok(None),
            Err(candidates) => {
                return Ok(Some(ManagerLaunch {
                    deployment: String::new(),
                    container: String::new(),
                    words: Vec::new(),
                    env: Vec::new(),
                    note: format!(
                        "--provider-cmd: the components have several Deployments ({}) and not exactly one with a container named `manager`: the command runs with neither args nor env of any of them",
                        candidates.join(", ")
                    ),
                }));
            }
        };
        let cs = containers(deployment);
        let Some(container) = cs
            .iter()
            .find(|c| str_at(c, "/name") == "manager")
            .or_else(|| cs.first())
        else {
            return Ok(None);
        };
        let namespace = match str_at(deployment, "/metadata/namespace") {
            "" => "default",
            ns => ns,
        };
        let (pod_name, uid) = pod_identity(str_at(deployment, "/metadata/name"));
        let pod_spec = deployment
            .pointer("/spec/template/spec")
            .cloned()
            .unwrap_or_default();
        let object = |key: &str| {
            deployment
                .pointer(&format!("/spec/template/metadata/{key}"))
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default()
        };
        let pod = PodFacts {
            namespace: namespace.to_string(),
            name: pod_name,
            uid,
            node_name: "capi-conformance-embedded".into(),
            service_account: match (
                str_at(&pod_spec, "/serviceAccountName"),
                str_at(&pod_spec, "/serviceAccount"),
            ) {
                ("", "") => "default".into(),
                ("", sa) | (sa, _) => sa.to_string(),
            },
            ip: "127.0.0.1".into(),
            labels: object("labels"),
            annotations: object("annotations"),
        };
        Self::for_container(&id(deployment), container, &pod, docs, request).map(Some)
    }

    /// [`Self::from_components`] for a chosen container of Pod `pod`.
    pub fn for_container(
        deployment: &str,
        container: &Value,
        pod: &PodFacts,
        docs: &[Value],
        request: &LaunchRequest,
    ) -> Result<ManagerLaunch, LaunchError> {
        let name = str_at(container, "/name").to_string();
        let command = shell::parse(&request.command);
        let env = if request.env {
            env::resolve(container, pod, docs, &command.assignments).map_err(|error| {
                LaunchError::Env {
                    deployment: deployment.to_string(),
                    container: name.clone(),
                    error: Box::new(error),
                }
            })?
        } else {
            Vec::new()
        };
        let words_of = |key: &str| -> Vec<String> {
            container
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|w| w.as_str().map_or_else(|| w.to_string(), str::to_string))
                .collect()
        };
        // `command[0]` is the program the user's command replaces; its other words are flags
        // like `args`.
        let mut argv: Vec<String> = words_of("command").into_iter().skip(1).collect();
        argv.extend(words_of("args"));
        let mounts: Vec<String> = container
            .get("volumeMounts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|m| str_at(m, "/mountPath").to_string())
            .collect();
        let mut parts: Vec<String> = Vec::new();
        let mut words = Vec::new();
        if request.args && !argv.is_empty() {
            if command.compound {
                parts.push(format!(
                    "args not appended: the command is not one simple command (a pipeline, a list or a trailing comment), where appended words would not reach the manager; the Deployment's args: {}",
                    argv.join(" ")
                ));
            } else {
                let flags: Vec<String> = command
                    .words
                    .iter()
                    .filter_map(|w| args::flag_name(w))
                    .map(str::to_string)
                    .collect();
                let merged = args::merge(&argv, &flags, &mounts);
                // The kubelet expands `$(VAR)` in args with the container's environment.
                let lookup = |n: &str| env.iter().find(|v| v.name == n).map(|v| v.value.clone());
                words = merged
                    .words
                    .iter()
                    .map(|w| match w {
                        Word::Literal(s) => Word::Literal(env::expand(s, &lookup)),
                        run => run.clone(),
                    })
                    .collect();
                parts.extend(describe_args(&merged));
            }
        }
        if !request.args && !argv.is_empty() {
            parts.push("args not appended (--no-deployment-args)".into());
        }
        if !request.env && has_env(container) {
            parts.push("env not set (--no-deployment-env)".into());
        }
        if !env.is_empty() {
            let inherited: Vec<&str> = env
                .iter()
                .filter(|v| std::env::var_os(&v.name).is_some())
                .map(|v| v.name.as_str())
                .collect();
            let mut line = format!(
                "env set: {}",
                env.iter()
                    .map(EnvVar::describe)
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            if !inherited.is_empty() {
                line.push_str(&format!(
                    " (over the tool's own environment for {})",
                    inherited.join(", ")
                ));
            }
            parts.push(line);
        }
        if !command.assignments.is_empty() {
            parts.push(format!(
                "env the command assigns itself (kept): {}",
                command.assignments.join(", ")
            ));
        }
        if parts.is_empty() {
            parts.push("nothing to add (no args or env)".into());
        }
        let note = format!(
            "--provider-cmd runs as Deployment {deployment} runs its container {name}: {}; turn off with --no-deployment-args / --no-deployment-env",
            parts.join("; ")
        );
        Ok(ManagerLaunch {
            deployment: deployment.to_string(),
            container: name,
            words,
            env,
            note,
        })
    }

    /// Whether the appended words take the run's value of `placeholder`.
    pub fn uses(&self, placeholder: &str) -> bool {
        self.words
            .iter()
            .any(|w| matches!(w, Word::Run { value, .. } if value.placeholder() == placeholder))
    }

    /// Whether the appended words take a webhook value (the certificate directory or port).
    pub fn uses_webhooks(&self) -> bool {
        self.uses(RunValue::WebhookCertDir.placeholder())
            || self.uses(RunValue::WebhookPort.placeholder())
    }

    /// `command` (placeholders already expanded) with the words appended, each shell-quoted,
    /// the run's values from `placeholders`.
    pub fn command_line(
        &self,
        command: &str,
        placeholders: &crate::serving::Placeholders,
    ) -> String {
        let mut line = command.to_string();
        for w in &self.words {
            let word = match w {
                Word::Literal(s) => s.clone(),
                Word::Run { prefix, value } => {
                    format!("{prefix}{}", placeholders.expand(value.placeholder()))
                }
            };
            line.push(' ');
            line.push_str(&shell::quote(&word));
        }
        line
    }
}

/// Whether the container declares any environment.
fn has_env(container: &Value) -> bool {
    ["env", "envFrom"].iter().any(|k| {
        container
            .get(*k)
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty())
    })
}

/// The args part of the note.
fn describe_args(m: &args::ArgsOutcome) -> Vec<String> {
    let mut parts = Vec::new();
    if !m.words.is_empty() {
        parts.push(format!(
            "args appended: {}",
            m.words
                .iter()
                .map(Word::shown)
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }
    for (was, now, why) in &m.replaced {
        parts.push(format!("{was} became {now} ({why})"));
    }
    if !m.kept.is_empty() {
        parts.push(format!(
            "the command's own {} kept (the Deployment's not appended)",
            m.kept.join(", ")
        ));
    }
    for (arg, why) in &m.dropped {
        parts.push(format!("{arg} not appended: {why}"));
    }
    parts
}

#[cfg(test)]
mod tests;

//! Which `--provider-cmd` runs which input's Deployment, and how: one provider per `--crds`
//! input, each command run as its Deployment runs the manager container.

use super::*;

/// Which `--provider-cmd` runs which Deployment, as `clusterctl init` installs providers: one
/// provider per `--crds` input. The inputs that hold a Deployment are the providers, in
/// command-line order; the i-th command runs the i-th of them. One command with one such input
/// is the common case; an input with several Deployments chooses as
/// [`crate::run::manager_launch::ManagerLaunch::from_components`] says. A command with no
/// provider left runs as written; a provider with no command is installed and not run (both
/// said in a note).
pub fn pair_commands(per_input: &[Vec<Value>], commands: usize) -> Vec<Option<usize>> {
    let providers: Vec<usize> = per_input
        .iter()
        .enumerate()
        .filter(|(_, docs)| {
            docs.iter().any(|d| {
                d.get("apiVersion").and_then(Value::as_str) == Some("apps/v1")
                    && d.get("kind").and_then(Value::as_str) == Some("Deployment")
            })
        })
        .map(|(i, _)| i)
        .collect();
    (0..commands).map(|i| providers.get(i).copied()).collect()
}

/// How each `--provider-cmd` manager runs as its components' Deployment runs it
/// ([`pair_commands`]); `None` for a command without a Deployment, or with both parts turned
/// off. The note of each says which input's Deployment it runs; the second value names the
/// inputs whose Deployment no command runs.
type Launches = (
    Vec<Option<crate::run::manager_launch::ManagerLaunch>>,
    Option<String>,
);
pub(super) fn manager_launches(
    per_input: &[Vec<Document>],
    paths: &[PathBuf],
    requests: &[crate::run::manager_launch::LaunchRequest],
) -> anyhow::Result<Launches> {
    let values: Vec<Vec<Value>> = per_input
        .iter()
        .map(|docs| docs.iter().map(|d| d.value.clone()).collect())
        .collect();
    let pairs = pair_commands(&values, requests.len());
    let mut launches = Vec::with_capacity(requests.len());
    for (request, input) in requests.iter().zip(&pairs) {
        let Some(input) = *input else {
            launches.push(None);
            continue;
        };
        let mut launch =
            crate::run::manager_launch::ManagerLaunch::from_components(&values[input], request)?;
        if let (Some(l), true) = (&mut launch, requests.len() > 1) {
            l.note = format!("from {}: {}", paths[input].display(), l.note);
        }
        launches.push(launch);
    }
    let unrun: Vec<String> = pair_commands(&values, values.len())
        .into_iter()
        .flatten()
        .skip(requests.len())
        .map(|i| paths[i].display().to_string())
        .collect();
    let unrun = (!requests.is_empty() && !unrun.is_empty()).then(|| {
        format!(
            "installed, not run (no --provider-cmd for it; give one per provider, in the order of their --crds): the Deployment of {}; nothing reconciles its kinds unless another command does",
            unrun.join(", ")
        )
    });
    Ok((launches, unrun))
}

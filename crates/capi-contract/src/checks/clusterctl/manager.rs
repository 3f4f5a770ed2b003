//! The manager Deployment's rules: its container, the namespace and multi-instance flags.

use super::*;

/// The controller containers: those named `manager`, else every Deployment container (so a
/// misnamed container is reported only by clusterctl/manager-container). Computed once per
/// evaluation ([`crate::checks::CheckCtx::manager_containers`]).
pub fn manager_containers(inv: &Inventory) -> Vec<&Value> {
    let all: Vec<&Value> = inv.deployments.iter().flat_map(containers).collect();
    let named: Vec<&Value> = all
        .iter()
        .copied()
        .filter(|c| c.get("name").and_then(Value::as_str) == Some("manager"))
        .collect();
    if named.is_empty() { all } else { named }
}

pub fn manager_container(_: &Rule, ctx: &CheckCtx) -> Finding {
    let _ = md_or_return!(ctx);
    if ctx.inv.deployments.is_empty() {
        return Finding::fail_msg("no Deployment among the inputs");
    }
    let bad: Vec<Evidence> = ctx
        .inv
        .deployments
        .iter()
        .filter(|d| {
            !containers(d)
                .iter()
                .any(|c| c.get("name").and_then(Value::as_str) == Some("manager"))
        })
        .map(|d| doc_ev(d, "no container named `manager`"))
        .collect();
    if bad.is_empty() {
        Finding::pass_msg("every Deployment has a `manager` container")
    } else {
        Finding::fail(
            "a Deployment has no container named `manager` (clusterctl waits on it)",
            bad,
        )
    }
}

fn args(c: &Value) -> Vec<&str> {
    ["args", "command"]
        .iter()
        .flat_map(|k| c.get(*k).and_then(Value::as_array).into_iter().flatten())
        .filter_map(Value::as_str)
        .collect()
}

/// Value of `--flag=value` / `--flag value` in a container's args.
fn flag_value<'a>(args: &[&'a str], flag: &str) -> Option<&'a str> {
    for (i, a) in args.iter().enumerate() {
        if *a == flag {
            return Some(args.get(i + 1).copied().unwrap_or(""));
        }
        if let Some(v) = a.strip_prefix(flag).and_then(|r| r.strip_prefix('=')) {
            return Some(v);
        }
    }
    None
}

pub fn namespace_flag(_: &Rule, ctx: &CheckCtx) -> Finding {
    let _ = md_or_return!(ctx);
    let mgrs = ctx.manager_containers;
    if mgrs.is_empty() {
        return Finding::skip("no `manager` container among the inputs");
    }
    for c in mgrs {
        if let Some(v) = flag_value(&args(c), "--namespace") {
            if v.is_empty() || v.starts_with("${") {
                return Finding::pass_msg(format!("manager args carry --namespace={v}"));
            }
            return Finding::fail_msg(format!(
                "manager args hard-code --namespace={v}; clusterctl installs providers watching all namespaces"
            ));
        }
    }
    Finding::skip(
        "the manager's args do not show --namespace; support can only be verified with `--help` or a live run",
    )
}

/// The label clusterctl puts on every object of a provider's components, naming the provider.
const PROVIDER_LABEL: &str = "cluster.x-k8s.io/provider";

/// The manager containers of `ctx`'s provider: those of the Deployments labelled
/// [`PROVIDER_LABEL`] with its name; every manager container when no Deployment carries the
/// label (a bare `config/` tree); `None` when others do and none is this provider's (its manager
/// is not among the inputs: the tool's own core and mock kinds beside a provider's components).
fn provider_managers<'a>(ctx: &CheckCtx<'a>) -> Option<Vec<&'a Value>> {
    let label = |d: &Document| {
        d.value
            .pointer("/metadata/labels")
            .and_then(|l| l.get(PROVIDER_LABEL))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    if !ctx.inv.deployments.iter().any(|d| label(d).is_some()) {
        return Some(ctx.manager_containers.to_vec());
    }
    let own: Vec<&Document> = ctx
        .inv
        .deployments
        .iter()
        .filter(|d| label(d).as_deref() == Some(ctx.provider.name.as_str()))
        .collect();
    if own.is_empty() {
        return None;
    }
    let all: Vec<&Value> = own.iter().flat_map(|d| containers(d)).collect();
    let named: Vec<&Value> = all
        .iter()
        .copied()
        .filter(|c| c.get("name").and_then(Value::as_str) == Some("manager"))
        .collect();
    Some(if named.is_empty() { all } else { named })
}

pub fn multi_instance_flags(_: &Rule, ctx: &CheckCtx) -> Finding {
    let Some(mgrs) = provider_managers(ctx) else {
        return Finding::skip(format!(
            "no Deployment of provider `{}` among the inputs (labelled {PROVIDER_LABEL}): the rule judges the manager of each provider whose Deployment is",
            ctx.provider.name
        ));
    };
    if mgrs.is_empty() {
        return Finding::skip("no `manager` container among the inputs");
    }
    let all: Vec<&str> = mgrs.iter().flat_map(|c| args(c)).collect();
    let in_args: Vec<&str> = MULTI_INSTANCE_FLAGS
        .into_iter()
        .filter(|f| flag_value(&all, f).is_none())
        .collect();
    if in_args.is_empty() {
        return Finding::pass_msg("manager args carry --namespace and --watch-filter");
    }
    // The flags are opt-in: a manager that accepts them need not set them. Only the binary's
    // `--help` output can show that it accepts them: given with --manager-help FILE, or got by
    // running the manager's command line with --help (check --embedded --provider-cmd).
    let Some(help) = ctx.opts.manager_help.as_deref() else {
        return from_help_runs(&ctx.opts.manager_help_runs, &in_args);
    };
    let missing: Vec<&str> = MULTI_INSTANCE_FLAGS
        .into_iter()
        .filter(|f| !help_lists_flag(help, f))
        .collect();
    if missing.is_empty() {
        Finding::pass_msg("the manager's --help output lists --namespace and --watch-filter")
    } else {
        Finding::fail_msg(format!(
            "the manager's --help output (--manager-help) does not list {}",
            missing.join(" or ")
        ))
    }
}

/// `all/multi-instance-flags` from the `--help` runs of the managers' command lines: a usage
/// text without a flag fails; a run without a usage text leaves the rule inconclusive (its
/// reason says why); every usage text listing both flags passes.
fn from_help_runs(runs: &[crate::checks::HelpRun], in_args: &[&str]) -> Finding {
    if runs.is_empty() {
        return Finding::inconclusive(format!(
            "manager args do not set {} (the flags are opt-in); whether the manager accepts them \
             shows only in its --help output: pass it with --manager-help FILE (check --embedded \
             --provider-cmd runs the manager with --help itself)",
            in_args.join(" or ")
        ));
    }
    let mut lacking = Vec::new();
    let mut unavailable = Vec::new();
    for run in runs {
        match &run.output {
            Ok(text) => {
                let missing: Vec<&str> = MULTI_INSTANCE_FLAGS
                    .into_iter()
                    .filter(|f| !help_lists_flag(text, f))
                    .collect();
                if !missing.is_empty() {
                    lacking.push(format!(
                        "the --help output of `{}` does not list {}",
                        run.command,
                        missing.join(" or ")
                    ));
                }
            }
            Err(why) => unavailable.push(format!("`{}`: {why}", run.command)),
        }
    }
    if !lacking.is_empty() {
        return Finding::fail_msg(lacking.join("; "));
    }
    if !unavailable.is_empty() {
        return Finding::inconclusive(format!(
            "manager args do not set {} and no --help output shows whether the manager accepts \
             them ({}); pass its --help output with --manager-help FILE",
            in_args.join(" or "),
            unavailable.join("; ")
        ));
    }
    let commands: Vec<String> = runs.iter().map(|r| format!("`{}`", r.command)).collect();
    Finding::pass_msg(format!(
        "the --help output of {} lists --namespace and --watch-filter",
        commands.join(", ")
    ))
}

const MULTI_INSTANCE_FLAGS: [&str; 2] = ["--namespace", "--watch-filter"];

/// Whether a `--help` text documents `flag` (as a whole word: `--namespace` must not match
/// `--namespace-foo`); Go's flag package prints `-flag` as well as `--flag`.
pub(super) fn help_lists_flag(help: &str, flag: &str) -> bool {
    let bare = flag.trim_start_matches('-');
    help.split(|c: char| c.is_whitespace() || matches!(c, ',' | '=' | '[' | ']'))
        .any(|tok| tok.starts_with('-') && tok.trim_start_matches('-') == bare)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::HelpRun;
    use crate::model::Outcome;

    fn run(output: Result<&str, &str>) -> HelpRun {
        HelpRun {
            command: "manager --help".into(),
            output: output.map(str::to_string).map_err(str::to_string),
        }
    }

    /// pflag's usage (`--flag type`) and Go's flag package's (`-flag type`) both count; one
    /// manager without a flag fails the rule; a run that printed no usage leaves it inconclusive.
    #[test]
    fn help_runs_decide_the_multi_instance_flags() {
        let pflag = "Usage of manager:\n      --namespace string\n      --watch-filter string\n";
        let goflag = "Usage of manager:\n  -namespace string\n  -watch-filter string\n";
        let lacking = "Usage of manager:\n      --namespace string\n      --leader-elect\n";
        let args = ["--namespace", "--watch-filter"];
        let outcome = |runs: &[HelpRun]| from_help_runs(runs, &args).outcome;
        assert_eq!(outcome(&[run(Ok(pflag)), run(Ok(goflag))]), Outcome::Pass);
        let failed = from_help_runs(&[run(Ok(pflag)), run(Ok(lacking))], &args);
        assert_eq!(failed.outcome, Outcome::Fail);
        assert!(failed.reason.unwrap().contains("--watch-filter"));
        let none = from_help_runs(&[run(Err("no usage text"))], &args);
        assert_eq!(none.outcome, Outcome::Inconclusive);
        assert!(none.reason.unwrap().contains("--manager-help FILE"));
        assert_eq!(
            outcome(&[run(Err("timed out")), run(Ok(lacking))]),
            Outcome::Fail
        );
        assert_eq!(outcome(&[]), Outcome::Inconclusive);
    }
}

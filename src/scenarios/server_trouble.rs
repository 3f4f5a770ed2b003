//! A scenario during which the API server kept failing requests past their retry budget
//! ([`crate::client_retry::trouble`]) judged nothing: its pass and fail verdicts become
//! `inconclusive` with the failing request as the cause (the provider may have been unable to
//! act, or the tool unable to see it).

use super::runner::SubjectRun;
use crate::client_retry::trouble;
use crate::report::Outcome;
use tokio::time::Instant;

/// Resources whose trouble concerns a subject's scenario: its own kind (and a template's base
/// kind) and the core objects and Secrets every scenario works with.
pub fn resources(run: &SubjectRun) -> Vec<&str> {
    let mut out = vec![run.subject.resource.plural.as_str()];
    if let Some(base) = &run.subject.base {
        out.push(base.plural.as_str());
    }
    out.extend(["clusters", "machines", "machinepools", "secrets"]);
    out
}

/// Turns the verdicts of `run` inconclusive when requests in `namespace` on its resources failed
/// past their budget since `since`.
pub fn apply(run: &mut SubjectRun, namespace: &str, since: Instant) {
    let found = trouble::in_namespace(namespace, since, &resources(run));
    let Some(first) = found.first() else {
        return;
    };
    let cause = first.describe();
    for v in run.verdicts.0.values_mut() {
        if matches!(v.outcome, Outcome::Pass | Outcome::Fail) {
            v.outcome = Outcome::Inconclusive;
            v.reason = Some(format!("environment: {cause}"));
        }
    }
    if run.environment_error.is_none() {
        run.environment_error = Some(cause);
    }
}

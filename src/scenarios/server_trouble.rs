//! A scenario during which the API server kept failing requests past their retry budget
//! (the run's [`crate::client_retry::TroubleLog`]) judged nothing: its pass and fail verdicts become
//! `inconclusive` with the failing request as the cause (the provider may have been unable to
//! act, or the tool unable to see it).

use super::Subject;
use super::verdicts::Verdicts;
use crate::client_retry::trouble::Persistent;
use crate::report::Outcome;

/// Resources whose trouble concerns a subject's scenario: its own kind (and a template's base
/// kind) and the core objects and Secrets every scenario works with.
pub fn resources(subject: &Subject) -> Vec<&str> {
    let mut out = vec![subject.resource.plural.as_str()];
    if let Some(base) = &subject.base {
        out.push(base.plural.as_str());
    }
    out.extend(["clusters", "machines", "machinepools", "secrets"]);
    out
}

/// Turns the verdicts of a scenario inconclusive when requests on its resources failed past
/// their budget while it ran (`found`, oldest first).
pub fn apply(
    verdicts: &mut Verdicts,
    environment_error: &mut Option<String>,
    found: &[Persistent],
) {
    let Some(first) = found.first() else {
        return;
    };
    let cause = first.describe();
    for v in verdicts.0.values_mut() {
        if matches!(v.outcome, Outcome::Pass | Outcome::Fail) {
            v.outcome = Outcome::Inconclusive;
            v.reason = Some(format!("environment: {cause}"));
        }
    }
    if environment_error.is_none() {
        *environment_error = Some(cause);
    }
}

//! A scenario during which the API server kept failing requests past their retry budget
//! (the run's [`crate::client_retry::TroubleLog`]) judged nothing: its pass and fail verdicts become
//! `inconclusive` with the failing request as the cause (the provider may have been unable to
//! act, or the tool unable to see it).

use super::Subject;
use super::verdicts::Verdicts;
use crate::client_retry::TroubleLog;
use crate::client_retry::trouble::Persistent;
use capi_contract::model::Outcome;
use std::time::Duration;

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

/// How long after its last failure a list/watch that failed `failures` times in a row may wait
/// before it lists again: client-go's reflector (`NewExponentialBackoffManager(800ms, 30s, 2m,
/// 2.0, 1.0)`) and kube-runtime's watcher (`DefaultBackoff`) start at 800 ms, double up to 30 s
/// and add up to as much again as jitter; two minutes without a failure start the ladder over.
/// Counted with the jitter, capped at the ladder's longest step ([`WATCH_BACKOFF_BOUND`]: a
/// watch at the top of the ladder with the most jitter is not waited for). Zero failures: no
/// wait.
pub fn watch_backoff(failures: usize) -> Duration {
    if failures == 0 {
        return Duration::ZERO;
    }
    let doublings = u32::try_from(failures - 1).unwrap_or(u32::MAX).min(16);
    (WATCH_BACKOFF_FIRST * 2u32.pow(doublings) * 2).min(WATCH_BACKOFF_BOUND)
}

/// The first wait of the list/watch backoff ladder.
pub const WATCH_BACKOFF_FIRST: Duration = Duration::from_millis(800);
/// The longest step of the ladder (before jitter), and the most a step's deadline grows.
pub const WATCH_BACKOFF_BOUND: Duration = Duration::from_secs(30);
/// Failures further back than this no longer count: the ladder was reset.
pub const WATCH_BACKOFF_RESET: Duration = Duration::from_secs(120);

/// The failures of the ladder a provider's watch may be on now, as the tool's own requests met
/// them (see [`super::Settings::fault_allowance`]).
pub fn recent_faults(log: &TroubleLog) -> usize {
    let now = tokio::time::Instant::now();
    log.faults_since(now.checked_sub(WATCH_BACKOFF_RESET).unwrap_or(now))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ladder a watch climbs under failures: 0.8 s, 1.6 s, … each up to twice that with
    /// jitter, at most 30 s.
    #[test]
    fn watch_backoff_follows_the_reflectors_ladder() {
        assert_eq!(watch_backoff(0), Duration::ZERO);
        assert_eq!(watch_backoff(1), Duration::from_millis(1600));
        assert_eq!(watch_backoff(4), Duration::from_millis(12800));
        assert_eq!(watch_backoff(5), Duration::from_millis(25600));
        assert_eq!(watch_backoff(6), WATCH_BACKOFF_BOUND);
        assert_eq!(watch_backoff(usize::MAX), WATCH_BACKOFF_BOUND);
    }

    /// Only the faults of the last two minutes count.
    #[test]
    fn only_recent_faults_count() {
        let log = TroubleLog::default();
        let now = tokio::time::Instant::now();
        let ago = |s| now.checked_sub(Duration::from_secs(s)).unwrap_or(now);
        log.fault(ago(150));
        log.fault(ago(90));
        log.fault(now);
        assert_eq!(recent_faults(&log), 2);
    }
}

//! Server trouble that outlasted the retry budget, remembered so a run can tell "the provider
//! did not act" from "the API server would not let anyone act" (→ inconclusive, not fail).
//!
//! One [`TroubleLog`] per run, bounded; entries are found by namespace.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

/// One request that still failed when its retry budget ran out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Persistent {
    pub at: Instant,
    pub method: String,
    /// Request path without the query.
    pub path: String,
    /// `HTTP 500 Internal Server Error` or `connection error: …`.
    pub cause: String,
    pub attempts: u32,
    pub elapsed: Duration,
}

impl Persistent {
    /// `(namespace, resource plural)` of a namespaced resource path.
    pub fn namespaced_resource(&self) -> Option<(&str, &str)> {
        let mut segs = self.path.trim_matches('/').split('/');
        while let Some(s) = segs.next() {
            if s == "namespaces" {
                let ns = segs.next()?;
                let resource = segs.next()?;
                return Some((ns, resource));
            }
        }
        None
    }

    /// One line for a result's reason.
    pub fn describe(&self) -> String {
        format!(
            "API server: {} {} still failed with {} after {} attempts over {:.1}s (persisted past the deadline)",
            self.method,
            self.path,
            self.cause,
            self.attempts,
            self.elapsed.as_secs_f64()
        )
    }
}

const KEEP: usize = 512;

/// A run's record of the requests that failed past their budget, and of when its requests met
/// a server fault at all (a 429, a 5xx, a broken connection, retried or not): the retrying
/// clients the run builds report to it ([`super::RetryLayer::reporting_to`]), its scenarios
/// read it. Bounded (the oldest entries go first); shared by its clones; nothing process-wide.
#[derive(Debug, Clone, Default)]
pub struct TroubleLog(Arc<Mutex<Log>>);

#[derive(Debug, Default)]
struct Log {
    persistent: VecDeque<Persistent>,
    faults: VecDeque<Instant>,
}

fn bounded_push<T>(q: &mut VecDeque<T>, x: T) {
    if q.len() >= KEEP {
        q.pop_front();
    }
    q.push_back(x);
}

impl TroubleLog {
    fn log(&self) -> std::sync::MutexGuard<'_, Log> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Remembers a request that failed past its budget.
    pub fn record(&self, p: Persistent) {
        bounded_push(&mut self.log().persistent, p);
    }

    /// Remembers that one attempt of a request met a server fault at `at`.
    pub fn fault(&self, at: Instant) {
        bounded_push(&mut self.log().faults, at);
    }

    /// How many attempts met a server fault since `since` (at most the last 512 are kept).
    pub fn faults_since(&self, since: Instant) -> usize {
        self.log().faults.iter().filter(|&&at| at >= since).count()
    }

    /// Persistent failures on `resources` (plurals; empty = any) in `namespace` since `since`,
    /// oldest first.
    pub fn in_namespace(
        &self,
        namespace: &str,
        since: Instant,
        resources: &[&str],
    ) -> Vec<Persistent> {
        self.log()
            .persistent
            .iter()
            .filter(|p| p.at >= since)
            .filter(|p| {
                p.namespaced_resource().is_some_and(|(ns, r)| {
                    ns == namespace && (resources.is_empty() || resources.contains(&r))
                })
            })
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(path: &str) -> Persistent {
        Persistent {
            at: Instant::now(),
            method: "PATCH".into(),
            path: path.into(),
            cause: "HTTP 500 Internal Server Error".into(),
            attempts: 4,
            elapsed: Duration::from_millis(2100),
        }
    }

    #[test]
    fn found_by_namespace_resource_and_time() {
        let log = TroubleLog::default();
        let record = |x| log.record(x);
        let in_namespace = |a, b, c: &[&str]| log.in_namespace(a, b, c);
        let before = Instant::now();
        record(p(
            "/apis/infrastructure.x.io/v1beta2/namespaces/ns-trouble-1/widgets/w1/status",
        ));
        record(p("/api/v1/namespaces/ns-trouble-2/secrets/s"));
        record(p("/apis/apiextensions.k8s.io/v1/customresourcedefinitions"));
        let hit = in_namespace("ns-trouble-1", before, &["widgets"]);
        assert_eq!(hit.len(), 1);
        assert_eq!(
            hit[0].namespaced_resource(),
            Some(("ns-trouble-1", "widgets"))
        );
        assert!(
            hit[0]
                .describe()
                .contains("500 Internal Server Error after 4 attempts over 2.1s")
        );
        assert!(in_namespace("ns-trouble-1", before, &["gadgets"]).is_empty());
        assert_eq!(in_namespace("ns-trouble-2", before, &[]).len(), 1);
        assert!(
            in_namespace("ns-trouble-1", Instant::now() + Duration::from_secs(1), &[]).is_empty()
        );
    }
}

//! Runtime fault injection (docs/embedded-apiserver.md S8): force 410 on the next watch resumes, drop watch streams,
//! 429/500 at a rate, added latency, slow CRD establishment, and a persistent 500 on one resource
//! from some moment on (a fault that outlasts any retry).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand::Rng;
use thiserror::Error;

/// Fault settings, changeable while the server runs.
#[derive(Debug, Default)]
pub struct Faults {
    expire_watches: AtomicU64,
    expired_served: AtomicU64,
    dropped_served: AtomicU64,
    served_429: AtomicU64,
    served_500: AtomicU64,
    drop_watch_after_ms: AtomicU64,
    rate_429: Mutex<f64>,
    rate_500: Mutex<f64>,
    latency_ms: AtomicU64,
    crd_delay_ms: AtomicU64,
    /// Resources (plural) whose every request fails with 500 from the given instant on.
    failing: Mutex<Vec<(String, std::time::Instant)>>,
    /// Writes refused by an injected 429/500.
    refused: RefusedWrites,
}

/// The writes (POST, PUT, PATCH, DELETE) the server refused with an injected 429 or 500, or
/// failed itself with a 429 or 5xx (a webhook it could not call): when, the request path and
/// the global resourceVersion at that moment. A client's write refused this way can leave an
/// object half written (a spec patch refused, the status patch after it accepted): whoever
/// judges the states an object went through can tell those apart from states the writer meant.
/// The resourceVersion orders a refusal among the object's states exactly (a state written
/// after it has a greater one), however late a watch delivers those states.
#[derive(Debug, Clone, Default)]
pub struct RefusedWrites(Arc<Mutex<VecDeque<Refusal>>>);

/// One refused write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub at: Instant,
    pub path: String,
    /// The server's resourceVersion when it refused: every write before has one at most this,
    /// every write after a greater one.
    pub resource_version: u64,
}

impl Refusal {
    /// The subresource of the namespaced object `plural`/`name` in `namespace` this refusal
    /// was a write to: `Some("")` for the object itself, `Some("status")` for its status,
    /// `None` for another object.
    pub fn subresource_of(&self, namespace: &str, plural: &str, name: &str) -> Option<&str> {
        let object = format!("/namespaces/{namespace}/{plural}/{name}");
        let i = self.path.find(&object)?;
        let rest = &self.path[i + object.len()..];
        if rest.is_empty() {
            Some("")
        } else {
            rest.strip_prefix('/')
        }
    }
}

impl RefusedWrites {
    /// At most this many are kept (the oldest go first).
    const KEEP: usize = 8192;

    /// Records a refused write to `path`, now, with the server at `resource_version`.
    pub fn record(&self, path: &str, resource_version: u64) {
        if let Ok(mut log) = self.0.lock() {
            if log.len() == Self::KEEP {
                log.pop_front();
            }
            log.push_back(Refusal {
                at: Instant::now(),
                path: path.to_string(),
                resource_version,
            });
        }
    }

    /// Whether a write to the namespaced object `plural`/`name` in `namespace` (or its
    /// subresources) was refused in `(after, until]`.
    pub fn refused_between(
        &self,
        namespace: &str,
        plural: &str,
        name: &str,
        after: Instant,
        until: Instant,
    ) -> bool {
        self.of(namespace, plural, name)
            .iter()
            .any(|r| r.at > after && r.at <= until)
    }

    /// The refused writes to the namespaced object `plural`/`name` in `namespace` (or its
    /// subresources), oldest first.
    pub fn of(&self, namespace: &str, plural: &str, name: &str) -> Vec<Refusal> {
        self.0
            .lock()
            .map(|log| {
                log.iter()
                    .filter(|r| r.subresource_of(namespace, plural, name).is_some())
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }
}

#[derive(Debug, Error, PartialEq, Eq)]
#[error("invalid fault spec {0:?}: {1}")]
pub struct FaultSpecError(pub String, pub String);

fn parse_duration(s: &str) -> Option<Duration> {
    if let Some(ms) = s.strip_suffix("ms") {
        return ms.parse().ok().map(Duration::from_millis);
    }
    if let Some(secs) = s.strip_suffix('s') {
        return secs
            .parse::<f64>()
            .ok()
            .filter(|v| *v >= 0.0)
            .map(Duration::from_secs_f64);
    }
    None
}

/// `0.05` or `5%`.
fn parse_rate(s: &str) -> Option<f64> {
    let rate = match s.strip_suffix('%') {
        Some(pct) => pct.trim().parse::<f64>().ok()? / 100.0,
        None => s.parse::<f64>().ok()?,
    };
    Some(rate).filter(|r| (0.0..=1.0).contains(r))
}

impl Faults {
    /// Applies a spec like `drop-watch=5s,expire-watch[=N],429=0.05,500=5%,latency=200ms,crd-delay=2s,fail=RESOURCE[@2s]`.
    /// `force-410` is another name for `expire-watch`, `slow-establish` for `crd-delay`; rates
    /// are fractions or percentages; `fail=mockmachines@2s` makes every request on that resource
    /// (plural) fail with 500 from 2 s after the spec is applied.
    pub fn apply_spec(&self, spec: &str) -> Result<(), FaultSpecError> {
        for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (k, v) = item.split_once('=').unwrap_or((item, ""));
            let bad = |why: &str| FaultSpecError(item.to_string(), why.to_string());
            match k {
                "expire-watch" | "force-410" => self.expire_next_watches(if v.is_empty() {
                    1
                } else {
                    v.parse().map_err(|_| bad("expected a count"))?
                }),
                "drop-watch" => self.set_drop_watch_after(Some(
                    parse_duration(v).ok_or_else(|| bad("expected a duration like 5s or 200ms"))?,
                )),
                "429" => {
                    self.set_rate_429(parse_rate(v).ok_or_else(|| bad("expected a rate in 0..=1"))?)
                }
                "500" => {
                    self.set_rate_500(parse_rate(v).ok_or_else(|| bad("expected a rate in 0..=1"))?)
                }
                "latency" => {
                    self.set_latency(parse_duration(v).ok_or_else(|| bad("expected a duration"))?)
                }
                "fail" => {
                    let (resource, after) = v.split_once('@').unwrap_or((v, "0s"));
                    let after = parse_duration(after)
                        .ok_or_else(|| bad("expected RESOURCE or RESOURCE@DURATION"))?;
                    if resource.is_empty() {
                        return Err(bad("expected RESOURCE or RESOURCE@DURATION"));
                    }
                    self.fail_resource_after(resource, after);
                }
                "crd-delay" | "slow-establish" => {
                    self.set_crd_delay(parse_duration(v).ok_or_else(|| bad("expected a duration"))?)
                }
                _ => {
                    return Err(bad(
                        "unknown fault (expire-watch|force-410, drop-watch, 429, 500, latency, crd-delay|slow-establish, fail)",
                    ));
                }
            }
        }
        Ok(())
    }

    /// The next `n` watches that resume from a resourceVersion get a 410 ERROR event.
    pub fn expire_next_watches(&self, n: u64) {
        self.expire_watches.store(n, Ordering::Relaxed);
    }

    /// Consumes one pending forced expiry; true when this resume must get 410.
    pub fn take_watch_expiry(&self) -> bool {
        let hit = self
            .expire_watches
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
            .is_ok();
        if hit {
            self.expired_served.fetch_add(1, Ordering::Relaxed);
        }
        hit
    }

    /// Records a watch stream ended by the drop-watch fault.
    pub fn record_drop(&self) {
        self.dropped_served.fetch_add(1, Ordering::Relaxed);
    }

    /// `(forced 410s served, watch streams dropped)` so far.
    pub fn stats(&self) -> (u64, u64) {
        (
            self.expired_served.load(Ordering::Relaxed),
            self.dropped_served.load(Ordering::Relaxed),
        )
    }

    /// `(429s, 500s)` injected at random so far.
    pub fn injected_errors(&self) -> (u64, u64) {
        (
            self.served_429.load(Ordering::Relaxed),
            self.served_500.load(Ordering::Relaxed),
        )
    }

    /// Watch streams end after this long (`None`: never).
    pub fn set_drop_watch_after(&self, d: Option<Duration>) {
        self.drop_watch_after_ms.store(
            d.map(|d| d.as_millis().max(1) as u64).unwrap_or(0),
            Ordering::Relaxed,
        );
    }

    pub fn drop_watch_after(&self) -> Option<Duration> {
        match self.drop_watch_after_ms.load(Ordering::Relaxed) {
            0 => None,
            ms => Some(Duration::from_millis(ms)),
        }
    }

    pub fn set_rate_429(&self, rate: f64) {
        if let Ok(mut r) = self.rate_429.lock() {
            *r = rate;
        }
    }

    pub fn set_rate_500(&self, rate: f64) {
        if let Ok(mut r) = self.rate_500.lock() {
            *r = rate;
        }
    }

    pub fn set_latency(&self, d: Duration) {
        self.latency_ms
            .store(d.as_millis() as u64, Ordering::Relaxed);
    }

    pub fn latency(&self) -> Duration {
        Duration::from_millis(self.latency_ms.load(Ordering::Relaxed))
    }

    pub fn set_crd_delay(&self, d: Duration) {
        self.crd_delay_ms
            .store(d.as_millis() as u64, Ordering::Relaxed);
    }

    pub fn crd_delay(&self) -> Duration {
        Duration::from_millis(self.crd_delay_ms.load(Ordering::Relaxed))
    }

    /// Every request on `resource` (plural) fails with 500 once `after` has passed.
    pub fn fail_resource_after(&self, resource: &str, after: Duration) {
        if let Ok(mut f) = self.failing.lock() {
            f.push((resource.to_string(), std::time::Instant::now() + after));
        }
    }

    /// Whether a request on `resource` must fail now (the `fail=` fault).
    pub fn resource_failing(&self, resource: &str) -> bool {
        self.failing.lock().is_ok_and(|f| {
            f.iter()
                .any(|(r, from)| r == resource && std::time::Instant::now() >= *from)
        })
    }

    /// The writes refused by an injected error (a handle that stays current).
    pub fn refused_writes(&self) -> RefusedWrites {
        self.refused.clone()
    }

    /// The injected error status for this request, if any (429 first, then 500).
    pub fn roll_error(&self) -> Option<u16> {
        let r429 = self.rate_429.lock().map(|r| *r).unwrap_or(0.0);
        let r500 = self.rate_500.lock().map(|r| *r).unwrap_or(0.0);
        if r429 <= 0.0 && r500 <= 0.0 {
            return None;
        }
        let mut rng = rand::rng();
        if r429 > 0.0 && rng.random_bool(r429) {
            self.served_429.fetch_add(1, Ordering::Relaxed);
            return Some(429);
        }
        if r500 > 0.0 && rng.random_bool(r500) {
            self.served_500.fetch_add(1, Ordering::Relaxed);
            return Some(500);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_write_is_found_by_object_and_time() {
        let log = RefusedWrites::default();
        let before = Instant::now();
        log.record("/apis/g/v1/namespaces/ns/things/a/status", 7);
        log.record("/apis/g/v1/namespaces/ns/things/ab", 9);
        let after = Instant::now();
        let from = before - Duration::from_millis(1);
        let refused = |ns: &str, name: &str| log.refused_between(ns, "things", name, from, after);
        assert!(refused("ns", "a") && refused("ns", "ab"));
        // Another object, namespace or time is not it.
        assert!(!refused("ns", "b") && !refused("other", "a"));
        assert!(!log.refused_between("ns", "things", "a", after, after + Duration::from_secs(1)));
        let a = log.of("ns", "things", "a");
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].resource_version, 7);
        assert_eq!(a[0].subresource_of("ns", "things", "a"), Some("status"));
        assert_eq!(
            log.of("ns", "things", "ab")[0].subresource_of("ns", "things", "ab"),
            Some("")
        );
    }

    #[test]
    fn spec_parses_every_fault() {
        let f = Faults::default();
        f.apply_spec("drop-watch=5s,expire-watch,429=1,latency=200ms,crd-delay=1.5s")
            .unwrap();
        assert_eq!(f.drop_watch_after(), Some(Duration::from_secs(5)));
        assert!(f.take_watch_expiry());
        assert!(!f.take_watch_expiry());
        f.apply_spec("expire-watch=2").unwrap();
        assert!(f.take_watch_expiry() && f.take_watch_expiry() && !f.take_watch_expiry());
        assert_eq!(f.stats().0, 3);
        assert_eq!(f.latency(), Duration::from_millis(200));
        assert_eq!(f.crd_delay(), Duration::from_millis(1500));
        assert_eq!(f.roll_error(), Some(429));
        assert_eq!(f.injected_errors(), (1, 0));
        assert!(f.apply_spec("429=2").is_err());
        assert!(f.apply_spec("bogus").is_err());
    }

    #[test]
    fn aliases_percentages_and_a_persistent_resource_failure() {
        let f = Faults::default();
        f.apply_spec("force-410=2,slow-establish=1s,500=100%,fail=widgets,fail=gadgets@3600s")
            .unwrap();
        assert!(f.take_watch_expiry() && f.take_watch_expiry() && !f.take_watch_expiry());
        assert_eq!(f.crd_delay(), Duration::from_secs(1));
        assert_eq!(f.roll_error(), Some(500));
        assert!(f.resource_failing("widgets"));
        assert!(!f.resource_failing("gadgets"), "not before its start");
        assert!(!f.resource_failing("configmaps"));
        f.apply_spec("500=5%").unwrap();
        assert!(f.apply_spec("500=150%").is_err());
        assert!(f.apply_spec("fail=").is_err());
        assert!(f.apply_spec("fail=x@soon").is_err());
    }

    #[test]
    fn no_rates_no_errors() {
        assert_eq!(Faults::default().roll_error(), None);
    }
}

//! controller-runtime's default workqueue rate limiter, for the mock's workqueue-backoff mode
//! ([`super::core::CoreReads::workqueue_backoff`]): a failed reconcile is retried after the
//! larger of a per-object exponential backoff (5 ms doubling per consecutive failure, capped at
//! 1000 s: client-go `ItemExponentialFailureRateLimiter`) and an overall token bucket of 10
//! per second with a burst of 100 (`BucketRateLimiter`), as `DefaultTypedControllerRateLimiter`
//! combines them; a successful reconcile forgets the object's failures. A watch event still
//! reconciles at once: only retries of failures wait.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// First per-object delay.
pub const BASE: Duration = Duration::from_millis(5);
/// Largest per-object delay.
pub const CAP: Duration = Duration::from_secs(1000);
/// Overall bucket: tokens per second and burst.
pub const QPS: f64 = 10.0;
pub const BURST: f64 = 100.0;

/// Failures per object and the overall bucket.
#[derive(Debug)]
pub struct RateLimiter {
    failures: Mutex<HashMap<String, u32>>,
    bucket: Mutex<(f64, Instant)>,
}

impl Default for RateLimiter {
    fn default() -> Self {
        RateLimiter {
            failures: Mutex::default(),
            bucket: Mutex::new((BURST, Instant::now())),
        }
    }
}

impl RateLimiter {
    /// The delay before retrying `key` after one more failure.
    pub fn when(&self, key: &str) -> Duration {
        let exp = {
            let mut f = self.failures.lock().unwrap_or_else(|p| p.into_inner());
            let n = f.entry(key.to_string()).or_insert(0);
            let exp = *n;
            *n = n.saturating_add(1);
            exp
        };
        item_delay(exp).max(self.reserve())
    }

    /// Forgets the failures of `key` (after a successful reconcile).
    pub fn forget(&self, key: &str) {
        self.failures
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(key);
    }

    /// Takes one token (going into debt, as `rate.Limiter.Reserve` does); the wait until it is
    /// there.
    fn reserve(&self) -> Duration {
        let mut b = self.bucket.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        let tokens = (b.0 + now.duration_since(b.1).as_secs_f64() * QPS).min(BURST) - 1.0;
        *b = (tokens, now);
        if tokens >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-tokens / QPS)
        }
    }
}

/// `BASE * 2^exp`, capped at [`CAP`].
pub fn item_delay(exp: u32) -> Duration {
    BASE.checked_mul(1u32.checked_shl(exp).unwrap_or(u32::MAX))
        .map_or(CAP, |d| d.min(CAP))
}

/// The delay after `failures` consecutive failures and the time spent waiting until then
/// (the backoff ladder a controller climbs while a gate stays closed).
pub fn ladder(failures: u32) -> (Duration, Duration) {
    let waited = (0..failures).map(item_delay).sum();
    (item_delay(failures), waited)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_object_backoff_doubles_from_5ms_to_1000s_and_is_forgotten_on_success() {
        let r = RateLimiter::default();
        let d: Vec<_> = (0..4).map(|_| r.when("a")).collect();
        assert_eq!(
            d,
            [5, 10, 20, 40].map(Duration::from_millis).to_vec(),
            "first failures (the bucket has its burst)"
        );
        assert_eq!(r.when("b"), BASE, "per object");
        r.forget("a");
        assert_eq!(r.when("a"), BASE);
        assert_eq!(item_delay(17), Duration::from_millis(655_360));
        assert_eq!(item_delay(18), CAP);
        assert_eq!(item_delay(40), CAP);
        // Failing for ~10 s: the next retry is ~10 s away.
        let (next, waited) = ladder(11);
        assert_eq!(next, Duration::from_millis(10_240));
        assert_eq!(waited, Duration::from_millis(10_235));
    }

    #[test]
    fn the_overall_bucket_spaces_retries_after_its_burst() {
        let r = RateLimiter::default();
        for i in 0..100 {
            r.forget("x");
            assert_eq!(r.when("x"), BASE, "failure {i} within the burst");
        }
        r.forget("x");
        let d = r.when("x");
        assert!(
            d > Duration::from_millis(50) && d <= Duration::from_millis(100),
            "{d:?}"
        );
    }
}

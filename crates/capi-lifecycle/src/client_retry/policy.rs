//! When to retry and how long to wait: capped exponential backoff with full jitter, the
//! server's `Retry-After`, all within one budget per request.

use http::{HeaderMap, Method, StatusCode};
use rand::Rng;
use std::time::Duration;

/// Retry limits of one client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Total time one request may spend in retries (the step deadline of a run).
    pub budget: Duration,
    /// Upper bound of the first backoff.
    pub base: Duration,
    /// Upper bound of any single backoff.
    pub cap: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy::within(Duration::from_secs(10))
    }
}

impl RetryPolicy {
    /// A policy whose retries end within `budget`.
    pub fn within(budget: Duration) -> Self {
        RetryPolicy {
            budget,
            base: Duration::from_millis(50),
            cap: Duration::from_secs(2),
        }
    }

    /// No retries at all.
    pub fn none() -> Self {
        RetryPolicy::within(Duration::ZERO)
    }

    /// The ceiling of the backoff before attempt `retry` (0-based): `base · 2^retry`, capped.
    pub fn ceiling(&self, retry: u32) -> Duration {
        let factor = 1u32.checked_shl(retry.min(20)).unwrap_or(u32::MAX);
        self.base.saturating_mul(factor).min(self.cap)
    }

    /// Backoff before retry `retry`: uniformly random in `[ceiling/2, ceiling]` (jitter keeps
    /// concurrent clients from retrying in lockstep, the lower half keeps progress).
    pub fn backoff(&self, retry: u32) -> Duration {
        let ceiling = self.ceiling(retry);
        let low = ceiling / 2;
        let span = ceiling.saturating_sub(low).as_micros() as u64;
        let jitter = if span == 0 {
            0
        } else {
            rand::rng().random_range(0..=span)
        };
        low + Duration::from_micros(jitter)
    }
}

/// Statuses worth another attempt: throttling and server-side trouble (not 501 Not Implemented).
pub fn retryable_status(status: StatusCode) -> bool {
    status == StatusCode::TOO_MANY_REQUESTS
        || (status.is_server_error() && status != StatusCode::NOT_IMPLEMENTED)
}

/// The `Retry-After` delay in seconds (the apiserver sends integer seconds; HTTP dates are not
/// used by Kubernetes and are ignored).
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    headers
        .get(http::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse::<u64>()
        .ok()
        .map(Duration::from_secs)
}

/// Whether repeating the request cannot create a second effect (everything but POST).
pub fn idempotent(method: &Method) -> bool {
    method != Method::POST
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_is_capped_and_jittered_within_bounds() {
        let p = RetryPolicy::within(Duration::from_secs(10));
        assert_eq!(p.ceiling(0), Duration::from_millis(50));
        assert_eq!(p.ceiling(1), Duration::from_millis(100));
        assert_eq!(p.ceiling(5), Duration::from_millis(1600));
        assert_eq!(p.ceiling(6), Duration::from_secs(2));
        assert_eq!(p.ceiling(40), Duration::from_secs(2));
        let samples: Vec<Duration> = (0..200).map(|_| p.backoff(3)).collect();
        assert!(
            samples
                .iter()
                .all(|d| *d >= Duration::from_millis(200) && *d <= Duration::from_millis(400))
        );
        assert!(samples.iter().any(|d| *d != samples[0]), "no jitter");
    }

    #[test]
    fn retryable_statuses_and_retry_after() {
        for code in [429, 500, 502, 503, 504] {
            assert!(
                retryable_status(StatusCode::from_u16(code).unwrap()),
                "{code}"
            );
        }
        for code in [200, 201, 400, 403, 404, 409, 410, 422, 501] {
            assert!(
                !retryable_status(StatusCode::from_u16(code).unwrap()),
                "{code}"
            );
        }
        let mut h = HeaderMap::new();
        assert_eq!(retry_after(&h), None);
        h.insert(http::header::RETRY_AFTER, "3".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(3)));
        h.insert(
            http::header::RETRY_AFTER,
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&h), None);
        assert!(!idempotent(&Method::POST) && idempotent(&Method::PATCH));
    }
}

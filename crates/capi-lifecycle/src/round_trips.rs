//! How long the tool's own writes take to round-trip through the API server. Timing judgements
//! ("the provider stayed quiet", "the object settled") are stretched to a few round trips: on a
//! slow or throttled server a provider's successive writes are that far apart, so a fixed window
//! shorter than one round trip would call a provider quiet while its next write is still in
//! flight, or blame it for a write it sent before it could see the change.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Round trips a window must span.
const WINDOW_ROUND_TRIPS: u32 = 3;

/// A decaying maximum of recent write round trips, shared by the clones of one scenario's
/// environment.
#[derive(Debug, Clone, Default)]
pub struct RoundTrips(Arc<AtomicU64>);

impl RoundTrips {
    /// Records one write's round trip: the estimate becomes the larger of it and three
    /// quarters of the previous estimate, so one slow retry fades after a few fast writes.
    pub fn record(&self, took: Duration) {
        let sample = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        let _ = self
            .0
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |old| {
                Some(sample.max(old / 4 * 3))
            });
    }

    /// The current estimate.
    pub fn estimate(&self) -> Duration {
        Duration::from_micros(self.0.load(Ordering::Relaxed))
    }

    /// `window`, stretched to span [`WINDOW_ROUND_TRIPS`] round trips.
    pub fn stretch(&self, window: Duration) -> Duration {
        window.max(self.estimate() * WINDOW_ROUND_TRIPS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_span_three_recent_round_trips_and_a_slow_one_fades() {
        let rt = RoundTrips::default();
        let quiet = Duration::from_millis(300);
        assert_eq!(rt.stretch(quiet), quiet);
        rt.record(Duration::from_millis(400));
        assert_eq!(rt.stretch(quiet), Duration::from_millis(1200));
        for _ in 0..8 {
            rt.record(Duration::from_millis(5));
        }
        assert!(
            rt.estimate() < Duration::from_millis(50),
            "{:?}",
            rt.estimate()
        );
        assert_eq!(rt.stretch(quiet), quiet);
    }
}

//! Simulated "infrastructure": instances kept in memory, each becoming ready after the
//! configured provisioning delay.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

/// In-memory instances keyed by a caller-chosen id (object uid, plus an index for pools).
#[derive(Debug, Clone)]
pub struct SimulatedInfra {
    delay: Duration,
    instances: Arc<Mutex<HashMap<String, Instant>>>,
    marks: Arc<Mutex<std::collections::HashSet<String>>>,
}

impl SimulatedInfra {
    pub fn new(delay: Duration) -> Self {
        SimulatedInfra {
            delay,
            instances: Arc::default(),
            marks: Arc::default(),
        }
    }

    /// Creates the instance if needed and waits until it is ready.
    pub async fn provision(&self, id: &str) {
        let ready_at = {
            let mut map = self.instances.lock().unwrap_or_else(|p| p.into_inner());
            *map.entry(id.to_string())
                .or_insert_with(|| Instant::now() + self.delay)
        };
        tokio::time::sleep_until(ready_at).await;
    }

    /// Whether the instance exists.
    pub fn exists(&self, id: &str) -> bool {
        self.instances
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains_key(id)
    }

    /// Releases every instance whose id starts with `prefix`; returns how many.
    pub fn release(&self, prefix: &str) -> usize {
        let mut map = self.instances.lock().unwrap_or_else(|p| p.into_inner());
        let before = map.len();
        map.retain(|k, _| !k.starts_with(prefix));
        before - map.len()
    }

    /// Records a one-time event for `key`; true the first time only.
    pub fn mark_once(&self, key: &str) -> bool {
        self.marks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key.to_string())
    }

    /// Whether [`Self::mark_once`] was called for `key`.
    pub fn is_marked(&self, key: &str) -> bool {
        self.marks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(key)
    }

    /// Number of live instances.
    pub fn len(&self) -> usize {
        self.instances
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn instances_wait_for_the_delay_and_release_by_prefix() {
        let infra = SimulatedInfra::new(Duration::from_millis(5));
        let start = Instant::now();
        infra.provision("uid-1/0").await;
        assert!(start.elapsed() >= Duration::from_millis(5));
        let again = Instant::now();
        infra.provision("uid-1/0").await;
        assert!(again.elapsed() < Duration::from_millis(1));
        infra.provision("uid-1/1").await;
        infra.provision("uid-2/0").await;
        assert_eq!(infra.release("uid-1/"), 2);
        assert!(infra.exists("uid-2/0"));
        assert_eq!(infra.len(), 1);
    }
}

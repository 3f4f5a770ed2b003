//! Waiting on the timeline: until the watch delivered a write, until a state of an object
//! holds (the latest or any recorded one), until objects are gone, or for a window in which
//! the provider must not act. Every wait re-evaluates after each recorded event.

use super::*;

impl Recorder {
    /// Whether `object` shows `acted` within `window`. With `ready_to_act` (evidence that the
    /// provider has reconciled the object in the state the window is about, one reconcile before
    /// it would act), the window starts once a version satisfies it, waited for up to
    /// `deadline`; an act seen first counts, and without the evidence by then it did not act.
    pub async fn acts_within(
        &self,
        object: &str,
        window: Duration,
        deadline: Duration,
        ready_to_act: Option<&dyn Fn(&Value) -> bool>,
        acted: impl Fn(&Value) -> bool,
    ) -> bool {
        if let Some(ready) = ready_to_act {
            match self
                .wait_ever(object, deadline, |v| acted(v) || ready(v))
                .await
            {
                Ok(v) if acted(&v) => return true,
                Ok(_) => {}
                Err(_) => return false,
            }
        }
        self.wait_ever(object, window, acted).await.is_ok()
    }

    /// Read-your-writes barrier: waits until the watch has delivered `resource_version` of
    /// `object` (or a later one, or its deletion), so later waits never judge a stale state.
    pub async fn wait_seen(&self, object: &str, resource_version: &str, timeout: Duration) -> bool {
        self.wait_until(timeout, || {
            let st = self.lock();
            let seen = st.gone.contains(object)
                || st.snapshots.iter().any(|s| {
                    s.object == object
                        && (s.resource_version == resource_version
                            || rv_before(resource_version, &s.resource_version) == Some(true))
                });
            seen.then_some(())
        })
        .await
        .is_some()
    }

    /// Re-evaluates `check` after every recorded event until it gives a value or `timeout`
    /// passes (`None`).
    async fn wait_until<T>(&self, timeout: Duration, check: impl Fn() -> Option<T>) -> Option<T> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(v) = check() {
                return Some(v);
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return check();
            }
        }
    }

    /// Waits until `pred` holds on the latest state of `object` (or `deadline` passes: `Err`
    /// carries the last state seen).
    pub async fn wait_for(
        &self,
        object: &str,
        timeout: Duration,
        pred: impl Fn(&Value) -> bool,
    ) -> Result<Value, Option<Value>> {
        self.wait_state(object, timeout, || self.latest(object).filter(|v| pred(v)))
            .await
    }

    /// [`Self::wait_for`] as a "must not act" window: `window` long, and longer while the
    /// provider is still writing `object`. It ends once the provider has left the object alone
    /// for half the window, at most `cap` after it began. A provider still answering the last
    /// stimulus when the window would end (a slow manager, a loaded machine) has not yet shown
    /// that it stays quiet, and the tool's next write would cut its answer short, leaving a
    /// different history than on an idle machine.
    pub async fn wait_for_settled(
        &self,
        object: &str,
        window: Duration,
        cap: Duration,
        pred: impl Fn(&Value) -> bool,
    ) -> Result<Value, Option<Value>> {
        let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        let start = self.elapsed_ms();
        let last = start.saturating_add(ms(cap.max(window)));
        let mut end = start.saturating_add(ms(window));
        loop {
            let left = Duration::from_millis(end.saturating_sub(self.elapsed_ms()));
            let last_state = match self.wait_for(object, left, &pred).await {
                Ok(v) => return Ok(v),
                Err(last_state) => last_state,
            };
            // Quiet for half the window, or for twice the time the provider took for its
            // last write (from the version before it), whichever is longer.
            let settled = self
                .last_provider_write_ms(object)
                .map_or(0, |(at, took)| {
                    at.saturating_add((ms(window) / 2).max(took.saturating_mul(2)))
                })
                .min(last);
            if settled <= end {
                return Err(last_state);
            }
            end = settled;
        }
    }

    /// When (ms since the recorder started) the provider last wrote `object` (the newest
    /// version the watch delivered that is not one of the tool's own writes), and how long after
    /// the version before it.
    fn last_provider_write_ms(&self, object: &str) -> Option<(u64, u64)> {
        let st = self.lock();
        let mut versions = st
            .snapshots
            .iter()
            .rev()
            .filter(|s| s.object == object && s.event != "DELETED");
        let by_tool = |s: &Snapshot| {
            st.tool_rvs
                .contains(&(s.object.clone(), s.resource_version.clone()))
        };
        let last = versions.find(|s| !by_tool(s))?;
        let took = versions
            .next()
            .map_or(0, |before| last.at_ms.saturating_sub(before.at_ms));
        Some((last.at_ms, took))
    }

    /// Waits until some recorded version of `object` (not only the latest) satisfies `pred`;
    /// returns the first such version. A flag that was true and flipped back still counts.
    pub async fn wait_ever(
        &self,
        object: &str,
        timeout: Duration,
        pred: impl Fn(&Value) -> bool,
    ) -> Result<Value, Option<Value>> {
        self.wait_state(object, timeout, || {
            self.lock()
                .snapshots
                .iter()
                .find(|s| s.object == object && s.event != "DELETED" && pred(&s.value))
                .map(|s| s.value.clone())
        })
        .await
    }

    /// [`Self::wait_until`] a state of `object` (asked for: it is this scenario's); `Err`
    /// carries the last state seen.
    async fn wait_state(
        &self,
        object: &str,
        timeout: Duration,
        find: impl Fn() -> Option<Value>,
    ) -> Result<Value, Option<Value>> {
        self.ask(object);
        self.wait_until(timeout, find)
            .await
            .ok_or_else(|| self.latest(object))
    }

    /// Waits until `object` has been deleted (true) or the timeout passes (false).
    pub async fn wait_gone(&self, object: &str, timeout: Duration) -> bool {
        self.ask(object);
        self.wait_until(timeout, || self.is_gone(object).then_some(()))
            .await
            .is_some()
    }

    /// Waits until every recorded object that names one of `owners` (`Kind/name`) as its owner
    /// or its Cluster (e.g. a provider's Secrets) has been deleted (true), or the timeout passes
    /// (false).
    pub async fn wait_dependents_gone(&self, owners: &[String], timeout: Duration) -> bool {
        let owners: BTreeSet<&str> = owners.iter().map(String::as_str).collect();
        self.wait_until(timeout, || {
            let st = self.lock();
            let live = st.latest.iter().any(|(k, &i)| {
                !st.gone.contains(k)
                    && st
                        .snapshots
                        .get(i)
                        .is_some_and(|s| links_to(&s.value, &owners))
            });
            (!live).then_some(())
        })
        .await
        .is_some()
    }

    /// Watches `object` for `window`; returns the first provider write after `mark` that changed
    /// the object as seen through `normalize` (evidence that the provider acted), or None if it
    /// stayed quiet. Judged at the end of the window: a watch event can arrive before the
    /// response of the tool's own write that caused it, so earlier judgement could blame the
    /// provider for the tool's write.
    pub async fn quiet(
        &self,
        object: &str,
        mark: Mark,
        window: Duration,
        normalize: impl Fn(&Value) -> Value,
    ) -> Option<Snapshot> {
        tokio::time::sleep(window).await;
        self.provider_changes_since(object, mark, &normalize)
            .into_iter()
            .next()
    }
}

//! Watching the provider act: waits for a state of the object under test, and "must not act"
//! windows, ended by the clock or by evidence from a sibling object.

use super::*;

impl ScriptRun<'_> {
    /// "Must not act": watches for a provider change (other than the Paused condition) for the
    /// quiet window; None means it stayed quiet.
    pub async fn stays_quiet(&self, name: &str, mark: Mark) -> Option<Vec<String>> {
        self.stays_quiet_for(name, mark, std::time::Duration::ZERO)
            .await
    }

    /// [`Self::stays_quiet`] for at least `evidence` (twice the time the provider was seen to
    /// take to act on the scenario's healthy object, capped at the step deadline): a provider
    /// slower than the quiet window (a real manager, a fault-slowed server) is not passed for a
    /// write it had no time to make.
    pub async fn stays_quiet_for(
        &self,
        name: &str,
        mark: Mark,
        evidence: std::time::Duration,
    ) -> Option<Vec<String>> {
        let window = self
            .env
            .quiet_window()
            .max((evidence * 2).min(self.env.step_deadline()));
        self.quiet_for(name, mark, window).await
    }

    /// What the provider changed on `name` since `mark` (not the Paused condition) during
    /// `window`, counted as time the scenario kept gates closed ([`crate::timeline::Recorder::hold`]).
    async fn quiet_for(
        &self,
        name: &str,
        mark: Mark,
        window: std::time::Duration,
    ) -> Option<Vec<String>> {
        self.env.recorder.hold(window);
        self.env
            .recorder
            .quiet(&self.key(name), mark, window, without_paused_condition)
            .await
            .map(|s| s.changed)
    }

    /// [`Self::stays_quiet`] once the provider has shown that it reconciled past the trigger
    /// (its Paused condition, a sentinel created after the trigger acted on): then a write the
    /// trigger would cause comes within about the time the provider took to show it, `latency`.
    /// The window is twice that, at least a tenth of the quiet window, at most the step deadline
    /// (docs/core-simulation.md "Timing").
    pub async fn stays_quiet_after_evidence(
        &self,
        name: &str,
        mark: Mark,
        latency: std::time::Duration,
    ) -> Option<Vec<String>> {
        let window = (latency * 2)
            .max(self.env.quiet_window() / 10)
            .min(self.env.step_deadline());
        self.quiet_for(name, mark, window).await
    }

    /// Waits until `pred` holds on the object under test (Err: last state seen).
    pub async fn wait(
        &self,
        name: &str,
        pred: impl Fn(&Value) -> bool,
    ) -> Result<Value, Option<Value>> {
        let timeout = self.env.step_deadline();
        self.env
            .recorder
            .wait_for(&self.key(name), timeout, pred)
            .await
    }

    /// Opens `cluster`'s infrastructure gate as core does: once the provider's own
    /// InfraCluster the Cluster references is provisioned ([`Env::open_infra_gate`]).
    pub async fn open_infra_gate(&self, cluster: &str) -> Result<(), EnvError> {
        let own = self
            .subject
            .companions
            .infra_cluster
            .as_ref()
            .map(|(r, _)| r);
        self.env.open_infra_gate(cluster, own).await.map(drop)
    }

    /// Marks that the next tool write opens the last gate in front of the act of `name`
    /// ([`crate::timeline::Recorder::gate_opens`]): the time the act then takes is the evidence
    /// window of [`Self::failed_then_owned`] on a sibling.
    pub fn gate_opens(&self, name: &str) {
        self.env.recorder.gate_opens(&self.key(name));
    }

    /// Waits until some recorded state of the object under test satisfies `pred`; returns
    /// the first. Under server faults, the first its writers meant ([`Self::meant_states`]):
    /// when the first that satisfies `pred` follows a refused write (a provider whose spec
    /// patch was refused while its status patch landed: "provisioned" without the endpoint or
    /// providerID of that reconcile), the provider is given until it settles, and the first
    /// meant state that satisfies `pred` then, else the settled one when it does, is judged:
    /// as it would be on a server that refused nothing. A state after a refused write the
    /// writer retried is meant too, and stays the answer when nothing follows it.
    pub async fn wait_ever(
        &self,
        name: &str,
        pred: impl Fn(&Value) -> bool,
    ) -> Result<Value, Option<Value>> {
        let timeout = self.env.step_deadline();
        let key = self.key(name);
        let first = self.env.recorder.wait_ever(&key, timeout, &pred).await?;
        if self.env.ledger.is_none() {
            return Ok(first);
        }
        let meant = |history: Vec<Snapshot>| {
            let versions = history
                .into_iter()
                .filter(|s| s.event != "DELETED")
                .collect();
            self.meant(name, versions).into_iter().find(|v| pred(v))
        };
        if let Some(v) = meant(self.env.recorder.history(&key)) {
            return Ok(v);
        }
        let settled = self
            .env
            .recorder
            .wait_for_settled(&key, self.env.quiet_window(), timeout, |_| false)
            .await
            .err()
            .flatten();
        Ok(meant(self.env.recorder.history(&key))
            .or(settled.filter(|v| pred(v)))
            .unwrap_or(first))
    }

    /// Creates `name` unowned and paused (its own `cluster.x-k8s.io/paused` annotation), marks
    /// it failed through the status subresource (`status.failureReason/failureMessage`), gives
    /// it `owner_ref`, then unpauses: returns whether `acted` became true within the quiet
    /// window (a provider that honours the failure gate stays put). Two gates (owner, pause)
    /// stay closed until the failure is set, so a provider that ignores one of them cannot act
    /// before the failure gate is in place: the step measures only the failure gate.
    /// Contract v1beta1 only.
    ///
    /// The window is ended by evidence, not only by the clock: `sibling` is an object of the
    /// same kind in the same situation without the failure (the scenario's main object), and
    /// the failed one is judged after the sibling has shown `acted` (or its step deadline
    /// passed), for the quiet window plus twice the time the act took on the sibling
    /// (from [`Self::gate_opens`]). A provider that ignores the failure fields
    /// but takes longer than the quiet window to act (CABPK's join data waits for its
    /// ClusterCache connection; CAPD under 200 ms of added latency) is not passed for a write it
    /// had no time to make. When the provider keeps a v1beta1 `Paused` condition at
    /// `status.v1beta2.conditions` (the sibling shows one), the window starts once the failed
    /// object shows Paused=False there: the unpause costs such a provider one more reconcile
    /// than the sibling's act (CAPD's DevMachine under server faults wrote Paused=False up to
    /// 2.5 s after the unpause).
    pub async fn failed_then_owned(
        &mut self,
        name: &str,
        cluster: &str,
        owner_ref: Value,
        acted: impl Fn(&Value) -> bool,
        sibling: &str,
    ) -> Result<bool, EnvError> {
        let resource = self.subject.resource.clone();
        self.watch(&resource, name).await;
        self.env
            .create(
                &resource,
                self.provider_object(name, &[(PAUSED_ANNOTATION, "")]),
            )
            .await?;
        self.env
            .patch_status(
                &resource,
                name,
                json!({"status": {"failureReason": "CreateError", "failureMessage": "set by capi-conformance"}}),
                "set failure",
            )
            .await?;
        self.env.adopt(&resource, name, owner_ref, cluster).await?;
        self.env
            .set_paused_annotation(&resource, name, false)
            .await?;
        // Evidence that the provider had the time: the sibling acted (or never will).
        let _ = self
            .env
            .recorder
            .wait_ever(&self.key(sibling), self.env.step_deadline(), &acted)
            .await;
        // The failed object was triggered no later than the sibling acted: a provider ignoring
        // the failure acts within about the time the same act took it on the sibling.
        let took = self
            .env
            .recorder
            .acting_latency(&self.key(sibling), &acted)
            .unwrap_or_default();
        let window = (self.env.quiet_window() + took * 2).min(self.env.step_deadline());
        // A provider that keeps a Paused condition (the sibling carries one) writes Paused=False
        // on the failed object when it first reconciles it unpaused, one reconcile (and a watch
        // event) before it would act: the window runs from that write, not from the unpause.
        let unpaused = |v: &Value| v1beta2_paused_condition_is(v, "False", "NotPaused");
        let ready: Option<&dyn Fn(&Value) -> bool> = self
            .keeps_v1beta2_paused_condition(sibling)
            .then_some(&unpaused);
        Ok(self
            .env
            .recorder
            .acts_within(
                &self.key(name),
                window,
                self.env.step_deadline(),
                ready,
                &acted,
            )
            .await)
    }
}

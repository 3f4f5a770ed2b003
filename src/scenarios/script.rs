//! Machinery shared by the scripts: steps with timings, the provider object under test, the
//! pause check, and contract field paths.

use super::Subject;
use super::acting::{v1beta2_paused_condition_is, without_paused_condition};
use super::core_sim::{PAUSED_ANNOTATION, cluster_owner_ref};
use super::env::{Env, EnvError, key};
use super::json::{self, condition};
use super::observer::{Observer, watch_object};
use super::timeline::{Mark, Snapshot};
use super::verdicts::Verdicts;
use crate::report::{Evidence, Outcome, StepRecord};
use crate::rule_ids::{self as id, RuleId};
use capi_contract::contract::Contract;
use kube::discovery::ApiResource;
use serde_json::{Value, json};

/// A script's state while it runs.
pub struct ScriptRun<'a> {
    pub env: &'a Env,
    pub subject: &'a Subject,
    pub verdicts: Verdicts,
    pub steps: Vec<StepRecord>,
    /// Set when the environment (not the provider) broke the run.
    pub environment_error: Option<String>,
    observers: Vec<Observer>,
    /// The open step: its name, start (ms on the recorder's clock) and failures before it.
    step: Option<(String, u64, usize)>,
}

impl<'a> ScriptRun<'a> {
    pub fn new(env: &'a Env, subject: &'a Subject) -> Self {
        ScriptRun {
            env,
            subject,
            verdicts: Verdicts::default(),
            steps: Vec::new(),
            environment_error: None,
            observers: Vec::new(),
            step: None,
        }
    }

    /// A run of another part of the same script on the same environment, to run concurrently
    /// with this one (independent objects, independent quiet windows); see [`Self::absorb`].
    pub fn part(&self) -> ScriptRun<'a> {
        ScriptRun::new(self.env, self.subject)
    }

    /// Takes over a finished [`Self::part`] (ending this run's open step first): its `result`
    /// (an environment error), verdicts and steps (after this run's steps, in a fixed order)
    /// and its watches.
    pub fn absorb(&mut self, mut part: ScriptRun<'a>, result: Result<(), EnvError>) {
        self.end_step();
        if let Err(e) = result {
            part.env_failed(e);
        }
        part.end_step();
        if self.environment_error.is_none() {
            self.environment_error = part.environment_error.take();
        }
        self.verdicts.merge(std::mem::take(&mut part.verdicts));
        self.steps.append(&mut part.steps);
        self.observers.append(&mut part.observers);
    }

    /// `<script> <column>`: how progress names this run.
    pub fn label(&self) -> String {
        format!(
            "{} {}",
            super::script_for(self.subject.role()).unwrap_or("-"),
            self.subject.column.id()
        )
    }

    pub fn contract(&self) -> Contract {
        self.subject.column.contract.unwrap_or(Contract::V1Beta2)
    }

    /// Short unique prefix for object names of this subject (`mockmachine-b2`); for a
    /// cluster-scoped kind with the side's tag (`mockglobalippool-b2-<tag>`: its objects share
    /// no namespace with the other side's, [`super::scope::Scopes::tagged`]).
    pub fn prefix(&self) -> String {
        let prefix = format!(
            "{}-{}",
            self.subject.resource.kind.to_lowercase(),
            self.contract().short()
        );
        if self.env.scopes.is_cluster_scoped(&self.subject.resource) {
            self.env.scopes.tagged(&prefix)
        } else {
            prefix
        }
    }

    /// Starts a step (closing the previous one).
    pub fn step(&mut self, name: &str) {
        self.end_step();
        if self.env.events.listening() {
            self.env.events.emit(crate::events::Event::Step {
                scenario: self.label(),
                step: name.to_string(),
            });
        }
        let at_ms = self.env.recorder.elapsed_ms();
        self.step = Some((name.to_string(), at_ms, self.fail_count()));
    }

    fn fail_count(&self) -> usize {
        self.verdicts
            .0
            .values()
            .filter(|v| v.outcome == Outcome::Fail)
            .count()
    }

    pub fn end_step(&mut self) {
        if let Some((name, start, fails)) = self.step.take() {
            let outcome = if self.environment_error.is_some() {
                Outcome::Inconclusive
            } else if self.fail_count() > fails {
                Outcome::Fail
            } else {
                Outcome::Pass
            };
            self.steps.push(StepRecord {
                name,
                outcome,
                at_ms: Some(start),
                duration_ms: Some(self.env.recorder.elapsed_ms().saturating_sub(start)),
            });
        }
    }

    /// Ends the script with the `result` of its steps (an environment error stops it).
    pub fn finish(&mut self, result: Result<(), EnvError>) {
        if let Err(e) = result {
            self.env_failed(e);
        }
        self.end_step();
    }

    /// Records an environment failure (the script stops; its rules become inconclusive).
    pub fn env_failed(&mut self, e: EnvError) {
        if self.environment_error.is_none() {
            self.environment_error = Some(e.to_string());
        }
    }

    /// Starts watching one object and waits for the watch to be established.
    pub async fn watch(&mut self, resource: &ApiResource, name: &str) {
        let mut o = watch_object(
            self.env.client.clone(),
            resource,
            self.env.namespace_of(resource),
            name,
            self.env.recorder.clone(),
        );
        o.ready(self.env.settings.step_timeout).await;
        self.observers.push(o);
    }

    pub fn keep(&mut self, o: Observer) {
        self.observers.push(o);
    }

    /// The provider object to create from the sample: `name`, sample spec/labels/annotations,
    /// at the version the sample is written in ([`super::env::Env::create`] converts), with
    /// core's clone annotations where core clones the kind from a template
    /// ([`super::core_sim::clone_annotations`]).
    pub fn provider_object(&self, name: &str, extra_annotations: &[(&str, &str)]) -> Value {
        let sample = self.subject.sample.clone().unwrap_or_else(|| json!({}));
        let mut obj = super::core_sim::sample_object(&sample, name);
        super::core_sim::clone_annotations(&mut obj, self.subject.role(), &self.subject.resource);
        for (k, v) in extra_annotations {
            obj["metadata"]["annotations"][*k] = json!(v);
        }
        obj
    }

    /// [`Self::provider_object`] spelled at the column's version: a sample written at another
    /// version is converted by the server (the provider's conversion webhook) through a probe
    /// object created at the sample's version and read at the column's (`<name>-at`, deleted
    /// again), whose `spec` and annotations (with CAPI's conversion-data, what the column's
    /// version cannot hold) it takes. For the rules that write the column's version themselves
    /// (`all/conversion-lossless`, `all/defaulting-admitted`).
    pub async fn column_object(
        &self,
        name: &str,
        extra_annotations: &[(&str, &str)],
    ) -> Result<Value, EnvError> {
        let res = &self.subject.resource;
        let mut obj = self.provider_object(name, extra_annotations);
        if super::env::written_at(obj.get("apiVersion"), res).version == res.version {
            obj["apiVersion"] = json!(res.api_version);
            return Ok(obj);
        }
        let probe = super::core_sim::truncate_name(&format!("{name}-at"));
        let mut at = obj.clone();
        at["metadata"]["name"] = json!(probe);
        let converted = self.env.create(res, at).await?;
        self.env.delete(res, &probe).await?;
        obj["apiVersion"] = json!(res.api_version);
        obj["spec"] = converted.get("spec").cloned().unwrap_or(json!({}));
        if let Some(a) = converted.pointer("/metadata/annotations") {
            obj["metadata"]["annotations"] = a.clone();
        }
        Ok(obj)
    }

    /// Evidence naming the object under test (namespace omitted: it changes per run).
    pub fn evidence(&self, name: &str, message: impl Into<String>, path: Option<&str>) -> Evidence {
        Evidence {
            message: message.into(),
            object: Some(format!("{} {name}", self.subject.resource.kind).into()),
            path: path.map(str::to_string),
            resource_version: None,
            location: None,
            source: None,
        }
    }

    pub fn key(&self, name: &str) -> String {
        key(&self.subject.resource, name)
    }

    /// The recorded states of the subject's object `name` its writers meant. A provider writes
    /// spec and status in separate requests (CAPI's `patch.Helper`: conditions, spec, then
    /// status); when the server refuses one, the next still lands and leaves a state nobody
    /// wrote as such ("provisioned" with the providerID of the refused spec patch missing),
    /// which kube-apiserver under the same error would show too, and which is the
    /// environment's doing. Left out:
    ///
    /// - a state written after a refused write to the object and before the provider's next
    ///   write to the same part (a change of spec or metadata after a refused write to the
    ///   object, a change of status after a refused status write): the half state lasts until
    ///   the retry, and the retry's first request (its conditions patch) carries it forward;
    /// - the order is the server's resourceVersion ([`embedded_apiserver::Refusal`]), not when
    ///   a (dropped, resumed) watch delivered the state.
    ///
    /// Without server faults (and on a real cluster), every state.
    pub fn meant_states(&self, name: &str) -> Vec<Value> {
        self.meant(name, self.env.recorder.history(&self.key(name)))
    }

    /// The states of `history` (the recorded versions of the subject's object `name`) its
    /// writers meant ([`Self::meant_states`]).
    fn meant(&self, name: &str, history: Vec<Snapshot>) -> Vec<Value> {
        let Some(ledger) = &self.env.ledger else {
            return history.into_iter().map(|s| s.value).collect();
        };
        let res = &self.subject.resource;
        let ns = self.env.namespace_of(res).unwrap_or_default();
        let refusals = ledger.refusals_of(ns, &res.plural, name);
        if refusals.is_empty() {
            return history.into_iter().map(|s| s.value).collect();
        }
        let stored = ledger.states_of(&res.group, &res.plural, ns, name);
        meant_among(
            &refusals,
            ns,
            &res.plural,
            name,
            writes(history, Some(stored)),
        )
    }

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
    /// `window`, counted as time the scenario kept gates closed ([`super::timeline::Recorder::hold`]).
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
    /// (issue 25: windows ended by evidence; docs/core-simulation.md "Timing").
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
    /// ([`super::timeline::Recorder::gate_opens`]): the time the act then takes is the evidence
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

    /// The summary condition of the role: `Available` for a v1beta2 ControlPlane, else `Ready`.
    pub fn summary_condition(&self) -> &'static str {
        if self.subject.role() == capi_contract::contract::Role::ControlPlane
            && self.contract() == Contract::V1Beta2
        {
            "Available"
        } else {
            "Ready"
        }
    }

    /// `all/ready-condition-lifecycle` over the recorded history: the first provider status
    /// write (beyond the Paused condition) carries the summary condition, and once present it
    /// stays while the object is being deleted.
    pub fn judge_ready_lifecycle(&mut self, name: &str) {
        let cond = self.summary_condition();
        let changes = self.env.recorder.provider_changes_since(
            &self.key(name),
            Mark::START,
            &without_paused_condition,
        );
        let first_status = changes
            .iter()
            .find(|s| without_paused_condition(&s.value).get("status").is_some());
        let Some(first) = first_status else {
            self.verdicts.skip(
                id::all::READY_CONDITION_LIFECYCLE,
                "the provider wrote no status to observe",
            );
            return;
        };
        let history = self.env.recorder.history(&self.key(name));
        if !history.iter().any(|s| condition(&s.value, cond).is_some()) {
            // Never present at all: the role's own condition rule owns that failure.
            self.verdicts.skip(
                id::all::READY_CONDITION_LIFECYCLE,
                format!("the {cond} condition never appeared (see the role's condition rule)"),
            );
            return;
        }
        let mut had = false;
        let mut dropped_on_delete = false;
        for s in history.iter().filter(|s| s.event != "DELETED") {
            let has = condition(&s.value, cond).is_some();
            let deleting = s.value.pointer("/metadata/deletionTimestamp").is_some();
            if deleting && had && !has {
                dropped_on_delete = true;
            }
            had = had || has;
        }
        let at_creation = condition(&first.value, cond).is_some();
        let reason = if !at_creation {
            format!("the first status the provider wrote has no {cond} condition")
        } else {
            format!("the {cond} condition disappeared while the object was being deleted")
        };
        self.verdicts.check(
            id::all::READY_CONDITION_LIFECYCLE,
            at_creation && !dropped_on_delete,
            reason.clone(),
            self.evidence(name, reason, Some("status.conditions")),
        );
    }

    /// Deletes the object and expects it gone before the deadline, judged as `rule` (`None`: the
    /// catalog has no deletion rule for the role; the deletion is still waited for).
    pub async fn delete_and_expect_gone(
        &mut self,
        name: &str,
        rule: impl Into<Option<RuleId>>,
    ) -> Result<(), EnvError> {
        let resource = self.subject.resource.clone();
        self.step("delete");
        self.env.delete(&resource, name).await?;
        let deadline = self.env.step_deadline();
        let gone = self.env.recorder.wait_gone(&self.key(name), deadline).await;
        let fins = self
            .env
            .recorder
            .latest(&self.key(name))
            .map(|v| json::finalizers(&v))
            .unwrap_or_default();
        if let Some(rule) = rule.into() {
            self.verdicts.check(
                rule,
                gone,
                format!(
                    "still present {}{}s after deletion (finalizers: {})",
                    if self.env.settings.backoff_allowance.is_zero() {
                        ""
                    } else {
                        "at least "
                    },
                    self.env.settings.step_timeout.as_secs(),
                    fins.join(", ")
                ),
                self.evidence(
                    name,
                    "object not removed after deletion",
                    Some("metadata.finalizers"),
                ),
            );
        }
        self.judge_ready_lifecycle(name);
        Ok(())
    }

    /// Owner gate: object created without owner must stay untouched. Returns the mark after creation.
    pub async fn create_unowned_and_expect_quiet(
        &mut self,
        name: &str,
        rule: RuleId,
    ) -> Result<(), EnvError> {
        let resource = self.subject.resource.clone();
        self.step("create without owner");
        self.watch(&resource, name).await;
        let mark = self.env.recorder.mark();
        self.env
            .create(&resource, self.provider_object(name, &[]))
            .await?;
        let acted = self.stays_quiet(name, mark).await;
        self.verdicts.check(
            rule,
            acted.is_none(),
            format!(
                "the provider acted on an object without an owner ({})",
                acted.unwrap_or_default().join(", ")
            ),
            self.evidence(name, "changed before an owner reference existed", None),
        );
        Ok(())
    }
}

/// The owner reference core would set for an object owned by a Cluster.
pub fn cluster_owner(cluster: &Value) -> Value {
    cluster_owner_ref(cluster)
}

/// The "infrastructure provisioned" flag path of InfraCluster/InfraMachine per contract.
pub fn provisioned_path(contract: Contract) -> &'static str {
    match contract {
        Contract::V1Beta1 => "status.ready",
        Contract::V1Beta2 => "status.initialization.provisioned",
    }
}

/// A provider finalizer is present.
pub fn has_finalizer(v: &Value) -> bool {
    !json::finalizers(v).is_empty()
}

/// `Ready` condition present (any status).
pub fn has_ready_condition(v: &Value) -> bool {
    condition(v, "Ready").is_some()
}

/// Annotation key helper for readability in scripts.
pub fn has_annotation(v: &Value, key: &str) -> bool {
    v.pointer("/metadata/annotations")
        .and_then(|a| a.get(key))
        .is_some()
}

/// [`ScriptRun::meant_states`] of `history` given the object's `refusals`.
/// What a write changed in the parts a refused write can leave half done: the main resource
/// (spec and the metadata a writer sets) and the status.
fn parts_changed(old: &Value, new: &Value) -> (bool, bool) {
    type Main<'a> = [Option<&'a Value>; 5];
    fn outside_status(v: &Value) -> Main<'_> {
        let meta = |k: &str| v.get("metadata").and_then(|m| m.get(k));
        [
            v.get("spec"),
            meta("labels"),
            meta("annotations"),
            meta("finalizers"),
            meta("ownerReferences"),
        ]
    }
    (
        outside_status(old) != outside_status(new),
        old.get("status") != new.get("status"),
    )
}

/// One write to an object, in resourceVersion order: what it changed and, when the recorder
/// saw the state it left, that state.
struct Write {
    rv: u64,
    /// The resourceVersion before which a refusal counts as this write's predecessor
    /// (`u64::MAX` for the object's creation: nothing of it was half written before).
    after: u64,
    main_changed: bool,
    status_changed: bool,
    seen: Option<Value>,
}

/// The writes behind `history` (the states the recorder's watch delivered). With the server's
/// retained changes (`stored`), every write after `stored.complete_after` is there, also those
/// a watch that relisted after 410 Expired skipped: the retry that ended a half state can be
/// among them. The changes are compared as stored (one version), the recorder's states as read.
fn writes(history: Vec<Snapshot>, stored: Option<embedded_apiserver::StoredStates>) -> Vec<Write> {
    let rv = |s: &Snapshot| s.resource_version.parse::<u64>().unwrap_or(0);
    let complete_after = stored.as_ref().map_or(u64::MAX, |s| s.complete_after);
    let mut writes: Vec<Write> = Vec::with_capacity(history.len());
    let mut later = std::collections::BTreeMap::new();
    let mut prev: Option<(u64, Value)> = None;
    for s in history {
        let at = rv(&s);
        if at > complete_after {
            later.insert(at, s.value);
            continue;
        }
        let (main_changed, status_changed) = prev
            .as_ref()
            .map_or((false, false), |(_, p)| parts_changed(p, &s.value));
        writes.push(Write {
            rv: at,
            after: prev.as_ref().map_or(u64::MAX, |(r, _)| *r),
            main_changed,
            status_changed,
            seen: Some(s.value.clone()),
        });
        prev = Some((at, s.value));
    }
    let Some(stored) = stored else {
        return writes;
    };
    let mut last = prev.map(|(r, _)| r);
    for c in stored.states {
        let (main_changed, status_changed) = c
            .old
            .as_deref()
            .map_or((false, false), |old| parts_changed(old, &c.object));
        let after = match (last, &c.old) {
            (_, None) => u64::MAX,
            (Some(r), Some(_)) => r,
            (None, Some(_)) => stored.complete_after,
        };
        writes.push(Write {
            rv: c.resource_version,
            after,
            main_changed,
            status_changed,
            seen: later.remove(&c.resource_version),
        });
        last = Some(c.resource_version);
    }
    // A state the server no longer lists (never expected): kept, claiming no change.
    for (at, value) in later {
        let after = writes
            .iter()
            .map(|w| w.rv)
            .filter(|r| *r < at)
            .max()
            .unwrap_or(u64::MAX);
        writes.push(Write {
            rv: at,
            after,
            main_changed: false,
            status_changed: false,
            seen: Some(value),
        });
    }
    writes.sort_by_key(|w| w.rv);
    writes
}

/// The recorded states among `writes` their writers meant ([`ScriptRun::meant_states`]).
fn meant_among(
    refusals: &[embedded_apiserver::Refusal],
    namespace: &str,
    plural: &str,
    name: &str,
    writes: Vec<Write>,
) -> Vec<Value> {
    let mut meant = Vec::with_capacity(writes.len());
    let (mut main_shadow, mut status_shadow) = (false, false);
    for w in writes {
        // A write to the part a refused write was for is its retry (or a later write that
        // supersedes it): it ends the shadow, also when it is the first write after the
        // refusal (a writer that gives up its reconcile on the error and retries).
        main_shadow &= !w.main_changed;
        status_shadow &= !w.status_changed;
        let mut refused_here = false;
        for r in refusals
            .iter()
            .filter(|r| (w.after..w.rv).contains(&r.resource_version))
        {
            match r.subresource_of(namespace, plural, name) {
                Some("status") if !w.status_changed => status_shadow = true,
                Some("status") => continue,
                _ if !w.main_changed => main_shadow = true,
                _ => continue,
            }
            refused_here = true;
        }
        if !refused_here && !main_shadow && !status_shadow {
            meant.extend(w.seen);
        }
    }
    meant
}

#[cfg(test)]
mod meant_tests {
    use super::*;

    fn state(rv: u64, provisioned: bool, provider_id: bool, reason: &str) -> Snapshot {
        let mut v = json!({"metadata": {"name": "m"}, "spec": {}, "status": {"conditions": [{"type": "A", "reason": reason}]}});
        if provisioned {
            v["status"]["ready"] = json!(true);
        }
        if provider_id {
            v["spec"]["providerID"] = json!("p://m");
        }
        Snapshot {
            at_ms: rv,
            object: "M/m".into(),
            resource_version: rv.to_string(),
            event: "MODIFIED",
            value: v,
            changed: Vec::new(),
        }
    }

    fn refusal(rv: u64, status: bool) -> embedded_apiserver::Refusal {
        embedded_apiserver::Refusal {
            at: std::time::Instant::now(),
            path: format!(
                "/apis/g/v1/namespaces/ns/ms/m{}",
                if status { "/status" } else { "" }
            ),
            resource_version: rv,
        }
    }

    fn half(states: &[Value]) -> bool {
        states.iter().any(|v| {
            v.pointer("/status/ready").is_some() && v.pointer("/spec/providerID").is_none()
        })
    }

    /// A refused spec patch, the status patch after it, then the retry's conditions patch
    /// (still without providerID) and its spec patch: neither half state is meant; after the
    /// retry every state is.
    #[test]
    fn a_half_state_carried_forward_by_the_retry_is_not_meant() {
        let history = vec![
            state(10, false, false, "a"),
            state(12, true, false, "a"), // status patch after the refused spec patch (rv 11)
            state(15, true, false, "b"), // retry: conditions patch
            state(16, true, true, "b"),  // retry: spec patch
            state(17, true, true, "c"),
        ];
        let meant = meant_among(
            &[refusal(11, false)],
            "ns",
            "ms",
            "m",
            writes(history.clone(), None),
        );
        assert!(!half(&meant), "{meant:#?}");
        assert_eq!(meant.len(), 3);
        // Without the refusal the half states are meant: a provider that writes them fails.
        let all = meant_among(&[], "ns", "ms", "m", writes(history, None));
        assert!(half(&all));
        assert_eq!(all.len(), 5);
    }

    /// The refusal's resourceVersion places it, not when the watch delivered the states: a
    /// refusal while the server was at rv 12 came after the state of rv 12 (however late a
    /// resumed watch delivered that state), so it leaves that state meant and shadows the next;
    /// one before the object existed shadows nothing.
    #[test]
    fn the_resource_version_places_a_refusal() {
        let history = vec![
            state(10, false, false, "a"),
            state(12, true, true, "a"),
            state(14, true, true, "b"),
        ];
        let meant = meant_among(
            &[refusal(12, false)],
            "ns",
            "ms",
            "m",
            writes(history.clone(), None),
        );
        assert_eq!(meant.len(), 2);
        let meant = meant_among(&[refusal(9, false)], "ns", "ms", "m", writes(history, None));
        assert_eq!(meant.len(), 3);
    }

    /// A writer that gives up its reconcile when the spec patch is refused and retries it: the
    /// first state after the refusal is the retry (providerID set), and it and every state
    /// after it are meant.
    #[test]
    fn the_retry_right_after_a_refusal_is_meant() {
        let history = vec![
            state(10, false, false, "a"),
            state(15, false, true, "a"), // the retried spec patch (refused at rv 12)
            state(16, true, true, "b"),  // then the status patch
        ];
        let meant = meant_among(
            &[refusal(12, false)],
            "ns",
            "ms",
            "m",
            writes(history, None),
        );
        assert_eq!(meant.len(), 3, "{meant:#?}");
        assert!(
            meant
                .iter()
                .any(|v| v.pointer("/spec/providerID").is_some())
        );
        assert!(!half(&meant));
    }

    /// A watch that relisted (410 Expired) skipped the retry: the server's retained changes
    /// place the refusal before it, so the state the watch delivered after the gap is meant.
    /// Without them the refusal falls between two states that changed spec and status at
    /// once, and the merged state is taken for the retry too; a half state stays unmeant.
    #[test]
    fn the_servers_changes_fill_what_a_relisting_watch_skipped() {
        let stored_state =
            |rv: u64, old: Option<&Snapshot>, new: &Snapshot| embedded_apiserver::StoredState {
                resource_version: rv,
                event: embedded_apiserver::store::EventType::Modified,
                old: old.map(|o| std::sync::Arc::new(o.value.clone())),
                object: std::sync::Arc::new(new.value.clone()),
            };
        let (s10, s12, s15, s20) = (
            state(10, false, false, "a"),
            state(12, true, false, "b"), // half: status patch after the spec patch refused at 11
            state(15, true, true, "b"),  // the retry
            state(20, true, true, "c"),
        );
        let stored = embedded_apiserver::StoredStates {
            complete_after: 5,
            states: vec![
                stored_state(10, None, &s10),
                stored_state(12, Some(&s10), &s12),
                stored_state(15, Some(&s12), &s15),
                stored_state(20, Some(&s15), &s20),
            ],
        };
        // The watch saw rv 10, then (after relisting) rv 12 and 20: it skipped the retry.
        let seen = vec![s10.clone(), s12.clone(), s20.clone()];
        let meant = meant_among(
            &[refusal(11, false)],
            "ns",
            "ms",
            "m",
            writes(seen.clone(), Some(stored.clone())),
        );
        let rvs: Vec<_> = meant
            .iter()
            .map(|v| v["status"]["conditions"][0]["reason"].clone())
            .collect();
        assert_eq!(rvs, [json!("a"), json!("c")], "{meant:#?}");
        // Recorder only: 12 → 20 changed status only? No: spec too (providerID), so 20 ends
        // the shadow the half state at 12 began.
        let meant = meant_among(&[refusal(11, false)], "ns", "ms", "m", writes(seen, None));
        assert_eq!(meant.len(), 2);
        assert!(!half(&meant));
        // A history older than the server retains keeps the recorder's states before it.
        let mut late = stored;
        late.complete_after = 12;
        late.states.drain(..2);
        let meant = meant_among(
            &[refusal(11, false)],
            "ns",
            "ms",
            "m",
            writes(vec![s10, s12, s20], Some(late)),
        );
        assert_eq!(meant.len(), 2, "{meant:#?}");
        assert!(!half(&meant));
    }

    /// A refused status write shadows states until the status changes again.
    #[test]
    fn a_refused_status_write_shadows_until_the_status_changes() {
        let history = vec![
            state(10, false, false, "a"),
            state(12, false, true, "a"), // spec patch lands; its status patch refused at rv 12
            state(13, false, true, "a"), // another spec-side write: shadowed
            state(14, false, true, "a"), // still no status change: shadowed
            state(15, true, true, "a"),  // the status retry
        ];
        let meant = meant_among(&[refusal(12, true)], "ns", "ms", "m", writes(history, None));
        let ready: Vec<_> = meant
            .iter()
            .map(|v| v["status"].get("ready").is_some())
            .collect();
        assert_eq!(ready, [false, false, true]);
    }
}

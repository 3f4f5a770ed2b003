//! Machinery shared by the scripts: steps with timings, the provider object under test, the
//! pause check, and contract field paths.

use super::Subject;
use super::core_sim::{PAUSED_ANNOTATION, cluster_owner_ref};
use super::env::{Env, EnvError, key};
use super::json::{self, condition};
use super::observer::{Observer, watch_object};
use super::timeline::{Mark, without_bookkeeping};
use super::verdicts::Verdicts;
use crate::report::{Evidence, Outcome, StepRecord};
use crate::rule_ids as id;
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

    /// Short unique prefix for object names of this subject (`mockmachine-b2`).
    pub fn prefix(&self) -> String {
        format!(
            "{}-{}",
            self.subject.resource.kind.to_lowercase(),
            self.contract().short()
        )
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
            &self.env.namespace,
            name,
            self.env.recorder.clone(),
        );
        o.ready(self.env.settings.step_timeout).await;
        self.observers.push(o);
    }

    pub fn keep(&mut self, o: Observer) {
        self.observers.push(o);
    }

    /// The provider object to create from the sample: `name`, sample spec/labels/annotations.
    pub fn provider_object(&self, name: &str, extra_annotations: &[(&str, &str)]) -> Value {
        let sample = self.subject.sample.clone().unwrap_or_else(|| json!({}));
        let mut obj = json!({"metadata": {"name": name}, "spec": sample.get("spec").cloned().unwrap_or(json!({}))});
        for field in ["labels", "annotations"] {
            if let Some(m) = sample.pointer(&format!("/metadata/{field}")) {
                obj["metadata"][field] = m.clone();
            }
        }
        for (k, v) in extra_annotations {
            obj["metadata"]["annotations"][*k] = json!(v);
        }
        obj
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

    /// "Must not act": watches for a provider change (other than the Paused condition) for the
    /// quiet window; None means it stayed quiet.
    pub async fn stays_quiet(&self, name: &str, mark: Mark) -> Option<Vec<String>> {
        self.env
            .recorder
            .quiet(
                &self.key(name),
                mark,
                self.env.quiet_window(),
                without_paused_condition,
            )
            .await
            .map(|s| s.changed)
    }

    /// Waits until `pred` holds on the object under test (Err: last state seen).
    pub async fn wait(
        &self,
        name: &str,
        pred: impl Fn(&Value) -> bool,
    ) -> Result<Value, Option<Value>> {
        self.env
            .recorder
            .wait_for(&self.key(name), self.env.settings.step_timeout, pred)
            .await
    }

    /// Waits until some recorded state of the object under test satisfies `pred`.
    pub async fn wait_ever(
        &self,
        name: &str,
        pred: impl Fn(&Value) -> bool,
    ) -> Result<Value, Option<Value>> {
        self.env
            .recorder
            .wait_ever(&self.key(name), self.env.settings.step_timeout, pred)
            .await
    }

    /// Adopts the object while its Cluster is paused (the provider must stay quiet apart from
    /// the Paused condition), then unpauses. Judges `all/pause` and `all/paused-condition` and
    /// the role's own `<role>/pause` id when given.
    pub async fn adopt_while_paused(
        &mut self,
        name: &str,
        cluster: &str,
        owner_ref: Value,
        role_pause_rule: Option<&str>,
    ) -> Result<(), EnvError> {
        self.owned_while_paused(name, cluster, owner_ref, role_pause_rule, false)
            .await
    }

    /// [`Self::adopt_while_paused`], or with `create` the object is created already owned
    /// (watch started here) while the Cluster is paused.
    pub async fn owned_while_paused(
        &mut self,
        name: &str,
        cluster: &str,
        owner_ref: Value,
        role_pause_rule: Option<&str>,
        create: bool,
    ) -> Result<(), EnvError> {
        let resource = self.subject.resource.clone();
        self.step(if create {
            "pause: create owned while Cluster.spec.paused"
        } else {
            "pause: adopt while Cluster.spec.paused"
        });
        self.env.set_cluster_paused(cluster, true).await?;
        // A provider reading the Cluster from its own cache may see the owner reference before
        // the pause: adopt only once it can have seen the pause.
        self.env
            .await_cluster_propagated(cluster, "the pause", |c| {
                c.pointer("/spec/paused") == Some(&json!(true))
            })
            .await?;
        if create {
            self.watch(&resource, name).await;
        }
        let mark = self.env.recorder.mark();
        if create {
            let mut obj = self.provider_object(name, &[]);
            obj["metadata"]["ownerReferences"] = json!([owner_ref]);
            obj["metadata"]["labels"][super::core_sim::CLUSTER_NAME_LABEL] = json!(cluster);
            self.env.create(&resource, obj).await?;
        } else {
            self.env.adopt(&resource, name, owner_ref, cluster).await?;
        }
        // Under v1beta2 the provider shows it saw the pause (Paused=True); the quiet window
        // starts from there, so a provider that acts right after reporting the pause is caught
        // however slowly it got there. Every change since `mark` counts.
        let paused_seen = if self.contract() == Contract::V1Beta2 {
            Some(
                self.wait(name, |v| paused_condition_is(v, "True", "Paused"))
                    .await
                    .is_ok(),
            )
        } else {
            None
        };
        let acted = self.stays_quiet(name, mark).await;
        let pause_ok = acted.is_none();
        let reason = format!(
            "the provider changed the object while its Cluster was paused ({})",
            acted.clone().unwrap_or_default().join(", ")
        );
        let ev = self.evidence(name, reason.clone(), None);
        self.verdicts
            .check(id::all::PAUSE, pause_ok, reason.clone(), ev.clone());
        if let Some(r) = role_pause_rule {
            self.verdicts.check(r, pause_ok, reason, ev);
        }
        if let Some(seen) = paused_seen {
            self.verdicts.check(
                id::all::PAUSED_CONDITION,
                seen,
                "no condition Paused=True (reason Paused) while paused",
                self.evidence(
                    name,
                    "Paused condition missing or wrong while paused",
                    Some("status.conditions"),
                ),
            );
        }
        self.step("pause: unpause");
        self.env.set_cluster_paused(cluster, false).await?;
        if self.contract() == Contract::V1Beta2 {
            let seen = self
                .wait(name, |v| paused_condition_is(v, "False", "NotPaused"))
                .await;
            self.verdicts.check(
                id::all::PAUSED_CONDITION,
                seen.is_ok(),
                "no condition Paused=False (reason NotPaused) after unpausing",
                self.evidence(
                    name,
                    "Paused condition not reset after unpausing",
                    Some("status.conditions"),
                ),
            );
        }
        Ok(())
    }

    /// Pauses with the object's own `cluster.x-k8s.io/paused` annotation, lets the provider
    /// settle, touches the object, expects quiet from the touch on (and Paused=True under
    /// v1beta2), then removes the annotation.
    pub async fn pause_by_annotation(
        &mut self,
        name: &str,
        role_pause_rule: Option<&str>,
    ) -> Result<(), EnvError> {
        let resource = self.subject.resource.clone();
        self.step("pause: paused annotation");
        self.settle(name).await;
        self.env
            .set_paused_annotation(&resource, name, true)
            .await?;
        if self.contract() == Contract::V1Beta2 {
            let seen = self
                .wait(name, |v| paused_condition_is(v, "True", "Paused"))
                .await;
            self.verdicts.check(
                id::all::PAUSED_CONDITION,
                seen.is_ok(),
                format!("no condition Paused=True with annotation {PAUSED_ANNOTATION}"),
                self.evidence(
                    name,
                    "Paused condition missing with the paused annotation",
                    Some("status.conditions"),
                ),
            );
        }
        // A write already under way when the annotation landed (or worked out from a cache
        // that did not show it yet) may still arrive: let it, then judge from the touch on,
        // which the provider can only see after the annotation.
        self.settle(name).await;
        let mark = self.env.recorder.mark();
        self.env
            .merge_patch(
                &resource,
                name,
                json!({"metadata": {"annotations": {"capi-conformance.io/touched": "1"}}}),
                "touch",
            )
            .await?;
        let acted = self.stays_quiet(name, mark).await;
        let reason = format!(
            "the provider changed the object while it had the paused annotation ({})",
            acted.clone().unwrap_or_default().join(", ")
        );
        let ev = self.evidence(name, reason.clone(), None);
        self.verdicts
            .check(id::all::PAUSE, acted.is_none(), reason.clone(), ev.clone());
        if let Some(r) = role_pause_rule {
            self.verdicts.check(r, acted.is_none(), reason, ev);
        }
        self.env
            .set_paused_annotation(&resource, name, false)
            .await?;
        if self.contract() == Contract::V1Beta2 {
            let seen = self
                .wait(name, |v| paused_condition_is(v, "False", "NotPaused"))
                .await;
            self.verdicts.check(
                id::all::PAUSED_CONDITION,
                seen.is_ok(),
                "no condition Paused=False (reason NotPaused) after removing the annotation",
                self.evidence(
                    name,
                    "Paused condition not reset",
                    Some("status.conditions"),
                ),
            );
        }
        Ok(())
    }

    /// Waits until the provider has stopped changing the object (no change for half the quiet
    /// window, or three round trips on a slow server), bounded by the step timeout, so a pause check starts from a settled state.
    pub async fn settle(&self, name: &str) {
        let calm = self
            .env
            .round_trips
            .stretch(self.env.settings.quiet_window / 2)
            .max(std::time::Duration::from_millis(50));
        let deadline = tokio::time::Instant::now() + self.env.settings.step_timeout;
        let key = self.key(name);
        while tokio::time::Instant::now() < deadline {
            let mark = self.env.recorder.mark();
            let changed = self
                .env
                .recorder
                .quiet(&key, mark, calm, without_bookkeeping)
                .await;
            if changed.is_none() {
                return;
            }
        }
    }

    /// Creates `name` unowned and paused (its own `cluster.x-k8s.io/paused` annotation), marks
    /// it failed through the status subresource (`status.failureReason/failureMessage`), gives
    /// it `owner_ref`, then unpauses: returns whether `acted` became true within the quiet
    /// window (a provider that honours the failure gate stays put). Two gates (owner, pause)
    /// stay closed until the failure is set, so a provider that ignores one of them cannot act
    /// before the failure gate is in place: the step measures only the failure gate.
    /// Contract v1beta1 only.
    pub async fn failed_then_owned(
        &mut self,
        name: &str,
        cluster: &str,
        owner_ref: Value,
        acted: impl Fn(&Value) -> bool,
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
        Ok(self
            .env
            .recorder
            .wait_for(&self.key(name), self.env.quiet_window(), acted)
            .await
            .is_ok())
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

    /// Deletes the object and expects it gone before the deadline.
    pub async fn delete_and_expect_gone(&mut self, name: &str, rule: &str) -> Result<(), EnvError> {
        let resource = self.subject.resource.clone();
        self.step("delete");
        self.env.delete(&resource, name).await?;
        let gone = self
            .env
            .recorder
            .wait_gone(&self.key(name), self.env.settings.step_timeout)
            .await;
        let fins = self
            .env
            .recorder
            .latest(&self.key(name))
            .map(|v| json::finalizers(&v))
            .unwrap_or_default();
        self.verdicts.check(
            rule,
            gone,
            format!(
                "still present {}s after deletion (finalizers: {})",
                self.env.settings.step_timeout.as_secs(),
                fins.join(", ")
            ),
            self.evidence(
                name,
                "object not removed after deletion",
                Some("metadata.finalizers"),
            ),
        );
        self.judge_ready_lifecycle(name);
        Ok(())
    }

    /// Owner gate: object created without owner must stay untouched. Returns the mark after creation.
    pub async fn create_unowned_and_expect_quiet(
        &mut self,
        name: &str,
        rule: &str,
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

pub fn paused_condition_is(v: &Value, status: &str, reason: &str) -> bool {
    condition(v, "Paused").is_some_and(|c| {
        c.get("status").and_then(Value::as_str) == Some(status)
            && c.get("reason").and_then(Value::as_str) == Some(reason)
    })
}

/// Normalizer for "must not act": drops bookkeeping, the Paused condition at either conditions
/// path (`status.conditions`, and `status.v1beta2.conditions` where CAPI v1.9/v1.10 controllers
/// write it on v1beta1 objects, `paused.EnsurePausedCondition`) and `metadata.finalizers`
/// (CAPI's own controllers add their finalizer first, before looking up the owner and pause,
/// `finalizers.EnsureFinalizer`). Anything else the provider writes is acting
/// (docs/core-simulation.md "Rule decisions").
pub fn without_paused_condition(v: &Value) -> Value {
    let mut v = without_bookkeeping(v);
    if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("finalizers");
    }
    let mut status_empty = false;
    if let Some(status) = v.get_mut("status").and_then(Value::as_object_mut) {
        drop_paused(status);
        let mut v1beta2_empty = false;
        if let Some(v1beta2) = status.get_mut("v1beta2").and_then(Value::as_object_mut) {
            drop_paused(v1beta2);
            v1beta2_empty = v1beta2.is_empty();
        }
        if v1beta2_empty {
            status.remove("v1beta2");
        }
        status_empty = status.is_empty();
    }
    if status_empty && let Some(o) = v.as_object_mut() {
        o.remove("status");
    }
    v
}

/// Removes the Paused condition from `holder.conditions` (and the list when it empties).
fn drop_paused(holder: &mut serde_json::Map<String, Value>) {
    if let Some(conds) = holder.get_mut("conditions").and_then(Value::as_array_mut) {
        conds.retain(|c| c.get("type").and_then(Value::as_str) != Some("Paused"));
        if conds.is_empty() {
            holder.remove("conditions");
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paused_condition_is_dropped_by_the_quiet_normalizer() {
        let a = json!({"metadata": {"resourceVersion": "1"}});
        let b = json!({"metadata": {"resourceVersion": "2"},
                       "status": {"conditions": [{"type": "Paused", "status": "True", "reason": "Paused"}]}});
        assert_eq!(without_paused_condition(&a), without_paused_condition(&b));
        assert!(paused_condition_is(&b, "True", "Paused"));
        let c = json!({"status": {"conditions": [{"type": "Paused"}, {"type": "Ready"}]}});
        assert_ne!(without_paused_condition(&a), without_paused_condition(&c));
        // CAPI v1.9/v1.10 on a v1beta1 object: the Paused condition under status.v1beta2.
        let d = json!({"metadata": {"resourceVersion": "3"},
                       "status": {"v1beta2": {"conditions": [{"type": "Paused", "status": "True"}]}}});
        assert_eq!(without_paused_condition(&a), without_paused_condition(&d));
        // EnsureFinalizer before owner and pause: a finalizer alone is not acting.
        let e = json!({"metadata": {"resourceVersion": "4", "finalizers": ["x.io/f"]}});
        assert_eq!(without_paused_condition(&a), without_paused_condition(&e));
        // Anything else is: a provisioned flag, a v1beta2 condition other than Paused.
        let f = json!({"metadata": {"finalizers": ["x.io/f"]}, "status": {"ready": true}});
        assert_ne!(without_paused_condition(&a), without_paused_condition(&f));
        let g =
            json!({"status": {"v1beta2": {"conditions": [{"type": "Paused"}, {"type": "Ready"}]}}});
        assert_ne!(without_paused_condition(&a), without_paused_condition(&g));
    }
}

//! The checks several scripts share: the summary condition and Ready lifecycle, deletion
//! with finalizers, and quiet while unowned.

use super::*;

impl ScriptRun<'_> {
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
        // Under server faults, a write to the object refused before the condition first
        // appeared may have left the first status seen half written: CAPI's `patch.Helper`
        // sends one write as several requests (conditions, object, status), and the others
        // land. Then a missing condition is the environment's doing as much as the provider's.
        let appeared = history
            .iter()
            .find(|s| condition(&s.value, cond).is_some())
            .map(|s| s.resource_version.as_str())
            .unwrap_or_default();
        if !at_creation && !dropped_on_delete && self.refused_before(name, appeared) {
            self.verdicts.inconclusive(
                id::all::READY_CONDITION_LIFECYCLE,
                format!(
                    "environment: the first status the provider wrote has no {cond} condition, but the server refused a write to the object (a server fault) before {cond} first appeared, so that status may be half of a write"
                ),
            );
            return;
        }
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

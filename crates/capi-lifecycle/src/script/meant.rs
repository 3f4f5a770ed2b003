//! Which recorded states of an object its writers meant: under server faults a refused write
//! leaves half states (spec written, status refused, or the other way) that nobody wrote as
//! such; they are left out until the writer's retry.

use super::*;

impl ScriptRun<'_> {
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

    /// Whether the server refused a write to the subject's object `name` (a server fault)
    /// before its resourceVersion `rv`. `false` without server faults.
    pub fn refused_before(&self, name: &str, rv: &str) -> bool {
        let Some(ledger) = &self.env.ledger else {
            return false;
        };
        let Ok(rv) = rv.parse::<u64>() else {
            return false;
        };
        let res = &self.subject.resource;
        let ns = self.env.namespace_of(res).unwrap_or_default();
        ledger
            .refusals_of(ns, &res.plural, name)
            .iter()
            .any(|r| r.resource_version < rv)
    }

    /// The states of `history` (the recorded versions of the subject's object `name`) its
    /// writers meant ([`Self::meant_states`]).
    pub(super) fn meant(&self, name: &str, history: Vec<Snapshot>) -> Vec<Value> {
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
mod tests {
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

//! Tests of the scenario timeline ([`super::Recorder`]).

use super::*;
use serde_json::json;

fn obj(rv: &str, status: Value) -> Value {
    json!({"metadata": {"name": "x", "resourceVersion": rv}, "status": status})
}

#[tokio::test]
async fn records_transitions_and_separates_tool_writes() {
    let r = Recorder::new();
    let m0 = r.mark();
    r.observe("K/x", false, obj("1", json!({})));
    r.tool_write("K/x", "1", "create", None);
    r.observe("K/x", false, obj("1", json!({}))); // duplicate delivery
    r.observe("K/x", false, obj("2", json!({"ready": true})));
    let h = r.history("K/x");
    assert_eq!(h.len(), 2);
    assert_eq!(h[0].event, "ADDED");
    assert_eq!(h[1].changed, vec!["status.ready"]);
    let writes = r.provider_changes_since("K/x", m0, &without_bookkeeping);
    assert_eq!(writes.len(), 1);
    assert_eq!(writes[0].resource_version, "2");
    r.observe("K/x", true, obj("3", json!({"ready": true})));
    assert!(r.is_gone("K/x"));
    assert!(r.latest("K/x").is_none());
    let kinds: Vec<String> = r.entries().into_iter().map(|e| e.event).collect();
    assert!(kinds.contains(&"tool: create".to_string()));
    assert!(kinds.contains(&"DELETED".to_string()));
}

/// A namespace-wide watch also sees other scenarios' objects: the report's timeline and
/// final states keep this scenario's own (written, watched or waited for by it) and the
/// objects that name one of them as owner or Cluster, in recording order.
#[test]
fn entries_keep_the_scenarios_own_objects_and_what_links_to_them() {
    let r = Recorder::new();
    let named = |name: &str, extra: Value| {
        let mut v = json!({"metadata": {"name": name, "resourceVersion": "1"}});
        if let (Some(m), Some(e)) = (v["metadata"].as_object_mut(), extra.as_object()) {
            m.extend(e.clone());
        }
        v
    };
    r.tool_write("Cluster/c", "1", "create", None);
    r.register("M/m");
    r.observe("M/m", false, named("m", json!({})));
    r.observe("M/other", false, named("other", json!({})));
    r.observe(
        "Secret/m-data",
        false,
        named(
            "m-data",
            json!({"ownerReferences": [{"kind": "M", "name": "m"}]}),
        ),
    );
    r.observe(
        "Secret/c-kubeconfig",
        false,
        named(
            "c-kubeconfig",
            json!({"labels": {"cluster.x-k8s.io/cluster-name": "c"}}),
        ),
    );
    r.observe(
        "Secret/d-kubeconfig",
        false,
        named(
            "d-kubeconfig",
            json!({"labels": {"cluster.x-k8s.io/cluster-name": "d"}}),
        ),
    );
    let objects: Vec<String> = r.entries().into_iter().map(|e| e.object).collect();
    assert_eq!(
        objects,
        ["Cluster/c", "M/m", "Secret/m-data", "Secret/c-kubeconfig"]
    );
    assert_eq!(r.last_states().len(), 3);
    // Waiting for an object makes it the scenario's own.
    let _ = r.history("M/other");
    assert!(r.entries().iter().any(|e| e.object == "M/other"));
}

/// A relist after 410 can jump over the tool's own create: the provider's first version
/// the watch delivers is compared with what the create left, not with nothing.
#[test]
fn a_tool_write_the_watch_missed_is_the_base_of_the_next_version() {
    let r = Recorder::new();
    let drop_paused = |v: &Value| {
        let mut v = without_bookkeeping(v);
        if let Some(s) = v.get_mut("status").and_then(Value::as_object_mut) {
            s.remove("paused");
            if s.is_empty() {
                v.as_object_mut().map(|o| o.remove("status"));
            }
        }
        v
    };
    let created = json!({"metadata": {"name": "x", "resourceVersion": "5"}, "spec": {"a": 1}});
    r.observe("K/y", false, obj("4", json!({}))); // another object: not a base for K/x
    let m = r.mark();
    r.tool_write("K/x", "5", "create", Some(created.clone()));
    let mut paused = created.clone();
    paused["metadata"]["resourceVersion"] = json!("6");
    paused["status"] = json!({"paused": true});
    r.observe("K/x", false, paused.clone());
    assert!(r.provider_changes_since("K/x", m, &drop_paused).is_empty());
    // Without the tool's state the same history reads as a provider write of everything.
    let blind = Recorder::new();
    blind.tool_write("K/x", "5", "create", None);
    blind.observe("K/x", false, paused.clone());
    assert_eq!(
        blind
            .provider_changes_since("K/x", Mark::START, &drop_paused)
            .len(),
        1
    );
    // A real change after a missed tool patch is reported against that patch.
    let mut patched = paused.clone();
    patched["metadata"]["resourceVersion"] = json!("7");
    patched["spec"]["b"] = json!(2);
    r.tool_write("K/x", "7", "patch", Some(patched.clone()));
    let mut acted = patched.clone();
    acted["metadata"]["resourceVersion"] = json!("9");
    acted["spec"]["c"] = json!(3);
    r.observe("K/x", false, acted);
    let hits = r.provider_changes_since("K/x", m, &drop_paused);
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].resource_version, "9");
    assert_eq!(hits[0].changed, vec!["spec.c"]);
}

#[tokio::test]
async fn wait_for_wakes_on_later_event_and_times_out() {
    let r = Recorder::new();
    let r2 = r.clone();
    let waiter = tokio::spawn(async move {
        r2.wait_for("K/x", Duration::from_secs(5), |v| {
            v.pointer("/status/ready") == Some(&json!(true))
        })
        .await
    });
    tokio::time::sleep(Duration::from_millis(20)).await;
    r.observe("K/x", false, obj("1", json!({"ready": false})));
    r.observe("K/x", false, obj("2", json!({"ready": true})));
    assert!(waiter.await.unwrap().is_ok());
    let err = r
        .wait_for("K/y", Duration::from_millis(30), |_| true)
        .await
        .unwrap_err();
    assert!(err.is_none());
}

/// What names a deleted owner or Cluster counts until its own deletion is recorded; what names
/// neither never holds the wait.
#[tokio::test]
async fn dependents_gone_waits_for_what_names_the_owners() {
    let r = Recorder::new();
    let secret = |name: &str, labels: Value, owners: Value| {
        json!({"metadata": {"name": name, "resourceVersion": "1",
            "labels": labels, "ownerReferences": owners}})
    };
    let cluster_label = json!({"cluster.x-k8s.io/cluster-name": "e"});
    r.observe(
        "Secret/e-ca",
        false,
        secret("e-ca", cluster_label, json!([])),
    );
    r.observe(
        "Secret/cp-data",
        false,
        secret(
            "cp-data",
            json!({}),
            json!([{"kind": "CP", "name": "cp-e"}]),
        ),
    );
    r.observe("Secret/other", false, secret("other", json!({}), json!([])));
    let owners = ["CP/cp-e".to_string(), "Cluster/e".to_string()];
    assert!(
        !r.wait_dependents_gone(&owners, Duration::from_millis(30))
            .await
    );
    let r2 = r.clone();
    let waiter = tokio::spawn(async move {
        r2.wait_dependents_gone(&owners, Duration::from_secs(5))
            .await
    });
    tokio::time::sleep(Duration::from_millis(20)).await;
    r.observe(
        "Secret/e-ca",
        true,
        secret(
            "e-ca",
            json!({"cluster.x-k8s.io/cluster-name": "e"}),
            json!([]),
        ),
    );
    r.observe(
        "Secret/cp-data",
        true,
        secret(
            "cp-data",
            json!({}),
            json!([{"kind": "CP", "name": "cp-e"}]),
        ),
    );
    assert!(waiter.await.unwrap());
}

#[tokio::test]
async fn quiet_reports_first_counted_provider_write() {
    let r = Recorder::new();
    let same = |v: &Value| without_bookkeeping(v);
    r.observe("K/x", false, obj("1", json!({})));
    let m = r.mark();
    assert!(
        r.quiet("K/x", m, Duration::from_millis(20), same)
            .await
            .is_none()
    );
    r.observe("K/x", false, obj("2", json!({"ready": true})));
    let hit = r.quiet("K/x", m, Duration::from_millis(20), same).await;
    assert_eq!(hit.unwrap().resource_version, "2");
    // A write that changes only what the normalizer drops is not evidence.
    let m = r.mark();
    r.observe("K/x", false, obj("3", json!({"ready": true, "x": 1})));
    let drop_x = |v: &Value| {
        let mut v = without_bookkeeping(v);
        if let Some(s) = v.get_mut("status").and_then(Value::as_object_mut) {
            s.remove("x");
        }
        v
    };
    assert!(
        r.quiet("K/x", m, Duration::from_millis(20), drop_x)
            .await
            .is_none()
    );
}

#[test]
fn rv_order() {
    assert_eq!(rv_before("9", "10"), Some(true));
    assert_eq!(rv_before("10", "9"), Some(false));
    assert_eq!(rv_before("a", "9"), None);
}

/// A "must not act" window is extended while the provider keeps writing the object, until it
/// has left it alone for half the window; then the window ends without the predicate.
#[tokio::test]
async fn a_settled_window_lasts_while_the_provider_is_still_writing() {
    let r = Recorder::new();
    r.tool_write("K/x", "1", "create", None);
    r.observe("K/x", false, obj("1", json!({})));
    let writer = r.clone();
    tokio::spawn(async move {
        // Provider writes at 250 ms and 380 ms, then stops; provisioned never comes.
        tokio::time::sleep(Duration::from_millis(250)).await;
        writer.observe("K/x", false, obj("2", json!({"phase": "a"})));
        tokio::time::sleep(Duration::from_millis(130)).await;
        writer.observe("K/x", false, obj("3", json!({"phase": "b"})));
    });
    let start = tokio::time::Instant::now();
    let provisioned = |v: &Value| v.pointer("/status/ready") == Some(&json!(true));
    let window = Duration::from_millis(300);
    let r2 = r.clone();
    let res = r2
        .wait_for_settled("K/x", window, Duration::from_secs(10), provisioned)
        .await;
    assert!(res.is_err());
    let took = start.elapsed();
    // The last write at 380 ms plus half the window: 530 ms, not 300 ms.
    assert!(
        took >= Duration::from_millis(520) && took < Duration::from_secs(3),
        "{took:?}"
    );
}

/// Only the tool writing (its own versions) does not extend the window, and the cap bounds a
/// provider that never stops writing.
#[tokio::test]
async fn a_settled_window_ignores_the_tools_writes_and_stops_at_its_cap() {
    let r = Recorder::new();
    r.tool_write("K/x", "1", "create", None);
    r.observe("K/x", false, obj("1", json!({})));
    let window = Duration::from_millis(300);
    let start = tokio::time::Instant::now();
    let r2 = r.clone();
    let tool = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(250)).await;
        r2.tool_write("K/x", "2", "patch", None);
        r2.observe("K/x", false, obj("2", json!({"tool": true})));
    });
    assert!(
        r.wait_for_settled("K/x", window, Duration::from_secs(10), |_| false)
            .await
            .is_err()
    );
    let took = start.elapsed();
    assert!(took < Duration::from_millis(540), "{took:?}");
    tool.await.unwrap();

    let busy = Recorder::new();
    let writer = busy.clone();
    let hot = tokio::spawn(async move {
        for i in 0..100u32 {
            writer.observe("K/y", false, obj(&format!("{}", i + 1), json!({"n": i})));
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    let start = tokio::time::Instant::now();
    assert!(
        busy.wait_for_settled("K/y", window, Duration::from_secs(1), |_| false)
            .await
            .is_err()
    );
    let took = start.elapsed();
    assert!(
        took >= Duration::from_millis(990) && took < Duration::from_secs(4),
        "{took:?}"
    );
    hot.abort();
}

/// The acting latency runs from the gate opening to the first version showing the act; versions
/// before the gate opened do not count, and without a mark or an act there is none.
#[tokio::test]
async fn acting_latency_runs_from_the_gate_to_the_first_act() {
    let r = Recorder::new();
    let ready = |v: &Value| v.pointer("/status/ready") == Some(&json!(true));
    r.observe("K/x", false, obj("1", json!({"ready": true})));
    assert_eq!(r.acting_latency("K/x", ready), None, "no gate opened");
    tokio::time::sleep(Duration::from_millis(5)).await;
    r.gate_opens("K/x");
    assert_eq!(
        r.acting_latency("K/x", ready),
        None,
        "acted before the gate"
    );
    tokio::time::sleep(Duration::from_millis(60)).await;
    r.observe("K/x", false, obj("2", json!({"ready": false})));
    r.observe("K/x", false, obj("3", json!({"ready": true})));
    r.observe("K/x", false, obj("4", json!({"ready": true, "more": 1})));
    let took = r.acting_latency("K/x", ready).unwrap();
    assert!(
        took >= Duration::from_millis(60) && took < Duration::from_secs(2),
        "{took:?}"
    );
}

/// An act that comes a window after the wait began but within the window after the evidence
/// that the provider reconciled the object (its Paused=False write) is caught; the same act
/// without that evidence is missed (the clock's window), an act before the evidence counts, and
/// without evidence by the deadline nothing acted.
#[tokio::test]
async fn acts_within_runs_the_window_from_the_evidence() {
    let ready = |v: &Value| v.pointer("/status/unpaused") == Some(&json!(true));
    let acted = |v: &Value| v.pointer("/status/ready") == Some(&json!(true));
    let window = Duration::from_millis(300);
    let deadline = Duration::from_secs(5);
    // Provider: evidence at 400 ms, act 200 ms later (600 ms after the start).
    let late = |r: &Recorder| {
        let w = r.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(400)).await;
            w.observe("K/x", false, obj("2", json!({"unpaused": true})));
            tokio::time::sleep(Duration::from_millis(200)).await;
            w.observe(
                "K/x",
                false,
                obj("3", json!({"unpaused": true, "ready": true})),
            );
        });
    };
    let r = Recorder::new();
    r.observe("K/x", false, obj("1", json!({})));
    late(&r);
    assert!(
        r.acts_within("K/x", window, deadline, Some(&ready), acted)
            .await
    );
    let r = Recorder::new();
    r.observe("K/x", false, obj("1", json!({})));
    late(&r);
    assert!(!r.acts_within("K/x", window, deadline, None, acted).await);
    // Acted with no evidence before it: counts.
    let r = Recorder::new();
    r.observe("K/x", false, obj("1", json!({"ready": true})));
    assert!(
        r.acts_within("K/x", window, deadline, Some(&ready), acted)
            .await
    );
    // No evidence and no act within the deadline: did not act, after the deadline.
    let r = Recorder::new();
    r.observe("K/x", false, obj("1", json!({})));
    let start = tokio::time::Instant::now();
    let short = Duration::from_millis(200);
    assert!(
        !r.acts_within("K/x", window, short, Some(&ready), acted)
            .await
    );
    assert!(start.elapsed() >= short, "{:?}", start.elapsed());
}

//! SC-infracluster (docs/contract.md §4.1): owner gate, pause, finalizer, provisioned, endpoint,
//! failure domains, Ready, delete, externally managed.

use super::core_sim::{CLUSTER_NAME_LABEL, ClusterSpec};
use super::env::EnvError;
use super::json::{self, get, get_bool};
use super::script::{
    ScriptRun, cluster_owner, has_finalizer, has_ready_condition, provisioned_path,
};
use capi_contract::contract::Contract;
use capi_contract::rule_ids as id;
use serde_json::{Value, json};

pub const MANAGED_BY_ANNOTATION: &str = "cluster.x-k8s.io/managed-by";

pub async fn run(r: &mut ScriptRun<'_>) {
    let result = steps(r).await;
    r.finish(result);
}

async fn steps(r: &mut ScriptRun<'_>) -> Result<(), EnvError> {
    let p = r.prefix();
    let ic = format!("{p}-ic");
    let cluster = format!("{p}-c");
    let res = r.subject.resource.clone();
    let contract = r.contract();
    r.step("create Cluster");
    let c = r
        .env
        .create_cluster(
            &cluster,
            ClusterSpec {
                infrastructure: Some((&res, &ic)),
                ..ClusterSpec::default()
            },
        )
        .await?;
    r.create_unowned_and_expect_quiet(&ic, id::infra_cluster::OWNER_GATE)
        .await?;
    r.adopt_while_paused(&ic, &cluster, cluster_owner(&c), None)
        .await?;

    r.step("provision");
    let path = provisioned_path(contract);
    let provision_started = std::time::Instant::now();
    let mut provisioned = r.wait_ever(&ic, |v| get_bool(v, path) == Some(true)).await;
    // How long this provider takes to act on a fresh object: the evidence window of the
    // externally-managed check below.
    let acting_latency = if provisioned.is_ok() {
        provision_started.elapsed()
    } else {
        std::time::Duration::ZERO
    };
    if provisioned.is_err() && !endpoint_set(r.env.recorder.latest(&r.key(&ic)).as_ref()) {
        // The provider may wait for the Cluster's endpoint (endpoint-wait): give it one.
        r.step("provision: set Cluster endpoint");
        r.env
            .set_cluster_endpoint(&cluster, "cp.capi-conformance.invalid", 6443)
            .await?;
        provisioned = r.wait_ever(&ic, |v| get_bool(v, path) == Some(true)).await;
        r.verdicts.check(
            id::infra_cluster::ENDPOINT_WAIT,
            provisioned.is_ok(),
            "not provisioned even after the Cluster endpoint was set",
            r.evidence(
                &ic,
                "no progress after the Cluster endpoint was set",
                Some(path),
            ),
        );
        r.verdicts.skip(
            id::infra_cluster::CONTROL_PLANE_ENDPOINT,
            "the provider does not create the control plane endpoint",
        );
    }
    match provisioned {
        Ok(v) => {
            r.verdicts.pass(id::infra_cluster::PROVISIONED);
            judge_provisioned_state(r, &ic, &v, contract);
        }
        Err(last) => {
            r.verdicts.fail(
                id::infra_cluster::PROVISIONED,
                format!("{path} not true before the deadline"),
                r.evidence(&ic, "never provisioned", Some(path)),
            );
            r.verdicts.check(
                id::infra_cluster::FINALIZER,
                last.as_ref().is_some_and(has_finalizer),
                "no finalizer after the owner reference was set",
                r.evidence(&ic, "no finalizer", Some("metadata.finalizers")),
            );
        }
    }

    r.pause_by_annotation(&ic, None).await?;
    let history = r.env.recorder.history(&r.key(&ic));
    let flipped = sticky_violation(&history.iter().map(|s| &s.value).collect::<Vec<_>>(), path);
    r.verdicts.check(
        id::infra_cluster::PROVISIONED_STICKY,
        !flipped,
        format!("{path} went back to false after being true"),
        r.evidence(&ic, "provisioned flag flipped back", Some(path)),
    );
    r.delete_and_expect_gone(&ic, id::infra_cluster::DELETE)
        .await?;

    r.step("externally managed");
    let ic2 = format!("{p}-ic2");
    r.watch(&res, &ic2).await;
    let mut obj = r.provider_object(&ic2, &[(MANAGED_BY_ANNOTATION, "external")]);
    obj["metadata"]["ownerReferences"] = json!([cluster_owner(&c)]);
    obj["metadata"]["labels"][CLUSTER_NAME_LABEL] = json!(cluster);
    // A sentinel created right after it, the same but not externally managed: once the
    // provider has provisioned the sentinel it has dequeued the older object too (a provider
    // slowed by load or faults is waited for, never passed for a write it had no time to
    // make); the window then still covers twice its acting latency.
    let sentinel = format!("{p}-ic3");
    r.watch(&res, &sentinel).await;
    let mut sentinel_obj = r.provider_object(&sentinel, &[]);
    sentinel_obj["metadata"]["ownerReferences"] = json!([cluster_owner(&c)]);
    sentinel_obj["metadata"]["labels"][CLUSTER_NAME_LABEL] = json!(cluster);
    let mark = r.env.recorder.mark();
    r.env.create(&res, obj).await?;
    r.env.create(&res, sentinel_obj).await?;
    let evidence = !acting_latency.is_zero()
        && r.wait(&sentinel, |v| get_bool(v, path) == Some(true))
            .await
            .is_ok();
    let acted = if evidence {
        r.stays_quiet_after_evidence(&ic2, mark, acting_latency)
            .await
    } else {
        r.stays_quiet_for(&ic2, mark, acting_latency).await
    };
    r.env.delete(&res, &sentinel).await?;
    // Gone before the scenario ends (its finalizer is the provider's), so every run records it.
    let _ = r
        .env
        .recorder
        .wait_gone(&r.key(&sentinel), r.env.step_deadline())
        .await;
    r.verdicts.check(
        id::infra_cluster::EXTERNALLY_MANAGED,
        acted.is_none(),
        format!(
            "the provider wrote to an object annotated {MANAGED_BY_ANNOTATION} ({})",
            acted.unwrap_or_default().join(", ")
        ),
        r.evidence(&ic2, "externally managed object was modified", None),
    );
    r.env.delete(&res, &ic2).await?;
    Ok(())
}

fn endpoint_set(v: Option<&Value>) -> bool {
    v.is_some_and(|v| json::has_text(v, "spec.controlPlaneEndpoint.host"))
}

fn judge_provisioned_state(r: &mut ScriptRun<'_>, ic: &str, v: &Value, contract: Contract) {
    // Finalizer: present no later than the first provisioned state.
    r.verdicts.check(
        id::infra_cluster::FINALIZER,
        has_finalizer(v),
        "provisioned without a finalizer",
        r.evidence(
            ic,
            "no finalizer when provisioned",
            Some("metadata.finalizers"),
        ),
    );
    if r.verdicts
        .get(id::infra_cluster::CONTROL_PLANE_ENDPOINT)
        .is_none()
    {
        let host = json::get_str(v, "spec.controlPlaneEndpoint.host").unwrap_or_default();
        let port = get(v, "spec.controlPlaneEndpoint.port")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        r.verdicts.check(
            id::infra_cluster::CONTROL_PLANE_ENDPOINT,
            !host.is_empty() && (1..=65535).contains(&port),
            format!("endpoint at provisioned time is host {host:?} port {port}"),
            r.evidence(
                ic,
                "invalid control plane endpoint",
                Some("spec.controlPlaneEndpoint"),
            ),
        );
        r.verdicts.skip(
            id::infra_cluster::ENDPOINT_WAIT,
            "the provider creates the control plane endpoint",
        );
    }
    match get(v, "status.failureDomains") {
        None => r.verdicts.skip(
            id::infra_cluster::FAILURE_DOMAINS,
            "the provider reports no failure domains",
        ),
        Some(fd) => {
            let ok = match contract {
                Contract::V1Beta1 => fd.as_object().is_some_and(|m| {
                    m.values()
                        .all(|d| d.get("controlPlane").is_none_or(Value::is_boolean))
                }),
                Contract::V1Beta2 => fd.as_array().is_some_and(|a| {
                    let mut names: Vec<&str> = a
                        .iter()
                        .filter_map(|d| d.get("name").and_then(Value::as_str))
                        .collect();
                    let n = names.len();
                    names.sort_unstable();
                    names.dedup();
                    n == a.len() && names.len() == n && names.iter().all(|s| !s.is_empty())
                }),
            };
            r.verdicts.check(
                id::infra_cluster::FAILURE_DOMAINS,
                ok,
                "status.failureDomains has the wrong shape for the contract or duplicate names",
                r.evidence(ic, "invalid failure domains", Some("status.failureDomains")),
            );
        }
    }
    r.verdicts.check(
        id::infra_cluster::READY_CONDITION,
        has_ready_condition(v),
        "no Ready condition once provisioned",
        r.evidence(ic, "Ready condition missing", Some("status.conditions")),
    );
}

/// True when a boolean flag at `path` is true in some version and false in a later one.
pub fn sticky_violation(history: &[&Value], path: &str) -> bool {
    let mut seen_true = false;
    for v in history {
        match get_bool(v, path) {
            Some(true) => seen_true = true,
            Some(false) if seen_true => return true,
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sticky_detects_flip_back() {
        let t = json!({"status": {"ready": true}});
        let f = json!({"status": {"ready": false}});
        let none = json!({});
        assert!(!sticky_violation(&[&f, &t, &t], "status.ready"));
        assert!(sticky_violation(&[&f, &t, &f], "status.ready"));
        assert!(!sticky_violation(&[&t, &none], "status.ready"));
    }
}

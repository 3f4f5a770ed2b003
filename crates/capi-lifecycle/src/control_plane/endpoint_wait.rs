//! SC-controlplane's experiment for control-plane/endpoint-wait: a Cluster without endpoint.

use super::machines::{machines_of, name_of};
use crate::acting::without_paused_condition;
use crate::core_sim::{CLUSTER_NAME_LABEL, ClusterSpec, cluster_resource, secret_resource};
use crate::env::EnvError;
use crate::json::get;
use crate::script::{ScriptRun, cluster_owner};
use capi_contract::rule_ids as id;
use serde_json::{Value, json};

/// control-plane/endpoint-wait: a control plane whose endpoint comes from elsewhere waits for
/// the Cluster's `spec.controlPlaneEndpoint` before it makes the cluster's kubeconfig or any
/// Machine (KCP: `reconcile` returns "Cluster does not yet have a ControlPlaneEndpoint
/// defined" after its certificates and before `reconcileKubeconfig`). A second Cluster, its
/// infrastructure provisioned and without an endpoint (what core shows while the endpoint is
/// still to come), and a second control plane from the sample, owned by it: once the provider
/// has reconciled it and left it alone, no `<cluster>-kubeconfig` and no Machine may exist. A
/// control plane that sets its own `spec.controlPlaneEndpoint` there is one whose endpoint does
/// not come from elsewhere: skip.
pub(super) async fn judge_endpoint_wait(r: &mut ScriptRun<'_>) -> Result<(), EnvError> {
    let rule = id::control_plane::ENDPOINT_WAIT;
    r.step("Cluster without endpoint");
    let p = r.prefix();
    let (cp, cluster) = (format!("{p}-cp-e"), format!("{p}-e"));
    let res = r.subject.resource.clone();
    let c = r
        .env
        .create_cluster(
            &cluster,
            ClusterSpec {
                control_plane: Some((&res, &cp)),
                ..ClusterSpec::default()
            },
        )
        .await?;
    r.env.set_infra_provisioned(&cluster, true).await?;
    r.watch(&res, &cp).await;
    let mut obj = r.provider_object(&cp, &[]);
    obj["metadata"]["ownerReferences"] = json!([cluster_owner(&c)]);
    obj["metadata"]["labels"][CLUSTER_NAME_LABEL] = json!(cluster);
    r.env.create(&res, obj).await?;
    // Evidence that the provider reconciled it to the end of a pass: its status written, beyond
    // the Paused condition (KCP patches status at the end of every reconcile, the mock after its
    // endpoint, kubeconfig and instances; a finalizer and the Paused condition come first,
    // before any of them), then its quiet.
    let key = r.key(&cp);
    let reconciled = r
        .wait(&cp, |v| {
            without_paused_condition(v)
                .get("status")
                .is_some_and(has_content)
        })
        .await;
    let window = r.env.quiet_window();
    let _ = r
        .env
        .recorder
        .wait_for_settled(&key, window, r.env.step_deadline(), |_| false)
        .await;
    let last = r.env.recorder.latest(&key).unwrap_or(Value::Null);
    // Read, not watched: the main flow's Secret watch may start after this experiment.
    let kubeconfig_name = format!("{cluster}-kubeconfig");
    let kubeconfig = r
        .env
        .api(&secret_resource())
        .get_opt(&kubeconfig_name)
        .await
        .map_err(|source| EnvError::Api {
            action: "read",
            object: format!("Secret/{kubeconfig_name}"),
            source,
        })?
        .is_some();
    let machines = machines_of(r, &cp).await?;
    if reconciled.is_err() {
        r.verdicts.inconclusive(
            rule,
            format!(
                "the control plane {cp} of a Cluster without endpoint wrote no status within {}s: no reconcile to judge its waiting on",
                r.env.step_deadline().as_secs()
            ),
        );
    } else if get(&last, "spec.controlPlaneEndpoint.host")
        .and_then(Value::as_str)
        .is_some_and(|h| !h.is_empty())
    {
        r.verdicts.skip(
            rule,
            "the control plane sets its own spec.controlPlaneEndpoint: the rule applies when the endpoint comes from elsewhere",
        );
    } else {
        let made: Vec<String> = kubeconfig
            .then(|| format!("Secret {cluster}-kubeconfig"))
            .into_iter()
            .chain(machines.iter().map(|m| format!("Machine {}", name_of(m))))
            .collect();
        r.verdicts.check(
            rule,
            made.is_empty(),
            format!(
                "made {} while its Cluster had no spec.controlPlaneEndpoint",
                made.join(", ")
            ),
            r.evidence(&cp, "did not wait for the Cluster's endpoint", None),
        );
    }
    r.end_step();
    Ok(())
}

/// Deletes the experiment's control plane and Cluster, beside the main control plane's deletion
/// once the main flow is done (not before): the control plane may own what the sample references beside the main one (KCP makes itself an
/// owner of its machine template), which the garbage collector deletes with its last owner.
/// Waits (at most a step's deadline each) until the control plane and what belongs to the
/// Cluster or to it (its Secrets) are gone, so that their deletion is in the timeline whatever
/// the provider's pace, not cut off by the scenario's end.
pub(super) async fn remove_endpoint_wait(r: &ScriptRun<'_>) -> Result<(), EnvError> {
    let p = r.prefix();
    let (cp, cluster) = (format!("{p}-cp-e"), format!("{p}-e"));
    let deadline = r.env.step_deadline();
    r.env.delete(&r.subject.resource, &cp).await?;
    r.env.recorder.wait_gone(&r.key(&cp), deadline).await;
    r.env.delete(&cluster_resource(), &cluster).await?;
    let owners = [r.key(&cp), format!("{}/{cluster}", cluster_resource().kind)];
    r.env.recorder.wait_dependents_gone(&owners, deadline).await;
    Ok(())
}

/// Whether `v` holds anything but nulls and empty objects and lists.
fn has_content(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Object(m) => m.values().any(has_content),
        Value::Array(a) => a.iter().any(has_content),
        _ => true,
    }
}

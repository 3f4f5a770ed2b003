//! The IPAM contract's infrastructure side (ipam/consumer-claim, docs/contract.md §17), judged
//! in SC-inframachine when the machine's sample names an IP address pool: CAPI's contract
//! (`contracts/ipam.md`, "Infrastructure Provider") asks a machine that consumes IPs for one
//! IPAddressClaim per pool, whose `spec.poolRef` names the pool, for the machine's Cluster
//! (`spec.clusterName`, or the deprecated `cluster.x-k8s.io/cluster-name` label), owned by the
//! machine or an intermediate object it controls (`controller: true`,
//! `blockOwnerDeletion: true`); it waits for `status.addressRef` before it uses the address,
//! and deleting the machine deletes the claim. The claim's name ("ideally derived from the
//! machine's") is not judged: the contract does not require it.

use super::json::get_bool;
use super::observer::watch_all;
use super::script::ScriptRun;
use capi_contract::model::Evidence;
use capi_contract::rule_ids as id;
use kube::api::{Api, DynamicObject, GroupVersionKind};
use serde_json::Value;

/// A pool the sample names: (group, kind, name).
pub type Pool = (String, String, String);

/// The IP address pools the subject's (resolved) sample names: its references whose group and
/// kind are a pool kind of the run.
pub fn named_pools(r: &ScriptRun<'_>) -> Vec<Pool> {
    let Some(spec) = r.subject.sample.as_ref().and_then(|s| s.get("spec")) else {
        return Vec::new();
    };
    let kinds = &r.subject.companions.pool_kinds;
    super::core_sim::referenced_objects(spec)
        .into_iter()
        .filter(|(g, k, _)| kinds.iter().any(|(pg, pk)| pg == g && pk == k))
        .collect()
}

/// Records every IPAddressClaim of the run namespace, from before the machine can claim.
pub fn watch_claims(r: &mut ScriptRun<'_>) {
    let o = watch_all(
        r.env.client.clone(),
        &super::ipam::claim_resource(),
        &r.env.namespace,
        r.env.recorder.clone(),
    );
    r.keep(o);
}

/// What the claims of one machine showed while it provisioned: the claims found (to be gone
/// with it) and what was wrong.
#[derive(Default)]
pub struct Claims {
    pub found: Vec<String>,
    problems: Vec<(String, Evidence)>,
}

fn claim_evidence(name: &str, message: &str, path: Option<&str>) -> Evidence {
    Evidence {
        message: message.into(),
        object: Some(format!("IPAddressClaim {name}").into()),
        path: path.map(str::to_string),
        resource_version: None,
        location: None,
        source: None,
    }
}

fn rv_of(v: &Value) -> Option<u64> {
    v.pointer("/metadata/resourceVersion")?
        .as_str()?
        .parse()
        .ok()
}

/// The latest recorded state of every IPAddressClaim.
fn recorded_claims(r: &ScriptRun<'_>) -> Vec<(String, Value)> {
    let prefix = "IPAddressClaim/";
    let mut latest: Vec<(String, Value)> = Vec::new();
    for s in r.env.recorder.all() {
        let Some(name) = s.object.strip_prefix(prefix) else {
            continue;
        };
        match latest.iter_mut().find(|(n, _)| n == name) {
            Some(entry) => entry.1 = s.value,
            None => latest.push((name.to_string(), s.value)),
        }
    }
    latest
}

/// The owner reference through which `claim` belongs to the machine `uid`: its own, or its
/// reference to an intermediate object whose controller is the machine.
async fn reference_to_machine(r: &ScriptRun<'_>, claim: &Value, uid: &str) -> Option<Value> {
    let refs = claim
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)?;
    if let Some(direct) = refs.iter().find(|o| o["uid"] == uid) {
        return Some(direct.clone());
    }
    for owner in refs {
        let (Some(av), Some(kind), Some(name)) = (
            owner["apiVersion"].as_str(),
            owner["kind"].as_str(),
            owner["name"].as_str(),
        ) else {
            continue;
        };
        let (group, version) = av.split_once('/').unwrap_or(("", av));
        let gvk = GroupVersionKind::gvk(group, version, kind);
        let Ok((resource, caps)) = kube::discovery::pinned_kind(&r.env.client, &gvk).await else {
            continue;
        };
        let api: Api<DynamicObject> = match caps.scope {
            kube::discovery::Scope::Namespaced => {
                Api::namespaced_with(r.env.client.clone(), &r.env.namespace, &resource)
            }
            kube::discovery::Scope::Cluster => Api::all_with(r.env.client.clone(), &resource),
        };
        let Ok(Some(intermediate)) = api.get_opt(name).await else {
            continue;
        };
        let controlled = intermediate
            .metadata
            .owner_references
            .iter()
            .flatten()
            .any(|o| o.uid == uid && o.controller == Some(true));
        if controlled {
            return Some(owner.clone());
        }
    }
    None
}

/// Judges the claims of the machine `im` (of Cluster `cluster`) once it is provisioned at
/// `path`: one per named pool, for the Cluster, owned as the contract asks, with its address
/// allocated before the machine reported provisioned.
pub async fn judge_provisioned(
    r: &ScriptRun<'_>,
    pools: &[Pool],
    im: &str,
    cluster: &str,
    path: &str,
) -> Claims {
    let mut out = Claims::default();
    let history = r.env.recorder.history(&r.key(im));
    let Some(uid) = history.iter().rev().find_map(|s| {
        s.value
            .pointer("/metadata/uid")?
            .as_str()
            .map(str::to_string)
    }) else {
        return out;
    };
    let provisioned_rv = history
        .iter()
        .find(|s| get_bool(&s.value, path) == Some(true))
        .and_then(|s| s.resource_version.parse::<u64>().ok());
    let claims = recorded_claims(r);
    let kind = r.subject.resource.kind.clone();
    for (group, pool_kind, pool) in pools {
        let mut mine = Vec::new();
        for (name, claim) in &claims {
            let names_pool = claim
                .pointer("/spec/poolRef/apiGroup")
                .and_then(Value::as_str)
                == Some(group)
                && claim.pointer("/spec/poolRef/kind").and_then(Value::as_str) == Some(pool_kind)
                && claim.pointer("/spec/poolRef/name").and_then(Value::as_str) == Some(pool);
            if !names_pool {
                continue;
            }
            if let Some(owner) = reference_to_machine(r, claim, &uid).await {
                mine.push((name.clone(), claim.clone(), owner));
            }
        }
        if mine.is_empty() {
            let msg = format!(
                "no IPAddressClaim of {pool_kind} {pool} is owned by {kind} {im} (directly or through an object it controls)"
            );
            out.problems.push((
                msg.clone(),
                r.evidence(im, msg, Some("metadata.ownerReferences")),
            ));
            continue;
        }
        for (name, claim, owner) in mine {
            out.found.push(name.clone());
            if owner["controller"] != true || owner["blockOwnerDeletion"] != true {
                let msg = format!(
                    "IPAddressClaim {name}: its owner reference to {} {} is not controller: true with blockOwnerDeletion: true",
                    owner["kind"].as_str().unwrap_or_default(),
                    owner["name"].as_str().unwrap_or_default()
                );
                out.problems.push((
                    msg.clone(),
                    claim_evidence(&name, &msg, Some("metadata.ownerReferences")),
                ));
            }
            let for_cluster = claim.pointer("/spec/clusterName").and_then(Value::as_str)
                == Some(cluster)
                || claim
                    .pointer("/metadata/labels/cluster.x-k8s.io~1cluster-name")
                    .and_then(Value::as_str)
                    == Some(cluster);
            if !for_cluster {
                let msg = format!(
                    "IPAddressClaim {name}: neither spec.clusterName nor the cluster.x-k8s.io/cluster-name label names Cluster {cluster}"
                );
                out.problems.push((
                    msg.clone(),
                    claim_evidence(&name, &msg, Some("spec.clusterName")),
                ));
            }
            // The order of two objects' writes: their resourceVersions (one etcd revision
            // counter on a real cluster, one counter on the embedded server). The claims' watch
            // may deliver the allocation after the machine's watch delivered "provisioned":
            // wait for it (up to the step deadline) before reading the claim's history.
            let claim_key = format!("IPAddressClaim/{name}");
            let allocated = |v: &Value| {
                v.pointer("/status/addressRef/name")
                    .and_then(Value::as_str)
                    .is_some_and(|n| !n.is_empty())
            };
            let _ = r
                .env
                .recorder
                .wait_for(&claim_key, r.env.step_deadline(), allocated)
                .await;
            let allocated_rv = r
                .env
                .recorder
                .history(&claim_key)
                .iter()
                .find(|s| allocated(&s.value))
                .and_then(|s| rv_of(&s.value));
            let early = match (provisioned_rv, allocated_rv) {
                (Some(p), Some(a)) => a > p,
                (Some(_), None) => true,
                _ => false,
            };
            if early {
                let msg = format!(
                    "{kind} {im} reported provisioned before IPAddressClaim {name} had status.addressRef"
                );
                out.problems.push((
                    msg.clone(),
                    claim_evidence(&name, &msg, Some("status.addressRef")),
                ));
            }
        }
    }
    out
}

/// After the machine `im` was deleted: its claims must be gone too; then the verdict. A
/// machine still there (infra-machine/delete) says nothing of its claims' deletion: without
/// another problem the rule is skipped.
pub async fn judge_deleted(r: &mut ScriptRun<'_>, im: &str, mut claims: Claims) {
    let kind = r.subject.resource.kind.clone();
    if !r.env.recorder.is_gone(&r.key(im)) {
        match claims.problems.into_iter().next() {
            None => r.verdicts.skip(
                id::ipam::CONSUMER_CLAIM,
                format!("{kind} {im} was not deleted (see infra-machine/delete): whether its claims go with it cannot be told"),
            ),
            Some((msg, ev)) => r.verdicts.fail(id::ipam::CONSUMER_CLAIM, msg, ev),
        }
        return;
    }
    let deadline = r.env.step_deadline();
    for name in &claims.found {
        if !r
            .env
            .recorder
            .wait_gone(&format!("IPAddressClaim/{name}"), deadline)
            .await
        {
            let msg = format!("IPAddressClaim {name} still present after {kind} {im} was deleted");
            claims.problems.push((
                msg.clone(),
                claim_evidence(name, &msg, Some("metadata.ownerReferences")),
            ));
        }
    }
    match claims.problems.into_iter().next() {
        None => r.verdicts.pass(id::ipam::CONSUMER_CLAIM),
        Some((msg, ev)) => r.verdicts.fail(id::ipam::CONSUMER_CLAIM, msg, ev),
    }
}

/// The skip when the sample names no pool.
pub fn skip_without_pools(r: &mut ScriptRun<'_>) {
    let reason = format!(
        "the {} sample names no IP address pool: the provider consumes no IPs in this run (name a pool of an IPAM provider in the sample to judge it)",
        r.subject.resource.kind
    );
    r.verdicts.skip(id::ipam::CONSUMER_CLAIM, reason);
}

//! SC-ipam (docs/contract.md §17; CAPI's IPAM contract, "Normal IPAddressClaim", "Deleted
//! IPAddressClaim", "Clusterctl Move"): the tool plays the infrastructure provider that claims
//! addresses from the subject's pool kind, and core's Clusters.
//!
//! DRAFT (issue 24, session 26): not yet registered in `scenarios/mod.rs`; the mock's pool and
//! controller are on the same branch (crates/capi-mock-provider). What is left: the planning
//! side (an ipam-pool subject without a contract column), the baseline sample, the runner's
//! cells for a column without a contract, and the tests.

use super::core_sim::{CLUSTER_NAME_LABEL, ClusterSpec, PAUSED_ANNOTATION};
use super::env::{EnvError, key};
use super::json::{self, condition, get_str};
use super::script::ScriptRun;
use crate::rule_ids as id;
use kube::discovery::ApiResource;
use serde_json::{Value, json};

/// CAPI core's IPAM group and the version the tool writes claims at.
pub const IPAM_GROUP: &str = "ipam.cluster.x-k8s.io";
pub const IPAM_VERSION: &str = "v1beta2";
/// The finalizer the contract suggests for IPAddresses.
pub const PROTECT_ADDRESS_FINALIZER: &str = "ipam.cluster.x-k8s.io/protect-address";

pub fn claim_resource() -> ApiResource {
    ipam_resource("IPAddressClaim", "ipaddressclaims")
}

pub fn address_resource() -> ApiResource {
    ipam_resource("IPAddress", "ipaddresses")
}

fn ipam_resource(kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: IPAM_GROUP.into(),
        version: IPAM_VERSION.into(),
        api_version: format!("{IPAM_GROUP}/{IPAM_VERSION}"),
        kind: kind.into(),
        plural: plural.into(),
    }
}

pub async fn run(r: &mut ScriptRun<'_>) {
    let result = steps(r).await;
    r.finish(result);
}

/// A claim of `pool` (group, kind, name) for `cluster`, named `name`.
fn claim(name: &str, pool: (&str, &str, &str), cluster: &str) -> Value {
    json!({
        "metadata": {"name": name},
        "spec": {
            "clusterName": cluster,
            "poolRef": {"apiGroup": pool.0, "kind": pool.1, "name": pool.2},
        },
    })
}

async fn steps(r: &mut ScriptRun<'_>) -> Result<(), EnvError> {
    let p = r.prefix();
    let pool_res = r.subject.resource.clone();
    let claims = claim_resource();
    let addresses = address_resource();
    let (group, kind) = (pool_res.group.clone(), pool_res.kind.clone());

    r.step("Cluster and pool");
    let cluster = format!("{p}-c");
    r.env.create_cluster(&cluster, ClusterSpec::default()).await?;
    let pool = format!("{p}-pool");
    r.watch(&pool_res, &pool).await;
    let mut obj = r.provider_object(&pool, &[]);
    // As the contract asks of pools that move with their Cluster (clusterctl move).
    obj["metadata"]["labels"][CLUSTER_NAME_LABEL] = json!(cluster);
    r.env.create(&pool_res, obj).await?;

    // The claims the provider must leave alone, created before the one it must fulfil: once
    // it has fulfilled that one, it has seen these too.
    r.step("claims to leave alone");
    let paused_cluster = format!("{p}-cp");
    r.env
        .create_cluster(&paused_cluster, ClusterSpec::default())
        .await?;
    r.env.set_cluster_paused(&paused_cluster, true).await?;
    let annotated_cluster = format!("{p}-ca");
    r.env
        .create_cluster(&annotated_cluster, ClusterSpec::default())
        .await?;
    r.env
        .set_paused_annotation(&annotated_cluster, true)
        .await?;
    let foreign = format!("{p}-foreign");
    let untouched: Vec<(String, Value, id::RuleIdRef)> = vec![
        (
            foreign.clone(),
            claim(&foreign, ("ipam.other.example.com", "OtherIPPool", &pool), &cluster),
            id::ipam::CLAIM_FILTER,
        ),
        (
            format!("{p}-paused"),
            claim(&format!("{p}-paused"), (&group, &kind, &pool), &paused_cluster),
            id::ipam::PAUSED,
        ),
        (
            format!("{p}-annotated"),
            claim(&format!("{p}-annotated"), (&group, &kind, &pool), &annotated_cluster),
            id::ipam::PAUSED,
        ),
        (
            format!("{p}-nocluster"),
            claim(&format!("{p}-nocluster"), (&group, &kind, &pool), &format!("{p}-missing")),
            id::ipam::PAUSED,
        ),
    ];
    let mark = r.env.recorder.mark();
    for (name, obj, _) in &untouched {
        r.watch(&claims, name).await;
        r.watch(&addresses, name).await;
        r.env.create(&claims, obj.clone()).await?;
    }

    r.step("claim");
    let good = format!("{p}-claim");
    r.watch(&claims, &good).await;
    r.watch(&addresses, &good).await;
    let started = std::time::Instant::now();
    r.env
        .create(&claims, claim(&good, (&group, &kind, &pool), &cluster))
        .await?;
    let deadline = r.env.step_deadline();
    let claim_key = key(&claims, &good);
    let address_key = key(&addresses, &good);
    let fulfilled = r
        .env
        .recorder
        .wait_for(&claim_key, deadline, |v| {
            json::has_text(v, "status.addressRef.name")
        })
        .await;
    let latency = started.elapsed();
    let address = r
        .env
        .recorder
        .wait_for(&address_key, deadline, |_| true)
        .await;
    judge_claim(r, &good, fulfilled.as_ref().ok().or(fulfilled.as_ref().err().and_then(Option::as_ref)));
    judge_address(r, &good, &pool, address.as_ref().ok());

    r.step("claims left alone");
    let window = (latency * 2)
        .max(r.env.quiet_window())
        .min(r.env.step_deadline());
    tokio::time::sleep(window).await;
    for (name, _, rule) in &untouched {
        let claim_now = r.env.recorder.latest(&key(&claims, name));
        let acted_on = claim_now
            .as_ref()
            .is_some_and(|v| !json::finalizers(v).is_empty() || json::has_text(v, "status.addressRef.name"));
        let address_made = r.env.recorder.latest(&key(&addresses, name)).is_some();
        let _ = mark;
        r.verdicts.check(
            rule,
            !acted_on && !address_made,
            format!("the provider acted on claim {name} (finalizer, addressRef or an IPAddress)"),
            r.evidence(name, "claim acted on", None),
        );
    }

    r.step("pool");
    let pool_now = r.env.recorder.latest(&r.key(&pool));
    r.verdicts.check(
        id::ipam::POOL_MOVE_LABEL,
        pool_now
            .as_ref()
            .and_then(|v| get_str(v, &format!("metadata.labels.{CLUSTER_NAME_LABEL}")))
            == Some(cluster.as_str()),
        format!("the pool lost its {CLUSTER_NAME_LABEL} label"),
        r.evidence(&pool, "move label removed", Some("metadata.labels")),
    );
    r.verdicts.check(
        id::ipam::POOL_READY_CONDITION,
        pool_now.as_ref().is_some_and(|v| condition(v, "Ready").is_some()),
        "no Ready condition on the pool once it served a claim",
        r.evidence(&pool, "Ready condition missing", Some("status.conditions")),
    );

    r.step("delete claim");
    r.env.delete(&claims, &good).await?;
    let deadline = r.env.step_deadline();
    let claim_gone = r.env.recorder.wait_gone(&claim_key, deadline).await;
    let address_gone = r.env.recorder.wait_gone(&address_key, deadline).await;
    r.verdicts.check(
        id::ipam::DELETE,
        claim_gone && address_gone,
        format!(
            "after the claim's deletion: claim {}, IPAddress {}",
            if claim_gone { "gone" } else { "still present" },
            if address_gone { "gone" } else { "still present" }
        ),
        r.evidence(&good, "claim deletion did not release the address", None),
    );
    Ok(())
}

fn judge_claim(r: &mut ScriptRun<'_>, name: &str, claim: Option<&Value>) {
    let fins = claim.map(json::finalizers).unwrap_or_default();
    r.verdicts.check(
        id::ipam::CLAIM_FINALIZER,
        !fins.is_empty(),
        "the claim has no finalizer of the provider",
        r.evidence(name, "no finalizer on the claim", Some("metadata.finalizers")),
    );
    r.verdicts.check(
        id::ipam::ADDRESS_REF,
        claim.and_then(|v| get_str(v, "status.addressRef.name")) == Some(name),
        "status.addressRef.name does not name the claim's IPAddress",
        r.evidence(name, "addressRef missing or wrong", Some("status.addressRef")),
    );
}

fn judge_address(r: &mut ScriptRun<'_>, claim: &str, pool: &str, address: Option<&Value>) {
    let Some(a) = address else {
        r.verdicts.fail(
            id::ipam::ADDRESS_OBJECT,
            format!("no IPAddress named {claim}"),
            r.evidence(claim, "no IPAddress", None),
        );
        return;
    };
    let ip = get_str(a, "spec.address").unwrap_or_default();
    let prefix = a.pointer("/spec/prefix").and_then(Value::as_i64);
    let well_formed = ip.parse::<std::net::IpAddr>().ok().is_some_and(|addr| {
        let max = if addr.is_ipv4() { 32 } else { 128 };
        prefix.is_some_and(|p| (0..=max).contains(&p))
    }) && get_str(a, "spec.claimRef.name") == Some(claim)
        && get_str(a, "spec.poolRef.name") == Some(pool);
    r.verdicts.check(
        id::ipam::ADDRESS_OBJECT,
        well_formed,
        format!("IPAddress {claim}: address {ip:?}, prefix {prefix:?}, claimRef/poolRef as created"),
        r.evidence(claim, "IPAddress malformed", Some("spec")),
    );
    let owners = a
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let owner = |kind: &str, name: &str| {
        owners.iter().find(|o| {
            o.get("kind").and_then(Value::as_str) == Some(kind)
                && o.get("name").and_then(Value::as_str) == Some(name)
        })
    };
    let flag = |o: Option<&Value>, k: &str| o.and_then(|o| o.get(k)).and_then(Value::as_bool);
    let claim_owner = owner("IPAddressClaim", claim);
    let pool_owner = owner(&r.subject.resource.kind, pool);
    let owners_ok = flag(claim_owner, "controller") == Some(true)
        && flag(claim_owner, "blockOwnerDeletion") == Some(true)
        && flag(pool_owner, "controller") != Some(true)
        && flag(pool_owner, "blockOwnerDeletion") == Some(true);
    r.verdicts.check(
        id::ipam::ADDRESS_OWNERS,
        owners_ok,
        "the IPAddress needs a controller owner reference to the claim and a non-controller one to the pool, both blocking deletion",
        r.evidence(claim, "owner references", Some("metadata.ownerReferences")),
    );
    r.verdicts.check(
        id::ipam::ADDRESS_FINALIZER,
        !json::finalizers(a).is_empty(),
        format!("the IPAddress has no finalizer (e.g. {PROTECT_ADDRESS_FINALIZER})"),
        r.evidence(claim, "no finalizer on the IPAddress", Some("metadata.finalizers")),
    );
}

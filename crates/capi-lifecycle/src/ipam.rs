//! SC-ipam (docs/contract.md §17; CAPI's IPAM contract, "Normal IPAddressClaim", "Deleted
//! IPAddressClaim", "Clusterctl Move"): the tool plays the infrastructure provider that claims
//! addresses from the subject's pool kind, and core's Clusters.
//!
//! The pool comes from the subject's sample (pools need provider-specific spec: ranges, prefix,
//! gateway); its column has no contract when its CRD declares none (real IPAM CRDs do not:
//! core reaches pools through `IPAddressClaim.spec.poolRef`). Claims are written at
//! `ipam.cluster.x-k8s.io/v1beta2`, as CAPI v1.11's infrastructure providers write them.

use super::core_sim::{CLUSTER_NAME_LABEL, ClusterSpec, cluster_resource};
use super::env::{EnvError, key};
use super::json::{self, condition, get_str};
use super::script::ScriptRun;
use capi_contract::model::Evidence;
use capi_contract::rule_ids::{self as id, RuleId};
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

/// Evidence naming an object the script created or expects that is not of the subject's kind.
fn evidence(kind: &str, name: &str, message: &str, path: Option<&str>) -> Evidence {
    Evidence {
        message: message.into(),
        object: Some(format!("{kind} {name}").into()),
        path: path.map(str::to_string),
        resource_version: None,
        location: None,
        source: None,
    }
}

pub async fn run(r: &mut ScriptRun<'_>) {
    let result = steps(r).await;
    r.finish(result);
}

/// The Clusters the claims name: CAPI's Cluster CRD wants a non-empty spec
/// (`minProperties: 1`); an endpoint in the documentation range is the least a Cluster with
/// machines that need addresses has.
fn cluster_spec() -> ClusterSpec<'static> {
    ClusterSpec {
        endpoint: Some(("192.0.2.254", 6443)),
        ..ClusterSpec::default()
    }
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
    r.env.create_cluster(&cluster, cluster_spec()).await?;
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
        .create_cluster(&paused_cluster, cluster_spec())
        .await?;
    r.env.set_cluster_paused(&paused_cluster, true).await?;
    let annotated_cluster = format!("{p}-ca");
    r.env
        .create_cluster(&annotated_cluster, cluster_spec())
        .await?;
    r.env
        .set_paused_annotation(&cluster_resource(), &annotated_cluster, true)
        .await?;
    let foreign = format!("{p}-foreign");
    // A claim of the subject's pool for `cluster`, which must be left alone (ipam/paused).
    let mine = |suffix: &str, cluster: &str| {
        let name = format!("{p}-{suffix}");
        let obj = claim(&name, (&group, &kind, &pool), cluster);
        (name, obj, id::ipam::PAUSED)
    };
    let untouched: Vec<(String, Value, RuleId)> = vec![
        (
            foreign.clone(),
            claim(
                &foreign,
                ("ipam.other.example.com", "OtherIPPool", &pool),
                &cluster,
            ),
            id::ipam::CLAIM_FILTER,
        ),
        mine("paused", &paused_cluster),
        mine("annotated", &annotated_cluster),
        mine("nocluster", &format!("{p}-missing")),
    ];
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
    judge_claim(
        r,
        &good,
        fulfilled
            .as_ref()
            .ok()
            .or(fulfilled.as_ref().err().and_then(Option::as_ref)),
    );
    let pool_obj = r.env.recorder.latest(&r.key(&pool));
    judge_address(r, &good, &pool, pool_obj.as_ref(), address.as_ref().ok());

    r.step("claims left alone");
    let window = (latency * 2)
        .max(r.env.quiet_window())
        .min(r.env.step_deadline());
    tokio::time::sleep(window).await;
    for (name, _, rule) in &untouched {
        let claim_now = r.env.recorder.latest(&key(&claims, name));
        let acted_on = claim_now.as_ref().is_some_and(|v| {
            !json::finalizers(v).is_empty() || json::has_text(v, "status.addressRef.name")
        });
        let address_made = r.env.recorder.latest(&key(&addresses, name)).is_some();
        r.verdicts.check(
            *rule,
            !acted_on && !address_made,
            format!("the provider acted on claim {name} (finalizer, addressRef or an IPAddress)"),
            evidence("IPAddressClaim", name, "claim acted on", None),
        );
    }

    r.step("pool");
    // Once it has served a claim, a pool that keeps a Ready condition has one by now.
    let pool_now = match r
        .env
        .recorder
        .wait_for(&r.key(&pool), r.env.step_deadline(), |v| {
            condition(v, "Ready").is_some()
        })
        .await
    {
        Ok(v) => Some(v),
        Err(last) => last,
    };
    r.verdicts.check(
        id::ipam::POOL_MOVE_LABEL,
        pool_now.as_ref().and_then(|v| {
            v.pointer("/metadata/labels")?
                .get(CLUSTER_NAME_LABEL)?
                .as_str()
        }) == Some(cluster.as_str()),
        format!("the pool lost its {CLUSTER_NAME_LABEL} label"),
        r.evidence(&pool, "move label removed", Some("metadata.labels")),
    );
    r.verdicts.check(
        id::ipam::POOL_READY_CONDITION,
        pool_now
            .as_ref()
            .is_some_and(|v| condition(v, "Ready").is_some()),
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
            if address_gone {
                "gone"
            } else {
                "still present"
            }
        ),
        evidence(
            "IPAddressClaim",
            &good,
            "claim deletion did not release the address",
            None,
        ),
    );
    Ok(())
}

fn judge_claim(r: &mut ScriptRun<'_>, name: &str, claim: Option<&Value>) {
    let fins = claim.map(json::finalizers).unwrap_or_default();
    r.verdicts.check(
        id::ipam::CLAIM_FINALIZER,
        !fins.is_empty(),
        "the claim has no finalizer of the provider",
        evidence(
            "IPAddressClaim",
            name,
            "no finalizer on the claim",
            Some("metadata.finalizers"),
        ),
    );
    r.verdicts.check(
        id::ipam::ADDRESS_REF,
        claim.and_then(|v| get_str(v, "status.addressRef.name")) == Some(name),
        "status.addressRef.name does not name the claim's IPAddress",
        evidence(
            "IPAddressClaim",
            name,
            "addressRef missing or wrong",
            Some("status.addressRef"),
        ),
    );
}

/// Whether `ip` is one of the pool's `spec.addresses` (single IPs, ranges `a-b`, CIDRs: the
/// in-cluster IPAM provider's shape); `None` when the pool describes its addresses otherwise
/// (provider-specific: the membership cannot be read from it).
fn in_pool(ip: std::net::IpAddr, pool: &Value) -> Option<bool> {
    let entries = pool.pointer("/spec/addresses")?.as_array()?;
    let mut known = false;
    for entry in entries.iter().filter_map(Value::as_str).map(str::trim) {
        if let Ok(net) = entry.parse::<ipnet::IpNet>() {
            known = true;
            if net.contains(&ip) {
                return Some(true);
            }
        } else if let Some((a, b)) = entry.split_once('-') {
            let (Ok(a), Ok(b)) = (
                a.trim().parse::<std::net::IpAddr>(),
                b.trim().parse::<std::net::IpAddr>(),
            ) else {
                continue;
            };
            known = true;
            if a.is_ipv4() == ip.is_ipv4() && (a..=b).contains(&ip) {
                return Some(true);
            }
        } else if let Ok(single) = entry.parse::<std::net::IpAddr>() {
            known = true;
            if single == ip {
                return Some(true);
            }
        }
    }
    known.then_some(false)
}

/// What is wrong with an IPAddress's spec for `claim` from `pool` (empty: nothing).
fn address_problems(a: &Value, claim: &str, pool_name: &str, pool: Option<&Value>) -> Vec<String> {
    let mut problems = Vec::new();
    let text = get_str(a, "spec.address").unwrap_or_default();
    let prefix = a.pointer("/spec/prefix").and_then(Value::as_i64);
    match text.parse::<std::net::IpAddr>() {
        Err(_) => problems.push(format!("spec.address {text:?} is not an IP address")),
        Ok(ip) => {
            let max = if ip.is_ipv4() { 32 } else { 128 };
            if prefix.is_some_and(|p| !(0..=max).contains(&p)) {
                problems.push(format!("spec.prefix {prefix:?} outside 0..={max}"));
            }
            if let Some(pool) = pool {
                if in_pool(ip, pool) == Some(false) {
                    problems.push(format!("{ip} is not among the pool's spec.addresses"));
                }
                if let Some(want) = pool.pointer("/spec/prefix").and_then(Value::as_i64)
                    && prefix != Some(want)
                {
                    problems.push(format!("spec.prefix {prefix:?}, the pool's is {want}"));
                }
                if let Some(want) = get_str(pool, "spec.gateway")
                    && get_str(a, "spec.gateway") != Some(want)
                {
                    problems.push(format!(
                        "spec.gateway {:?}, the pool's is {want}",
                        get_str(a, "spec.gateway")
                    ));
                }
            }
        }
    }
    if get_str(a, "spec.claimRef.name") != Some(claim) {
        problems.push(format!("spec.claimRef.name is not {claim}"));
    }
    if get_str(a, "spec.poolRef.name") != Some(pool_name) {
        problems.push(format!("spec.poolRef.name is not {pool_name}"));
    }
    problems
}

fn judge_address(
    r: &mut ScriptRun<'_>,
    claim: &str,
    pool: &str,
    pool_obj: Option<&Value>,
    address: Option<&Value>,
) {
    let Some(a) = address else {
        r.verdicts.fail(
            id::ipam::ADDRESS_OBJECT,
            format!("no IPAddress named {claim}"),
            evidence("IPAddress", claim, "no IPAddress", None),
        );
        return;
    };
    let problems = address_problems(a, claim, pool, pool_obj);
    r.verdicts.check(
        id::ipam::ADDRESS_OBJECT,
        problems.is_empty(),
        format!("IPAddress {claim}: {}", problems.join("; ")),
        evidence("IPAddress", claim, "IPAddress malformed", Some("spec")),
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
        evidence("IPAddress", claim, "owner references", Some("metadata.ownerReferences")),
    );
    r.verdicts.check(
        id::ipam::ADDRESS_FINALIZER,
        !json::finalizers(a).is_empty(),
        format!("the IPAddress has no finalizer (e.g. {PROTECT_ADDRESS_FINALIZER})"),
        evidence(
            "IPAddress",
            claim,
            "no finalizer on the IPAddress",
            Some("metadata.finalizers"),
        ),
    );
}

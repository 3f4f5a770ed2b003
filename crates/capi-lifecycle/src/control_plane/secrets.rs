//! SC-controlplane's judges of the Secrets a control plane keeps: the cluster certificates and
//! the renewal of the kubeconfig's client certificate.

use crate::bootstrap::SECRET_TYPE;
use crate::core_sim::{CLUSTER_NAME_LABEL, secret_resource};
use crate::env::EnvError;
use crate::script::ScriptRun;
use capi_contract::rule_ids as id;
use serde_json::{Value, json};

/// Longest client certificate validity control-plane/kubeconfig-rotation accepts as
/// "reasonably short", in days: twice KCP's year (the contract's example).
pub(super) const MAX_CLIENT_CERT_DAYS: i64 = 2 * 365;

/// The annotation the tool sets on the control plane to stand in for its periodic resync
/// (controller-runtime's sync period) after putting an expiring certificate in place.
pub(super) const RESYNC_ANNOTATION: &str = "capi-conformance.io/resync";

/// The kubeconfig text of a `<cluster>-kubeconfig` Secret (data key `value`).
pub(super) fn kubeconfig_text(secret: &Value) -> Option<String> {
    use base64::Engine;
    let b64 = secret.pointer("/data/value").and_then(Value::as_str)?;
    let bytes = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
    String::from_utf8(bytes).ok()
}

/// control-plane/kubeconfig-rotation: a kubeconfig that authenticates with a client certificate
/// has one of reasonably short validity (at most [`MAX_CLIENT_CERT_DAYS`]), and the control
/// plane renews it before it expires: the tool puts a certificate expiring tomorrow in its
/// place (signed by the cluster's `<cluster>-ca` when that is a CA the tool can sign with),
/// touches the control plane as its resync would, and waits for another certificate, valid
/// for longer (KCP: `reconcileKubeconfig` → `NeedsClientCertRotation`, six months before
/// expiry → `RegenerateSecret`).
/// What the control plane's `<cluster>-kubeconfig` Secret lacks of what the contract asks
/// ("Cluster kubeconfig management": type `cluster.x-k8s.io/secret`, the cluster-name label,
/// the kubeconfig under `value`); empty when it has it all.
pub(super) fn kubeconfig_problems(secret: Option<&Value>, cluster: &str) -> Vec<String> {
    let Some(secret) = secret else {
        return vec!["missing".into()];
    };
    let mut problems = Vec::new();
    match secret.get("type").and_then(Value::as_str) {
        Some(SECRET_TYPE) => {}
        Some(other) => problems.push(format!("type {other:?}, not {SECRET_TYPE}")),
        None => problems.push(format!(
            "no type (the server's default is Opaque), not {SECRET_TYPE}"
        )),
    }
    let label = secret
        .pointer("/metadata/labels")
        .and_then(|l| l.get(CLUSTER_NAME_LABEL))
        .and_then(Value::as_str);
    if label != Some(cluster) {
        problems.push(format!(
            "label {CLUSTER_NAME_LABEL} is {label:?}, not {cluster:?}"
        ));
    }
    if secret.pointer("/data/value").is_none() {
        problems.push("no data key `value`".into());
    }
    problems
}

pub(super) async fn judge_kubeconfig_rotation(
    r: &mut ScriptRun<'_>,
    cp: &str,
    cluster: &str,
) -> Result<(), EnvError> {
    use capi_mock_provider::kubeconfig::{client_certificates, with_client_certificate};
    let rule = id::control_plane::KUBECONFIG_ROTATION;
    let name = format!("{cluster}-kubeconfig");
    let key = format!("Secret/{name}");
    let Some(text) = r
        .env
        .recorder
        .latest(&key)
        .as_ref()
        .and_then(kubeconfig_text)
    else {
        r.verdicts.skip(
            rule,
            format!("no kubeconfig under data key `value` of Secret {name} (see control-plane/kubeconfig-secret)"),
        );
        return Ok(());
    };
    let certs = match client_certificates(&text) {
        Ok(c) => c,
        Err(e) => {
            r.verdicts.fail(
                rule,
                format!("Secret {name}: {e}"),
                r.evidence(cp, "kubeconfig unreadable", None),
            );
            return Ok(());
        }
    };
    if certs.is_empty() {
        r.verdicts.skip(
            rule,
            "the kubeconfig authenticates without a client certificate: the rule applies to client-certificate auth",
        );
        return Ok(());
    }
    let days = |c: &capi_mock_provider::kubeconfig::ClientCertificate| {
        (c.not_after - c.not_before) / 86_400
    };
    if let Some(long) = certs.iter().find(|c| days(c) > MAX_CLIENT_CERT_DAYS) {
        r.verdicts.fail(
            rule,
            format!(
                "the client certificate of user {} is valid for {} days: not reasonably short (KCP: one year; accepted: {MAX_CLIENT_CERT_DAYS} days)",
                long.user,
                days(long)
            ),
            r.evidence(cp, "long-lived kubeconfig client certificate", None),
        );
        return Ok(());
    }
    r.step("kubeconfig client certificate about to expire");
    let pki_err = |e: crate::capi_core::pki::PkiError| EnvError::Invalid(format!("{name}: {e}"));
    let ca = r
        .env
        .recorder
        .latest(&format!("Secret/{cluster}-ca"))
        .and_then(|s| {
            let field = |k: &str| {
                use base64::Engine;
                let b64 = s
                    .pointer(&format!("/data/{}", k.replace('/', "~1")))?
                    .as_str()?;
                let bytes = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
                String::from_utf8(bytes).ok()
            };
            crate::capi_core::pki::Authority::from_pem(&field("tls.crt")?, &field("tls.key")?).ok()
        });
    let ca = match ca {
        Some(ca) => ca,
        None => crate::capi_core::pki::Authority::new("kubernetes").map_err(pki_err)?,
    };
    let short = ca
        .expiring_client("kubernetes-admin", "system:masters")
        .map_err(pki_err)?;
    let replaced = with_client_certificate(&text, &short.cert_pem, &short.key_pem)
        .map_err(|e| EnvError::Invalid(format!("{name}: {e}")))?;
    let ours =
        client_certificates(&replaced).map_err(|e| EnvError::Invalid(format!("{name}: {e}")))?;
    let expiry = ours.iter().map(|c| c.not_after).max().unwrap_or_default();
    {
        use base64::Engine;
        let value = base64::engine::general_purpose::STANDARD.encode(&replaced);
        r.env
            .merge_patch(
                &secret_resource(),
                &name,
                json!({"data": {"value": value}}),
                "put a client certificate expiring tomorrow into the kubeconfig",
            )
            .await?;
    }
    r.env
        .merge_patch(
            &r.subject.resource,
            cp,
            json!({"metadata": {"annotations": {RESYNC_ANNOTATION: r.prefix()}}}),
            "touch the control plane (its periodic resync)",
        )
        .await?;
    let renewed = |v: &Value| {
        kubeconfig_text(v)
            .and_then(|t| client_certificates(&t).ok())
            .is_some_and(|c| !c.is_empty() && c.iter().all(|c| c.not_after > expiry))
    };
    let seen = r
        .env
        .recorder
        .wait_for(&key, r.env.step_deadline(), renewed)
        .await;
    r.verdicts.check(
        rule,
        seen.is_ok(),
        format!(
            "the kubeconfig's client certificate, expiring tomorrow, was not renewed within {}s",
            r.env.step_deadline().as_secs()
        ),
        r.evidence(cp, "kubeconfig client certificate not renewed", None),
    );
    Ok(())
}

/// Certificate Secrets `<cluster>-<purpose>` the provider keeps: type and cluster-name label.
pub(super) async fn judge_certificates(r: &mut ScriptRun<'_>, cp: &str, cluster: &str) {
    let ca = format!("Secret/{cluster}-ca");
    let _ = r
        .env
        .recorder
        .wait_for(&ca, r.env.quiet_window(), |_| true)
        .await;
    let found: Vec<(String, Value)> = ["ca", "etcd", "proxy", "sa"]
        .iter()
        .filter_map(|p| {
            let name = format!("{cluster}-{p}");
            r.env
                .recorder
                .latest(&format!("Secret/{name}"))
                .map(|v| (name, v))
        })
        .collect();
    if found.is_empty() {
        r.verdicts.skip(
            id::control_plane::CERTIFICATES,
            "the provider keeps no <cluster>-<purpose> certificate Secrets",
        );
        return;
    }
    let bad: Vec<&str> = found
        .iter()
        .filter(|(_, s)| {
            s.get("type").and_then(Value::as_str) != Some(SECRET_TYPE)
                || s.pointer("/metadata/labels")
                    .and_then(|l| l.get(CLUSTER_NAME_LABEL))
                    .and_then(Value::as_str)
                    != Some(cluster)
        })
        .map(|(n, _)| n.as_str())
        .collect();
    r.verdicts.check(
        id::control_plane::CERTIFICATES,
        bad.is_empty(),
        format!(
            "certificate Secrets without type {SECRET_TYPE} or the cluster-name label: {}",
            bad.join(", ")
        ),
        r.evidence(cp, "certificate Secrets malformed", None),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubeconfig_problems_name_what_is_wrong() {
        let good = json!({
            "type": SECRET_TYPE,
            "metadata": {"labels": {CLUSTER_NAME_LABEL: "c"}},
            "data": {"value": "a2M="},
        });
        assert!(kubeconfig_problems(Some(&good), "c").is_empty());
        assert_eq!(kubeconfig_problems(None, "c"), ["missing"]);
        // RKE2 v0.21's: no type given, so the server stores Opaque.
        let mut opaque = good.clone();
        opaque["type"] = json!("Opaque");
        assert_eq!(
            kubeconfig_problems(Some(&opaque), "c"),
            [format!("type \"Opaque\", not {SECRET_TYPE}")]
        );
        let bare = json!({"metadata": {}});
        assert_eq!(kubeconfig_problems(Some(&bare), "c").len(), 3);
    }
}

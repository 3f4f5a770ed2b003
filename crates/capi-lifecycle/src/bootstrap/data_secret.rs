//! The bootstrap data Secret as the contract wants it (name, cluster-name label, controller
//! owner, `value` key, type) and the order of the config's status (Secret → dataSecretName →
//! created).

use super::*;

pub(super) fn judge_secret(
    r: &mut ScriptRun<'_>,
    bc: &str,
    cluster: &str,
    name: &str,
    secret: Option<&Value>,
    config: &Value,
) {
    let ev = |msg: &str, path: &str| capi_contract::model::Evidence {
        message: msg.to_string(),
        object: Some(format!("Secret {name}").into()),
        path: Some(path.to_string()),
        resource_version: None,
        location: None,
        source: None,
    };
    let Some(s) = secret else {
        r.verdicts.fail(
            id::bootstrap::SECRET_NAME,
            format!("no Secret named {name:?} (status.dataSecretName) in the config's namespace"),
            r.evidence(bc, "data Secret missing", Some("status.dataSecretName")),
        );
        return;
    };
    r.verdicts.pass(id::bootstrap::SECRET_NAME);
    let label = s
        .pointer("/metadata/labels")
        .and_then(|l| l.get(CLUSTER_NAME_LABEL))
        .and_then(Value::as_str);
    r.verdicts.check(
        id::bootstrap::SECRET_LABEL,
        label == Some(cluster),
        format!("Secret label {CLUSTER_NAME_LABEL} is {label:?}, want {cluster:?}"),
        ev("cluster-name label missing or wrong", "metadata.labels"),
    );
    let config_uid = config.pointer("/metadata/uid");
    let owned = s
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .is_some_and(|refs| {
            refs.iter().any(|o| {
                o.get("controller") == Some(&json!(true))
                    && (o.get("uid") == config_uid || config_uid.is_none())
                    && o.get("name").and_then(Value::as_str) == Some(bc)
            })
        });
    r.verdicts.check(
        id::bootstrap::SECRET_OWNER,
        owned,
        "the Secret has no controller owner reference to the bootstrap config",
        ev(
            "no controller ownerRef to the config",
            "metadata.ownerReferences",
        ),
    );
    let has_value = s.pointer("/data/value").is_some();
    r.verdicts.check(
        id::bootstrap::SECRET_VALUE,
        has_value,
        "the Secret has no data key `value`",
        ev("data key `value` missing", "data"),
    );
    let ty = s.get("type").and_then(Value::as_str).unwrap_or_default();
    r.verdicts.check(
        id::bootstrap::SECRET_TYPE,
        ty == SECRET_TYPE,
        format!("Secret type is {ty:?}, want {SECRET_TYPE:?}"),
        ev("wrong Secret type", "type"),
    );
}

/// Checks Secret → dataSecretName → created order across the recorded histories (by
/// resourceVersion when numeric). Returns the violation, if any.
pub fn order_violation(secret: &[Snapshot], config: &[Snapshot], created: &str) -> Option<String> {
    let secret_added = secret.iter().find(|s| s.event == "ADDED")?;
    let name_set = config
        .iter()
        .find(|s| json::has_text(&s.value, "status.dataSecretName"));
    let created_set = config
        .iter()
        .find(|s| get_bool(&s.value, created) == Some(true));
    if let Some(n) = name_set
        && rv_before(&n.resource_version, &secret_added.resource_version) == Some(true)
    {
        return Some("status.dataSecretName was set before the Secret existed".into());
    }
    if let Some(c) = created_set {
        if rv_before(&c.resource_version, &secret_added.resource_version) == Some(true) {
            return Some(format!("{created} was true before the Secret existed"));
        }
        match name_set {
            None => return Some(format!("{created} true without status.dataSecretName")),
            Some(n) if rv_before(&c.resource_version, &n.resource_version) == Some(true) => {
                return Some(format!(
                    "{created} was true before status.dataSecretName was set"
                ));
            }
            _ => {}
        }
    }
    None
}

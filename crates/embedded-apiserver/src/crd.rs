//! CustomResourceDefinition strategy (docs/embedded-apiserver.md M10): validation on write, initial status,
//! and the status the establishing controller writes.

use serde_json::{Value, json};

use super::error::StatusCause;
use super::meta::{self, str_at};

pub const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

/// Validation causes for a CRD create/update.
pub fn validate(crd: &Value) -> Vec<StatusCause> {
    let mut causes = Vec::new();
    let group = str_at(crd, "/spec/group");
    let plural = str_at(crd, "/spec/names/plural");
    let kind = str_at(crd, "/spec/names/kind");
    let name = meta::name(crd);
    if group.is_empty() {
        causes.push(StatusCause::new(
            "FieldValueRequired",
            "spec.group",
            "Required value",
        ));
    }
    if plural.is_empty() {
        causes.push(StatusCause::new(
            "FieldValueRequired",
            "spec.names.plural",
            "Required value",
        ));
    }
    if kind.is_empty() {
        causes.push(StatusCause::new(
            "FieldValueRequired",
            "spec.names.kind",
            "Required value",
        ));
    }
    if name != format!("{plural}.{group}") {
        causes.push(StatusCause::new(
            "FieldValueInvalid",
            "metadata.name",
            format!("Invalid value: \"{name}\": must be spec.names.plural+\".\"+spec.group"),
        ));
    }
    match str_at(crd, "/spec/scope") {
        "Namespaced" | "Cluster" => {}
        other => causes.push(StatusCause::new(
            "FieldValueNotSupported",
            "spec.scope",
            format!(
                "Unsupported value: \"{other}\": supported values: \"Cluster\", \"Namespaced\""
            ),
        )),
    }
    let versions = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if versions.is_empty() {
        causes.push(StatusCause::new(
            "FieldValueRequired",
            "spec.versions",
            "Required value: must have exactly one version marked as storage version",
        ));
    }
    let storage = versions
        .iter()
        .filter(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .count();
    if !versions.is_empty() && storage != 1 {
        causes.push(StatusCause::new(
            "FieldValueInvalid",
            "spec.versions",
            format!(
                "Invalid value: {}: must have exactly one version marked as storage version",
                json!(
                    versions
                        .iter()
                        .map(|v| str_at(v, "/name"))
                        .collect::<Vec<_>>()
                )
            ),
        ));
    }
    causes.extend(super::webhook::crd_conversion::validate_crd(
        crd,
        meta::uid(crd).is_empty(),
    ));
    for (i, v) in versions.iter().enumerate() {
        let prefix = format!("spec.versions[{i}]");
        match v.pointer("/schema/openAPIV3Schema") {
            Some(schema) => causes.extend(schema_causes(
                schema,
                &format!("{prefix}.schema.openAPIV3Schema"),
            )),
            None => causes.push(StatusCause::new(
                "FieldValueRequired",
                &format!("{prefix}.schema.openAPIV3Schema"),
                "Required value: schemas are required",
            )),
        }
        if let Some(scale) = v.pointer("/subresources/scale") {
            for (key, allowed) in [
                ("specReplicasPath", &[".spec."][..]),
                ("statusReplicasPath", &[".status."][..]),
            ] {
                let p = str_at(scale, &format!("/{key}"));
                if !allowed.iter().any(|a| p.starts_with(a)) {
                    causes.push(StatusCause::new(
                        "FieldValueInvalid",
                        &format!("{prefix}.subresources.scale.{key}"),
                        format!(
                            "Invalid value: \"{p}\": should be a json path under {}",
                            allowed[0].trim_end_matches('.')
                        ),
                    ));
                }
            }
        }
    }
    causes
}

/// Structural-schema causes (the seam for `schema::structural_errors`).
fn schema_causes(schema: &Value, prefix: &str) -> Vec<StatusCause> {
    super::admission::structural_errors(schema, prefix)
}

/// kube's CRD `PrepareForUpdate`: the current storage version is appended to
/// `status.storedVersions` (never removed automatically).
pub fn record_stored_version(crd: &mut Value) {
    let Some(sv) = storage_version(crd) else {
        return;
    };
    if !crd.get("status").is_some_and(Value::is_object) {
        return;
    }
    let stored = &mut crd["status"]["storedVersions"];
    if !stored.is_array() {
        *stored = json!([]);
    }
    if let Some(a) = stored.as_array_mut()
        && !a.iter().any(|s| s.as_str() == Some(sv.as_str()))
    {
        a.push(json!(sv));
    }
}

/// `status.storedVersions` must name versions of `spec.versions` and include the storage one.
pub fn validate_stored_versions(crd: &Value) -> Vec<StatusCause> {
    let Some(stored) = crd
        .pointer("/status/storedVersions")
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    let declared: Vec<&str> = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .map(|vs| vs.iter().map(|v| str_at(v, "/name")).collect())
        .unwrap_or_default();
    let mut causes = Vec::new();
    for (i, s) in stored.iter().enumerate() {
        let s = s.as_str().unwrap_or_default();
        if !declared.contains(&s) {
            causes.push(StatusCause::new(
                "FieldValueInvalid",
                &format!("status.storedVersions[{i}]"),
                format!("Invalid value: \"{s}\": must appear in spec.versions"),
            ));
        }
    }
    if let Some(sv) = storage_version(crd)
        && !stored.is_empty()
        && !stored.iter().any(|s| s.as_str() == Some(sv.as_str()))
    {
        causes.push(StatusCause::new(
            "FieldValueInvalid",
            "status.storedVersions",
            format!(
                "Invalid value: {}: must have the storage version {sv}",
                json!(stored)
            ),
        ));
    }
    causes
}

/// apiextensions v1's `SetDefaults_CustomResourceDefinitionSpec`: the singular and list kind
/// names, conversion strategy None.
pub fn set_defaults(crd: &mut Value) {
    let kind = str_at(crd, "/spec/names/kind").to_string();
    let Some(spec) = crd.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if let Some(names) = spec.get_mut("names").and_then(Value::as_object_mut) {
        if names
            .get("singular")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            names.insert("singular".into(), json!(kind.to_lowercase()));
        }
        if names
            .get("listKind")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
            && !kind.is_empty()
        {
            names.insert("listKind".into(), json!(format!("{kind}List")));
        }
    }
    if spec.get("conversion").is_none_or(Value::is_null) {
        spec.insert("conversion".into(), json!({"strategy": "None"}));
    }
}

/// Initial CRD status on create.
pub fn initial_status(crd: &Value) -> Value {
    // The typed status: conditions a nil slice (null) until a controller sets one.
    json!({
        "conditions": null,
        "acceptedNames": {"plural": "", "kind": ""},
        "storedVersions": storage_version(crd).map(|s| vec![s]).unwrap_or_default(),
    })
}

fn storage_version(crd: &Value) -> Option<String> {
    crd.pointer("/spec/versions")
        .and_then(Value::as_array)?
        .iter()
        .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .map(|v| str_at(v, "/name").to_string())
}

fn accepted_names(crd: &Value) -> Value {
    let mut names = crd
        .pointer("/spec/names")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let kind = str_at(crd, "/spec/names/kind").to_string();
    if str_at(&names, "/singular").is_empty() {
        names["singular"] = json!(kind.to_lowercase());
    }
    if str_at(&names, "/listKind").is_empty() {
        names["listKind"] = json!(format!("{kind}List"));
    }
    names
}

fn condition(type_: &str, status: &str, reason: &str, message: &str, now: &str) -> Value {
    json!({"type": type_, "status": status, "lastTransitionTime": now, "reason": reason, "message": message})
}

/// Sets or replaces a condition, keeping `lastTransitionTime` when the status is unchanged.
pub fn set_condition(status: &mut Value, cond: Value) {
    if !status.get("conditions").is_some_and(Value::is_array) {
        status["conditions"] = json!([]);
    }
    let Some(conds) = status.get_mut("conditions").and_then(Value::as_array_mut) else {
        return;
    };
    let t = str_at(&cond, "/type").to_string();
    if let Some(existing) = conds.iter_mut().find(|c| str_at(c, "/type") == t) {
        if existing.get("status") == cond.get("status") {
            let ltt = existing.get("lastTransitionTime").cloned();
            *existing = cond;
            if let Some(ltt) = ltt {
                existing["lastTransitionTime"] = ltt;
            }
        } else {
            *existing = cond;
        }
    } else {
        conds.push(cond);
    }
}

pub fn condition_true(obj: &Value, type_: &str) -> bool {
    obj.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| str_at(c, "/type") == type_ && str_at(c, "/status") == "True")
        })
}

/// The status the establishing controller wants, or `None` when nothing changes.
pub fn established_status(crd: &Value) -> Option<Value> {
    let now = meta::now_rfc3339();
    let mut status = crd.get("status").cloned().unwrap_or_else(|| json!({}));
    status["acceptedNames"] = accepted_names(crd);
    set_condition(
        &mut status,
        condition(
            "NamesAccepted",
            "True",
            "NoConflicts",
            "no conflicts found",
            &now,
        ),
    );
    set_condition(
        &mut status,
        condition(
            "Established",
            "True",
            "InitialNamesAccepted",
            "the initial names have been accepted",
            &now,
        ),
    );
    let mut stored: Vec<Value> = status
        .get("storedVersions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if let Some(sv) = storage_version(crd)
        && !stored.iter().any(|s| s.as_str() == Some(sv.as_str()))
    {
        stored.push(json!(sv));
    }
    status["storedVersions"] = Value::Array(stored);
    (crd.get("status") != Some(&status)).then_some(status)
}

/// What kube's CRD storage sets when a delete starts: Terminating=True before the cleanup
/// controller has looked at the instances.
pub fn mark_terminating(crd: &mut Value) {
    if !crd.get("status").is_some_and(Value::is_object) {
        crd["status"] = json!({});
    }
    set_condition(
        &mut crd["status"],
        condition(
            "Terminating",
            "True",
            "InstanceDeletionPending",
            "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
            &meta::now_rfc3339(),
        ),
    );
}

/// Status while deleting: Terminating=True (InstanceDeletionPending).
pub fn terminating_status(crd: &Value, remaining: usize) -> Value {
    let mut status = crd.get("status").cloned().unwrap_or_else(|| json!({}));
    let (reason, msg) = if remaining > 0 {
        (
            "InstanceDeletionPending",
            format!(
                "CustomResourceDefinition marked for deletion; {remaining} instances remaining"
            ),
        )
    } else {
        (
            "InstanceDeletionCompleted",
            "removed all instances".to_string(),
        )
    };
    set_condition(
        &mut status,
        condition("Terminating", "True", reason, &msg, &meta::now_rfc3339()),
    );
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd(name: &str) -> Value {
        json!({"metadata": {"name": name}, "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object"}}}]}})
    }

    #[test]
    fn name_must_be_plural_dot_group() {
        assert!(validate(&crd("widgets.example.com")).is_empty());
        let causes = validate(&crd("foo.example.com"));
        assert_eq!(causes.len(), 1);
        assert_eq!(causes[0].field, "metadata.name");
    }

    #[test]
    fn established_status_is_idempotent() {
        let mut c = crd("widgets.example.com");
        c["status"] = initial_status(&c);
        let s = established_status(&c).unwrap();
        assert_eq!(s["acceptedNames"]["listKind"], "WidgetList");
        assert_eq!(s["storedVersions"], json!(["v1"]));
        c["status"] = s;
        assert!(established_status(&c).is_none());
        assert!(condition_true(&c, "Established"));
    }
}

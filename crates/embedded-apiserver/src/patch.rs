//! Patch bodies (docs/embedded-apiserver.md M5): RFC 7386 merge, RFC 6902 JSON patch with Go's
//! missing-path-is-null `test` rule, and the content types kube-apiserver accepts.

use serde_json::Value;

use super::error::ApiError;

pub const JSON_PATCH: &str = "application/json-patch+json";
pub const MERGE_PATCH: &str = "application/merge-patch+json";
pub const STRATEGIC_MERGE_PATCH: &str = "application/strategic-merge-patch+json";
pub const APPLY_PATCH: &str = "application/apply-patch+yaml";

/// Patch kinds by Content-Type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    Json,
    Merge,
    Strategic,
    Apply,
}

impl PatchType {
    pub fn from_content_type(ct: &str) -> Option<Self> {
        let base = ct.split(';').next().unwrap_or_default().trim();
        match base {
            JSON_PATCH => Some(Self::Json),
            MERGE_PATCH => Some(Self::Merge),
            STRATEGIC_MERGE_PATCH => Some(Self::Strategic),
            APPLY_PATCH => Some(Self::Apply),
            _ => None,
        }
    }
}

/// Content types accepted for a resource (no SMP on custom resources).
pub fn accepted(custom: bool) -> Vec<&'static str> {
    if custom {
        vec![JSON_PATCH, MERGE_PATCH, APPLY_PATCH]
    } else {
        vec![JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, APPLY_PATCH]
    }
}

/// RFC 7386 merge patch, applied to an owned target (the caller's copy of the stored object is
/// patched in place, not copied again).
pub fn merge_into(mut target: Value, patch: &Value) -> Result<Value, ApiError> {
    if !patch.is_object() {
        return Err(ApiError::bad_request(
            "error decoding patch: merge patch must be a JSON object",
        ));
    }
    json_patch::merge(&mut target, patch);
    Ok(target)
}

/// RFC 6902 JSON patch. A `test` whose path is missing passes when the expected value is `null`
/// (Go evanphx/json-patch behaviour that kube-runtime's `finalizer()` relies on).
pub fn json_patch(target: &Value, patch: &Value) -> Result<Value, ApiError> {
    let Some(ops) = patch.as_array() else {
        return Err(ApiError::bad_request(
            "error decoding patch: json patch must be an array of operations",
        ));
    };
    let kept: Vec<Value> = ops
        .iter()
        .filter(|op| {
            let is_test = op.get("op").and_then(Value::as_str) == Some("test");
            let null_expected = op.get("value").is_some_and(Value::is_null);
            let path = op.get("path").and_then(Value::as_str).unwrap_or_default();
            !(is_test && null_expected && target.pointer(path).is_none())
        })
        .cloned()
        .collect();
    let parsed: json_patch::Patch = serde_json::from_value(Value::Array(kept))
        .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
    let mut out = target.clone();
    // kube-apiserver answers `NewGenericServerResponse(422, …, err.Error(), …, false)`: the
    // generic 422 text only (the patch library's error is not in the Status), `details: {}`.
    json_patch::patch(&mut out, &parsed).map_err(|_| {
        ApiError::new(
            422,
            "Invalid",
            "the server rejected our request due to an error in our request".to_string(),
        )
        .with_details(serde_json::json!({}))
    })?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn missing_path_tests_equal_to_null() {
        let obj = json!({"metadata": {"name": "w"}});
        let p = json!([
            {"op": "test", "path": "/metadata/finalizers", "value": null},
            {"op": "add", "path": "/metadata/finalizers", "value": ["a"]}
        ]);
        let out = json_patch(&obj, &p).unwrap();
        assert_eq!(out["metadata"]["finalizers"], json!(["a"]));
    }

    #[test]
    fn failing_test_is_422() {
        let obj = json!({"metadata": {"finalizers": ["x"]}});
        let p = json!([{"op": "test", "path": "/metadata/finalizers", "value": null}]);
        let e = json_patch(&obj, &p).unwrap_err();
        assert_eq!(e.code, 422);
        assert_eq!(e.reason, "Invalid");
        assert_eq!(
            e.message,
            "the server rejected our request due to an error in our request"
        );
        assert_eq!(json_patch(&obj, &json!({})).unwrap_err().code, 400);
    }

    #[test]
    fn merge_deletes_nulls() {
        let out = merge_into(
            json!({"a": 1, "b": {"c": 2}}),
            &json!({"a": null, "b": {"d": 3}}),
        )
        .unwrap();
        assert_eq!(out, json!({"b": {"c": 2, "d": 3}}));
        assert_eq!(merge_into(json!({}), &json!([1])).unwrap_err().code, 400);
    }

    #[test]
    fn content_types() {
        assert_eq!(
            PatchType::from_content_type("application/merge-patch+json; charset=utf-8"),
            Some(PatchType::Merge)
        );
        assert_eq!(PatchType::from_content_type("application/json"), None);
        assert!(!accepted(true).contains(&STRATEGIC_MERGE_PATCH));
    }
}

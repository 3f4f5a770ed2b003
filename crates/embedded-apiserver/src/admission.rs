//! The seam between the write pipeline and the schema modules: structural checks for CRDs and
//! the prune → default → validate pipeline for custom resources.

use serde_json::Value;

use super::error::{ApiError, StatusCause};
use super::schema::{self, PipelineOptions};

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
    schema::structural_errors(schema, prefix)
        .into_iter()
        .map(StatusCause::from)
        .collect()
}

/// What the schema pipeline did to a custom resource.
#[derive(Debug, Clone)]
pub struct Admitted {
    pub object: Value,
    pub warnings: Vec<String>,
}

/// Prune, default and validate a custom resource against its version schema (plus ObjectMeta
/// validation). `Err(Invalid)` is a 422, `Err(Strict)` a 400 for unknown fields.
/// `scale`: the CRD version's scale subresource paths (`specReplicasPath`,
/// `statusReplicasPath`), whose values apiextensions checks after the schema.
pub fn admit_custom(
    object: Value,
    old: Option<&Value>,
    schema: Option<&Value>,
    namespaced: bool,
    validation: FieldValidation,
    scale: Option<(&str, &str)>,
) -> Result<Admitted, AdmitError> {
    let Some(schema) = schema else {
        return Ok(Admitted {
            object,
            warnings: Vec::new(),
        });
    };
    let opts = PipelineOptions {
        validate_metadata: Some(namespaced),
        ..PipelineOptions::default()
    };
    let result = match old {
        Some(old) => schema::process_update(object, old, schema, &opts),
        None => schema::process(object, schema, &opts),
    };
    if validation == FieldValidation::Strict && !result.unknown_fields.is_empty() {
        return Err(AdmitError::Strict(result.unknown_fields));
    }
    let mut causes = result.causes.clone();
    if let Some((spec, status)) = scale {
        causes.extend(schema::validate_scale_replicas(
            &result.object,
            spec,
            status,
        ));
    }
    if !causes.is_empty() {
        return Err(AdmitError::Invalid(
            causes.into_iter().map(StatusCause::from).collect(),
        ));
    }
    let warnings = if validation == FieldValidation::Warn {
        result.warnings()
    } else {
        Vec::new()
    };
    Ok(Admitted {
        object: result.object,
        warnings,
    })
}

/// ObjectMeta and content validation for built-in kinds (create when `old` is `None`).
pub fn validate_builtin(
    obj: &mut Value,
    old: Option<&Value>,
    kind: &str,
    namespaced: bool,
) -> Vec<StatusCause> {
    if matches!(kind, "RoleBinding" | "ClusterRoleBinding") {
        schema::default_rbac_subjects(obj);
    }
    if super::webhook::config::is_config_kind(kind) {
        let mutating = kind == "MutatingWebhookConfiguration";
        super::webhook::config::default(obj, mutating);
        let meta = obj.get("metadata").cloned().unwrap_or(Value::Null);
        let mut causes: Vec<StatusCause> =
            schema::validate_object_meta_for_kind(&meta, namespaced, kind)
                .into_iter()
                .map(StatusCause::from)
                .collect();
        causes.extend(super::webhook::config::validate(obj, mutating));
        return causes;
    }
    let meta = obj.get("metadata").cloned().unwrap_or(Value::Null);
    let mut causes = schema::validate_object_meta_for_kind(&meta, namespaced, kind);
    causes.extend(match old {
        Some(old) => schema::validate_builtin_update(kind, obj, old),
        None => schema::validate_builtin(kind, obj),
    });
    causes.into_iter().map(StatusCause::from).collect()
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

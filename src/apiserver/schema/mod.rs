//! CRD `openAPIV3Schema` handling as apiextensions-apiserver does it: structural-schema checks,
//! the prune → default → validate pipeline for custom resources, and ObjectMeta validation.

mod cause;
mod default;
mod goregex;
mod jsonschema;
mod meta;
pub mod names;
mod prune;
mod structural;
mod validate;

pub use cause::{Cause, FieldPath, invalid_message, reason, render_value};
pub use default::apply_defaults;
pub use meta::{TOTAL_ANNOTATION_SIZE_LIMIT, validate_namespace_meta, validate_object_meta};
pub use prune::{OBJECT_META_FIELDS, coerce_object_meta, prune_resource};
pub use structural::structural_errors;
pub use validate::{json_eq, type_name, validate};

use serde_json::Value;

/// What [`process`] does. The default is what a CR create/update gets: prune, default, validate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PipelineOptions {
    /// Drop unknown fields (false for CRDs with `preserveUnknownFields: true`).
    pub prune: bool,
    /// Apply `default`s.
    pub default: bool,
    /// Validate against the schema.
    pub validate: bool,
    /// `Some(namespaced)`: also run [`validate_object_meta`] on `metadata`.
    pub validate_metadata: Option<bool>,
}

impl Default for PipelineOptions {
    fn default() -> Self {
        PipelineOptions {
            prune: true,
            default: true,
            validate: true,
            validate_metadata: None,
        }
    }
}

/// The processed object, the unknown fields that pruning dropped (`spec.bogus`), and the
/// validation causes (empty = valid).
#[derive(Debug, Clone, PartialEq)]
pub struct PipelineResult {
    pub object: Value,
    pub unknown_fields: Vec<String>,
    pub causes: Vec<Cause>,
}

impl PipelineResult {
    /// The `fieldValidation=Strict` 400 message: `strict decoding error: unknown field "a", unknown field "b"`.
    pub fn strict_error_message(&self) -> Option<String> {
        strict_error_message(&self.unknown_fields)
    }

    /// The `fieldValidation=Warn` warning texts, one per unknown field: `unknown field "spec.bogus"`.
    pub fn warnings(&self) -> Vec<String> {
        self.unknown_fields
            .iter()
            .map(|f| format!("unknown field {}", cause::go_quote(f)))
            .collect()
    }
}

/// `strict decoding error: unknown field "spec.bogus"` for a non-empty list.
pub fn strict_error_message(unknown_fields: &[String]) -> Option<String> {
    if unknown_fields.is_empty() {
        return None;
    }
    let parts: Vec<String> = unknown_fields
        .iter()
        .map(|f| format!("unknown field {}", cause::go_quote(f)))
        .collect();
    Some(format!("strict decoding error: {}", parts.join(", ")))
}

/// A CRD version's schema, ready to process objects.
#[derive(Debug, Clone, PartialEq)]
pub struct SchemaPipeline {
    pub schema: Value,
    pub options: PipelineOptions,
}

impl SchemaPipeline {
    /// A pipeline with the default options.
    pub fn new(schema: Value) -> Self {
        SchemaPipeline {
            schema,
            options: PipelineOptions::default(),
        }
    }

    /// Runs [`process`] with this pipeline's schema and options.
    pub fn process(&self, obj: Value) -> PipelineResult {
        process(obj, &self.schema, &self.options)
    }
}

/// Prune → default → validate, in apiextensions order, on a whole resource.
pub fn process(obj: Value, schema: &Value, opts: &PipelineOptions) -> PipelineResult {
    let mut object = obj;
    let mut unknown_fields = Vec::new();
    if opts.prune {
        unknown_fields = prune_resource(&mut object, schema);
    } else if let Some(meta) = object.get_mut("metadata") {
        coerce_object_meta(meta, "metadata", &mut unknown_fields);
    }
    if opts.default {
        apply_defaults(&mut object, schema);
        if opts.prune {
            // Defaults are pruned at CRD creation; this keeps objects clean even if not.
            prune_resource(&mut object, schema);
        }
    }
    let mut causes = Vec::new();
    if let Some(namespaced) = opts.validate_metadata {
        let meta = object.get("metadata").cloned().unwrap_or(Value::Null);
        causes.extend(validate_object_meta(&meta, namespaced));
    }
    if opts.validate {
        validate(&object, schema, "", &mut causes);
    }
    PipelineResult {
        object,
        unknown_fields,
        causes,
    }
}

#[cfg(test)]
mod tests;

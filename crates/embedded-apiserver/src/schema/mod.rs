//! CRD `openAPIV3Schema` handling as apiextensions-apiserver does it, plus the validation the
//! emulator needs for built-in kinds.
//!
//! - [`structural_errors`]: what makes kube reject a CRD schema (structural rules, unsupported
//!   keywords, list/map types, `default`s that do not validate, rule entries).
//! - [`process`] / [`process_update`]: prune (unknown fields recorded) → default → validate
//!   (kube-openapi order and messages, `allOf`/`anyOf`/`oneOf`/`not`, formats) →
//!   `x-kubernetes-validations` (a CEL subset, [`cel`]), with validation ratcheting on update.
//! - [`validate_object_meta_for_kind`], [`validate_builtin`], [`validate_builtin_update`],
//!   [`validate_scale_replicas`]: ObjectMeta, Secret/ConfigMap/RBAC content, scale replicas.
//! - [`Cause`] / [`invalid_message`]: `metav1.StatusCause` and the 422 message.

mod builtin;
mod cause;
pub mod cel;
mod celcheck;
mod default;
mod goregex;
pub mod job;
mod jsonschema;
mod meta;
pub mod names;
mod prune;
mod ratchet;
mod scale;
mod structural;
pub mod typed_decode;
mod validate;
pub mod workloads;

pub use builtin::{
    MAX_SECRET_SIZE, config_map_key, default_rbac_subjects, validate_builtin,
    validate_builtin_update,
};
pub use cause::{Cause, FieldPath, go_quote, invalid_message, reason, render_value};
pub use celcheck::{RULES_NOT_CHECKED, has_rules};
pub use default::apply_defaults;
pub use meta::{
    NameRule, TOTAL_ANNOTATION_SIZE_LIMIT, validate_namespace_meta, validate_object_meta,
    validate_object_meta_for_kind, validate_object_meta_with,
};
pub use prune::{OBJECT_META_FIELDS, coerce_object_meta, prune_resource};
pub use ratchet::ratchet;
pub use scale::validate_scale_replicas;
pub use structural::structural_errors;
pub use validate::{JUNCTOR_FIELD, json_eq, type_name, validate};

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
        unknown_field_warnings(&self.unknown_fields)
    }
}

/// The `fieldValidation=Warn` warning texts, one per unknown field: `unknown field "spec.bogus"`.
pub fn unknown_field_warnings(unknown_fields: &[String]) -> Vec<String> {
    unknown_fields
        .iter()
        .map(|f| format!("unknown field {}", cause::go_quote(f)))
        .collect()
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
        let meta = object.get("metadata").unwrap_or(&Value::Null);
        causes.extend(validate_object_meta(meta, namespaced));
    }
    if opts.validate {
        validate(&object, schema, "", &mut causes);
        run_rules(&object, None, schema, &mut causes);
    }
    PipelineResult {
        object,
        unknown_fields,
        causes,
    }
}

/// `x-kubernetes-validations`, skipped (with kube's notice) when type or enum errors exist.
fn run_rules(object: &Value, old: Option<&Value>, schema: &Value, causes: &mut Vec<Cause>) {
    let blocking = causes
        .iter()
        .any(|c| c.reason == reason::TYPE_INVALID || c.reason == reason::NOT_SUPPORTED);
    if blocking {
        // Walking the whole schema is only worth it on this (rare) path.
        if has_rules(schema) {
            causes.push(Cause::invalid(
                JUNCTOR_FIELD,
                &Value::Null,
                RULES_NOT_CHECKED,
            ));
        }
    } else {
        celcheck::check(object, old, schema, causes);
    }
}

/// [`process`] for an update: causes raised on parts of the object that are unchanged from
/// `old` (the stored object) are dropped, as kube's validation ratcheting does.
pub fn process_update(
    obj: Value,
    old: &Value,
    schema: &Value,
    opts: &PipelineOptions,
) -> PipelineResult {
    let mut result = process(
        obj,
        schema,
        &PipelineOptions {
            validate: false,
            ..opts.clone()
        },
    );
    if opts.validate {
        let mut schema_causes = Vec::new();
        validate(&result.object, schema, "", &mut schema_causes);
        // Ratchet first, so an old invalid value does not block the rules either.
        let mut causes = ratchet(schema_causes, &result.object, old);
        let before = causes.len();
        run_rules(&result.object, Some(old), schema, &mut causes);
        let rule_causes = causes.split_off(before);
        causes.extend(ratchet(rule_causes, &result.object, old));
        result.causes.extend(causes);
    }
    result
}

#[cfg(test)]
mod tests;

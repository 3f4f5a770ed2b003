//! CRD schema validation: apiextensions' `ValidateCustomResourceDefinitionOpenAPISchema`
//! (unsupported keywords), the structural-schema rules (`ValidateStructural`: invariants and
//! completeness), and validation of `default` values.

use super::cause::{Cause, FieldPath};
use super::jsonschema::Schema;
use serde_json::Value;

mod keywords;
mod node;
mod rules;

use self::keywords::openapi_checks;
use self::node::Level;
use self::rules::{completeness, defaults, invariants};

/// Every cause kube-apiserver would report for this `openAPIV3Schema`, with paths under
/// `field_prefix` (e.g. `spec.versions[0].schema.openAPIV3Schema`). Empty = acceptable.
pub fn structural_errors(schema: &Value, field_prefix: &str) -> Vec<Cause> {
    let root = FieldPath::new(field_prefix);
    if !schema.is_object() {
        return vec![Cause::required(root.as_str(), "")];
    }
    let mut out = Vec::new();
    openapi_checks(schema, &root, true, false, None, &mut out);

    let mut structural = Vec::new();
    invariants(Schema(schema), Level::Root, &root, &mut structural);
    completeness(Schema(schema), &root, &mut structural);
    structural.sort_by_key(Cause::error_string);
    let structural_ok = structural.is_empty();
    out.extend(structural);

    if out.is_empty() && structural_ok {
        defaults(Schema(schema), &root, true, &mut out);
    }
    out
}

//! The data half of a static rule (`check:` in `suites/*.yaml`). Rules whose check is a schema
//! field (presence + JSON type per contract) are pure data; rules without a `check` block are
//! implemented in code under their rule id (see `checks`).

use crate::contract::Contract;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// JSON type a schema property must have, as CAPI's unstructured readers demand it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum JsonType {
    Boolean,
    String,
    Integer,
    Number,
    Object,
    Array,
    /// `type: object` with `additionalProperties: {type: string}` (e.g. labels).
    StringMap,
    /// `type: object` with `additionalProperties: {type: object}` (e.g. b1 failure domains).
    ObjectMap,
    /// `type: array` with `items: {type: string}`.
    StringArray,
    /// `type: array` with `items: {type: object}`.
    ObjectArray,
    /// `x-kubernetes-int-or-string: true`.
    IntOrString,
}

impl JsonType {
    pub fn as_str(self) -> &'static str {
        match self {
            JsonType::Boolean => "boolean",
            JsonType::String => "string",
            JsonType::Integer => "integer",
            JsonType::Number => "number",
            JsonType::Object => "object",
            JsonType::Array => "array",
            JsonType::StringMap => "string-map",
            JsonType::ObjectMap => "object-map",
            JsonType::StringArray => "string-array",
            JsonType::ObjectArray => "object-array",
            JsonType::IntOrString => "int-or-string",
        }
    }
}

/// One field a rule looks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldSpec {
    /// Dotted path from the object root, e.g. `status.initialization.provisioned`.
    pub path: String,
    #[serde(rename = "type")]
    pub json_type: JsonType,
}

/// What an absent field means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Presence {
    /// Absent → fail.
    #[default]
    Required,
    /// Absent → skip ("optional feature not implemented"); present with a wrong type → fail.
    IfPresent,
}

/// `check:` of a schema-field rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldCheck {
    /// Fields per contract; the key `both` applies to every contract the rule covers.
    pub fields: BTreeMap<String, Vec<FieldSpec>>,
    #[serde(default)]
    pub presence: Presence,
    /// Skip (condition does not hold) unless this path exists in the schema, e.g. `spec.replicas`
    /// for the scale rules.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition_path: Option<String>,
}

impl FieldCheck {
    /// The fields to check under `contract` (`both` entries first, then contract-specific).
    pub fn fields_for(&self, contract: Contract) -> Vec<&FieldSpec> {
        let mut out: Vec<&FieldSpec> = self.fields.get("both").into_iter().flatten().collect();
        out.extend(self.fields.get(contract.as_str()).into_iter().flatten());
        out
    }

    /// Parses a rule's `check` value; `None` when the rule has no field check.
    pub fn from_value(v: &serde_json::Value) -> Result<Option<FieldCheck>, serde_json::Error> {
        if v.get("fields").is_none() {
            return Ok(None);
        }
        serde_json::from_value(v.clone()).map(Some)
    }
}

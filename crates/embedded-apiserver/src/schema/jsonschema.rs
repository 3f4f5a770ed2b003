//! Read-only accessors over a JSON `openAPIV3Schema` node.

use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// `additionalProperties: true` behaves like a schema that keeps anything.
static ANY: LazyLock<Value> =
    LazyLock::new(|| serde_json::json!({"x-kubernetes-preserve-unknown-fields": true}));

/// A borrowed schema node.
#[derive(Debug, Clone, Copy)]
pub struct Schema<'a>(pub &'a Value);

impl<'a> Schema<'a> {
    /// Raw keyword.
    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.0.get(key)
    }

    /// `type`, when a string.
    pub fn ty(&self) -> Option<&'a str> {
        self.str("type").filter(|t| !t.is_empty())
    }

    /// A string keyword.
    pub fn str(&self, key: &str) -> Option<&'a str> {
        self.0.get(key).and_then(Value::as_str)
    }

    /// A boolean keyword (absent = false).
    pub fn bool(&self, key: &str) -> bool {
        self.0.get(key).and_then(Value::as_bool).unwrap_or(false)
    }

    /// A non-negative integer keyword.
    pub fn u64(&self, key: &str) -> Option<u64> {
        let v = self.0.get(key)?;
        v.as_u64()
            .or_else(|| v.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
    }

    /// A numeric keyword.
    pub fn f64(&self, key: &str) -> Option<f64> {
        self.0.get(key).and_then(Value::as_f64)
    }

    /// `nullable`.
    pub fn nullable(&self) -> bool {
        self.bool("nullable")
    }

    /// `x-kubernetes-int-or-string`.
    pub fn int_or_string(&self) -> bool {
        self.bool("x-kubernetes-int-or-string")
    }

    /// `x-kubernetes-preserve-unknown-fields`.
    pub fn preserve_unknown(&self) -> bool {
        self.bool("x-kubernetes-preserve-unknown-fields")
    }

    /// `x-kubernetes-embedded-resource`.
    pub fn embedded(&self) -> bool {
        self.bool("x-kubernetes-embedded-resource")
    }

    /// `x-kubernetes-list-type`.
    pub fn list_type(&self) -> Option<&'a str> {
        self.str("x-kubernetes-list-type")
    }

    /// `x-kubernetes-list-map-keys`.
    pub fn list_map_keys(&self) -> Vec<String> {
        self.0
            .get("x-kubernetes-list-map-keys")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// `items` when it is a single schema.
    pub fn items(&self) -> Option<Schema<'a>> {
        self.0.get("items").filter(|v| v.is_object()).map(Schema)
    }

    /// `properties`.
    pub fn properties(&self) -> BTreeMap<&'a str, Schema<'a>> {
        self.0
            .get("properties")
            .and_then(Value::as_object)
            .map(|m| m.iter().map(|(k, v)| (k.as_str(), Schema(v))).collect())
            .unwrap_or_default()
    }

    /// One entry of `properties` (no map is built: this runs per field of every write).
    pub fn property(&self, name: &str) -> Option<Schema<'a>> {
        self.0.get("properties")?.get(name).map(Schema)
    }

    /// The schema for the value under `name`: its property, else `additionalProperties`.
    pub fn child(&self, name: &str) -> Option<Schema<'a>> {
        self.property(name).or_else(|| self.additional_properties())
    }

    /// `properties` entries in key order, without building a map.
    pub fn properties_iter(&self) -> impl Iterator<Item = (&'a str, Schema<'a>)> + use<'a> {
        self.0
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|m| m.iter().map(|(k, v)| (k.as_str(), Schema(v))))
    }

    /// Whether `properties` is present and non-empty.
    pub fn has_properties(&self) -> bool {
        self.0
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|m| !m.is_empty())
    }

    /// `additionalProperties` as a schema (`true` keeps anything, `false`/absent = none).
    pub fn additional_properties(&self) -> Option<Schema<'a>> {
        match self.0.get("additionalProperties")? {
            Value::Bool(true) => Some(Schema(&ANY)),
            v @ Value::Object(_) => Some(Schema(v)),
            _ => None,
        }
    }

    /// `required`.
    pub fn required(&self) -> Vec<&'a str> {
        self.0
            .get("required")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }

    /// `default`, when present (a JSON `null` default counts as absent, like Go's nil).
    pub fn default(&self) -> Option<&'a Value> {
        self.0.get("default").filter(|v| !v.is_null())
    }
}

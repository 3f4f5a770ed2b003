//! Label selectors: requirements, matching, and their text form (apimachinery `labels.Selector`, `metav1.LabelSelectorAsSelector`).

use crate::schema::names;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// A selector that could not be parsed or is invalid; `Display` is kube's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SelectorError(pub String);

/// Label selector operators (`selection.Operator`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LabelOp {
    Exists,
    DoesNotExist,
    Equals,
    DoubleEquals,
    NotEquals,
    In,
    NotIn,
    GreaterThan,
    LessThan,
}

impl LabelOp {
    fn as_str(self) -> &'static str {
        match self {
            LabelOp::Exists => "exists",
            LabelOp::DoesNotExist => "!",
            LabelOp::Equals => "=",
            LabelOp::DoubleEquals => "==",
            LabelOp::NotEquals => "!=",
            LabelOp::In => "in",
            LabelOp::NotIn => "notin",
            LabelOp::GreaterThan => "gt",
            LabelOp::LessThan => "lt",
        }
    }
}

/// One `key op values` term of a label selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelRequirement {
    pub key: String,
    pub op: LabelOp,
    /// Sorted, de-duplicated (kube keeps them in a string set).
    pub values: Vec<String>,
}

impl LabelRequirement {
    /// `labels.NewRequirement`: validates the key, the operator's value count and each value.
    pub fn new(key: &str, op: LabelOp, values: Vec<String>) -> Result<Self, SelectorError> {
        let key_errs = names::qualified_name(key);
        if !key_errs.is_empty() {
            return Err(SelectorError(format!(
                "key: Invalid value: \"{key}\": {}",
                key_errs.join("; ")
            )));
        }
        let values: Vec<String> = values
            .into_iter()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let count_err = match op {
            LabelOp::In | LabelOp::NotIn if values.is_empty() => {
                Some("for 'in', 'notin' operators, values set can't be empty")
            }
            LabelOp::Equals | LabelOp::DoubleEquals | LabelOp::NotEquals if values.len() != 1 => {
                Some("exact-match compatibility requires one single value")
            }
            LabelOp::Exists | LabelOp::DoesNotExist if !values.is_empty() => {
                Some("values set must be empty for exists and does not exist")
            }
            LabelOp::GreaterThan | LabelOp::LessThan if values.len() != 1 => {
                Some("for 'Gt', 'Lt' operators, exactly one value is required")
            }
            _ => None,
        };
        if let Some(msg) = count_err {
            return Err(SelectorError(format!(
                "values: Invalid value: {}: {msg}",
                go_slice(&values)
            )));
        }
        if matches!(op, LabelOp::GreaterThan | LabelOp::LessThan) {
            for (i, v) in values.iter().enumerate() {
                if v.parse::<i64>().is_err() {
                    return Err(SelectorError(format!(
                        "values[{i}]: Invalid value: \"{v}\": for 'Gt', 'Lt' operators, the value must be an integer"
                    )));
                }
            }
        }
        for (i, v) in values.iter().enumerate() {
            let errs = names::label_value(v);
            if !errs.is_empty() {
                return Err(SelectorError(format!(
                    "values[{i}]: Invalid value: \"{v}\": {}",
                    errs.join("; ")
                )));
            }
        }
        Ok(LabelRequirement {
            key: key.to_string(),
            op,
            values,
        })
    }

    /// Whether a label set satisfies this requirement.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        let got = labels.get(&self.key);
        match self.op {
            LabelOp::Exists => got.is_some(),
            LabelOp::DoesNotExist => got.is_none(),
            LabelOp::Equals | LabelOp::DoubleEquals | LabelOp::In => {
                got.is_some_and(|v| self.values.contains(v))
            }
            LabelOp::NotEquals | LabelOp::NotIn => got.is_none_or(|v| !self.values.contains(v)),
            LabelOp::GreaterThan | LabelOp::LessThan => {
                let (Some(have), Some(want)) = (
                    got.and_then(|v| v.parse::<i64>().ok()),
                    self.values.first().and_then(|v| v.parse::<i64>().ok()),
                ) else {
                    return false;
                };
                if self.op == LabelOp::GreaterThan {
                    have > want
                } else {
                    have < want
                }
            }
        }
    }
}

pub(super) fn go_slice(values: &[String]) -> String {
    format!("[]string{{{}}}", {
        values
            .iter()
            .map(|v| format!("\"{v}\""))
            .collect::<Vec<_>>()
            .join(", ")
    })
}

impl fmt::Display for LabelRequirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.op {
            LabelOp::Exists => write!(f, "{}", self.key),
            LabelOp::DoesNotExist => write!(f, "!{}", self.key),
            LabelOp::In | LabelOp::NotIn => write!(
                f,
                "{} {} ({})",
                self.key,
                self.op.as_str(),
                self.values.join(",")
            ),
            LabelOp::GreaterThan => write!(f, "{}>{}", self.key, self.values.join(",")),
            LabelOp::LessThan => write!(f, "{}<{}", self.key, self.values.join(",")),
            _ => write!(
                f,
                "{}{}{}",
                self.key,
                self.op.as_str(),
                self.values.join(",")
            ),
        }
    }
}

/// A parsed label selector: requirements ANDed together, sorted by key like kube's.
/// `nothing` is the selector that matches no object (a null `metav1.LabelSelector`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LabelSelector {
    pub requirements: Vec<LabelRequirement>,
    pub nothing: bool,
}

impl LabelSelector {
    /// The selector that matches everything.
    pub fn everything() -> Self {
        Self::default()
    }

    /// The selector that matches nothing.
    pub fn nothing() -> Self {
        LabelSelector {
            requirements: Vec::new(),
            nothing: true,
        }
    }

    /// True when no requirement restricts the selection.
    pub fn is_everything(&self) -> bool {
        !self.nothing && self.requirements.is_empty()
    }

    /// Whether a label set satisfies every requirement.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        !self.nothing && self.requirements.iter().all(|r| r.matches(labels))
    }

    /// Like [`Self::matches`] on a JSON `metadata.labels` object (missing or non-object = no labels).
    pub fn matches_json(&self, labels: Option<&Value>) -> bool {
        let map: BTreeMap<String, String> = labels
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
                    .collect()
            })
            .unwrap_or_default();
        self.matches(&map)
    }

    /// `metav1.LabelSelectorAsSelector` on a JSON `metav1.LabelSelector`
    /// (`matchLabels` + `matchExpressions`); `null` matches nothing, `{}` everything.
    pub fn from_label_selector(selector: &Value) -> Result<Self, SelectorError> {
        let obj = match selector {
            Value::Null => return Ok(Self::nothing()),
            Value::Object(o) => o,
            other => {
                return Err(SelectorError(format!(
                    "label selector must be an object, got {other}"
                )));
            }
        };
        let mut requirements = Vec::new();
        if let Some(ml) = obj.get("matchLabels").filter(|v| !v.is_null()) {
            let ml = ml
                .as_object()
                .ok_or_else(|| SelectorError("matchLabels must be an object".into()))?;
            for (k, v) in ml {
                let v = v.as_str().ok_or_else(|| {
                    SelectorError(format!("matchLabels value for {k:?} must be a string"))
                })?;
                requirements.push(LabelRequirement::new(
                    k,
                    LabelOp::Equals,
                    vec![v.to_string()],
                )?);
            }
        }
        if let Some(me) = obj.get("matchExpressions").filter(|v| !v.is_null()) {
            let me = me
                .as_array()
                .ok_or_else(|| SelectorError("matchExpressions must be a list".into()))?;
            for expr in me {
                let key = expr.get("key").and_then(Value::as_str).unwrap_or_default();
                let op_str = expr
                    .get("operator")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let op = match op_str {
                    "In" => LabelOp::In,
                    "NotIn" => LabelOp::NotIn,
                    "Exists" => LabelOp::Exists,
                    "DoesNotExist" => LabelOp::DoesNotExist,
                    other => {
                        return Err(SelectorError(format!(
                            "{other:?} is not a valid label selector operator"
                        )));
                    }
                };
                let values = expr
                    .get("values")
                    .and_then(Value::as_array)
                    .map(|vs| {
                        vs.iter()
                            .filter_map(|v| v.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default();
                requirements.push(LabelRequirement::new(key, op, values)?);
            }
        }
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(LabelSelector {
            requirements,
            nothing: false,
        })
    }
}

impl fmt::Display for LabelSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.requirements.iter().map(|r| r.to_string()).collect();
        f.write_str(&parts.join(","))
    }
}

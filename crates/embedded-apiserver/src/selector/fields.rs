//! Field selectors (apimachinery `fields.ParseSelector`): terms, escaping, matching.

use super::labels::*;
use super::parse::*;
use std::fmt;
use std::str::FromStr;

/// Field selector operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldOp {
    Equals,
    DoubleEquals,
    NotEquals,
}

impl FieldOp {
    /// `=`, `==` or `!=`.
    pub fn as_str(self) -> &'static str {
        match self {
            FieldOp::Equals => "=",
            FieldOp::DoubleEquals => "==",
            FieldOp::NotEquals => "!=",
        }
    }
}

/// One `field op value` term (value already unescaped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldRequirement {
    pub field: String,
    pub op: FieldOp,
    pub value: String,
}

/// A parsed field selector (`fields.ParseSelector`); terms are sorted as kube sorts them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FieldSelector {
    pub requirements: Vec<FieldRequirement>,
}

impl FieldSelector {
    /// Whether an object satisfies every term; `get` returns the object's value for a field
    /// (`None` when the object has no such field: treated as the empty string, like kube's
    /// `fields.Set` lookup).
    pub fn matches(&self, get: &dyn Fn(&str) -> Option<String>) -> bool {
        self.requirements.iter().all(|r| {
            let have = get(&r.field).unwrap_or_default();
            match r.op {
                FieldOp::Equals | FieldOp::DoubleEquals => have == r.value,
                FieldOp::NotEquals => have != r.value,
            }
        })
    }

    /// True when no term restricts the selection.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// The distinct field names used, for the server's "field label not supported" check.
    pub fn fields(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.requirements.iter().map(|r| r.field.as_str()).collect();
        v.dedup();
        v
    }
}

impl FromStr for FieldSelector {
    type Err = SelectorError;

    fn from_str(selector: &str) -> Result<Self, Self::Err> {
        let mut parts = split_field_terms(selector);
        parts.sort();
        let mut requirements = Vec::new();
        for part in parts.iter().filter(|p| !p.is_empty()) {
            let Some((lhs, op, rhs)) = split_field_term(part) else {
                return Err(err(format!(
                    "invalid selector: '{selector}'; can't understand '{part}'"
                )));
            };
            requirements.push(FieldRequirement {
                field: lhs.to_string(),
                op,
                value: unescape_field_value(rhs)?,
            });
        }
        Ok(FieldSelector { requirements })
    }
}

impl fmt::Display for FieldSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .requirements
            .iter()
            .map(|r| {
                format!(
                    "{}{}{}",
                    r.field,
                    r.op.as_str(),
                    escape_field_value(&r.value)
                )
            })
            .collect();
        f.write_str(&parts.join(","))
    }
}

/// `fields.EscapeValue`.
pub fn escape_field_value(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace(',', "\\,")
        .replace('=', "\\=")
}

pub(super) fn split_field_terms(s: &str) -> Vec<String> {
    if s.is_empty() {
        return Vec::new();
    }
    let mut terms = Vec::new();
    let mut cur = String::new();
    let mut escaped = false;
    for c in s.chars() {
        if escaped {
            cur.push(c);
            escaped = false;
        } else if c == '\\' {
            cur.push(c);
            escaped = true;
        } else if c == ',' {
            terms.push(std::mem::take(&mut cur));
        } else {
            cur.push(c);
        }
    }
    terms.push(cur);
    terms
}

pub(super) fn split_field_term(term: &str) -> Option<(&str, FieldOp, &str)> {
    let bytes = term.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' {
            i += 2;
            continue;
        }
        for (lit, op) in [
            ("!=", FieldOp::NotEquals),
            ("==", FieldOp::DoubleEquals),
            ("=", FieldOp::Equals),
        ] {
            // Operators are ASCII, so a match is always on a char boundary; `get` keeps
            // positions inside multi-byte characters from panicking.
            if term.get(i..).is_some_and(|rest| rest.starts_with(lit)) {
                return Some((term.get(..i)?, op, term.get(i + lit.len()..)?));
            }
        }
        i += 1;
    }
    None
}

pub(super) fn unescape_field_value(s: &str) -> Result<String, SelectorError> {
    if !s.contains(['\\', ',', '=']) {
        return Ok(s.to_string());
    }
    let mut out = String::new();
    let mut in_escape = false;
    for c in s.chars() {
        if in_escape {
            if matches!(c, '\\' | ',' | '=') {
                out.push(c);
                in_escape = false;
            } else {
                return Err(err(format!(
                    "invalid field selector: invalid escape sequence: \\{c}"
                )));
            }
        } else if c == '\\' {
            in_escape = true;
        } else if c == ',' || c == '=' {
            return Err(err(format!(
                "invalid field selector: unescaped character in value: {}",
                c as u32
            )));
        } else {
            out.push(c);
        }
    }
    if in_escape {
        return Err(err(
            "invalid field selector: invalid escape sequence: \\".to_string()
        ));
    }
    Ok(out)
}

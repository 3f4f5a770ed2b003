//! Label and field selectors with kube-apiserver's syntax and error wording
//! (apimachinery `labels.Parse`, `metav1.LabelSelectorAsSelector`, `fields.ParseSelector`).

use super::schema::names;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;

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

fn go_slice(values: &[String]) -> String {
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

impl FromStr for LabelSelector {
    type Err = SelectorError;

    /// `labels.Parse`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let tokens = lex(s)?;
        let mut parser = Parser { tokens, pos: 0 };
        let mut requirements = parser.parse()?;
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(LabelSelector {
            requirements,
            nothing: false,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    Identifier,
    DoesNotExist,
    Equals,
    DoubleEquals,
    NotEquals,
    In,
    NotIn,
    GreaterThan,
    LessThan,
    OpenPar,
    ClosedPar,
    Comma,
    End,
}

fn is_special(c: char) -> bool {
    matches!(c, '=' | '!' | '(' | ')' | ',' | '>' | '<')
}

fn is_whitespace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

fn lex(s: &str) -> Result<Vec<(Tok, String)>, SelectorError> {
    let chars: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if is_whitespace(c) {
            i += 1;
            continue;
        }
        if is_special(c) {
            let mut j = i;
            while j < chars.len() && is_special(chars[j]) {
                j += 1;
            }
            // Longest run of special characters that is a known token, as kube's scanner does.
            let run: String = chars[i..j].iter().collect();
            let mut taken = None;
            for len in (1..=run.chars().count()).rev() {
                let cand: String = run.chars().take(len).collect();
                let tok = match cand.as_str() {
                    ")" => Some(Tok::ClosedPar),
                    "(" => Some(Tok::OpenPar),
                    "," => Some(Tok::Comma),
                    "!" => Some(Tok::DoesNotExist),
                    "==" => Some(Tok::DoubleEquals),
                    "=" => Some(Tok::Equals),
                    ">" => Some(Tok::GreaterThan),
                    "<" => Some(Tok::LessThan),
                    "!=" => Some(Tok::NotEquals),
                    _ => None,
                };
                if let Some(t) = tok {
                    taken = Some((t, cand, len));
                    break;
                }
            }
            match taken {
                Some((t, lit, len)) => {
                    out.push((t, lit));
                    i += len;
                }
                None => {
                    return Err(SelectorError(format!(
                        "unable to parse requirement: error: {run} is not a valid token"
                    )));
                }
            }
            continue;
        }
        let mut j = i;
        while j < chars.len() && !is_special(chars[j]) && !is_whitespace(chars[j]) {
            j += 1;
        }
        let word: String = chars[i..j].iter().collect();
        let tok = match word.as_str() {
            "in" => Tok::In,
            "notin" => Tok::NotIn,
            _ => Tok::Identifier,
        };
        out.push((tok, word));
        i = j;
    }
    Ok(out)
}

/// Lexing context: in `Values` context `in`/`notin` are plain identifiers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    KeyAndOperator,
    Values,
}

struct Parser {
    tokens: Vec<(Tok, String)>,
    pos: usize,
}

fn err(msg: String) -> SelectorError {
    SelectorError(msg)
}

impl Parser {
    fn lookahead(&self, ctx: Ctx) -> (Tok, String) {
        let (tok, lit) = self
            .tokens
            .get(self.pos)
            .cloned()
            .unwrap_or((Tok::End, String::new()));
        if ctx == Ctx::Values && matches!(tok, Tok::In | Tok::NotIn) {
            (Tok::Identifier, lit)
        } else {
            (tok, lit)
        }
    }

    fn consume(&mut self, ctx: Ctx) -> (Tok, String) {
        let r = self.lookahead(ctx);
        if self.pos < self.tokens.len() {
            self.pos += 1;
        }
        r
    }

    fn parse(&mut self) -> Result<Vec<LabelRequirement>, SelectorError> {
        let mut reqs = Vec::new();
        loop {
            let (tok, lit) = self.lookahead(Ctx::Values);
            match tok {
                Tok::Identifier | Tok::DoesNotExist => {
                    let r = self
                        .parse_requirement()
                        .map_err(|e| err(format!("unable to parse requirement: {e}")))?;
                    reqs.push(r);
                    let (t, l) = self.consume(Ctx::Values);
                    match t {
                        Tok::End => return Ok(reqs),
                        Tok::Comma => {
                            let (t2, l2) = self.lookahead(Ctx::Values);
                            if t2 != Tok::Identifier && t2 != Tok::DoesNotExist {
                                return Err(err(format!(
                                    "found '{l2}', expected: identifier after ','"
                                )));
                            }
                        }
                        _ => {
                            return Err(err(format!(
                                "found '{l}', expected: ',' or 'end of string'"
                            )));
                        }
                    }
                }
                Tok::End => return Ok(reqs),
                _ => {
                    return Err(err(format!(
                        "found '{lit}', expected: !, identifier, or 'end of string'"
                    )));
                }
            }
        }
    }

    fn parse_requirement(&mut self) -> Result<LabelRequirement, SelectorError> {
        let (key, unary) = self.parse_key_and_infer_operator()?;
        if let Some(op) = unary {
            return LabelRequirement::new(&key, op, Vec::new());
        }
        let op = self.parse_operator()?;
        let values = match op {
            LabelOp::In | LabelOp::NotIn => self.parse_values()?,
            _ => self.parse_exact_value()?,
        };
        LabelRequirement::new(&key, op, values)
    }

    fn parse_key_and_infer_operator(&mut self) -> Result<(String, Option<LabelOp>), SelectorError> {
        let mut op = None;
        let (mut tok, mut lit) = self.consume(Ctx::Values);
        if tok == Tok::DoesNotExist {
            op = Some(LabelOp::DoesNotExist);
            (tok, lit) = self.consume(Ctx::Values);
        }
        if tok != Tok::Identifier {
            return Err(err(format!("found '{lit}', expected: identifier")));
        }
        let key_errs = names::qualified_name(&lit);
        if !key_errs.is_empty() {
            return Err(err(format!(
                "key: Invalid value: \"{lit}\": {}",
                key_errs.join("; ")
            )));
        }
        let (next, _) = self.lookahead(Ctx::Values);
        if matches!(next, Tok::End | Tok::Comma) && op.is_none() {
            op = Some(LabelOp::Exists);
        }
        Ok((lit, op))
    }

    fn parse_operator(&mut self) -> Result<LabelOp, SelectorError> {
        let (tok, lit) = self.consume(Ctx::KeyAndOperator);
        Ok(match tok {
            Tok::In => LabelOp::In,
            Tok::Equals => LabelOp::Equals,
            Tok::DoubleEquals => LabelOp::DoubleEquals,
            Tok::GreaterThan => LabelOp::GreaterThan,
            Tok::LessThan => LabelOp::LessThan,
            Tok::NotIn => LabelOp::NotIn,
            Tok::NotEquals => LabelOp::NotEquals,
            _ => {
                return Err(err(format!(
                    "found '{lit}', expected: in, notin, =, ==, !=, gt, lt"
                )));
            }
        })
    }

    fn parse_values(&mut self) -> Result<Vec<String>, SelectorError> {
        let (tok, lit) = self.consume(Ctx::Values);
        if tok != Tok::OpenPar {
            return Err(err(format!("found '{lit}' expected: '('")));
        }
        let (tok, lit) = self.lookahead(Ctx::Values);
        match tok {
            Tok::Identifier | Tok::Comma => {
                let s = self.parse_identifiers_list()?;
                let (t, _) = self.consume(Ctx::Values);
                if t != Tok::ClosedPar {
                    return Err(err(format!("found '{lit}', expected: ')'")));
                }
                Ok(s)
            }
            Tok::ClosedPar => {
                self.consume(Ctx::Values);
                Ok(vec![String::new()])
            }
            _ => Err(err(format!(
                "found '{lit}', expected: ',', ')' or identifier"
            ))),
        }
    }

    fn parse_identifiers_list(&mut self) -> Result<Vec<String>, SelectorError> {
        let mut s = BTreeSet::new();
        loop {
            let (tok, lit) = self.consume(Ctx::Values);
            match tok {
                Tok::Identifier => {
                    s.insert(lit);
                    let (t2, l2) = self.lookahead(Ctx::Values);
                    match t2 {
                        Tok::Comma => continue,
                        Tok::ClosedPar => return Ok(s.into_iter().collect()),
                        _ => return Err(err(format!("found '{l2}', expected: ',' or ')'"))),
                    }
                }
                Tok::Comma => {
                    if s.is_empty() {
                        s.insert(String::new());
                    }
                    let (t2, _) = self.lookahead(Ctx::Values);
                    if t2 == Tok::ClosedPar {
                        s.insert(String::new());
                        return Ok(s.into_iter().collect());
                    }
                    if t2 == Tok::Comma {
                        self.consume(Ctx::Values);
                        s.insert(String::new());
                    }
                }
                _ => return Err(err(format!("found '{lit}', expected: ',', or identifier"))),
            }
        }
    }

    fn parse_exact_value(&mut self) -> Result<Vec<String>, SelectorError> {
        let (tok, _) = self.lookahead(Ctx::Values);
        if matches!(tok, Tok::End | Tok::Comma) {
            return Ok(vec![String::new()]);
        }
        let (tok, lit) = self.consume(Ctx::Values);
        if tok == Tok::Identifier {
            Ok(vec![lit])
        } else {
            Err(err(format!("found '{lit}', expected: identifier")))
        }
    }
}

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

fn split_field_terms(s: &str) -> Vec<String> {
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

fn split_field_term(term: &str) -> Option<(&str, FieldOp, &str)> {
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

fn unescape_field_value(s: &str) -> Result<String, SelectorError> {
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

#[cfg(test)]
mod tests;

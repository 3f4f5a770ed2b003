//! One line's text as the fast reader sees it: a key and what follows it, or a scalar, each read
//! only where serde-saphyr would read it the same way (else `None` / [`Entry::Unsure`]).

use serde_json::{Map, Value};

/// What one block line holds.
pub(super) enum Entry<'a> {
    /// `key: rest` (rest without leading spaces; empty for `key:`).
    KeyValue(String, &'a str),
    /// No `: ` in the text: a scalar.
    Scalar,
    /// Looks like a key this reader does not answer for.
    Unsure,
}

pub(super) fn split_key(content: &str) -> Entry<'_> {
    let bytes = content.as_bytes();
    if bytes[0] == b'"' || bytes[0] == b'\'' {
        let Some((key, after)) = quoted(content) else {
            return Entry::Unsure;
        };
        return match after.strip_prefix(':') {
            None if after.is_empty() => Entry::Scalar,
            Some("") => Entry::KeyValue(key, ""),
            Some(rest) if rest.starts_with(' ') => {
                Entry::KeyValue(key, rest.trim_start_matches(' '))
            }
            _ => Entry::Unsure,
        };
    }
    let colon = (0..bytes.len())
        .find(|&i| bytes[i] == b':' && (i + 1 == bytes.len() || bytes[i + 1] == b' '));
    let Some(colon) = colon else {
        return Entry::Scalar;
    };
    let key = &content[..colon];
    if !plain_key(key) {
        return Entry::Unsure;
    }
    Entry::KeyValue(
        key.to_string(),
        content[colon + 1..].trim_start_matches(' '),
    )
}

/// A plain key read the same way by every YAML reader: `[A-Za-z_$/][A-Za-z0-9._/$-]*`,
/// not a word that some readers resolve to null, a boolean or a float.
fn plain_key(key: &str) -> bool {
    let b = key.as_bytes();
    !b.is_empty()
        && (b[0].is_ascii_alphabetic() || matches!(b[0], b'_' | b'$' | b'/'))
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'/' | b'$' | b'-'))
        && !special_word(key)
}

/// Words YAML readers may resolve to null, booleans (YAML 1.1) or floats.
fn special_word(s: &str) -> bool {
    [
        "y", "yes", "n", "no", "true", "false", "on", "off", "null", "inf", "infinity", "nan",
    ]
    .iter()
    .any(|w| s.eq_ignore_ascii_case(w))
}

/// A one-line quoted scalar at the start of `s`: `(value, text after the closing quote)`.
/// Double-quoted scalars with escapes are left to serde-saphyr.
fn quoted(s: &str) -> Option<(String, &str)> {
    let quote = s.as_bytes()[0];
    let body = &s[1..];
    if quote == b'"' {
        let end = body.find(['"', '\\'])?;
        if body.as_bytes()[end] == b'\\' {
            return None;
        }
        return Some((body[..end].to_string(), &body[end + 1..]));
    }
    let mut out = String::new();
    let mut rest = body;
    loop {
        let end = rest.find('\'')?;
        out.push_str(&rest[..end]);
        let after = &rest[end + 1..];
        match after.strip_prefix('\'') {
            Some(more) => {
                out.push('\'');
                rest = more;
            }
            None => return Some((out, after)),
        }
    }
}

/// A one-line scalar value (after `key: ` or `- `).
pub(super) fn scalar(s: &str) -> Option<Value> {
    match s.as_bytes()[0] {
        b'"' | b'\'' => {
            let (v, after) = quoted(s)?;
            after.is_empty().then_some(Value::String(v))
        }
        b'{' => (s == "{}").then(|| Value::Object(Map::new())),
        b'[' => (s == "[]").then(|| Value::Array(Vec::new())),
        _ => plain(s),
    }
}

/// A plain scalar, resolved as serde-saphyr resolves it into a `serde_json::Value` — or
/// `None` when it could be read as something other than a string, null, `true`/`false` or a
/// small decimal integer.
fn plain(s: &str) -> Option<Value> {
    let b = s.as_bytes();
    if has_comment_or_pair(b) || s.ends_with(':') {
        return None;
    }
    if b.len() <= 5 {
        match s {
            "~" | "null" | "Null" | "NULL" => return Some(Value::Null),
            "true" | "True" | "TRUE" => return Some(Value::Bool(true)),
            "false" | "False" | "FALSE" => return Some(Value::Bool(false)),
            _ => {}
        }
    }
    if b[0].is_ascii_alphabetic() || matches!(b[0], b'_' | b'$' | b'/') {
        return (!special_word(s)).then(|| Value::String(s.to_string()));
    }
    if b[0] == b'.' && b.len() > 1 && b[1].is_ascii_alphabetic() && !special_word(&s[1..]) {
        // Field paths (`.status.replicas`); `.inf` / `.nan` are floats.
        return Some(Value::String(s.to_string()));
    }
    if let Some(n) = small_int(s) {
        return Some(n);
    }
    if b[0].is_ascii_digit()
        && b.iter()
            .any(|c| !b"0123456789abcdefABCDEF._+-xXoO:".contains(c))
    {
        // Digits followed by a unit or other letters (`100m`, `1Gi`, `10s`): no number form.
        return Some(Value::String(s.to_string()));
    }
    if b.len() > 2 && b.starts_with(b"--") && b[2].is_ascii_alphabetic() {
        // Command-line flags (`--namespace=…`).
        return Some(Value::String(s.to_string()));
    }
    None
}

/// Whether `b` holds ` #` (a comment) or `: ` (a mapping pair): both have a space, so only the
/// bytes around each space are looked at.
fn has_comment_or_pair(b: &[u8]) -> bool {
    let mut from = 0;
    while let Some(offset) = b[from..].iter().position(|&c| c == b' ') {
        let space = from + offset;
        if (space > 0 && b[space - 1] == b':') || b.get(space + 1) == Some(&b'#') {
            return true;
        }
        from = space + 1;
    }
    false
}

/// `0` or `-?[1-9][0-9]{0,17}` (always fits an i64).
fn small_int(s: &str) -> Option<Value> {
    if s == "0" {
        return Some(Value::from(0u64));
    }
    let (negative, digits) = match s.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, s),
    };
    let d = digits.as_bytes();
    if d.is_empty() || d.len() > 18 || d[0] == b'0' || !d.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    if negative {
        let n = i64::try_from(n).ok()?;
        Some(Value::from(-n))
    } else {
        Some(Value::from(n))
    }
}

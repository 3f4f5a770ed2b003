//! Go RE2 patterns (what `pattern` in a CRD means) translated to the `regex` crate's syntax.
//! The two differ inside character classes: Go reads `[` (other than `[:name:]`), `&` and `~`
//! literally, while `regex` treats `[` as a nested class and `&&`/`~~` as set operations.

use regex::Regex;
use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

/// Rewrites a Go pattern so `regex` reads it the way Go does.
pub fn translate(pattern: &str) -> String {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut in_class = false;
    let mut class_start = 0usize;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' {
            out.push(c);
            if let Some(n) = chars.get(i + 1) {
                out.push(*n);
            }
            i += 2;
            continue;
        }
        if !in_class {
            if c == '[' {
                in_class = true;
                out.push(c);
                i += 1;
                if chars.get(i) == Some(&'^') {
                    out.push('^');
                    i += 1;
                }
                class_start = i;
                continue;
            }
            out.push(c);
            i += 1;
            continue;
        }
        // inside a class
        match c {
            ']' if i > class_start => {
                in_class = false;
                out.push(c);
            }
            ']' => out.push_str("\\]"),
            '[' if chars.get(i + 1) == Some(&':') => {
                // POSIX class `[:alpha:]`: copy through the closing `:]`.
                let rest: String = chars[i..].iter().collect();
                if let Some(end) = rest.find(":]") {
                    out.push_str(&rest[..end + 2]);
                    i += rest[..end + 2].chars().count();
                    continue;
                }
                out.push_str("\\[");
            }
            '[' => out.push_str("\\["),
            '&' | '~' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
        i += 1;
    }
    out
}

/// Compiles a Go pattern.
pub fn compile(pattern: &str) -> Result<Regex, regex::Error> {
    Regex::new(&translate(pattern))
}

/// Patterns compiled so far (schemas repeat the same few on every write). Bounded: cleared
/// when full.
static CACHE: LazyLock<Mutex<HashMap<String, Option<Regex>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));
const CACHE_MAX: usize = 4096;

/// [`compile`] through a process-wide cache; `None` for an invalid pattern.
pub fn cached(pattern: &str) -> Option<Regex> {
    if let Ok(cache) = CACHE.lock()
        && let Some(hit) = cache.get(pattern)
    {
        return hit.clone();
    }
    let compiled = compile(pattern).ok();
    if let Ok(mut cache) = CACHE.lock() {
        if cache.len() >= CACHE_MAX {
            cache.clear();
        }
        cache.insert(pattern.to_string(), compiled.clone());
    }
    compiled
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bracket_inside_class_is_literal() {
        let re = compile("^[-_[A-Za-z0-9]+$").unwrap();
        assert!(re.is_match("a[b_-"));
        assert!(!re.is_match("a b"));
    }

    #[test]
    fn posix_classes_and_plain_patterns_survive() {
        assert!(compile("^[[:alpha:]]+$").unwrap().is_match("abc"));
        assert!(compile("^[]a]+$").unwrap().is_match("]a"));
        assert!(compile("^[a&&b]$").unwrap().is_match("&"));
        assert_eq!(
            translate("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"),
            "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
        );
        assert!(compile("(").is_err());
        assert!(cached("(").is_none());
        assert!(cached("^a+$").unwrap().is_match("aa"));
        assert!(cached("^a+$").unwrap().is_match("a"));
    }
}

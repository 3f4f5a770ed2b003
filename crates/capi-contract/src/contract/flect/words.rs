//! flect's identifier model (`ident.go`): how a string is split into words, and the Go
//! `unicode`/`strings` behaviour that splitting depends on.
//!
//! Pluralization looks only at the last word, so that is all this module exposes.

use regex::Regex;
use std::collections::HashSet;
use std::sync::LazyLock;

use super::tables::ACRONYMS;

static ACRONYM_SET: LazyLock<HashSet<&'static str>> =
    LazyLock::new(|| ACRONYMS.iter().copied().collect());

/// Characters flect treats as word separators, besides Unicode white space.
const SEPARATORS: [char; 5] = ['_', ' ', ':', '-', '/'];

/// The last word of `s` as flect's `New(s).LastPart()` sees it (acronym words upper-cased),
/// or `None` when `s` has no words at all.
pub(super) fn last_word(s: &str) -> Option<String> {
    split_words(s).pop()
}

/// flect's `toParts`.
fn split_words(s: &str) -> Vec<String> {
    let trimmed = s.trim();
    if trimmed.is_empty() {
        return Vec::new();
    }
    let upper = go_upper(trimmed);
    if is_acronym(&upper) {
        return vec![upper];
    }

    let mut words = Vec::new();
    let mut current = String::with_capacity(trimmed.len());
    let mut prev: Option<char> = None;
    for c in trimmed.chars() {
        let starts_new_word = is_separator(c)
            || (is_upper(c) && !prev.is_some_and(is_upper))
            || (is_upper(c) && is_acronym(&go_upper(&current)));
        prev = Some(c);
        if starts_new_word {
            push_word(&mut words, &current);
            current.clear();
            current.push(c);
        } else if is_letter(c) || is_digit(c) || is_punct(c) || c == '`' {
            current.push(c);
        } else {
            push_word(&mut words, &current);
            current.clear();
        }
    }
    push_word(&mut words, &current);
    words
}

/// flect's `xappend`: trim, upper-case a known acronym, drop empties.
fn push_word(words: &mut Vec<String>, raw: &str) {
    let mut word = raw.trim();
    for sep in SEPARATORS {
        word = word.trim_matches(sep);
    }
    if word.is_empty() {
        return;
    }
    let upper = go_upper(word);
    if is_acronym(&upper) {
        words.push(upper);
    } else {
        words.push(word.to_owned());
    }
}

fn is_acronym(upper: &str) -> bool {
    ACRONYM_SET.contains(upper)
}

/// flect's `isSpace`.
fn is_separator(c: char) -> bool {
    SEPARATORS.contains(&c) || c.is_whitespace()
}

/// Go `strings.ToLower`: per-character simple lower-case mapping (no final-sigma rule,
/// `İ` → `i`).
pub(super) fn go_lower(s: &str) -> String {
    s.chars().map(go_lower_char).collect()
}

fn go_lower_char(c: char) -> char {
    let mut mapped = c.to_lowercase();
    match (mapped.next(), mapped.next()) {
        (Some(single), None) => single,
        // Only U+0130 has a multi-character full mapping; its simple mapping is 'i'.
        (Some(first), Some(_)) if c == '\u{130}' => first,
        _ => c,
    }
}

/// Go `strings.ToUpper`, used only to look up acronyms. Characters whose full upper-case
/// mapping has several characters keep their own value (Go's simple mapping never turns
/// them into ASCII, so acronym lookups are unaffected).
fn go_upper(s: &str) -> String {
    s.chars().map(go_upper_char).collect()
}

fn go_upper_char(c: char) -> char {
    let mut mapped = c.to_uppercase();
    match (mapped.next(), mapped.next()) {
        (Some(single), None) => single,
        _ => c,
    }
}

/// Go `unicode.ToTitle` for the first character, as flect's `Capitalize` does.
pub(super) fn capitalize(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => {
            let mut out = String::with_capacity(s.len() + 2);
            out.push(go_title_char(first));
            out.push_str(chars.as_str());
            out
        }
        None => String::new(),
    }
}

fn go_title_char(c: char) -> char {
    match c {
        // Latin digraphs have a distinct title-case form.
        '\u{1C4}'..='\u{1C6}' => '\u{1C5}',
        '\u{1C7}'..='\u{1C9}' => '\u{1C8}',
        '\u{1CA}'..='\u{1CC}' => '\u{1CB}',
        '\u{1F1}'..='\u{1F3}' => '\u{1F2}',
        _ => go_upper_char(c),
    }
}

/// Go `unicode.IsUpper` (general category Lu).
fn is_upper(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_uppercase();
    }
    matches_class(&UPPER, c)
}

/// Go `unicode.IsLetter` (general category L).
fn is_letter(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphabetic();
    }
    matches_class(&LETTER, c)
}

/// Go `unicode.IsDigit` (general category Nd).
fn is_digit(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_digit();
    }
    matches_class(&DIGIT, c)
}

/// Go `unicode.IsPunct` (general category P). In ASCII, `$+<=>^`|~` are symbols, not
/// punctuation.
fn is_punct(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_punctuation() && !"$+<=>^`|~".contains(c);
    }
    matches_class(&PUNCT, c)
}

static UPPER: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"^\p{Lu}$").ok());
static LETTER: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"^\p{L}$").ok());
static DIGIT: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"^\p{Nd}$").ok());
static PUNCT: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"^\p{P}$").ok());

fn matches_class(class: &LazyLock<Option<Regex>>, c: char) -> bool {
    let mut buf = [0u8; 4];
    class
        .as_ref()
        .is_some_and(|re| re.is_match(c.encode_utf8(&mut buf)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_on_separators_and_trims_them() {
        assert_eq!(split_words("foo_bar-baz"), ["foo", "bar", "baz"]);
        assert_eq!(split_words("  a::b  "), ["a", "b"]);
        assert_eq!(split_words(" - "), Vec::<String>::new());
    }

    #[test]
    fn splits_camel_case_and_keeps_upper_runs_together() {
        assert_eq!(split_words("FooBar"), ["Foo", "Bar"]);
        assert_eq!(split_words("ABCDef"), ["ABCDef"]);
        assert_eq!(split_words("HTTPServer"), ["HTTP", "Server"]);
        assert_eq!(split_words("IPAddress"), ["IP", "Address"]);
    }

    #[test]
    fn whole_string_acronym_is_one_upper_case_word() {
        assert_eq!(split_words("dns"), ["DNS"]);
        assert_eq!(split_words("foo-dns"), ["foo", "DNS"]);
        assert_eq!(split_words("gbps"), ["gbps"]);
    }

    #[test]
    fn symbols_end_a_word_and_are_dropped() {
        assert_eq!(split_words("a+b"), ["a", "b"]);
        assert_eq!(split_words("a.b"), ["a.b"]);
        assert_eq!(split_words("a`b"), ["a`b"]);
    }

    #[test]
    fn go_case_mappings() {
        assert_eq!(go_lower("İΣ"), "iσ");
        assert_eq!(go_upper("ßıſ"), "ßIS");
        assert_eq!(capitalize("ǆx"), "ǅx");
        assert_eq!(capitalize("child"), "Child");
        assert_eq!(capitalize(""), "");
    }

    #[test]
    fn go_character_classes() {
        assert!(is_upper('Ä') && !is_upper('ä') && !is_upper('Ⓐ'));
        assert!(is_letter('ж') && !is_letter('Ⅳ'));
        assert!(is_digit('٣') && !is_digit('½'));
        assert!(is_punct('¿') && is_punct('-') && !is_punct('+') && !is_punct('$'));
    }
}

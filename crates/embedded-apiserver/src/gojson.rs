//! Go's `encoding/json` error texts for JSON that serde_json could not read: kube-apiserver
//! reports its decoder's errors verbatim, so clients see these words.

/// `strconv.Quote` of one byte read as a rune, between single quotes, as encoding/json's
/// `quoteChar` writes the offending character.
fn quote_char(b: u8) -> String {
    match b {
        b'\'' => "'\\''".into(),
        b'"' => "'\"'".into(),
        b'\n' => "'\\n'".into(),
        b'\r' => "'\\r'".into(),
        b'\t' => "'\\t'".into(),
        0x20..=0x7e => format!("'{}'", b as char),
        0..=0x1f | 0x7f => format!("'\\x{b:02x}'"),
        0x80..=0x9f | 0xad => format!("'\\u{:04x}'", b),
        _ => format!("'{}'", char::from(b)),
    }
}

/// encoding/json's SyntaxError for what serde_json could not parse: `unexpected end of JSON
/// input`, or `invalid character 'x' <context>` at the byte serde stopped at.
pub fn syntax_error(body: &[u8], e: &serde_json::Error) -> String {
    if e.is_eof() {
        return "unexpected end of JSON input".into();
    }
    let offset = body
        .split(|b| *b == b'\n')
        .take(e.line().saturating_sub(1))
        .map(|l| l.len() + 1)
        .sum::<usize>()
        + e.column().saturating_sub(1);
    let c = body
        .get(offset)
        .map(|b| quote_char(*b))
        .unwrap_or_else(|| "' '".into());
    let text = e.to_string();
    let context = if text.starts_with("expected `:`") {
        "after object key"
    } else if text.starts_with("expected `,` or `}`") {
        "after object key:value pair"
    } else if text.starts_with("expected `,` or `]`") {
        "after array element"
    } else if text.starts_with("key must be a string") {
        "looking for beginning of object key string"
    } else if text.starts_with("trailing characters") {
        "after top-level value"
    } else if text.starts_with("control character") {
        "in string literal"
    } else if text.starts_with("invalid escape") {
        "in string escape code"
    } else {
        "looking for beginning of value"
    };
    format!("invalid character {c} {context}")
}

/// Where Go's `base64.StdEncoding.DecodeString` fails on `src` (its `CorruptInputError`
/// offset), None when it decodes; `\r` and `\n` are skipped as Go skips them.
pub fn base64_error(src: &[u8]) -> Option<usize> {
    let valid = |b: u8| b.is_ascii_alphanumeric() || b == b'+' || b == b'/';
    let newline = |b: u8| b == b'\n' || b == b'\r';
    let mut si = 0;
    loop {
        // One quantum of four symbols (decodeQuantum).
        let mut j = 0;
        while j < 4 {
            if si == src.len() {
                return match j {
                    0 => None,
                    _ => Some(si - j),
                };
            }
            let c = src[si];
            si += 1;
            if valid(c) {
                j += 1;
                continue;
            }
            if newline(c) {
                continue;
            }
            if c != b'=' {
                return Some(si - 1);
            }
            // Padding.
            match j {
                0 | 1 => return Some(si - 1),
                2 => {
                    while si < src.len() && newline(src[si]) {
                        si += 1;
                    }
                    if si == src.len() {
                        return Some(src.len());
                    }
                    if src[si] != b'=' {
                        return Some(si - 1);
                    }
                    si += 1;
                }
                _ => {}
            }
            while si < src.len() && newline(src[si]) {
                si += 1;
            }
            return (si < src.len()).then_some(si);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(body: &str) -> String {
        let e = serde_json::from_slice::<serde_json::Value>(body.as_bytes()).unwrap_err();
        syntax_error(body.as_bytes(), &e)
    }

    #[test]
    fn texts_are_encoding_jsons() {
        assert_eq!(err("{\"a\":"), "unexpected end of JSON input");
        assert_eq!(
            err("x"),
            "invalid character 'x' looking for beginning of value"
        );
        assert_eq!(err("{\"a\" 1}"), "invalid character '1' after object key");
        assert_eq!(
            err("{\"a\":1 2}"),
            "invalid character '2' after object key:value pair"
        );
        assert_eq!(err("[1 2]"), "invalid character '2' after array element");
        assert_eq!(err("{} x"), "invalid character 'x' after top-level value");
        assert_eq!(quote_char(0x81), "'\\u0081'");
    }

    #[test]
    fn base64_errors_are_gos_offsets() {
        assert_eq!(base64_error(b"YWJj"), None);
        assert_eq!(base64_error(b"YQ=="), None);
        assert_eq!(base64_error(b"YWI="), None);
        assert_eq!(base64_error(b"YWJj\nZGVm"), None);
        assert_eq!(base64_error(b""), None);
        // "not base64!": the space.
        assert_eq!(base64_error(b"not base64!"), Some(3));
        assert_eq!(base64_error(b"YWJ"), Some(0));
        assert_eq!(base64_error(b"YQ="), Some(3));
        assert_eq!(base64_error(b"YQ==YQ=="), Some(4));
        assert_eq!(base64_error(b"Y==="), Some(1));
    }
}

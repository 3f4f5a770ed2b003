//! Pieces of the streamed JSON report that write bytes directly: a pretty formatter that
//! starts at a given depth (so one top-level field at a time can go through serde), and the
//! results array written by hand (tens of thousands of results are most of the report).
//!
//! Output is exactly `serde_json::to_string_pretty`'s: two-space indent, `": "` after keys,
//! empty arrays and objects as `[]` / `{}`, strings escaped by serde_json itself whenever they
//! hold a byte that needs escaping.

use super::model::Evidence;
use serde::Serialize;
use serde_json::ser::Formatter;
use std::io::{self, Write};

/// serde_json's pretty layout, starting `depth` levels deep.
pub(crate) struct NestedPretty {
    depth: usize,
    has_value: bool,
}

impl NestedPretty {
    pub(crate) fn at(depth: usize) -> Self {
        NestedPretty {
            depth,
            has_value: false,
        }
    }
}

/// Two spaces per level.
pub(crate) fn indent<W: ?Sized + Write>(w: &mut W, depth: usize) -> io::Result<()> {
    const SPACES: &[u8; 64] = b"                                                                ";
    let mut left = depth * 2;
    while left > 0 {
        let n = left.min(SPACES.len());
        w.write_all(&SPACES[..n])?;
        left -= n;
    }
    Ok(())
}

impl NestedPretty {
    fn open<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        w.write_all(bracket)
    }

    fn close<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth -= 1;
        if self.has_value {
            w.write_all(b"\n")?;
            indent(w, self.depth)?;
        }
        w.write_all(bracket)
    }

    fn next_entry<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        w.write_all(if first { b"\n" } else { b",\n" })?;
        indent(w, self.depth)
    }
}

impl Formatter for NestedPretty {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.next_entry(w, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.next_entry(w, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// Serialises `value` pretty-printed as if it sat `depth` levels deep in a document.
pub(crate) fn write_nested<W: Write, T: Serialize + ?Sized>(
    w: &mut W,
    depth: usize,
    value: &T,
) -> io::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(w, NestedPretty::at(depth));
    value.serialize(&mut ser).map_err(io::Error::from)
}

/// Whether JSON needs escapes for `bytes` (`"`, `\` or a control character). Written without
/// an early exit so it compiles to a vectorised scan.
fn needs_escape(bytes: &[u8]) -> bool {
    bytes.iter().fold(false, |acc, &b| {
        acc | (b < 0x20) | (b == b'"') | (b == b'\\')
    })
}

/// `s` as a JSON string literal: copied between quotes when nothing needs escaping, else
/// escaped by serde_json.
pub(crate) fn write_str<W: Write>(w: &mut W, s: &str) -> io::Result<()> {
    if needs_escape(s.as_bytes()) {
        serde_json::to_writer(w, s).map_err(io::Error::from)
    } else {
        w.write_all(b"\"")?;
        w.write_all(s.as_bytes())?;
        w.write_all(b"\"")
    }
}

/// `s` as a JSON string literal, in a new buffer.
pub(crate) fn quoted(s: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len() + 2);
    // Writing into a Vec cannot fail.
    let _ = write_str(&mut out, s);
    out
}

/// One evidence entry as an element of a result's `evidence` array: the entry sits at
/// depth 4 of the report, its fields at depth 5.
pub(crate) fn write_evidence<W: Write>(w: &mut W, e: &Evidence) -> io::Result<()> {
    w.write_all(b"{\n          \"message\": ")?;
    write_str(w, &e.message)?;
    let optional = [
        (&b",\n          \"object\": "[..], e.object.as_deref()),
        (&b",\n          \"path\": "[..], e.path.as_deref()),
        (
            &b",\n          \"resource_version\": "[..],
            e.resource_version.as_deref(),
        ),
        (&b",\n          \"location\": "[..], e.location.as_deref()),
    ];
    for (key, value) in optional {
        if let Some(v) = value {
            w.write_all(key)?;
            write_str(w, v)?;
        }
    }
    if let Some(src) = &e.source {
        w.write_all(b",\n          \"source\": {\n            \"file\": ")?;
        write_str(w, &src.file)?;
        write!(w, ",\n            \"line\": {}\n          }}", src.line)?;
    }
    w.write_all(b"\n        }")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_pretty_at_zero_is_serde_json_pretty() {
        let v = serde_json::json!({
            "a": [], "b": {}, "c": [1, {"d": [true, null]}], "e": "x\"y\n\u{1}é",
            "f": {"g": {"h": []}}
        });
        let mut out = Vec::new();
        write_nested(&mut out, 0, &v).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            serde_json::to_string_pretty(&v).unwrap()
        );
        // One level down: every line but the first is indented two more spaces.
        let mut out = Vec::new();
        write_nested(&mut out, 1, &v).unwrap();
        let expected = serde_json::to_string_pretty(&v)
            .unwrap()
            .replace('\n', "\n  ");
        assert_eq!(String::from_utf8(out).unwrap(), expected);
        let mut deep = Vec::new();
        indent(&mut deep, 40).unwrap();
        assert_eq!(deep, vec![b' '; 80]);
    }

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        for s in [
            "",
            "plain text",
            "quote \" and backslash \\",
            "tab\tnewline\ncr\rnul\u{0}unit\u{1f}del\u{7f}",
            "non-ASCII é ✓ \u{2028}",
        ] {
            assert_eq!(quoted(s), serde_json::to_vec(s).unwrap(), "{s:?}");
        }
    }

    #[test]
    fn evidence_is_written_as_serde_json_writes_it_in_a_result() {
        let full = Evidence {
            message: "m \"q\"".into(),
            object: Some("o".into()),
            path: Some("p\n".into()),
            resource_version: Some("7".into()),
            location: Some("f.yaml#1".into()),
            source: Some(crate::SourceLocation {
                file: "dir/f \"x\".yaml".into(),
                line: 412,
            }),
        };
        for e in [full, Evidence::msg("only a message")] {
            let mut out = Vec::new();
            write_evidence(&mut out, &e).unwrap();
            let mut expected = Vec::new();
            write_nested(&mut expected, 4, &e).unwrap();
            assert_eq!(
                String::from_utf8(out).unwrap(),
                String::from_utf8(expected).unwrap()
            );
        }
    }
}

//! Comparing two answers: the normalisation of what differs between any two runs of one server
//! (uids, times, resourceVersions, …) and the walk that names every remaining difference.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Map, Value};

use super::{Diff, Resp};

pub(super) fn compare_resps(a: &Resp, b: &Resp, sa: &str, sb: &str) -> Vec<Diff> {
    let mut out = Vec::new();
    if a.status != b.status {
        out.push(Diff {
            at: "status".into(),
            real: a.status.to_string(),
            embedded: b.status.to_string(),
        });
    }
    let names: BTreeSet<&String> = a.headers.keys().chain(b.headers.keys()).collect();
    for name in names {
        let norm = |r: &Resp, server: &str| -> Option<String> {
            r.headers.get(name).map(|vs| {
                let v = vs.join(", ");
                let v = normalise_str(&v, server);
                if name == "content-type" {
                    v.to_ascii_lowercase().replace(' ', "")
                } else {
                    v
                }
            })
        };
        let (x, y) = (norm(a, sa), norm(b, sb));
        if x != y {
            out.push(Diff {
                at: format!("header {name}"),
                real: x.unwrap_or_else(|| "(absent)".into()),
                embedded: y.unwrap_or_else(|| "(absent)".into()),
            });
        }
    }
    diff(
        "body",
        &normalise(&a.body, sa),
        &normalise(&b.body, sb),
        &mut out,
    );
    out
}

static TIME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$").unwrap()
});
static UUID: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}").unwrap()
});
static HASH: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\?hash=[0-9A-Fa-f]+").unwrap());
static TOO_OLD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"too old resource version: \d+ \(\d+\)").unwrap());
static IN_RECORD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"ResourceVersion in (record|object meta):? ?\(?\d+\)?").unwrap());

/// A string with the values that differ between runs replaced.
pub fn normalise_str(s: &str, server: &str) -> String {
    if TIME.is_match(s) {
        return "<time>".into();
    }
    let mut s = UUID.replace_all(s, "<uid>").into_owned();
    if !server.is_empty() {
        s = s.replace(server, "<server>");
    }
    let s = HASH.replace_all(&s, "?hash=<hash>");
    let s = IN_RECORD.replace_all(&s, "ResourceVersion in $1 <rv>");
    TOO_OLD
        .replace_all(&s, "too old resource version: <rv> (<rv>)")
        .into_owned()
}

/// A body with the values that differ between runs replaced (see the module's text).
pub fn normalise(v: &Value, server: &str) -> Value {
    match v {
        Value::String(s) => Value::String(normalise_str(s, server)),
        Value::Array(a) => Value::Array(a.iter().map(|x| normalise(x, server)).collect()),
        Value::Object(o) => {
            let mut out = Map::new();
            for (k, x) in o {
                let nx = match (k.as_str(), x) {
                    ("resourceVersion" | "continue", Value::String(s)) if !s.is_empty() => {
                        Value::String(format!("<{k}>"))
                    }
                    _ => normalise(x, server),
                };
                // Keys too: managedFields name owner references by uid.
                out.insert(normalise_str(k, server), nx);
            }
            // The generated part of a generateName.
            if let (Some(Value::String(prefix)), Some(Value::String(name))) =
                (out.get("generateName"), out.get("name"))
                && name.len() == prefix.len() + 5
                && name.starts_with(prefix.as_str())
            {
                let n = format!("{prefix}<suffix>");
                out.insert("name".into(), Value::String(n));
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

fn short(v: &Value) -> String {
    let s = match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if s.chars().count() > 300 {
        format!("{}…", s.chars().take(300).collect::<String>())
    } else {
        s
    }
}

/// The key an array element is matched by, when arrays are lists of named things (resources
/// and groups of discovery, objects of a list, managedFields entries, conditions).
fn key(v: &Value) -> Option<String> {
    let o = v.as_object()?;
    let s = |k: &str| o.get(k).and_then(Value::as_str);
    if let Some(m) = s("manager") {
        let part = |k: &str| s(k).unwrap_or("").to_string();
        return Some(format!("{m},{},{}", part("operation"), part("subresource")));
    }
    if let Some(n) = s("name")
        .or(s("resource"))
        .or(s("subresource"))
        .or(s("groupVersion"))
    {
        return Some(n.to_string());
    }
    if let Some(name) = o
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
    {
        let ns = o["metadata"].get("namespace").and_then(Value::as_str);
        return Some(match ns {
            Some(ns) => format!("{ns}/{name}"),
            None => name.to_string(),
        });
    }
    if let (Some(t), Some(_)) = (s("type"), o.get("status")) {
        return Some(t.to_string());
    }
    if let (Some(v), None) = (s("version"), o.get("kind")) {
        return Some(v.to_string());
    }
    None
}

fn keyed(a: &[Value]) -> Option<Vec<String>> {
    let keys: Vec<String> = a.iter().map(key).collect::<Option<_>>()?;
    let unique: BTreeSet<&String> = keys.iter().collect();
    (unique.len() == keys.len()).then_some(keys)
}

/// The differences between `a` (kube-apiserver) and `b` (embedded) below `at`.
pub fn diff(at: &str, a: &Value, b: &Value, out: &mut Vec<Diff>) {
    let absent = || "(absent)".to_string();
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let here = format!("{at}/{k}");
                match (x.get(k), y.get(k)) {
                    (Some(p), Some(q)) => diff(&here, p, q, out),
                    (Some(p), None) => out.push(Diff {
                        at: here,
                        real: short(p),
                        embedded: absent(),
                    }),
                    (None, Some(q)) => out.push(Diff {
                        at: here,
                        real: absent(),
                        embedded: short(q),
                    }),
                    (None, None) => {}
                }
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            if let (Some(kx), Some(ky)) = (keyed(x), keyed(y))
                && !(x.is_empty() && y.is_empty())
            {
                for (i, k) in kx.iter().enumerate() {
                    let here = format!("{at}[{k}]");
                    match ky.iter().position(|q| q == k) {
                        Some(j) => diff(&here, &x[i], &y[j], out),
                        None => out.push(Diff {
                            at: here,
                            real: short(&x[i]),
                            embedded: absent(),
                        }),
                    }
                }
                for (j, k) in ky.iter().enumerate() {
                    if !kx.contains(k) {
                        out.push(Diff {
                            at: format!("{at}[{k}]"),
                            real: absent(),
                            embedded: short(&y[j]),
                        });
                    }
                }
                let common_x: Vec<&String> = kx.iter().filter(|k| ky.contains(k)).collect();
                let common_y: Vec<&String> = ky.iter().filter(|k| kx.contains(k)).collect();
                // managedFields are ordered by their times in seconds, which two servers written
                // to at slightly different moments do not share: their order is not compared.
                let timed = at.ends_with("managedFields");
                if common_x != common_y && !timed {
                    out.push(Diff {
                        at: format!("{at} (order)"),
                        real: common_x
                            .iter()
                            .map(|s| s.as_str())
                            .collect::<Vec<_>>()
                            .join(" "),
                        embedded: common_y
                            .iter()
                            .map(|s| s.as_str())
                            .collect::<Vec<_>>()
                            .join(" "),
                    });
                }
            } else {
                for i in 0..x.len().max(y.len()) {
                    let here = format!("{at}[{i}]");
                    match (x.get(i), y.get(i)) {
                        (Some(p), Some(q)) => diff(&here, p, q, out),
                        (Some(p), None) => out.push(Diff {
                            at: here,
                            real: short(p),
                            embedded: absent(),
                        }),
                        (None, Some(q)) => out.push(Diff {
                            at: here,
                            real: absent(),
                            embedded: short(q),
                        }),
                        (None, None) => {}
                    }
                }
            }
        }
        (Value::String(x), Value::String(y)) if x.contains('\n') || y.contains('\n') => {
            // Text (kubectl's output, a plain-text body): line by line.
            let (lx, ly): (Vec<&str>, Vec<&str>) = (x.lines().collect(), y.lines().collect());
            for i in 0..lx.len().max(ly.len()) {
                let (p, q) = (lx.get(i), ly.get(i));
                if p != q {
                    out.push(Diff {
                        at: format!("{at}:{}", i + 1),
                        real: p.map(|s| s.to_string()).unwrap_or_else(absent),
                        embedded: q.map(|s| s.to_string()).unwrap_or_else(absent),
                    });
                }
            }
        }
        _ => {
            if a != b {
                out.push(Diff {
                    at: at.to_string(),
                    real: short(a),
                    embedded: short(b),
                });
            }
        }
    }
}

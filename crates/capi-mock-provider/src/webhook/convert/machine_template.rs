//! The control plane's machine template across the versions: v1beta1's infrastructure
//! reference (with apiVersion) and duration strings against v1beta2's reference (apiGroup) and
//! `deletion.*Seconds`, the spoke-only details kept in the conversion data.

use super::HUB;
use serde_json::{Map, Value, json};

/// v1beta1 machine template → v1beta2 (see the module doc); spoke-only details into `data`.
pub(super) fn up_machine_template(spec: &mut Value, data: &mut Map<String, Value>, lossless: bool) {
    let Some(mt) = spec
        .get_mut("machineTemplate")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    let mut inner = Map::new();
    if let Some(Value::Object(r)) = mt.remove("infrastructureRef") {
        let api_version = r.get("apiVersion").and_then(Value::as_str).unwrap_or("");
        let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
        inner.insert(
            "infrastructureRef".into(),
            json!({
                "apiGroup": group,
                "kind": r.get("kind").cloned().unwrap_or(json!("")),
                "name": r.get("name").cloned().unwrap_or(json!("")),
            }),
        );
        if lossless {
            data.insert("infrastructureRef".into(), Value::Object(r));
        }
    }
    let mut deletion = Map::new();
    for (old, new) in DURATIONS {
        if let Some(Value::String(text)) = mt.remove(old) {
            if let Some(secs) = parse_duration(&text) {
                deletion.insert(new.into(), json!(secs));
            }
            if lossless {
                data.insert(old.into(), json!(text));
            }
        }
    }
    if !deletion.is_empty() {
        inner.insert("deletion".into(), Value::Object(deletion));
    }
    if !inner.is_empty() {
        mt.insert("spec".into(), Value::Object(inner));
    }
}

/// v1beta2 machine template → v1beta1, restoring what `data` kept.
pub(super) fn down_machine_template(spec: &mut Value, data: &Map<String, Value>, lossless: bool) {
    let Some(mt) = spec
        .get_mut("machineTemplate")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    let Some(Value::Object(mut inner)) = mt.remove("spec") else {
        return;
    };
    if let Some(Value::Object(r)) = inner.remove("infrastructureRef") {
        let group = r.get("apiGroup").and_then(Value::as_str).unwrap_or("");
        let kind = r.get("kind").cloned().unwrap_or(json!(""));
        let name = r.get("name").cloned().unwrap_or(json!(""));
        let kept = data
            .get("infrastructureRef")
            .filter(|k| {
                lossless
                    && k.get("kind") == Some(&kind)
                    && k.get("name") == Some(&name)
                    && k.get("apiVersion")
                        .and_then(Value::as_str)
                        .and_then(|a| a.rsplit_once('/'))
                        .is_some_and(|(g, _)| g == group)
            })
            .cloned();
        mt.insert(
            "infrastructureRef".into(),
            kept.unwrap_or_else(
                || json!({"apiVersion": format!("{group}/{HUB}"), "kind": kind, "name": name}),
            ),
        );
    }
    if let Some(Value::Object(deletion)) = inner.remove("deletion") {
        for (old, new) in DURATIONS {
            let Some(secs) = deletion.get(new).and_then(Value::as_i64) else {
                continue;
            };
            let spelled = data
                .get(old)
                .and_then(Value::as_str)
                .filter(|t| lossless && parse_duration(t) == Some(secs))
                .map_or_else(|| format_duration(secs), str::to_string);
            mt.insert(old.into(), json!(spelled));
        }
    }
}

const DURATIONS: [(&str, &str); 3] = [
    ("nodeDrainTimeout", "nodeDrainTimeoutSeconds"),
    ("nodeVolumeDetachTimeout", "nodeVolumeDetachTimeoutSeconds"),
    ("nodeDeletionTimeout", "nodeDeletionTimeoutSeconds"),
];

/// Whole seconds of a Go duration string (`1h2m3s`, `90s`, `1.5m`); `None` if malformed.
pub fn parse_duration(text: &str) -> Option<i64> {
    let mut total = 0f64;
    let mut num = String::new();
    let mut chars = text.chars().peekable();
    if text.is_empty() {
        return None;
    }
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() || c == '.' {
            num.push(c);
            continue;
        }
        let unit = match (c, chars.peek()) {
            ('m', Some('s')) => {
                chars.next();
                0.001
            }
            ('h', _) => 3600.0,
            ('m', _) => 60.0,
            ('s', _) => 1.0,
            _ => return None,
        };
        total += num.parse::<f64>().ok()? * unit;
        num.clear();
    }
    if !num.is_empty() {
        // Go accepts a bare "0" only.
        return (num == "0").then_some(0);
    }
    Some(total.floor() as i64)
}

/// Seconds as Go's `time.Duration.String()` spells them (`1m30s`, `0s`).
pub fn format_duration(secs: i64) -> String {
    if secs == 0 {
        return "0s".into();
    }
    let (h, m, s) = (secs / 3600, secs % 3600 / 60, secs % 60);
    let mut out = String::new();
    if h > 0 {
        out.push_str(&format!("{h}h"));
    }
    if h > 0 || m > 0 {
        out.push_str(&format!("{m}m"));
    }
    out.push_str(&format!("{s}s"));
    out
}

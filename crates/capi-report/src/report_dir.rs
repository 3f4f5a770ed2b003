//! `--report-dir`: for every scenario run, passing or not, a directory
//! `<scenario>-<column>` with its timeline (`timeline.json`, the entries of the JSON report's
//! scenario record) and the final state of the objects it watched (`objects.yaml`, Secret data
//! redacted).

use crate::model::{Column, TimelineEntry};
use anyhow::Context;
use serde_json::Value;
use std::path::Path;

/// One scenario run to keep: the script that ran, the column it judged, its timeline and the
/// last observed state of every object it watched.
#[derive(Debug, Clone, Copy)]
pub struct KeptRun<'a> {
    pub script: &'a str,
    pub column: &'a Column,
    pub timeline: &'a [TimelineEntry],
    pub final_objects: &'a [Value],
}

/// Replaces Secret payloads (`data`, `stringData`) with `<redacted>` markers naming the key.
pub fn redact(mut v: Value) -> Value {
    if v.get("kind").and_then(Value::as_str) == Some("Secret")
        && let Some(o) = v.as_object_mut()
    {
        for field in ["data", "stringData"] {
            if let Some(Value::Object(m)) = o.get_mut(field) {
                for (key, val) in m.iter_mut() {
                    *val = Value::String(format!("<redacted> (Secret {field} key {key:?})"));
                }
            }
        }
    }
    v
}

fn dir_name(run: &KeptRun<'_>) -> String {
    crate::paths::safe_component(&format!("{}-{}", run.script, run.column.id()))
}

/// Writes the files of every run in `runs` (the caller passes those that ran: a role without
/// a script or without a sample object has nothing to keep); returns how many were written.
pub fn write<'a>(dir: &Path, runs: impl IntoIterator<Item = KeptRun<'a>>) -> anyhow::Result<usize> {
    let mut kept = 0;
    for run in runs {
        let d = dir.join(dir_name(&run));
        std::fs::create_dir_all(&d).with_context(|| format!("cannot create {}", d.display()))?;
        let timeline = serde_json::to_string_pretty(&run.timeline)?;
        std::fs::write(d.join("timeline.json"), timeline)
            .with_context(|| format!("cannot write {}", d.join("timeline.json").display()))?;
        let mut yaml = String::new();
        for obj in run.final_objects {
            yaml.push_str("---\n");
            yaml.push_str(&serde_saphyr::to_string(&redact(obj.clone()))?);
        }
        std::fs::write(d.join("objects.yaml"), yaml)
            .with_context(|| format!("cannot write {}", d.join("objects.yaml").display()))?;
        kept += 1;
    }
    Ok(kept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secret_payloads_are_redacted_and_others_kept() {
        let s = redact(json!({"kind": "Secret", "data": {"value": "c2VjcmV0"}, "type": "x"}));
        assert_eq!(s["data"]["value"], "<redacted> (Secret data key \"value\")");
        assert_eq!(s["type"], "x");
        let o = redact(json!({"kind": "MockMachine", "data": {"value": "kept"}}));
        assert_eq!(o["data"]["value"], "kept");
    }
}

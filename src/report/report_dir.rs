//! `--report-dir`: for every failed or inconclusive scenario, its timeline (JSON) and the final
//! state of the objects it watched (YAML, Secret data redacted).

use crate::scenarios::runner::{RunOutput, SubjectRun};
use anyhow::Context;
use serde_json::Value;
use std::path::Path;

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

fn dir_name(run: &SubjectRun) -> String {
    crate::report::paths::safe_component(&format!(
        "{}-{}",
        run.script.unwrap_or("none"),
        run.subject.column.id()
    ))
}

/// Writes the files; returns how many scenarios were kept.
pub fn write(dir: &Path, out: &RunOutput) -> anyhow::Result<usize> {
    let mut kept = 0;
    for run in out.runs.iter().filter(|r| r.failed()) {
        let d = dir.join(dir_name(run));
        std::fs::create_dir_all(&d).with_context(|| format!("cannot create {}", d.display()))?;
        let timeline = serde_json::to_string_pretty(&run.timeline)?;
        std::fs::write(d.join("timeline.json"), timeline)
            .with_context(|| format!("cannot write {}", d.join("timeline.json").display()))?;
        let mut yaml = String::new();
        for obj in &run.final_objects {
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

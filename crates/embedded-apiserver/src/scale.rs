//! The scale subresource (docs/embedded-apiserver.md M12): `autoscaling/v1 Scale` views of custom
//! resources and of Deployments.

use serde_json::{Value, json};

use super::meta;
use super::target::Target;

fn replicas_at(obj: &Value, path: &str) -> i64 {
    meta::get_dotted(obj, path)
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

/// The Scale object for a stored object.
pub fn to_scale(t: &Target, obj: &Value) -> Value {
    let Some(def) = t.rt.version(&t.version).and_then(|v| v.scale.clone()) else {
        return json!({});
    };
    let mut status = json!({"replicas": replicas_at(obj, &def.status_replicas_path)});
    if let Some(sel) = def.label_selector_path.as_deref()
        && let Some(s) = meta::get_dotted(obj, sel).and_then(Value::as_str)
    {
        status["selector"] = json!(s);
    } else if !t.rt.custom
        && let Some(sel) = obj.pointer("/spec/selector")
        && let Ok(sel) = super::selector::LabelSelector::from_label_selector(sel)
    {
        // A Deployment's Scale: its `spec.selector` as a selector string.
        status["selector"] = json!(sel.to_string());
    }
    let mut metadata = json!({
        "name": meta::name(obj),
        "uid": meta::uid(obj),
        "resourceVersion": meta::resource_version(obj),
        "creationTimestamp": obj.pointer("/metadata/creationTimestamp").cloned().unwrap_or(Value::Null),
    });
    if !meta::namespace(obj).is_empty() {
        metadata["namespace"] = json!(meta::namespace(obj));
    }
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": metadata,
        "spec": {"replicas": replicas_at(obj, &def.spec_replicas_path)},
        "status": status,
    })
}

//! Which objects a list or watch sees (docs/embedded-apiserver.md M9): namespace, label selector and the
//! supported field selectors.

use serde_json::Value;

use super::error::ApiError;
use super::meta;
use super::registry::ResourceType;
use super::selector::{FieldSelector, LabelSelector};

/// A parsed list/watch filter.
#[derive(Debug, Clone)]
pub struct Filter {
    pub namespace: Option<String>,
    pub labels: LabelSelector,
    pub fields: FieldSelector,
}

fn supported_fields(rt: &ResourceType, version: &str) -> Vec<String> {
    let mut f = vec!["metadata.name".to_string()];
    if rt.namespaced {
        f.push("metadata.namespace".to_string());
    }
    if let Some(v) = rt.version(version) {
        f.extend(v.selectable_fields.iter().cloned());
    }
    match (rt.group.as_str(), rt.resource.as_str()) {
        ("", "secrets") => f.push("type".into()),
        ("", "namespaces") => f.push("status.phase".into()),
        ("", "events") => f.extend(
            [
                "involvedObject.kind",
                "involvedObject.namespace",
                "involvedObject.name",
                "involvedObject.uid",
                "involvedObject.apiVersion",
                "involvedObject.resourceVersion",
                "involvedObject.fieldPath",
                "reason",
                "reportingComponent",
                "source",
                "type",
            ]
            .map(String::from),
        ),
        _ => {}
    }
    f
}

impl Filter {
    pub fn parse(
        rt: &ResourceType,
        version: &str,
        namespace: Option<&str>,
        label_selector: Option<&str>,
        field_selector: Option<&str>,
    ) -> Result<Self, ApiError> {
        let labels = match label_selector {
            // labels.Parse's error as is (it says "unable to parse requirement" itself).
            Some(s) if !s.trim().is_empty() => s
                .parse::<LabelSelector>()
                .map_err(|e| ApiError::bad_request(e.0))?,
            _ => LabelSelector::everything(),
        };
        let fields = match field_selector {
            Some(s) if !s.trim().is_empty() => s
                .parse::<FieldSelector>()
                .map_err(|e| ApiError::bad_request(e.0))?,
            _ => FieldSelector::default(),
        };
        let supported = supported_fields(rt, version);
        for f in fields.fields() {
            if !supported.iter().any(|s| s == f) {
                return Err(ApiError::bad_request(format!(
                    "field label not supported: {f}"
                )));
            }
        }
        Ok(Self {
            namespace: namespace.filter(|n| !n.is_empty()).map(str::to_string),
            labels,
            fields,
        })
    }

    /// Everything in a namespace (or everything).
    pub fn all(namespace: Option<&str>) -> Self {
        Self {
            namespace: namespace.map(str::to_string),
            labels: LabelSelector::everything(),
            fields: FieldSelector::default(),
        }
    }

    pub fn matches(&self, obj: &Value) -> bool {
        if let Some(ns) = &self.namespace
            && meta::namespace(obj) != ns
        {
            return false;
        }
        if !self.labels.matches_json(obj.pointer("/metadata/labels")) {
            return false;
        }
        if self.fields.is_empty() {
            return true;
        }
        self.fields.matches(&|field: &str| field_value(obj, field))
    }
}

fn field_value(obj: &Value, field: &str) -> Option<String> {
    let v = meta::get_dotted(obj, field)?;
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;
    use serde_json::json;

    #[test]
    fn name_selector_and_unsupported_field() {
        let r = Registry::with_builtins();
        let rt = r.get("", "configmaps").unwrap();
        let f = Filter::parse(&rt, "v1", Some("default"), None, Some("metadata.name=w1")).unwrap();
        assert!(f.matches(&json!({"metadata": {"name": "w1", "namespace": "default"}})));
        assert!(!f.matches(&json!({"metadata": {"name": "w2", "namespace": "default"}})));
        assert!(!f.matches(&json!({"metadata": {"name": "w1", "namespace": "other"}})));
        let e = Filter::parse(&rt, "v1", None, None, Some("spec.size=small")).unwrap_err();
        assert_eq!(e.code, 400);
        assert!(e.message.contains("field label not supported: spec.size"));
    }

    #[test]
    fn label_set_semantics() {
        let r = Registry::with_builtins();
        let rt = r.get("", "configmaps").unwrap();
        let f = Filter::parse(&rt, "v1", None, Some("env in (a,b),!legacy"), None).unwrap();
        assert!(f.matches(&json!({"metadata": {"labels": {"env": "a"}}})));
        assert!(!f.matches(&json!({"metadata": {"labels": {"env": "a", "legacy": "1"}}})));
        assert!(!f.matches(&json!({"metadata": {"labels": {"env": "c"}}})));
        assert_eq!(
            Filter::parse(&rt, "v1", None, Some("env in a"), None)
                .unwrap_err()
                .code,
            400
        );
    }
}

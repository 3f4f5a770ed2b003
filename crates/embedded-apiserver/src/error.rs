//! Kubernetes `Status` errors (docs/embedded-apiserver.md M4): the reasons, codes and details kube-apiserver returns.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// One `details.causes[]` entry of a Status (metav1.StatusCause).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusCause {
    pub reason: String,
    pub message: String,
    pub field: String,
}

impl From<super::schema::Cause> for StatusCause {
    fn from(c: super::schema::Cause) -> Self {
        Self {
            reason: c.reason,
            message: c.message,
            field: c.field,
        }
    }
}

impl StatusCause {
    pub fn new(reason: &str, field: &str, message: impl Into<String>) -> Self {
        Self {
            reason: reason.to_string(),
            message: message.into(),
            field: field.to_string(),
        }
    }
}

/// An API error rendered as a `Status` body with its HTTP code.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{code} {reason}: {message}")]
pub struct ApiError {
    pub code: u16,
    /// `Status.reason`; empty is omitted (a webhook's denial may carry none, or its own).
    pub reason: Cow<'static, str>,
    pub message: String,
    pub details: Option<Box<Value>>,
    /// Extra response headers (e.g. `Retry-After`).
    pub headers: Vec<(&'static str, String)>,
    /// `metadata.continue` of the Status (the inconsistent-continue token of a 410).
    pub list_continue: Option<Box<str>>,
}

/// `widgets.example.com` for groups, `secrets` for the core group.
pub fn qualified(resource: &str, group: &str) -> String {
    if group.is_empty() {
        resource.to_string()
    } else {
        format!("{resource}.{group}")
    }
}

fn details(name: &str, group: &str, kind: &str) -> Value {
    let mut d = serde_json::Map::new();
    if !name.is_empty() {
        d.insert("name".into(), json!(name));
    }
    if !group.is_empty() {
        d.insert("group".into(), json!(group));
    }
    d.insert("kind".into(), json!(kind));
    Value::Object(d)
}

impl ApiError {
    pub fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason: Cow::Borrowed(reason),
            message: message.into(),
            details: None,
            headers: Vec::new(),
            list_continue: None,
        }
    }

    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(Box::new(details));
        self
    }

    pub fn not_found(group: &str, resource: &str, name: &str) -> Self {
        Self::new(
            404,
            "NotFound",
            format!("{} \"{name}\" not found", qualified(resource, group)),
        )
        .with_details(details(name, group, resource))
    }

    /// 404 for a path that names no known resource.
    pub fn path_not_found() -> Self {
        Self::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
        .with_details(json!({}))
    }

    pub fn already_exists(group: &str, resource: &str, name: &str) -> Self {
        Self::new(
            409,
            "AlreadyExists",
            format!("{} \"{name}\" already exists", qualified(resource, group)),
        )
        .with_details(details(name, group, resource))
    }

    pub fn conflict(group: &str, resource: &str, name: &str, why: &str) -> Self {
        Self::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": {why}",
                qualified(resource, group)
            ),
        )
        .with_details(details(name, group, resource))
    }

    pub fn modified(group: &str, resource: &str, name: &str) -> Self {
        Self::conflict(
            group,
            resource,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    /// 422 Invalid: `Widget.example.com "w1" is invalid: [...]`.
    pub fn invalid(group: &str, kind: &str, name: &str, causes: Vec<StatusCause>) -> Self {
        let qualified_kind = qualified(kind, group);
        // field.ErrorList.ToAggregate: each distinct error once in the message.
        let mut rendered: Vec<String> = Vec::new();
        for c in &causes {
            let r = if c.field.is_empty() {
                c.message.clone()
            } else {
                format!("{}: {}", c.field, c.message)
            };
            if !rendered.contains(&r) {
                rendered.push(r);
            }
        }
        let list = if rendered.len() == 1 {
            rendered[0].clone()
        } else {
            format!("[{}]", rendered.join(", "))
        };
        let mut d = details(name, group, kind);
        d["causes"] = serde_json::to_value(&causes).unwrap_or(Value::Null);
        Self::new(
            422,
            "Invalid",
            format!("{qualified_kind} \"{name}\" is invalid: {list}"),
        )
        .with_details(d)
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    pub fn method_not_allowed() -> Self {
        Self::new(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        )
        .with_details(json!({}))
    }

    /// 415 as kube answers it: no details (the content type sent is not echoed).
    pub fn unsupported_media_type(accepted: &[&str]) -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: {}",
                accepted.join(", ")
            ),
        )
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(403, "Forbidden", message)
    }

    pub fn namespace_terminating(group: &str, resource: &str, name: &str, ns: &str) -> Self {
        let mut d = details(name, group, resource);
        d["causes"] = json!([{
            "reason": "NamespaceTerminating",
            "message": format!("namespace {ns} is being terminated"),
            "field": "metadata.namespace"
        }]);
        Self::forbidden(format!(
            "{} \"{name}\" is forbidden: unable to create new content in namespace {ns} because it is being terminated",
            qualified(resource, group)
        ))
        .with_details(d)
    }

    pub fn expired(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }

    pub fn too_large() -> Self {
        Self::new(
            413,
            "RequestEntityTooLarge",
            "Request entity too large: limit is 3145728",
        )
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(500, "InternalError", message)
    }

    /// apimachinery's `NewInternalError(err)`: `Internal error occurred: <err>`, the error as
    /// the one cause.
    pub fn internal_error(err: impl Into<String>) -> Self {
        let err = err.into();
        Self::new(
            500,
            "InternalError",
            format!("Internal error occurred: {err}"),
        )
        .with_details(json!({"causes": [{"message": err}]}))
    }

    /// The `Status` object.
    pub fn status(&self) -> Value {
        let mut s = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if self.reason.is_empty()
            && let Value::Object(m) = &mut s
        {
            m.remove("reason");
        }
        if let Some(d) = &self.details {
            s["details"] = (**d).clone();
        }
        if let Some(c) = &self.list_continue {
            s["metadata"] = json!({"continue": c});
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_message_and_details() {
        let e = ApiError::not_found("example.com", "widgets", "nope");
        let s = e.status();
        assert_eq!(s["message"], "widgets.example.com \"nope\" not found");
        assert_eq!(s["details"]["kind"], "widgets");
        assert_eq!(s["code"], 404);
        let core = ApiError::not_found("", "namespaces", "ghost");
        assert_eq!(core.message, "namespaces \"ghost\" not found");
    }

    #[test]
    fn invalid_brackets_only_for_many_causes() {
        let one = ApiError::invalid(
            "example.com",
            "Widget",
            "w1",
            vec![StatusCause::new(
                "FieldValueRequired",
                "spec.size",
                "Required value",
            )],
        );
        assert_eq!(
            one.message,
            "Widget.example.com \"w1\" is invalid: spec.size: Required value"
        );
        let two = ApiError::invalid(
            "example.com",
            "Widget",
            "w1",
            vec![
                StatusCause::new("FieldValueRequired", "spec.size", "Required value"),
                StatusCause::new("FieldValueInvalid", "spec.replicas", "Invalid value: -1"),
            ],
        );
        assert!(
            two.message
                .ends_with("[spec.size: Required value, spec.replicas: Invalid value: -1]")
        );
        assert_eq!(
            two.status()["details"]["causes"][1]["field"],
            "spec.replicas"
        );
    }
}

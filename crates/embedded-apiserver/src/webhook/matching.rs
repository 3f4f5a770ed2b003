//! Which webhooks a request calls (`webhook/generic.ShouldCallHook`): namespaceSelector,
//! objectSelector, rules (with `x/*` subresource semantics and scope), `matchPolicy`
//! Equivalent across a resource's served versions, then `matchConditions` (CEL, evaluated by
//! the dispatcher on the object at the webhook's version).

use std::collections::BTreeMap;

use serde_json::Value;

use super::config::{Rule, Webhook};
use crate::error::ApiError;

/// What a request addresses, for matching.
#[derive(Debug, Clone)]
pub struct RequestInfo<'a> {
    pub group: &'a str,
    pub version: &'a str,
    pub resource: &'a str,
    pub subresource: &'a str,
    pub operation: &'a str,
    /// The request namespace (a Namespace object's own name for `namespaces`).
    pub namespace: &'a str,
    /// Every served version of the resource: the equivalents `matchPolicy: Equivalent` tries.
    pub versions: &'a [String],
}

impl RequestInfo<'_> {
    fn is_namespace_resource(&self) -> bool {
        self.group.is_empty() && self.resource == "namespaces"
    }
}

/// `rules.IsExemptAdmissionConfigurationResource`.
pub fn is_exempt(group: &str, resource: &str) -> bool {
    group == "admissionregistration.k8s.io"
        && matches!(
            resource,
            "validatingwebhookconfigurations"
                | "mutatingwebhookconfigurations"
                | "validatingadmissionpolicies"
                | "validatingadmissionpolicybindings"
                | "mutatingadmissionpolicies"
                | "mutatingadmissionpolicybindings"
        )
}

fn one_of(values: &[String], v: &str) -> bool {
    values.iter().any(|x| x == "*" || x == v)
}

/// `rules.Matcher.Matches` for one rule against `version` of the request's resource.
pub fn rule_matches(rule: &Rule, req: &RequestInfo<'_>, version: &str) -> bool {
    let scope_ok = match rule.scope.as_str() {
        "Namespaced" => !req.namespace.is_empty() && !req.is_namespace_resource(),
        "Cluster" => req.namespace.is_empty() || req.is_namespace_resource(),
        _ => true,
    };
    scope_ok
        && one_of(&rule.operations, req.operation)
        && one_of(&rule.api_groups, req.group)
        && one_of(&rule.api_versions, version)
        && rule.resources.iter().any(|r| {
            let (res, sub) = r.split_once('/').unwrap_or((r.as_str(), ""));
            (res == "*" || res == req.resource) && (sub == "*" || sub == req.subresource)
        })
}

/// The version a webhook is called at for this request (the request's own, or the first
/// equivalent one of its rules accepts), ignoring selectors.
pub fn matched_version(w: &Webhook, req: &RequestInfo<'_>) -> Option<String> {
    if w.rules.iter().any(|r| rule_matches(r, req, req.version)) {
        return Some(req.version.to_string());
    }
    if w.match_exact {
        return None;
    }
    for r in &w.rules {
        for v in req.versions {
            if v != req.version && rule_matches(r, req, v) {
                return Some(v.clone());
            }
        }
    }
    None
}

/// Whether any rule of `w` could apply to this group/resource/subresource/operation at any
/// version (a cheap pre-filter: no selectors).
pub fn may_apply(w: &Webhook, req: &RequestInfo<'_>) -> bool {
    matched_version(w, req).is_some()
}

/// Namespace labels by name (None: the namespace does not exist).
pub type NamespaceLabels<'a> = dyn Fn(&str) -> Option<BTreeMap<String, String>> + 'a;

fn labels_of(obj: Option<&Value>) -> Option<BTreeMap<String, String>> {
    let obj = obj.filter(|o| !o.is_null())?;
    Some(crate::meta::labels(obj))
}

/// `ShouldCallHook` without matchConditions: `Ok(Some(version))` to call at that version,
/// `Ok(None)` to skip, `Err` for a selector error on a webhook whose rules matched.
pub fn should_call(
    w: &Webhook,
    req: &RequestInfo<'_>,
    object: Option<&Value>,
    old: Option<&Value>,
    namespaces: &NamespaceLabels<'_>,
) -> Result<Option<String>, ApiError> {
    // namespaceSelector (predicates/namespace): cluster-scoped requests always match.
    let ns_match: Result<bool, ApiError> = match &w.namespace_selector {
        None => Ok(true),
        Some(_) if req.namespace.is_empty() && !req.is_namespace_resource() => Ok(true),
        Some(sel) => {
            let own = req.is_namespace_resource()
                && req.subresource.is_empty()
                && matches!(req.operation, "CREATE" | "UPDATE");
            let labels = if own {
                labels_of(object)
            } else {
                namespaces(req.namespace)
            };
            match labels {
                Some(l) => Ok(sel.matches(&l)),
                None => Err(ApiError::not_found("", "namespaces", req.namespace)),
            }
        }
    };
    if matches!(ns_match, Ok(false)) {
        return Ok(None);
    }
    // objectSelector (predicates/object): the new or the old object's labels.
    if let Some(sel) = &w.object_selector {
        let hit = [object, old]
            .into_iter()
            .filter_map(labels_of)
            .any(|l| sel.matches(&l));
        if !hit {
            return Ok(None);
        }
    }
    let Some(version) = matched_version(w, req) else {
        return Ok(None);
    };
    ns_match?;
    Ok(Some(version))
}

/// The outcome of `matchConditions`.
#[derive(Debug, Clone, PartialEq)]
pub enum Conditions {
    Call,
    Skip,
    /// Evaluation errors with failurePolicy Fail (the aggregated text).
    Error(String),
}

/// Evaluates `matchConditions` (kube's `matchconditions.matcher.Match`) with `object`,
/// `oldObject` and `request` bound. The CEL subset is `schema::cel`'s; an expression outside it
/// counts as an evaluation error.
pub fn eval_conditions(w: &Webhook, object: &Value, old: &Value, request: &Value) -> Conditions {
    use crate::schema::cel;
    if w.match_conditions.is_empty() {
        return Conditions::Call;
    }
    let env = cel::Env::from([
        ("object".to_string(), object.clone()),
        ("oldObject".to_string(), old.clone()),
        ("request".to_string(), request.clone()),
    ]);
    let mut errors: Vec<String> = Vec::new();
    for (_, expr) in &w.match_conditions {
        let result = cel::parse(expr).and_then(|e| cel::eval(&e, &env));
        match result {
            Ok(Value::Bool(false)) => return Conditions::Skip,
            Ok(Value::Bool(true)) => {}
            Ok(other) => errors.push(format!(
                "expression '{expr}' resulted in error: no such overload: expected bool, got {other}"
            )),
            Err(e) => errors.push(format!("expression '{expr}' resulted in error: {e}")),
        }
    }
    if errors.is_empty() {
        Conditions::Call
    } else if w.fail_open {
        Conditions::Skip
    } else if errors.len() == 1 {
        Conditions::Error(errors.remove(0))
    } else {
        Conditions::Error(format!("[{}]", errors.join(", ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::webhook::config::Configs;
    use serde_json::json;

    fn hook(rule: Value, extra: Value) -> std::sync::Arc<Webhook> {
        let mut w = json!({"name": "a.b.c", "clientConfig": {"url": "https://x/y"}, "rules": [rule],
            "sideEffects": "None", "admissionReviewVersions": ["v1"]});
        if let (Some(m), Some(e)) = (w.as_object_mut(), extra.as_object()) {
            m.extend(e.clone());
        }
        Configs::parse([(true, &json!({"metadata": {"name": "c"}, "webhooks": [w]}))].into_iter())
            .mutating
            .remove(0)
    }

    fn req<'a>(resource: &'a str, sub: &'a str, versions: &'a [String]) -> RequestInfo<'a> {
        RequestInfo {
            group: "g",
            version: "v1",
            resource,
            subresource: sub,
            operation: "CREATE",
            namespace: "default",
            versions,
        }
    }

    #[test]
    fn subresource_wildcards() {
        let vs = vec!["v1".to_string()];
        let rule = |r: &str| json!({"operations": ["*"], "apiGroups": ["g"], "apiVersions": ["*"], "resources": [r]});
        let cases = [
            ("ws", "", "ws", true),
            ("ws", "status", "ws", false),
            ("ws", "status", "ws/status", true),
            ("ws", "", "ws/status", false),
            ("ws", "", "ws/*", true),
            ("ws", "scale", "ws/*", true),
            ("ws", "", "*", true),
            ("ws", "status", "*", false),
            ("ws", "status", "*/*", true),
            ("ws", "status", "*/status", true),
            ("ws", "scale", "*/status", false),
        ];
        for (res, sub, pattern, want) in cases {
            let w = hook(rule(pattern), json!({}));
            assert_eq!(
                matched_version(&w, &req(res, sub, &vs)).is_some(),
                want,
                "{res}/{sub} vs {pattern}"
            );
        }
    }

    #[test]
    fn equivalent_and_exact() {
        let vs = vec!["v2".to_string(), "v1".to_string()];
        let rule = json!({"operations": ["CREATE"], "apiGroups": ["g"], "apiVersions": ["v2"], "resources": ["ws"]});
        let w = hook(rule.clone(), json!({}));
        assert_eq!(
            matched_version(&w, &req("ws", "", &vs)).as_deref(),
            Some("v2")
        );
        let exact = hook(rule, json!({"matchPolicy": "Exact"}));
        assert_eq!(matched_version(&exact, &req("ws", "", &vs)), None);
    }

    #[test]
    fn selectors() {
        let vs = vec!["v1".to_string()];
        let rule = json!({"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"], "scope": "Namespaced"});
        let w = hook(
            rule,
            json!({"namespaceSelector": {"matchLabels": {"team": "a"}}, "objectSelector": {"matchLabels": {"x": "y"}}}),
        );
        let ns = |n: &str| {
            (n == "default").then(|| BTreeMap::from([("team".to_string(), "a".to_string())]))
        };
        let obj = json!({"metadata": {"labels": {"x": "y"}}});
        let other = json!({"metadata": {"labels": {"x": "z"}}});
        assert!(
            should_call(&w, &req("ws", "", &vs), Some(&obj), None, &ns)
                .unwrap()
                .is_some()
        );
        assert!(
            should_call(&w, &req("ws", "", &vs), Some(&other), None, &ns)
                .unwrap()
                .is_none()
        );
        // The old object's labels count too.
        assert!(
            should_call(&w, &req("ws", "", &vs), Some(&other), Some(&obj), &ns)
                .unwrap()
                .is_some()
        );
        let mut missing = req("ws", "", &vs);
        missing.namespace = "ghost";
        assert_eq!(
            should_call(&w, &missing, Some(&obj), None, &ns)
                .unwrap_err()
                .code,
            404
        );
    }

    #[test]
    fn match_conditions() {
        let rule = json!({"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]});
        let w = hook(
            rule.clone(),
            json!({"matchConditions": [{"name": "a", "expression": "object.metadata.name == 'x'"}]}),
        );
        let obj = json!({"metadata": {"name": "x"}});
        assert_eq!(
            eval_conditions(&w, &obj, &Value::Null, &json!({})),
            Conditions::Call
        );
        let other = json!({"metadata": {"name": "y"}});
        assert_eq!(
            eval_conditions(&w, &other, &Value::Null, &json!({})),
            Conditions::Skip
        );
        let bad = hook(
            rule.clone(),
            json!({"matchConditions": [{"name": "a", "expression": "object.spec.nope == 1"}]}),
        );
        assert!(matches!(
            eval_conditions(&bad, &obj, &Value::Null, &json!({})),
            Conditions::Error(_)
        ));
        let ignored = hook(
            rule,
            json!({"failurePolicy": "Ignore", "matchConditions": [{"name": "a", "expression": "object.spec.nope == 1"}]}),
        );
        assert_eq!(
            eval_conditions(&ignored, &obj, &Value::Null, &json!({})),
            Conditions::Skip
        );
    }
}

//! The manager container's environment as the kubelet would give it: `envFrom` first, then
//! `env` in order (a later entry of the same name wins), `$(VAR)` references to earlier entries
//! expanded; `valueFrom` resolved from the Pod the run stands in for ([`PodFacts`]) and from the
//! components' Secrets and ConfigMaps.

use base64::Engine;
use serde_json::Value;
use thiserror::Error;

mod value_from;
use value_from::{object_source, value_from};

/// The Pod the manager would run in: what `fieldRef` reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodFacts {
    pub namespace: String,
    pub name: String,
    pub uid: String,
    pub node_name: String,
    pub service_account: String,
    /// `status.podIP`, `status.hostIP`: a loopback address the process can listen on.
    pub ip: String,
    pub labels: serde_json::Map<String, Value>,
    pub annotations: serde_json::Map<String, Value>,
}

/// Where a variable's value came from.
#[derive(Clone, PartialEq, Eq)]
pub enum EnvSource {
    /// `value` in the Deployment.
    Value,
    /// `valueFrom.fieldRef.fieldPath`.
    Field(String),
    /// `valueFrom.resourceFieldRef.resource`, and how it was computed.
    Resource(String, String),
    /// `valueFrom.secretKeyRef` or `envFrom.secretRef` (the value is never shown).
    Secret {
        namespace: String,
        name: String,
        key: String,
    },
    /// `valueFrom.configMapKeyRef` or `envFrom.configMapRef`.
    ConfigMap {
        namespace: String,
        name: String,
        key: String,
    },
}

/// One variable of the manager's environment.
#[derive(Clone, PartialEq, Eq)]
pub struct EnvVar {
    pub name: String,
    pub value: String,
    pub source: EnvSource,
}

impl EnvVar {
    /// Whether the value may be shown (not from a Secret, not named like a credential).
    pub fn showable(&self) -> bool {
        !matches!(self.source, EnvSource::Secret { .. }) && !credential_like(&self.name)
    }

    /// `NAME=value (source)`, the value hidden when not [`Self::showable`].
    pub fn describe(&self) -> String {
        let source = match &self.source {
            EnvSource::Value => "value".to_string(),
            EnvSource::Field(path) => format!("fieldRef {path}"),
            EnvSource::Resource(resource, how) => format!("resourceFieldRef {resource}: {how}"),
            EnvSource::Secret {
                namespace,
                name,
                key,
            } => return format!("{} from Secret {namespace}/{name} key {key}", self.name),
            EnvSource::ConfigMap {
                namespace,
                name,
                key,
            } => format!("ConfigMap {namespace}/{name} key {key}"),
        };
        if self.showable() {
            format!("{}={} ({source})", self.name, self.value)
        } else {
            format!("{} ({source}, value not shown)", self.name)
        }
    }
}

/// Never prints a value that is not [`EnvVar::showable`].
impl std::fmt::Debug for EnvVar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

fn credential_like(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    [
        "PASSWORD",
        "SECRET",
        "TOKEN",
        "CREDENTIAL",
        "PRIVATE_KEY",
        "ACCESS_KEY",
        "API_KEY",
    ]
    .iter()
    .any(|w| upper.contains(w))
}

/// Why the environment could not be resolved (the Pod would not start either:
/// `CreateContainerConfigError`).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum EnvError {
    #[error("env {var}: {kind} {namespace}/{name} is not among the components")]
    MissingObject {
        var: String,
        kind: &'static str,
        namespace: String,
        name: String,
    },
    #[error("env {var}: {kind} {namespace}/{name} has no key {key:?}")]
    MissingKey {
        var: String,
        kind: &'static str,
        namespace: String,
        name: String,
        key: String,
    },
    #[error("env {var}: Secret {namespace}/{name} key {key:?} is not base64 of UTF-8 text")]
    BadSecretData {
        var: String,
        namespace: String,
        name: String,
        key: String,
    },
    #[error("env {var}: fieldRef {path:?} is not a field the downward API gives")]
    UnsupportedField { var: String, path: String },
    #[error("env {var}: resourceFieldRef {resource:?}: {why}")]
    Resource {
        var: String,
        resource: String,
        why: String,
    },
    #[error("env entry {index}: {why}")]
    Malformed { index: usize, why: String },
}

fn str_at<'a>(v: &'a Value, ptr: &str) -> Option<&'a str> {
    v.pointer(ptr).and_then(Value::as_str)
}

fn ns_of(v: &Value) -> &str {
    str_at(v, "/metadata/namespace")
        .filter(|n| !n.is_empty())
        .unwrap_or("default")
}

/// The Secret or ConfigMap `name` of namespace `ns` among `docs`.
fn find<'a>(docs: &'a [Value], kind: &str, ns: &str, name: &str) -> Option<&'a Value> {
    docs.iter().find(|d| {
        str_at(d, "/apiVersion") == Some("v1")
            && str_at(d, "/kind") == Some(kind)
            && str_at(d, "/metadata/name") == Some(name)
            && ns_of(d) == ns
    })
}

/// Every key of a Secret (`stringData` over `data`, as the API server merges them) or a
/// ConfigMap (`data`, then `binaryData`), decoded. A key whose value cannot be text is `Err`.
fn entries(obj: &Value, kind: &str) -> Vec<(String, Result<String, ()>)> {
    let mut out: Vec<(String, Result<String, ()>)> = Vec::new();
    let mut put = |k: &str, v: Result<String, ()>| {
        out.retain(|(key, _)| key != k);
        out.push((k.to_string(), v));
    };
    let decode = |v: &Value| -> Result<String, ()> {
        let b = base64::engine::general_purpose::STANDARD
            .decode(v.as_str().ok_or(())?)
            .map_err(|_| ())?;
        String::from_utf8(b).map_err(|_| ())
    };
    let text = |v: &Value| v.as_str().map(str::to_string).ok_or(());
    let map = |p: &str| {
        obj.get(p)
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    if kind == "Secret" {
        for (k, v) in map("data") {
            put(&k, decode(&v));
        }
        for (k, v) in map("stringData") {
            put(&k, text(&v));
        }
    } else {
        for (k, v) in map("data") {
            put(&k, text(&v));
        }
        for (k, v) in map("binaryData") {
            put(&k, decode(&v));
        }
    }
    out
}

/// Expands `$(NAME)` in `input` with `lookup` as the kubelet does (`$$` is a literal `$`; an
/// unknown or unterminated reference stays as written).
pub fn expand(input: &str, lookup: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::new();
    let mut rest = input;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        match after.chars().next() {
            None => {
                out.push('$');
                rest = after;
            }
            Some('$') => {
                out.push('$');
                rest = &after[1..];
            }
            Some('(') => match after.find(')') {
                Some(close) => {
                    let name = &after[1..close];
                    match lookup(name) {
                        Some(v) => out.push_str(&v),
                        None => {
                            out.push_str("$(");
                            out.push_str(name);
                            out.push(')');
                        }
                    }
                    rest = &after[close + 1..];
                }
                None => {
                    out.push_str("$(");
                    rest = &after[1..];
                }
            },
            Some(c) => {
                out.push('$');
                out.push(c);
                rest = &after[c.len_utf8()..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The container's environment. `skip`: names the command assigns itself (not resolved, so
/// nothing about them can fail). `docs`: the components (Secrets, ConfigMaps).
pub fn resolve(
    container: &Value,
    pod: &PodFacts,
    docs: &[Value],
    skip: &[String],
) -> Result<Vec<EnvVar>, EnvError> {
    let mut vars: Vec<EnvVar> = Vec::new();
    let set = |vars: &mut Vec<EnvVar>, v: EnvVar| {
        vars.retain(|e| e.name != v.name);
        vars.push(v);
    };
    for from in container
        .get("envFrom")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let prefix = str_at(from, "/prefix").unwrap_or_default();
        for (kind, key) in [("Secret", "secretRef"), ("ConfigMap", "configMapRef")] {
            let Some(r) = from.get(key) else { continue };
            let name = str_at(r, "/name").unwrap_or_default();
            let optional = r.get("optional").and_then(Value::as_bool) == Some(true);
            let Some(obj) = find(docs, kind, &pod.namespace, name) else {
                if optional {
                    continue;
                }
                return Err(EnvError::MissingObject {
                    var: format!("{prefix}* (envFrom)"),
                    kind,
                    namespace: pod.namespace.clone(),
                    name: name.to_string(),
                });
            };
            for (k, v) in entries(obj, kind) {
                let var = format!("{prefix}{k}");
                if var.contains('=') || skip.contains(&var) {
                    continue;
                }
                let value = v.map_err(|()| EnvError::BadSecretData {
                    var: var.clone(),
                    namespace: pod.namespace.clone(),
                    name: name.to_string(),
                    key: k.clone(),
                })?;
                set(
                    &mut vars,
                    EnvVar {
                        name: var,
                        value,
                        source: object_source(kind, &pod.namespace, name, &k),
                    },
                );
            }
        }
    }
    for (index, e) in container
        .get("env")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let Some(name) = str_at(e, "/name").filter(|n| !n.is_empty()) else {
            return Err(EnvError::Malformed {
                index,
                why: "no name".into(),
            });
        };
        if skip.iter().any(|s| s == name) {
            continue;
        }
        let resolved = match e.get("valueFrom") {
            Some(from) => value_from(name, from, container, pod, docs)?,
            None => {
                let raw = match e.get("value") {
                    None | Some(Value::Null) => String::new(),
                    Some(Value::String(s)) => s.clone(),
                    // A number or boolean the YAML typed (clusterctl substitutes text).
                    Some(other) => other.to_string(),
                };
                let known = vars.clone();
                let value = expand(&raw, &|n| {
                    known.iter().find(|v| v.name == n).map(|v| v.value.clone())
                });
                Some(EnvVar {
                    name: name.to_string(),
                    value,
                    source: EnvSource::Value,
                })
            }
        };
        if let Some(v) = resolved {
            set(&mut vars, v);
        }
    }
    Ok(vars)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod() -> PodFacts {
        PodFacts {
            namespace: "p-system".into(),
            name: "p-manager-abc-x".into(),
            uid: "u-1".into(),
            node_name: "node".into(),
            service_account: "p-sa".into(),
            ip: "127.0.0.1".into(),
            labels: json!({"app": "p"}).as_object().cloned().unwrap_or_default(),
            annotations: serde_json::Map::new(),
        }
    }

    fn components() -> Vec<Value> {
        vec![
            json!({"apiVersion": "v1", "kind": "Secret",
                   "metadata": {"name": "creds", "namespace": "p-system"},
                   "data": {"token": "c2VjcmV0", "bin": "/w=="}, "stringData": {"user": "bob"}}),
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "cfg", "namespace": "p-system"},
                   "data": {"LEVEL": "4", "MODE": "fast"}}),
            // Same name, another namespace: never read.
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "other", "namespace": "elsewhere"}, "data": {"x": "1"}}),
        ]
    }

    fn shown(vars: &[EnvVar]) -> Vec<String> {
        vars.iter().map(EnvVar::describe).collect()
    }

    #[test]
    fn downward_api_values_and_expansion() {
        let c = json!({"name": "manager", "env": [
            {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {"name": "POD_UID", "valueFrom": {"fieldRef": {"fieldPath": "metadata.uid"}}},
            {"name": "POD_IP", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "status.podIP"}}},
            {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
            {"name": "SA", "valueFrom": {"fieldRef": {"fieldPath": "spec.serviceAccountName"}}},
            {"name": "APP", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}},
            {"name": "DOCKER_HOST", "value": ""},
            {"name": "ADDR", "value": "$(POD_IP):8080 $(LATER) $$(POD_IP) $(UNCLOSED"},
            {"name": "LATER", "value": "x"},
            {"name": "PORT", "value": 8080},
        ]});
        let vars = resolve(&c, &pod(), &[], &[]).unwrap();
        assert_eq!(
            shown(&vars),
            [
                "POD_NAMESPACE=p-system (fieldRef metadata.namespace)",
                "POD_NAME=p-manager-abc-x (fieldRef metadata.name)",
                "POD_UID=u-1 (fieldRef metadata.uid)",
                "POD_IP=127.0.0.1 (fieldRef status.podIP)",
                "NODE=node (fieldRef spec.nodeName)",
                "SA=p-sa (fieldRef spec.serviceAccountName)",
                "APP=p (fieldRef metadata.labels['app'])",
                "DOCKER_HOST= (value)",
                "ADDR=127.0.0.1:8080 $(LATER) $(POD_IP) $(UNCLOSED (value)",
                "LATER=x (value)",
                "PORT=8080 (value)",
            ]
        );
    }

    #[test]
    fn secrets_and_config_maps_with_their_values_hidden() {
        let c = json!({"name": "manager",
        "envFrom": [{"configMapRef": {"name": "cfg"}, "prefix": "CFG_"},
                    {"secretRef": {"name": "missing", "optional": true}}],
        "env": [
            {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "token"}}},
            {"name": "USER", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "user"}}},
            {"name": "LEVEL", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "LEVEL"}}},
            {"name": "GONE", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "nope", "optional": true}}},
            {"name": "CFG_MODE", "value": "slow"},
            {"name": "DB_PASSWORD", "value": "hunter2"},
        ]});
        let vars = resolve(&c, &pod(), &components(), &[]).unwrap();
        assert_eq!(
            shown(&vars),
            [
                "CFG_LEVEL=4 (ConfigMap p-system/cfg key LEVEL)",
                "TOKEN from Secret p-system/creds key token",
                "USER from Secret p-system/creds key user",
                "LEVEL=4 (ConfigMap p-system/cfg key LEVEL)",
                "CFG_MODE=slow (value)",
                "DB_PASSWORD (value, value not shown)",
            ]
        );
        assert_eq!(vars[1].value, "secret");
        assert_eq!(vars[2].value, "bob");
        let debug = format!("{vars:?}");
        assert!(
            !debug.contains("secret") && !debug.contains("bob") && !debug.contains("hunter2"),
            "{debug}"
        );
    }

    #[test]
    fn missing_references_name_what_is_missing() {
        let one = |entry: Value| {
            resolve(&json!({"env": [entry]}), &pod(), &components(), &[])
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            one(json!({"name": "A", "valueFrom": {"secretKeyRef": {"name": "nope", "key": "k"}}})),
            "env A: Secret p-system/nope is not among the components"
        );
        assert_eq!(
            one(
                json!({"name": "A", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "k"}}})
            ),
            "env A: ConfigMap p-system/cfg has no key \"k\""
        );
        assert_eq!(
            one(
                json!({"name": "A", "valueFrom": {"configMapKeyRef": {"name": "other", "key": "x"}}})
            ),
            "env A: ConfigMap p-system/other is not among the components"
        );
        assert_eq!(
            one(
                json!({"name": "A", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "bin"}}})
            ),
            "env A: Secret p-system/creds key \"bin\" is not base64 of UTF-8 text"
        );
        assert_eq!(
            one(json!({"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "status.phase"}}})),
            "env A: fieldRef \"status.phase\" is not a field the downward API gives"
        );
        // What the command assigns itself is not resolved at all.
        let skip = ["A".to_string()];
        let entry =
            json!({"name": "A", "valueFrom": {"secretKeyRef": {"name": "nope", "key": "k"}}});
        assert!(
            resolve(&json!({"env": [entry]}), &pod(), &components(), &skip)
                .unwrap()
                .is_empty()
        );
    }
}

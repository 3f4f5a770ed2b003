//! Where one variable's `valueFrom` takes its value: the downward API of the Pod the run
//! stands in for (`fieldRef`, `resourceFieldRef`) and the components' Secrets and ConfigMaps.

use super::*;

pub(super) fn object_source(kind: &str, ns: &str, name: &str, key: &str) -> EnvSource {
    let (namespace, name, key) = (ns.to_string(), name.to_string(), key.to_string());
    if kind == "Secret" {
        EnvSource::Secret {
            namespace,
            name,
            key,
        }
    } else {
        EnvSource::ConfigMap {
            namespace,
            name,
            key,
        }
    }
}

/// One `valueFrom`; `None`: an optional reference that does not resolve (the variable is unset).
pub(super) fn value_from(
    var: &str,
    from: &Value,
    container: &Value,
    pod: &PodFacts,
    docs: &[Value],
) -> Result<Option<EnvVar>, EnvError> {
    let make = |value: String, source: EnvSource| {
        Some(EnvVar {
            name: var.to_string(),
            value,
            source,
        })
    };
    if let Some(path) = str_at(from, "/fieldRef/fieldPath") {
        let value = field(pod, path).ok_or_else(|| EnvError::UnsupportedField {
            var: var.to_string(),
            path: path.to_string(),
        })?;
        return Ok(make(value, EnvSource::Field(path.to_string())));
    }
    if let Some(r) = from.get("resourceFieldRef") {
        let resource = str_at(r, "/resource").unwrap_or_default();
        let (value, how) =
            crate::run::manager_launch::resources::value(container, r).map_err(|why| {
                EnvError::Resource {
                    var: var.to_string(),
                    resource: resource.to_string(),
                    why,
                }
            })?;
        return Ok(make(value, EnvSource::Resource(resource.to_string(), how)));
    }
    for (kind, key) in [("Secret", "secretKeyRef"), ("ConfigMap", "configMapKeyRef")] {
        let Some(r) = from.get(key) else { continue };
        let name = str_at(r, "/name").unwrap_or_default();
        let k = str_at(r, "/key").unwrap_or_default();
        let optional = r.get("optional").and_then(Value::as_bool) == Some(true);
        let ns = pod.namespace.as_str();
        let Some(obj) = find(docs, kind, ns, name) else {
            if optional {
                return Ok(None);
            }
            return Err(EnvError::MissingObject {
                var: var.to_string(),
                kind,
                namespace: ns.to_string(),
                name: name.to_string(),
            });
        };
        let Some((_, v)) = entries(obj, kind).into_iter().find(|(key, _)| key == k) else {
            if optional {
                return Ok(None);
            }
            return Err(EnvError::MissingKey {
                var: var.to_string(),
                kind,
                namespace: ns.to_string(),
                name: name.to_string(),
                key: k.to_string(),
            });
        };
        let value = v.map_err(|()| EnvError::BadSecretData {
            var: var.to_string(),
            namespace: ns.to_string(),
            name: name.to_string(),
            key: k.to_string(),
        })?;
        return Ok(make(value, object_source(kind, ns, name, k)));
    }
    Err(EnvError::Malformed {
        index: 0,
        why: format!(
            "{var}: valueFrom without fieldRef, resourceFieldRef, secretKeyRef or configMapKeyRef"
        ),
    })
}

/// What the downward API gives for `path`.
pub(super) fn field(pod: &PodFacts, path: &str) -> Option<String> {
    let keyed = |prefix: &str, map: &serde_json::Map<String, Value>| {
        let key = path.strip_prefix(prefix)?.strip_suffix("']")?;
        Some(
            map.get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
        )
    };
    Some(match path {
        "metadata.name" => pod.name.clone(),
        "metadata.namespace" => pod.namespace.clone(),
        "metadata.uid" => pod.uid.clone(),
        "spec.nodeName" => pod.node_name.clone(),
        "spec.serviceAccountName" => pod.service_account.clone(),
        "status.podIP" | "status.podIPs" | "status.hostIP" | "status.hostIPs" => pod.ip.clone(),
        _ => {
            return keyed("metadata.labels['", &pod.labels)
                .or_else(|| keyed("metadata.annotations['", &pod.annotations));
        }
    })
}

//! `resourceFieldRef`: a container's resource limit or request as the kubelet writes it into
//! the environment (`ceil(quantity / divisor)`; a limit the container does not set is the node's
//! allocatable, here this machine's CPUs and memory).

use serde_json::Value;

/// A Kubernetes quantity (`500m`, `1.5`, `128Mi`, `1e3`, `2G`) as a number.
pub fn parse_quantity(q: &str) -> Option<f64> {
    let q = q.trim();
    let split = q
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '+' | '-')))
        .unwrap_or(q.len());
    let (number, suffix) = q.split_at(split);
    let n: f64 = number.parse().ok()?;
    let scale = match suffix {
        "" => 1.0,
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024f64,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        e if e.starts_with(['e', 'E']) => 10f64.powi(e[1..].parse::<i32>().ok()?),
        _ => return None,
    };
    Some(n * scale)
}

/// This machine's allocatable `cpu` or `memory` (what a limit the container does not set is).
fn allocatable(name: &str) -> Option<f64> {
    match name {
        "cpu" => std::thread::available_parallelism()
            .ok()
            .map(|n| n.get() as f64),
        "memory" => std::fs::read_to_string("/proc/meminfo")
            .ok()?
            .lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|kb| kb.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .map(|kb| kb * 1024.0),
        _ => None,
    }
}

/// The value of `reference` (a `resourceFieldRef`) for `container`, and how it was computed.
pub fn value(container: &Value, reference: &Value) -> Result<(String, String), String> {
    if let Some(other) = reference
        .get("containerName")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty() && Some(*n) != container.get("name").and_then(Value::as_str))
    {
        return Err(format!("container {other:?} is not the manager container"));
    }
    let resource = reference
        .get("resource")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let (kind, name) = resource
        .split_once('.')
        .filter(|(k, _)| matches!(*k, "limits" | "requests"))
        .ok_or_else(|| "not limits.<name> or requests.<name>".to_string())?;
    let divisor_text = match reference.get("divisor") {
        None | Some(Value::Null) => "1".to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    };
    let divisor = parse_quantity(&divisor_text)
        .filter(|d| *d > 0.0)
        .ok_or_else(|| format!("divisor {divisor_text:?} is not a positive quantity"))?;
    let set = |k: &str| {
        container
            .pointer(&format!("/resources/{k}/{name}"))
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
    };
    let (quantity, how) = match (kind, set(kind), set("limits")) {
        (_, Some(q), _) => (q.clone(), format!("{resource} {q}")),
        // A request defaults to the limit.
        ("requests", None, Some(q)) => (q.clone(), format!("limits.{name} {q}")),
        ("requests", None, None) => ("0".to_string(), format!("{resource} not set")),
        _ => {
            let a = allocatable(name).ok_or_else(|| {
                format!(
                    "the container sets no limit and this machine's allocatable {name} is not known"
                )
            })?;
            (a.to_string(), format!("no limit: this machine's {name}"))
        }
    };
    let q = parse_quantity(&quantity).ok_or_else(|| format!("{quantity:?} is not a quantity"))?;
    let v = (q / divisor).ceil();
    Ok((format!("{v:.0}"), format!("{how}, divisor {divisor_text}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn quantities() {
        assert_eq!(parse_quantity("500m"), Some(0.5));
        assert_eq!(parse_quantity("128Mi"), Some(134_217_728.0));
        assert_eq!(parse_quantity("2G"), Some(2e9));
        assert_eq!(parse_quantity("1e3"), Some(1000.0));
        assert_eq!(parse_quantity("1.5"), Some(1.5));
        assert_eq!(parse_quantity("x"), None);
        assert_eq!(parse_quantity("1Q"), None);
    }

    #[test]
    fn limits_requests_and_divisors() {
        let c = json!({"name": "manager", "resources": {
            "limits": {"cpu": "500m", "memory": "128Mi"}, "requests": {"memory": "64Mi"}}});
        let v = |r: Value| value(&c, &r).map(|(v, _)| v);
        assert_eq!(v(json!({"resource": "limits.cpu"})), Ok("1".into()));
        assert_eq!(
            v(json!({"resource": "limits.cpu", "divisor": "1m"})),
            Ok("500".into())
        );
        assert_eq!(
            v(json!({"resource": "limits.memory", "divisor": "1Mi"})),
            Ok("128".into())
        );
        assert_eq!(
            v(json!({"resource": "requests.memory", "divisor": "1Mi"})),
            Ok("64".into())
        );
        // An unset request is the limit.
        assert_eq!(
            v(json!({"resource": "requests.cpu", "divisor": "1m"})),
            Ok("500".into())
        );
        assert!(v(json!({"resource": "limits.ephemeral-storage"})).is_err());
        assert!(v(json!({"resource": "cpu"})).is_err());
        assert!(v(json!({"resource": "limits.cpu", "containerName": "sidecar"})).is_err());
        // No limit: this machine's.
        let none = json!({"name": "manager"});
        let cpus = value(&none, &json!({"resource": "limits.cpu"})).unwrap().0;
        assert!(cpus.parse::<u32>().unwrap() >= 1);
    }
}

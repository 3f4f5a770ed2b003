//! Validation ratcheting (`CRDValidationRatcheting`, on by default since Kubernetes 1.30): on
//! update, a schema error is dropped when the part of the object it was raised on is unchanged
//! from the stored object. Errors in `metadata` and from `allOf`/`anyOf`/`oneOf`/`not` are never
//! ratcheted. Array elements are only compared as part of their whole list (conservative: kube
//! correlates elements of map/set lists too).

use super::cause::{Cause, reason};
use super::validate::{JUNCTOR_FIELD, json_eq};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Seg {
    Key(String),
    Index(usize),
}

fn parse_path(path: &str) -> Option<Vec<Seg>> {
    let mut segs = Vec::new();
    for part in path.split('.') {
        let (key, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if key.is_empty() && segs.is_empty() && rest.is_empty() {
            return None;
        }
        if !key.is_empty() {
            segs.push(Seg::Key(key.to_string()));
        }
        while let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            segs.push(Seg::Index(r[..end].parse().ok()?));
            rest = &r[end + 1..];
        }
        if !rest.is_empty() {
            return None;
        }
    }
    Some(segs)
}

fn lookup<'a>(v: &'a Value, segs: &[Seg]) -> Option<&'a Value> {
    segs.iter().try_fold(v, |cur, s| match s {
        Seg::Key(k) => cur.get(k.as_str()),
        Seg::Index(i) => cur.get(*i),
    })
}

/// The segments of the node a cause was raised on.
fn raising_node(c: &Cause) -> Option<Vec<Seg>> {
    let mut segs = parse_path(&c.field)?;
    if c.reason == reason::REQUIRED || c.reason == reason::DUPLICATE {
        segs.pop();
    }
    if let Some(first_index) = segs.iter().position(|s| matches!(s, Seg::Index(_))) {
        segs.truncate(first_index);
    }
    Some(segs)
}

/// Drops the causes whose raising node is unchanged between `old` and `new`.
pub fn ratchet(causes: Vec<Cause>, new: &Value, old: &Value) -> Vec<Cause> {
    causes
        .into_iter()
        .filter(|c| {
            if c.field == JUNCTOR_FIELD || c.field == "metadata" || c.field.starts_with("metadata.")
            {
                return true;
            }
            let Some(node) = raising_node(c) else {
                return true;
            };
            match (lookup(new, &node), lookup(old, &node)) {
                (Some(n), Some(o)) => !json_eq(n, o),
                _ => true,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_parse() {
        assert_eq!(
            parse_path("spec.items[0].name"),
            Some(vec![
                Seg::Key("spec".into()),
                Seg::Key("items".into()),
                Seg::Index(0),
                Seg::Key("name".into())
            ])
        );
        assert_eq!(parse_path("a[x]"), None);
        assert_eq!(parse_path(""), None);
    }

    #[test]
    fn unchanged_invalid_values_are_ratcheted() {
        let old = json!({"spec": {"size": "huge", "replicas": 1, "l": [1, 2]}});
        let new = json!({"spec": {"size": "huge", "replicas": 2, "l": [1, 2]}});
        let causes = vec![
            Cause::invalid("spec.size", &json!("huge"), "x"),
            Cause::invalid("spec.replicas", &json!(2), "x"),
            Cause::invalid("spec.l[1]", &json!(2), "x"),
            Cause::required("spec.mode", ""),
            Cause::invalid("metadata.name", &json!("x"), "x"),
            Cause::invalid(JUNCTOR_FIELD, &json!(""), "x"),
        ];
        let kept: Vec<String> = ratchet(causes, &new, &old)
            .into_iter()
            .map(|c| c.field)
            .collect();
        assert_eq!(
            kept,
            vec!["spec.replicas", "spec.mode", "metadata.name", JUNCTOR_FIELD]
        );
    }

    #[test]
    fn required_is_ratcheted_only_when_the_parent_is_unchanged() {
        let old = json!({"spec": {"a": 1}, "status": {"x": 1}});
        let new = json!({"spec": {"a": 1}, "status": {"x": 2}});
        assert!(ratchet(vec![Cause::required("spec.size", "")], &new, &old).is_empty());
        // New values are never ratcheted.
        assert_eq!(
            ratchet(
                vec![Cause::invalid("spec.b", &json!(1), "")],
                &json!({"spec": {"b": 1}}),
                &old
            )
            .len(),
            1
        );
    }
}

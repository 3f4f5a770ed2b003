//! How built-in kinds' lists and maps merge under server-side apply
//! (`x-kubernetes-list-type`, `x-kubernetes-list-map-keys`, `x-kubernetes-map-type`), read from
//! k8s-openapi rather than written here.
//!
//! k8s-openapi's schemars schemas leave those extensions out, but its generator turned each of
//! them into the field's `DeepMerge` strategy: `list::atomic`, `list::set`, `list::map` with one
//! key comparison per `x-kubernetes-list-map-keys` entry, `map::atomic`, `map::granular`. Those
//! strategies are code, so they are observed: for each list or map field reachable from a kind,
//! two objects of the kind that differ only there are merged with `DeepMerge::merge_from`.
//! - A list merged from `[a]` and `[b]` (every scalar field of the items different) that ends as
//!   `[b]` is atomic; one that keeps both is a set (scalar items) or a map (object items).
//! - A map list's keys are the item fields that keep two items apart when only they differ.
//! - A map (`additionalProperties`) merged from `{k1}` and `{k2}` that ends as `{k2}` is atomic.
//!
//! Fields only reachable below an atomic list or map are not probed (server-side apply never
//! looks inside those), and a field whose probe objects do not decode stays unannotated
//! (atomic, the default). Structs that kube marks `x-kubernetes-map-type: atomic` (a
//! `LabelSelector`) are not visible this way: their `DeepMerge` is granular.

use std::collections::BTreeSet;

use k8s_openapi::DeepMerge;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

mod instances;
pub(crate) use instances::resolve;
use instances::{
    Step, at, instance, is_scalar, item_variant, minimal, scalar_props, type_of, variant,
};

/// What one field's probe found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum MergeType {
    AtomicList,
    Set,
    Map(Vec<String>),
    AtomicMap,
    GranularMap,
}

impl MergeType {
    /// The schema extensions kube publishes for it.
    fn extensions(&self) -> Vec<(&'static str, Value)> {
        match self {
            MergeType::AtomicList => vec![("x-kubernetes-list-type", json!("atomic"))],
            MergeType::Set => vec![("x-kubernetes-list-type", json!("set"))],
            MergeType::Map(keys) => vec![
                ("x-kubernetes-list-type", json!("map")),
                ("x-kubernetes-list-map-keys", json!(keys)),
            ],
            MergeType::AtomicMap => vec![("x-kubernetes-map-type", json!("atomic"))],
            MergeType::GranularMap => vec![("x-kubernetes-map-type", json!("granular"))],
        }
    }
}

struct Prober<'a, T> {
    defs: &'a Map<String, Value>,
    root: &'a Value,
    api_version: &'a str,
    kind: &'a str,
    _t: std::marker::PhantomData<T>,
}

impl<T: DeepMerge + DeserializeOwned + Serialize> Prober<'_, T> {
    /// `lhs.merge_from(rhs)` for the objects with `a` and `b` at `steps`: the merged value there.
    fn merged(&self, steps: &[Step], a: Value, b: Value) -> Option<Value> {
        let decode = |leaf| {
            serde_json::from_value::<T>(instance(
                self.defs,
                self.root,
                self.api_version,
                self.kind,
                steps,
                leaf,
            ))
            .ok()
        };
        let mut lhs = decode(a)?;
        lhs.merge_from(decode(b)?);
        let out = serde_json::to_value(&lhs).ok()?;
        at(&out, steps).cloned()
    }

    fn list(&self, steps: &[Step], item: &Value) -> Option<MergeType> {
        let (a, b) = (
            item_variant(self.defs, item, 1),
            item_variant(self.defs, item, 2),
        );
        let merged = self.merged(steps, json!([a.clone()]), json!([b.clone()]))?;
        let n = merged.as_array()?.len();
        if n == 1 {
            return Some(MergeType::AtomicList);
        }
        let (item, _) = resolve(self.defs, item);
        if is_scalar(item) {
            return Some(MergeType::Set);
        }
        let mut keys = Vec::new();
        for (name, p) in scalar_props(self.defs, item) {
            let mut other = a.clone();
            other[name.as_str()] = variant(p, 2);
            let m = self.merged(steps, json!([a.clone()]), json!([other]))?;
            if m.as_array().map(Vec::len) == Some(2) {
                keys.push(name);
            }
        }
        Some(MergeType::Map(keys))
    }

    fn map(&self, steps: &[Step], values: &Value) -> Option<MergeType> {
        let v = minimal(self.defs, values, 0);
        let merged = self.merged(steps, json!({"k1": v.clone()}), json!({"k2": v}))?;
        Some(if merged.as_object()?.len() == 1 {
            MergeType::AtomicMap
        } else {
            MergeType::GranularMap
        })
    }
}

/// The merge type of every list and map property reachable from definition `root_name` of
/// kind `api_version`/`kind` (Rust type `T`), as `(definition, property, type)`.
pub(crate) fn probe<T: DeepMerge + DeserializeOwned + Serialize>(
    defs: &Map<String, Value>,
    root_name: &str,
    api_version: &str,
    kind: &str,
) -> Vec<(String, String, MergeType)> {
    let Some(root) = defs.get(root_name) else {
        return Vec::new();
    };
    let prober = Prober::<T> {
        defs,
        root,
        api_version,
        kind,
        _t: std::marker::PhantomData,
    };
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    walk(
        &prober,
        root_name,
        root,
        &mut Vec::new(),
        &mut seen,
        &mut out,
    );
    out
}

fn walk<T: DeepMerge + DeserializeOwned + Serialize>(
    p: &Prober<'_, T>,
    def: &str,
    node: &Value,
    steps: &mut Vec<Step>,
    seen: &mut BTreeSet<(String, String)>,
    out: &mut Vec<(String, String, MergeType)>,
) {
    let Some(props) = node.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, schema) in props {
        if !seen.insert((def.to_string(), name.clone())) {
            continue;
        }
        let (child, child_def) = resolve(p.defs, schema);
        steps.push(Step::Field(name.clone()));
        match type_of(child) {
            Some("array") => {
                let item = child.get("items").unwrap_or(&Value::Null);
                let found = p.list(steps, item);
                let granular = matches!(found, Some(MergeType::Set | MergeType::Map(_)));
                if let Some(t) = found {
                    out.push((def.to_string(), name.clone(), t));
                }
                let (item_node, item_def) = resolve(p.defs, item);
                if let (true, Some(d)) = (granular, item_def) {
                    steps.push(Step::Item);
                    walk(p, d, item_node, steps, seen, out);
                    steps.pop();
                }
            }
            _ if child
                .get("additionalProperties")
                .is_some_and(Value::is_object)
                && child.get("properties").is_none() =>
            {
                let values = child.get("additionalProperties").unwrap_or(&Value::Null);
                if let Some(t) = p.map(steps, values) {
                    out.push((def.to_string(), name.clone(), t));
                }
            }
            _ => {
                if let Some(d) = child_def {
                    walk(p, d, child, steps, seen, out);
                }
            }
        }
        steps.pop();
    }
}

/// Where `DeepMerge` cannot say what server-side apply does. k8s-openapi's generator keys a
/// list by its `x-kubernetes-patch-merge-key` (strategic merge) when it has one, and by
/// `x-kubernetes-list-map-keys` otherwise; server-side apply always follows `listType` and
/// `listMapKey`. Among the served kinds' map lists (every one printed and compared with the
/// markers of `k8s.io/api` v1.33's `types.go`), these differ:
/// - `JobStatus.conditions`: `+patchMergeKey=type`, `+listType=atomic`;
/// - `Container.ports`, `EphemeralContainer.ports`: `+patchMergeKey=containerPort`,
///   `+listMapKey=containerPort`, `+listMapKey=protocol`;
/// - `ServiceSpec.ports`: `+patchMergeKey=port`, `+listMapKey=port`, `+listMapKey=protocol`;
/// - `PodSpec.topologySpreadConstraints`: `+patchMergeKey=topologyKey`,
///   `+listMapKey=topologyKey`, `+listMapKey=whenUnsatisfiable`.
///
/// The `protocol` key fields carry `+default="TCP"`, which keys an item that leaves them out.
fn kube_corrections() -> Vec<(&'static str, &'static str, MergeType)> {
    let keys = |k: &[&str]| MergeType::Map(k.iter().map(|s| s.to_string()).collect());
    vec![
        (
            "io.k8s.api.batch.v1.JobStatus",
            "conditions",
            MergeType::AtomicList,
        ),
        (
            "io.k8s.api.core.v1.Container",
            "ports",
            keys(&["containerPort", "protocol"]),
        ),
        (
            "io.k8s.api.core.v1.EphemeralContainer",
            "ports",
            keys(&["containerPort", "protocol"]),
        ),
        (
            "io.k8s.api.core.v1.ServiceSpec",
            "ports",
            keys(&["port", "protocol"]),
        ),
        (
            "io.k8s.api.core.v1.PodSpec",
            "topologySpreadConstraints",
            keys(&["topologyKey", "whenUnsatisfiable"]),
        ),
    ]
}

/// The `+default` markers of key fields (see [`kube_corrections`]).
const KEY_DEFAULTS: &[(&str, &str, &str)] = &[
    ("io.k8s.api.core.v1.ContainerPort", "protocol", "TCP"),
    ("io.k8s.api.core.v1.ServicePort", "protocol", "TCP"),
];

/// The table `merge_types.tsv`: what [`probe`] found for every served built-in kind, written
/// by the test `the_merge_types_table_is_what_deep_merge_says`, which fails when k8s-openapi
/// says otherwise. Read instead of probing at run time: the probe touches every kind's
/// `Deserialize`, `Serialize` and `DeepMerge` code, about 3 MB of resident memory.
pub(crate) fn table() -> &'static [(String, String, MergeType)] {
    static TABLE: std::sync::OnceLock<Vec<(String, String, MergeType)>> =
        std::sync::OnceLock::new();
    TABLE.get_or_init(|| parse(include_str!("merge_types.tsv")))
}

fn parse(text: &str) -> Vec<(String, String, MergeType)> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| {
            let mut cols = l.split('\t');
            let (def, prop, t) = (cols.next()?, cols.next()?, cols.next()?);
            let t = match t {
                "atomic" => MergeType::AtomicList,
                "set" => MergeType::Set,
                "atomic-map" => MergeType::AtomicMap,
                "granular-map" => MergeType::GranularMap,
                keys => MergeType::Map(
                    keys.strip_prefix("map:")?
                        .split(',')
                        .filter(|k| !k.is_empty())
                        .map(str::to_string)
                        .collect(),
                ),
            };
            Some((def.to_string(), prop.to_string(), t))
        })
        .collect()
}

/// The table's text for `found` (sorted, one line per definition and property).
#[cfg(test)]
pub(crate) fn render(found: &[(String, String, MergeType)]) -> String {
    let lines: BTreeSet<String> = found
        .iter()
        .map(|(d, p, t)| {
            let t = match t {
                MergeType::AtomicList => "atomic".to_string(),
                MergeType::Set => "set".to_string(),
                MergeType::AtomicMap => "atomic-map".to_string(),
                MergeType::GranularMap => "granular-map".to_string(),
                MergeType::Map(keys) => format!("map:{}", keys.join(",")),
            };
            format!("{d}\t{p}\t{t}")
        })
        .collect();
    let mut out = String::from(
        "# What k8s-openapi's DeepMerge says of each list and map of the served built-in kinds\n# (definition, property, type), before kube_corrections. Written by the test\n# the_merge_types_table_is_what_deep_merge_says (UPDATE_MERGE_TYPES=1); never edited by hand.\n",
    );
    for l in lines {
        out.push_str(&l);
        out.push('\n');
    }
    out
}

/// Writes what [`probe`] found, with [`kube_corrections`], into the definitions' property
/// schemas (next to a `$ref`, or into the inline schema).
pub(crate) fn annotate(defs: &mut Map<String, Value>, found: &[(String, String, MergeType)]) {
    let corrections = kube_corrections();
    for (def, prop, t) in found {
        let t = corrections
            .iter()
            .find(|(d, p, _)| d == def && p == prop)
            .map_or(t, |(.., c)| c);
        let Some(slot) = defs
            .get_mut(def)
            .and_then(|d| d.get_mut("properties"))
            .and_then(|p| p.get_mut(prop))
            .and_then(Value::as_object_mut)
        else {
            continue;
        };
        for (k, v) in t.extensions() {
            slot.insert(k.to_string(), v);
        }
    }
    for (def, prop, default) in KEY_DEFAULTS {
        if let Some(slot) = defs
            .get_mut(*def)
            .and_then(|d| d.get_mut("properties"))
            .and_then(|p| p.get_mut(*prop))
            .and_then(Value::as_object_mut)
        {
            slot.insert("default".to_string(), json!(default));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::MergeType::*;
    use super::*;

    fn found(group: &str, kind: &str) -> Vec<(String, String, MergeType)> {
        let b = super::super::builtin::schema(group, "v1", kind).expect("served kind");
        let defs = b.definitions;
        // What annotate wrote, read back from the definitions.
        let mut out = Vec::new();
        for (def, d) in defs {
            for (prop, p) in d
                .get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                let t = match (
                    p.get("x-kubernetes-list-type").and_then(Value::as_str),
                    p.get("x-kubernetes-map-type").and_then(Value::as_str),
                ) {
                    (Some("atomic"), _) => AtomicList,
                    (Some("set"), _) => Set,
                    (Some("map"), _) => Map(p["x-kubernetes-list-map-keys"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|k| k.as_str().map(str::to_string))
                        .collect()),
                    (_, Some("atomic")) => AtomicMap,
                    (_, Some("granular")) => GranularMap,
                    _ => continue,
                };
                out.push((def.clone(), prop.clone(), t));
            }
        }
        out
    }

    fn of<'a>(
        found: &'a [(String, String, MergeType)],
        def: &str,
        prop: &str,
    ) -> Option<&'a MergeType> {
        found
            .iter()
            .find(|(d, p, _)| d.ends_with(def) && p == prop)
            .map(|(.., t)| t)
    }

    fn keys(k: &[&str]) -> MergeType {
        Map(k.iter().map(|s| s.to_string()).collect())
    }

    /// What the definitions carry for kube's best-known list and map types: observed from
    /// `DeepMerge` (containers, env, volumes, conditions, finalizers, owner references, atomic
    /// command/args/tolerations, the atomic node selector) and corrected where the patch merge
    /// key is not the list map key.
    #[test]
    fn deployment_lists_and_maps_are_typed_as_kube_publishes_them() {
        let d = found("apps", "Deployment");
        for (def, prop, want) in [
            ("v1.PodSpec", "containers", keys(&["name"])),
            ("v1.PodSpec", "volumes", keys(&["name"])),
            ("v1.Container", "env", keys(&["name"])),
            ("v1.Container", "volumeMounts", keys(&["mountPath"])),
            (
                "v1.Container",
                "ports",
                keys(&["containerPort", "protocol"]),
            ),
            (
                "v1.PodSpec",
                "topologySpreadConstraints",
                keys(&["topologyKey", "whenUnsatisfiable"]),
            ),
            ("v1.DeploymentStatus", "conditions", keys(&["type"])),
            ("v1.ObjectMeta", "ownerReferences", keys(&["uid"])),
            ("v1.ObjectMeta", "finalizers", Set),
            ("v1.Container", "command", AtomicList),
            ("v1.PodSpec", "tolerations", AtomicList),
            ("v1.PodSpec", "nodeSelector", AtomicMap),
            ("v1.ObjectMeta", "labels", GranularMap),
        ] {
            assert_eq!(of(&d, def, prop), Some(&want), "{def}.{prop}");
        }
        let svc = found("", "Service");
        assert_eq!(
            of(&svc, "v1.ServiceSpec", "ports"),
            Some(&keys(&["port", "protocol"]))
        );
        assert_eq!(of(&svc, "v1.ServiceSpec", "selector"), Some(&AtomicMap));
        let job = found("batch", "Job");
        assert_eq!(of(&job, "v1.JobStatus", "conditions"), Some(&AtomicList));
        assert_eq!(
            of(&job, "v1.UncountedTerminatedPods", "succeeded"),
            Some(&Set)
        );
        let webhooks = found(
            "admissionregistration.k8s.io",
            "ValidatingWebhookConfiguration",
        );
        assert_eq!(
            of(&webhooks, "ValidatingWebhookConfiguration", "webhooks"),
            Some(&keys(&["name"]))
        );
        assert_eq!(
            of(
                &found("rbac.authorization.k8s.io", "ClusterRole"),
                "ClusterRole",
                "rules"
            ),
            Some(&AtomicList)
        );
    }

    /// The probe itself, on a kind whose `DeepMerge` keys ports by the patch merge key alone:
    /// what it observes before correction.
    #[test]
    fn the_probe_reads_deep_merge_strategies() {
        let b = super::super::builtin::schema("", "v1", "Service").expect("served");
        let raw =
            probe::<k8s_openapi::api::core::v1::Service>(b.definitions, b.name, "v1", "Service");
        assert_eq!(of(&raw, "v1.ServiceSpec", "ports"), Some(&keys(&["port"])));
        assert_eq!(of(&raw, "v1.ServiceSpec", "clusterIPs"), Some(&AtomicList));
        assert_eq!(
            of(&raw, "v1.ServiceStatus", "conditions"),
            Some(&keys(&["type"]))
        );
    }

    /// A key field's `+default` is in the schema, where server-side apply reads it.
    #[test]
    fn key_defaults_are_published() {
        let b = super::super::builtin::schema("apps", "v1", "Deployment").expect("served");
        assert_eq!(
            b.definitions["io.k8s.api.core.v1.ContainerPort"]["properties"]["protocol"]["default"],
            json!("TCP")
        );
    }
}

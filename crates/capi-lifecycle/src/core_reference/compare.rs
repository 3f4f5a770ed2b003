//! What a trace keeps of each object and how two traces are compared: the contract's fields
//! of an object (references, owner references, labels, annotations, the fields core copies),
//! with what differs by run left out, and the fields that differ step by step.

use super::*;

/// One field that differs between the real core's trace and the simulation's.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    pub step: &'static str,
    pub field: String,
    pub real: Option<Value>,
    pub simulated: Option<Value>,
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let show = |v: &Option<Value>| v.as_ref().map_or("(absent)".into(), Value::to_string);
        write!(
            f,
            "after \"{}\": {}: real core {}, simulation {}",
            self.step,
            self.field,
            show(&self.real),
            show(&self.simulated)
        )
    }
}

/// Labels and annotations the comparison leaves out: the run's own labels, and the annotation
/// core's conversion writes (it is the API server's doing, not core's).
fn compared(map: &str, k: &str) -> bool {
    match map {
        "labels" => k != RUN_LABEL && k != WATCH_FILTER_LABEL,
        _ => k != crate::capi_core::conversion::DATA_ANNOTATION,
    }
}

/// The fields of one object the comparison looks at, besides its metadata.
fn contract_fields(kind: &str) -> &'static [&'static str] {
    match kind {
        "Cluster" => &[
            "/spec/infrastructureRef",
            "/spec/controlPlaneRef",
            "/spec/controlPlaneEndpoint",
            "/spec/paused",
            "/status/initialization",
            "/status/failureDomains",
        ],
        "Machine" => &[
            "/spec/clusterName",
            "/spec/bootstrap",
            "/spec/infrastructureRef",
            "/spec/providerID",
            "/spec/failureDomain",
            "/status/initialization",
            "/status/addresses",
        ],
        // A provider's object: what core copies from it (only to tell a copy, see
        // [`normalize`]).
        _ => &[
            "/spec/providerID",
            "/spec/controlPlaneEndpoint",
            "/spec/failureDomain",
            "/status/addresses",
            "/status/failureDomains",
        ],
    }
}

/// What core copies from a provider's objects: values of the provider's own choice each run
/// (a providerID, addresses, an endpoint), so compared only as what a core field is a copy of.
const REPORTED: [&str; 5] = [
    "spec.providerID",
    "spec.controlPlaneEndpoint",
    "spec.failureDomain",
    "status.addresses",
    "status.failureDomains",
];

fn is_core_key(k: &str) -> bool {
    k.starts_with("Cluster/") || k.starts_with("Machine/")
}

fn reported(k: &str) -> bool {
    !is_core_key(k) && REPORTED.iter().any(|f| k.ends_with(&format!(" {f}")))
}

/// Makes two sides' snapshots comparable: a core field holding a value the provider reported
/// becomes `copy of <that field>`, and the provider's values themselves are left out (how far
/// the provider got between two of core's steps is the provider's pace, not core's doing); the
/// side's namespace in any string becomes `<namespace>`.
pub(super) fn normalize(fields: &mut BTreeMap<String, Value>, namespace: &str) {
    let provider: Vec<(String, Value)> = fields
        .iter()
        .filter(|(k, _)| reported(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    fields.retain(|k, _| !reported(k));
    for (k, v) in fields.iter_mut() {
        if is_core_key(k)
            && let Some((pk, _)) = provider.iter().find(|(_, pv)| pv == v)
        {
            *v = json!(format!("copy of {pk}"));
        }
        unname(v, namespace);
    }
}

fn unname(v: &mut Value, namespace: &str) {
    match v {
        Value::String(s) if s.contains(namespace) => *s = s.replace(namespace, "<namespace>"),
        Value::Array(a) => a.iter_mut().for_each(|x| unname(x, namespace)),
        Value::Object(m) => m.values_mut().for_each(|x| unname(x, namespace)),
        _ => {}
    }
}

/// Owner references without their uids (each side's owners are its own objects).
fn owner_refs(refs: &Value) -> Value {
    let mut out: Vec<Value> = refs
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            let mut r = r.clone();
            if let Some(m) = r.as_object_mut() {
                m.remove("uid");
            }
            r
        })
        .collect();
    out.sort_by_key(|r| r.to_string());
    Value::Array(out)
}

/// What the contract names of `obj` (`None`: it does not exist).
pub fn project(kind: &str, name: &str, obj: Option<&Value>) -> BTreeMap<String, Value> {
    project_with(kind, name, obj, false)
}

/// [`project`], and with `controller_state` the object's finalizers and its conditions as
/// `type: status`.
pub(super) fn project_with(
    kind: &str,
    name: &str,
    obj: Option<&Value>,
    controller_state: bool,
) -> BTreeMap<String, Value> {
    let id = format!("{kind}/{name}");
    let mut out = BTreeMap::new();
    out.insert(format!("{id} exists"), Value::Bool(obj.is_some()));
    let Some(obj) = obj else {
        return out;
    };
    for map in ["labels", "annotations"] {
        if let Some(m) = obj
            .pointer(&format!("/metadata/{map}"))
            .and_then(Value::as_object)
        {
            for (k, v) in m.iter().filter(|(k, _)| compared(map, k)) {
                out.insert(format!("{id} metadata.{map}[{k}]"), v.clone());
            }
        }
    }
    if let Some(refs) = obj.pointer("/metadata/ownerReferences") {
        out.insert(format!("{id} metadata.ownerReferences"), owner_refs(refs));
    }
    for p in contract_fields(kind) {
        if let Some(v) = obj.pointer(p) {
            out.insert(format!("{id} {}", p[1..].replace('/', ".")), v.clone());
        }
    }
    if controller_state {
        if let Some(f) = obj.pointer("/metadata/finalizers") {
            out.insert(format!("{id} metadata.finalizers"), f.clone());
        }
        // The v1beta2 conditions, and the v1beta1 ones core v1.11 keeps writing for providers
        // that read Machines through the v1beta1 API.
        for (pointer, field) in [
            ("/status/conditions", "status.conditions"),
            (
                "/status/deprecated/v1beta1/conditions",
                "status.deprecated.v1beta1.conditions",
            ),
        ] {
            for c in obj
                .pointer(pointer)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let (Some(t), Some(st)) =
                    (c.get("type").and_then(Value::as_str), c.get("status"))
                    // v1beta1 NodeHealthy is there or not by core's pace: written by the first
                    // reconcile that finds no providerID or reaches the workload cluster, and
                    // by none while ClusterCache is not connected (seen both ways on v1.11.11).
                    && !(field.starts_with("status.deprecated") && t == "NodeHealthy")
                {
                    out.insert(format!("{id} {field}[{t}]"), st.clone());
                }
            }
        }
    }
    out
}

/// Every field that differs between the two traces, step by step (a step one trace lacks is
/// one difference naming it).
pub fn differences(real: &[Snapshot], simulated: &[Snapshot]) -> Vec<Difference> {
    let mut out = Vec::new();
    for i in 0..real.len().max(simulated.len()) {
        let (r, s) = (real.get(i), simulated.get(i));
        let step = r.or(s).map_or("", |x| x.step);
        let empty = BTreeMap::new();
        let rf = r.map_or(&empty, |x| &x.fields);
        let sf = s.map_or(&empty, |x| &x.fields);
        let keys: std::collections::BTreeSet<&String> = rf.keys().chain(sf.keys()).collect();
        for k in keys {
            let (a, b) = (rf.get(k), sf.get(k));
            if a != b {
                out.push(Difference {
                    step,
                    field: k.clone(),
                    real: a.cloned(),
                    simulated: b.cloned(),
                });
            }
        }
    }
    out
}

/// How many fields the traces compared (the larger count of the two, per step, summed).
pub fn compared_fields(real: &[Snapshot], simulated: &[Snapshot]) -> usize {
    (0..real.len().max(simulated.len()))
        .map(|i| {
            let n = |t: &[Snapshot]| t.get(i).map_or(0, |s| s.fields.len());
            n(real).max(n(simulated))
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projection_leaves_out_uids_run_labels_and_conversion_data() {
        let obj = json!({"metadata": {
            "labels": {RUN_LABEL: "r", "cluster.x-k8s.io/cluster-name": "c"},
            "annotations": {crate::capi_core::conversion::DATA_ANNOTATION: "{}", "a": "b"},
            "ownerReferences": [{"kind": "Machine", "name": "m", "uid": "1", "controller": true}],
        }, "spec": {"providerID": "p"}});
        let p = project("MockMachine", "m", Some(&obj));
        assert_eq!(p["MockMachine/m exists"], json!(true));
        assert_eq!(
            p["MockMachine/m metadata.labels[cluster.x-k8s.io/cluster-name]"],
            json!("c")
        );
        assert!(!p.keys().any(|k| k.contains(RUN_LABEL)));
        assert!(!p.keys().any(|k| k.contains("conversion-data")));
        assert_eq!(
            p["MockMachine/m metadata.ownerReferences"],
            json!([{"kind": "Machine", "name": "m", "controller": true}])
        );
        assert_eq!(p["MockMachine/m spec.providerID"], json!("p"));
        assert_eq!(project("Machine", "m", None).len(), 1);
    }

    #[test]
    fn copies_and_namespaces_are_compared_not_the_providers_own_values() {
        let mut f = BTreeMap::from([
            (
                "MockMachine/m spec.providerID".to_string(),
                json!("mock://ns-a/m/1"),
            ),
            (
                "Machine/m spec.providerID".to_string(),
                json!("mock://ns-a/m/1"),
            ),
            ("Machine/m spec.clusterName".to_string(), json!("ns-a-c")),
            (
                "Cluster/c spec.controlPlaneEndpoint".to_string(),
                json!({"host": "h"}),
            ),
        ]);
        normalize(&mut f, "ns-a");
        assert!(!f.contains_key("MockMachine/m spec.providerID"));
        assert_eq!(
            f["Machine/m spec.providerID"],
            json!("copy of MockMachine/m spec.providerID")
        );
        assert_eq!(f["Machine/m spec.clusterName"], json!("<namespace>-c"));
        // Not the provider's value: kept as it is, so a wrong copy differs.
        assert_eq!(
            f["Cluster/c spec.controlPlaneEndpoint"],
            json!({"host": "h"})
        );
    }

    #[test]
    fn differences_name_the_step_and_both_values() {
        let snap = |v: Value| Snapshot {
            step: "s",
            fields: BTreeMap::from([("Machine/m spec.providerID".to_string(), v)]),
        };
        assert!(differences(&[snap(json!("a"))], &[snap(json!("a"))]).is_empty());
        let d = differences(&[snap(json!("a"))], &[snap(json!("b"))]);
        assert_eq!(d.len(), 1);
        assert_eq!(
            d[0].to_string(),
            "after \"s\": Machine/m spec.providerID: real core \"a\", simulation \"b\""
        );
        let missing = differences(&[snap(json!("a"))], &[]);
        assert_eq!(missing[0].simulated, None);
    }
}

//! The mock's conversion between its two served versions, done as Cluster API providers do it:
//! `v1beta2` is the hub (stored), `v1beta1` the spoke, and nothing is lost either way.
//!
//! The shapes really differ:
//! - the provisioned flag: v1beta1 `status.ready` (bootstrap: also `status.ready`, control
//!   plane: `status.initialized`) is v1beta2 `status.initialization.provisioned`
//!   (`dataSecretCreated`, `controlPlaneInitialized`);
//! - failure domains: a v1beta1 map by name is a v1beta2 list of named entries;
//! - the control plane's machine template: v1beta1 `spec.machineTemplate.infrastructureRef`
//!   (an ObjectReference with apiVersion) and duration strings `nodeDrainTimeout`… are v1beta2
//!   `spec.machineTemplate.spec.infrastructureRef` (apiGroup, kind, name) and
//!   `spec.machineTemplate.spec.deletion.nodeDrainTimeoutSeconds`…; `updatedReplicas` is
//!   `upToDateReplicas`;
//! - conditions: CAPI v1beta1 conditions and metav1 conditions, same path, different shapes.
//!
//! What one version cannot say is kept where the API server keeps it across a write at the
//! other version, as CAPI does: status fields only the spoke has go to the hub's
//! `status.deprecated.v1beta1`, status fields only the hub has to the spoke's `status.v1beta2`
//! (both schemas carry those objects in the webhook-mode CRDs, [`super::components`]); spec
//! details the hub cannot say (the reference's version, a duration's spelling) go to the
//! annotation [`CONVERSION_DATA`], written on up-conversion and consumed on down-conversion.
//!
//! Fault `all/conversion-lossless`: the spec details are not kept aside ([`CONVERSION_DATA`]),
//! so a round trip through the hub respells a v1beta1 duration (`90s` comes back `1m30s`) and
//! forgets the version of the infrastructure reference.

use serde_json::{Map, Value, json};

mod machine_template;

use machine_template::{down_machine_template, up_machine_template};
pub use machine_template::{format_duration, parse_duration};

/// Annotation holding spoke spec details across a hub round trip.
pub const CONVERSION_DATA: &str = "mock.capi-conformance.io/conversion-data";

/// The hub version.
pub const HUB: &str = "v1beta2";
/// The spoke version.
pub const SPOKE: &str = "v1beta1";

/// Why one object could not be converted.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConvertError {
    #[error("object has no apiVersion of the form group/version")]
    NoApiVersion,
    #[error("cannot convert {kind} from {from} to {to}: unknown version")]
    UnknownVersion {
        kind: String,
        from: String,
        to: String,
    },
}

/// Converts `obj` to `desired` (`group/version`). `lossless == false` is the fault (spec details
/// are not kept).
pub fn convert(obj: &Value, desired: &str, lossless: bool) -> Result<Value, ConvertError> {
    let api_version = obj
        .get("apiVersion")
        .and_then(Value::as_str)
        .ok_or(ConvertError::NoApiVersion)?;
    let (group, from) = api_version
        .split_once('/')
        .ok_or(ConvertError::NoApiVersion)?;
    let to = desired.rsplit_once('/').map_or(desired, |(_, v)| v);
    let kind = obj
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let mut out = obj.clone();
    out["apiVersion"] = json!(format!("{group}/{to}"));
    match (from, to) {
        (a, b) if a == b => {}
        (SPOKE, HUB) => up(&kind, &mut out, lossless),
        (HUB, SPOKE) => down(&kind, &mut out, lossless),
        _ => {
            return Err(ConvertError::UnknownVersion {
                kind,
                from: from.into(),
                to: to.into(),
            });
        }
    }
    Ok(out)
}

/// Status fields of each kind that only the spoke has, and the spoke/hub pair of the
/// provisioned flag (`status.<spoke>` ↔ `status.initialization.<hub>`).
struct Shape {
    spoke_only: &'static [&'static str],
    hub_only: &'static [&'static str],
    flag: Option<(&'static str, &'static str)>,
    failure_domains: bool,
    control_plane: bool,
}

fn shape(kind: &str) -> Option<Shape> {
    let common_spoke: &[&str] = &["failureReason", "failureMessage", "conditions"];
    Some(match kind {
        "MockCluster" => Shape {
            spoke_only: common_spoke,
            hub_only: &["conditions"],
            flag: Some(("ready", "provisioned")),
            failure_domains: true,
            control_plane: false,
        },
        "MockMachine" => Shape {
            spoke_only: common_spoke,
            hub_only: &["conditions", "failureDomain"],
            flag: Some(("ready", "provisioned")),
            failure_domains: false,
            control_plane: false,
        },
        "MockMachinePool" => Shape {
            spoke_only: common_spoke,
            hub_only: &["conditions"],
            flag: None,
            failure_domains: false,
            control_plane: false,
        },
        "MockConfig" => Shape {
            spoke_only: common_spoke,
            hub_only: &["conditions"],
            flag: Some(("ready", "dataSecretCreated")),
            failure_domains: false,
            control_plane: false,
        },
        "MockControlPlane" => Shape {
            spoke_only: &[
                "failureReason",
                "failureMessage",
                "conditions",
                "ready",
                "unavailableReplicas",
                "version",
            ],
            hub_only: &["conditions", "availableReplicas", "versions"],
            flag: Some(("initialized", "controlPlaneInitialized")),
            failure_domains: false,
            control_plane: true,
        },
        "MockControlPlaneTemplate" => Shape {
            spoke_only: &[],
            hub_only: &[],
            flag: None,
            failure_domains: false,
            control_plane: true,
        },
        _ => return None,
    })
}

fn obj_mut<'a>(v: &'a mut Value, key: &str) -> &'a mut Map<String, Value> {
    if !v.get(key).is_some_and(Value::is_object) {
        v[key] = json!({});
    }
    match v.get_mut(key).and_then(Value::as_object_mut) {
        Some(m) => m,
        None => unreachable!("just made an object"),
    }
}

fn drop_empty(v: &mut Value, key: &str) {
    let empty = v
        .get(key)
        .and_then(Value::as_object)
        .is_some_and(Map::is_empty);
    if empty && let Some(m) = v.as_object_mut() {
        m.remove(key);
    }
}

/// The spec of `kind` where the control-plane machine template sits: the object's `spec`, or a
/// template's `spec.template.spec`.
fn cp_spec<'a>(kind: &str, obj: &'a mut Value) -> Option<&'a mut Value> {
    if kind.ends_with("Template") {
        obj.pointer_mut("/spec/template/spec")
    } else {
        obj.get_mut("spec")
    }
}

fn up(kind: &str, obj: &mut Value, lossless: bool) {
    let Some(shape) = shape(kind) else {
        return;
    };
    let mut data = Map::new();
    if shape.control_plane
        && let Some(spec) = cp_spec(kind, obj)
    {
        up_machine_template(spec, &mut data, lossless);
    }
    if let Some(status) = obj.get_mut("status").filter(|s| s.is_object()) {
        let mut deprecated = Map::new();
        for key in shape.spoke_only {
            if let Some(v) = status.as_object_mut().and_then(|m| m.remove(*key)) {
                deprecated.insert((*key).to_string(), v);
            }
        }
        if let Some((spoke, hub)) = shape.flag
            && let Some(v) = deprecated
                .get(spoke)
                .cloned()
                .or_else(|| status.as_object_mut().and_then(|m| m.remove(spoke)))
        {
            obj_mut(status, "initialization").insert(hub.into(), v);
        }
        if shape.control_plane
            && let Some(v) = status
                .as_object_mut()
                .and_then(|m| m.remove("updatedReplicas"))
        {
            status["upToDateReplicas"] = v;
        }
        if shape.failure_domains
            && let Some(Value::Object(map)) = status.get("failureDomains").cloned()
        {
            let list: Vec<Value> = map
                .into_iter()
                .map(|(name, mut fd)| {
                    fd["name"] = json!(name);
                    fd
                })
                .collect();
            status["failureDomains"] = json!(list);
        }
        // What only the hub says, kept by the spoke in status.v1beta2: back in place.
        if let Some(Value::Object(kept)) = status.as_object_mut().and_then(|m| m.remove(HUB)) {
            for (k, v) in kept {
                status[k.as_str()] = v;
            }
        }
        if !deprecated.is_empty() {
            status["deprecated"] = json!({ SPOKE: Value::Object(deprecated) });
        }
    }
    if !obj.get("metadata").is_some_and(Value::is_object) {
        obj["metadata"] = json!({});
    }
    let meta = &mut obj["metadata"];
    let annotations = obj_mut(meta, "annotations");
    annotations.remove(CONVERSION_DATA);
    if lossless && !data.is_empty() {
        annotations.insert(
            CONVERSION_DATA.into(),
            json!(Value::Object(data).to_string()),
        );
    }
    drop_empty(meta, "annotations");
}

fn down(kind: &str, obj: &mut Value, lossless: bool) {
    let Some(shape) = shape(kind) else {
        return;
    };
    let data: Map<String, Value> = obj
        .pointer(&format!(
            "/metadata/annotations/{}",
            CONVERSION_DATA.replace('/', "~1")
        ))
        .and_then(Value::as_str)
        .and_then(|s| serde_json::from_str(s).ok())
        .unwrap_or_default();
    if let Some(a) = obj
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    {
        a.remove(CONVERSION_DATA);
    }
    if let Some(meta) = obj.get_mut("metadata") {
        drop_empty(meta, "annotations");
    }
    if shape.control_plane
        && let Some(spec) = cp_spec(kind, obj)
    {
        down_machine_template(spec, &data, lossless);
    }
    if let Some(status) = obj.get_mut("status").filter(|s| s.is_object()) {
        let mut kept = Map::new();
        for key in shape.hub_only {
            if let Some(v) = status.as_object_mut().and_then(|m| m.remove(*key)) {
                kept.insert((*key).to_string(), v);
            }
        }
        if let Some((spoke, hub)) = shape.flag {
            let flag = status.pointer(&format!("/initialization/{hub}")).cloned();
            if let Some(init) = status
                .get_mut("initialization")
                .and_then(Value::as_object_mut)
            {
                init.remove(hub);
            }
            drop_empty(status, "initialization");
            if let Some(v) = flag {
                status[spoke] = v;
            }
        }
        if let Some(init) = status
            .as_object_mut()
            .and_then(|m| m.remove("initialization"))
        {
            kept.insert("initialization".into(), init);
        }
        if shape.control_plane
            && let Some(v) = status
                .as_object_mut()
                .and_then(|m| m.remove("upToDateReplicas"))
        {
            status["updatedReplicas"] = v;
        }
        if shape.failure_domains
            && let Some(Value::Array(list)) = status.get("failureDomains").cloned()
        {
            let mut map = Map::new();
            for mut fd in list {
                let name = fd
                    .as_object_mut()
                    .and_then(|m| m.remove("name"))
                    .and_then(|n| n.as_str().map(str::to_string))
                    .unwrap_or_default();
                map.insert(name, fd);
            }
            status["failureDomains"] = Value::Object(map);
        }
        let deprecated = status
            .as_object_mut()
            .and_then(|m| m.remove("deprecated"))
            .and_then(|mut d| d.as_object_mut().and_then(|m| m.remove(SPOKE)));
        if let Some(Value::Object(d)) = deprecated {
            for (k, v) in d {
                status[k.as_str()] = v;
            }
        }
        if !kept.is_empty() {
            status[HUB] = Value::Object(kept);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cp_v1beta1() -> Value {
        json!({
            "apiVersion": "controlplane.mock.capi-conformance.io/v1beta1",
            "kind": "MockControlPlane",
            "metadata": {"name": "cp", "namespace": "ns"},
            "spec": {"replicas": 3, "version": "v1.31.0", "machineTemplate": {
                "metadata": {"labels": {"a": "b"}},
                "infrastructureRef": {"apiVersion": "infrastructure.mock.capi-conformance.io/v1beta1",
                                      "kind": "MockMachineTemplate", "name": "t", "namespace": "ns"},
                "nodeDrainTimeout": "90s"}},
            "status": {"initialized": true, "ready": true, "updatedReplicas": 2,
                       "failureReason": "x", "conditions": [{"type": "Ready", "status": "True", "severity": ""}]},
        })
    }

    #[test]
    fn control_plane_shapes_differ_and_round_trip_both_ways() {
        let spoke = cp_v1beta1();
        let hub = convert(
            &spoke,
            "controlplane.mock.capi-conformance.io/v1beta2",
            true,
        )
        .unwrap();
        assert_eq!(
            hub.pointer("/spec/machineTemplate/spec/infrastructureRef")
                .unwrap(),
            &json!({"apiGroup": "infrastructure.mock.capi-conformance.io", "kind": "MockMachineTemplate", "name": "t"})
        );
        assert_eq!(
            hub.pointer("/spec/machineTemplate/spec/deletion/nodeDrainTimeoutSeconds"),
            Some(&json!(90))
        );
        assert_eq!(
            hub.pointer("/status/initialization/controlPlaneInitialized"),
            Some(&json!(true))
        );
        assert_eq!(hub.pointer("/status/upToDateReplicas"), Some(&json!(2)));
        assert_eq!(
            hub.pointer("/status/deprecated/v1beta1/failureReason"),
            Some(&json!("x"))
        );
        let back = convert(&hub, "controlplane.mock.capi-conformance.io/v1beta1", true).unwrap();
        assert_eq!(back, spoke);

        // Hub first: its conditions and availableReplicas survive a spoke round trip.
        let mut hub2 = hub.clone();
        hub2["status"]["conditions"] =
            json!([{"type": "Available", "status": "True", "reason": "R"}]);
        hub2["status"]["availableReplicas"] = json!(1);
        let spoke2 = convert(&hub2, "controlplane.mock.capi-conformance.io/v1beta1", true).unwrap();
        assert_eq!(
            spoke2.pointer("/status/v1beta2/availableReplicas"),
            Some(&json!(1))
        );
        let hub3 = convert(
            &spoke2,
            "controlplane.mock.capi-conformance.io/v1beta2",
            true,
        )
        .unwrap();
        assert_eq!(hub3["spec"], hub2["spec"]);
        assert_eq!(hub3["status"], hub2["status"]);
    }

    #[test]
    fn the_lossy_fault_loses_what_one_side_cannot_say() {
        let spoke = cp_v1beta1();
        let hub = convert(
            &spoke,
            "controlplane.mock.capi-conformance.io/v1beta2",
            false,
        )
        .unwrap();
        let back = convert(&hub, "controlplane.mock.capi-conformance.io/v1beta1", false).unwrap();
        assert_ne!(back["spec"], spoke["spec"]);
        assert_eq!(
            back.pointer("/spec/machineTemplate/nodeDrainTimeout"),
            Some(&json!("1m30s"))
        );
    }

    #[test]
    fn infra_failure_domains_map_and_list() {
        let spoke = json!({
            "apiVersion": "infrastructure.mock.capi-conformance.io/v1beta1", "kind": "MockCluster",
            "metadata": {"name": "c"}, "spec": {},
            "status": {"ready": true, "failureDomains": {"a": {"controlPlane": true}}},
        });
        let hub = convert(
            &spoke,
            "infrastructure.mock.capi-conformance.io/v1beta2",
            true,
        )
        .unwrap();
        assert_eq!(
            hub["status"],
            json!({"initialization": {"provisioned": true},
                   "failureDomains": [{"name": "a", "controlPlane": true}]})
        );
        assert_eq!(
            convert(
                &hub,
                "infrastructure.mock.capi-conformance.io/v1beta1",
                true
            )
            .unwrap(),
            spoke
        );
    }

    #[test]
    fn durations_as_go_spells_them() {
        assert_eq!(parse_duration("1h2m3s"), Some(3723));
        assert_eq!(parse_duration("90s"), Some(90));
        assert_eq!(parse_duration("1.5m"), Some(90));
        assert_eq!(parse_duration("500ms"), Some(0));
        assert_eq!(parse_duration("x"), None);
        assert_eq!(format_duration(90), "1m30s");
        assert_eq!(format_duration(3600), "1h0m0s");
    }
}

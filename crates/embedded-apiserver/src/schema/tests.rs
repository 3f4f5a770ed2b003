//! Pipeline and structural-schema tests, including docs/embedded-apiserver.md §7 checks 10 and 21–27.

use super::*;
use serde_json::json;

mod rules;
mod structural;
mod validation;

/// The §7 fixture schema: spec{replicas:int (min 0), size enum required, mode default "auto"},
/// status preserve-unknown.
fn widget_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": {
                "type": "object",
                "required": ["size"],
                "properties": {
                    "replicas": {"type": "integer", "minimum": 0},
                    "size": {"type": "string", "enum": ["small", "large"]},
                    "mode": {"type": "string", "default": "auto"}
                }
            },
            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
        }
    })
}

fn widget(spec: Value) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w1", "namespace": "default"}, "spec": spec})
}

fn run(obj: Value) -> PipelineResult {
    process(obj, &widget_schema(), &PipelineOptions::default())
}

fn fr(c: &[Cause]) -> Vec<(String, String)> {
    c.iter()
        .map(|c| (c.field.clone(), c.reason.clone()))
        .collect()
}

fn pair(f: &str, r: &str) -> (String, String) {
    (f.to_string(), r.to_string())
}

#[test]
fn check_12_defaults_mode_and_accepts_valid_widget() {
    let r = run(widget(json!({"size": "small", "replicas": 1})));
    assert!(r.causes.is_empty(), "{:?}", r.causes);
    assert_eq!(r.object["spec"]["mode"], "auto");
    assert!(r.unknown_fields.is_empty());
}

#[test]
fn check_21_wrong_type_is_type_invalid() {
    let r = run(widget(json!({"size": "small", "replicas": "three"})));
    assert_eq!(
        fr(&r.causes),
        vec![pair("spec.replicas", reason::TYPE_INVALID)]
    );
    assert_eq!(
        r.causes[0].error_string(),
        "spec.replicas: Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\""
    );
}

#[test]
fn check_22_missing_required_is_required() {
    let r = run(widget(json!({"replicas": 1})));
    assert_eq!(fr(&r.causes), vec![pair("spec.size", reason::REQUIRED)]);
}

#[test]
fn check_23_enum_is_not_supported() {
    let r = run(widget(json!({"size": "huge"})));
    assert_eq!(
        fr(&r.causes),
        vec![pair("spec.size", reason::NOT_SUPPORTED)]
    );
    assert_eq!(
        r.causes[0].message,
        "Unsupported value: \"huge\": supported values: \"small\", \"large\""
    );
}

#[test]
fn check_24_below_minimum_is_invalid() {
    let r = run(widget(json!({"size": "small", "replicas": -1})));
    assert_eq!(fr(&r.causes), vec![pair("spec.replicas", reason::INVALID)]);
    assert_eq!(
        r.causes[0].error_string(),
        "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0"
    );
}

#[test]
fn invalid_message_lists_causes_in_field_order() {
    let r = run(widget(json!({"replicas": "string"})));
    assert_eq!(
        invalid_message("Widget", "example.com", "w1", &r.causes),
        "Widget.example.com \"w1\" is invalid: [spec.replicas: Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\", spec.size: Required value]"
    );
}

#[test]
fn checks_25_26_unknown_fields_are_pruned_and_reported() {
    let r = run(widget(json!({"size": "small", "bogus": 1})));
    assert_eq!(r.unknown_fields, vec!["spec.bogus"]);
    assert!(r.object["spec"].get("bogus").is_none());
    assert!(r.causes.is_empty());
    assert_eq!(
        r.strict_error_message().unwrap(),
        "strict decoding error: unknown field \"spec.bogus\""
    );
    assert_eq!(r.warnings(), vec!["unknown field \"spec.bogus\""]);
}

#[test]
fn check_27_preserve_unknown_fields_kept_verbatim() {
    let mut obj = widget(json!({"size": "small"}));
    obj["status"] = json!({"anything": {"nested": [1, {"x": null}]}, "ready": true});
    let r = run(obj.clone());
    assert_eq!(r.object["status"], obj["status"]);
    assert!(r.unknown_fields.is_empty());
}

#[test]
fn root_metadata_is_coerced_to_object_meta() {
    let mut obj = widget(json!({"size": "small"}));
    obj["metadata"]["bogus"] = json!(1);
    obj["metadata"]["ownerReferences"] =
        json!([{"apiVersion": "v1", "kind": "A", "name": "a", "uid": "u", "x": 1}]);
    obj["extra"] = json!(true);
    let r = run(obj);
    assert_eq!(
        r.unknown_fields,
        vec!["extra", "metadata.bogus", "metadata.ownerReferences[0].x"]
    );
    assert_eq!(r.object["apiVersion"], "example.com/v1");
    assert_eq!(r.object["metadata"]["name"], "w1");
}

#[test]
fn nested_defaults_recurse_into_created_defaults() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "default": {},
        "properties": {"a": {"type": "object", "default": {"x": 1},
            "properties": {"x": {"type": "integer"}, "y": {"type": "string", "default": "d"}}}}}}});
    let r = process(
        json!({"metadata": {"name": "n"}}),
        &schema,
        &PipelineOptions::default(),
    );
    assert_eq!(r.object["spec"], json!({"a": {"x": 1, "y": "d"}}));
}

#[test]
fn nulls_are_defaulted_or_dropped_unless_nullable() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "d": {"type": "string", "default": "x"},
        "n": {"type": "string"},
        "ok": {"type": "string", "nullable": true}}}}});
    let r = process(
        json!({"spec": {"d": null, "n": null, "ok": null}}),
        &schema,
        &PipelineOptions::default(),
    );
    assert_eq!(r.object["spec"], json!({"d": "x", "ok": null}));
    assert!(r.causes.is_empty());
}

#[test]
fn additional_properties_and_arrays_are_pruned_and_validated() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "m": {"type": "object", "additionalProperties": {"type": "object", "properties": {"v": {"type": "integer"}}}},
        "l": {"type": "array", "maxItems": 2, "items": {"type": "object", "properties": {"n": {"type": "string", "minLength": 2}}}}
    }}}});
    let r = process(
        json!({"spec": {"m": {"a": {"v": 1, "junk": 2}, "b": {"v": "x"}}, "l": [{"n": "ab", "q": 1}, {"n": "a"}, {}]}}),
        &schema,
        &PipelineOptions::default(),
    );
    assert_eq!(r.unknown_fields, vec!["spec.l[0].q", "spec.m.a.junk"]);
    assert_eq!(
        fr(&r.causes),
        vec![
            pair("spec.l[1].n", reason::INVALID),
            pair("spec.l", reason::TOO_MANY),
            pair("spec.m.b.v", reason::TYPE_INVALID),
        ]
    );
}

#[test]
fn int_or_string_and_numbers() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "p": {"x-kubernetes-int-or-string": true},
        "f": {"type": "number", "maximum": 1.5, "exclusiveMaximum": true},
        "m": {"type": "integer", "multipleOf": 5},
        "i": {"type": "integer", "format": "int32"}
    }}}});
    let ok = process(
        json!({"spec": {"p": "50%", "f": 1, "m": 10, "i": 3}}),
        &schema,
        &PipelineOptions::default(),
    );
    assert!(ok.causes.is_empty(), "{:?}", ok.causes);
    let ok = process(
        json!({"spec": {"p": 8080, "f": 1.0}}),
        &schema,
        &PipelineOptions::default(),
    );
    assert!(ok.causes.is_empty(), "{:?}", ok.causes);
    let bad = process(
        json!({"spec": {"p": true, "f": 1.5, "m": 7, "i": 3_000_000_000u64}}),
        &schema,
        &PipelineOptions::default(),
    );
    // kube-openapi does not range-check int32 formats; it reports one number error per value.
    assert_eq!(
        fr(&bad.causes),
        vec![
            pair("spec.f", reason::INVALID),
            pair("spec.m", reason::INVALID),
            pair("spec.p", reason::TYPE_INVALID),
        ]
    );
    let first_only = json!({"type": "object", "properties": {"n": {"type": "integer", "multipleOf": 2, "maximum": 3}}});
    let r = process(json!({"n": 5}), &first_only, &PipelineOptions::default());
    assert_eq!(r.causes.len(), 1);
    assert!(r.causes[0].message.ends_with("should be a multiple of 2"));
    assert!(
        bad.causes[0]
            .message
            .ends_with("spec.f in body should be less than 1.5")
    );
}

#[test]
fn strings_patterns_formats_and_sets() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
        "minProperties": 1, "maxProperties": 4, "properties": {
        "s": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 3},
        "t": {"type": "string", "format": "date-time"},
        "u": {"type": "array", "uniqueItems": true, "minItems": 1, "items": {"type": "string"}},
        "k": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
              "items": {"type": "object", "properties": {"name": {"type": "string"}}}}
    }}}});
    let ok = process(
        json!({"spec": {"s": "abc", "t": "2024-01-02T03:04:05Z", "u": ["a", "b"], "k": [{"name": "a"}, {"name": "b"}]}}),
        &schema,
        &PipelineOptions::default(),
    );
    assert!(ok.causes.is_empty(), "{:?}", ok.causes);
    let bad = process(
        json!({"spec": {"s": "ABCD", "t": "yesterday", "u": ["a", "a"], "k": [{"name": "a"}, {"name": "a"}]}}),
        &schema,
        &PipelineOptions::default(),
    );
    assert_eq!(
        fr(&bad.causes),
        vec![
            pair("spec.k[1]", reason::DUPLICATE),
            pair("spec.s", reason::TOO_LONG),
            pair("spec.t", reason::TYPE_INVALID),
            pair("spec.u[1]", reason::DUPLICATE),
        ]
    );
    let empty = process(
        json!({"spec": {"u": []}}),
        &schema,
        &PipelineOptions::default(),
    );
    assert_eq!(fr(&empty.causes), vec![pair("spec.u", reason::INVALID)]);
    let none = process(json!({"spec": {}}), &schema, &PipelineOptions::default());
    assert_eq!(fr(&none.causes), vec![pair("spec", reason::INVALID)]);
}

#[test]
fn embedded_resources_keep_type_and_object_meta() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "template": {"type": "object", "x-kubernetes-embedded-resource": true,
            "properties": {"spec": {"type": "object", "properties": {"a": {"type": "string"}}}}}
    }}}});
    let r = process(
        json!({"spec": {"template": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "junk": 1},
            "spec": {"a": "b", "c": "d"}}}}),
        &schema,
        &PipelineOptions::default(),
    );
    assert_eq!(
        r.unknown_fields,
        vec!["spec.template.metadata.junk", "spec.template.spec.c"]
    );
    assert_eq!(r.object["spec"]["template"]["kind"], "ConfigMap");
    assert!(r.causes.is_empty());
    let missing = process(
        json!({"spec": {"template": {"spec": {}}}}),
        &schema,
        &PipelineOptions::default(),
    );
    assert_eq!(
        fr(&missing.causes),
        vec![
            pair("spec.template.apiVersion", reason::REQUIRED),
            pair("spec.template.kind", reason::REQUIRED),
        ]
    );
}

#[test]
fn metadata_validation_is_optional_in_pipeline() {
    let opts = PipelineOptions {
        validate_metadata: Some(true),
        ..PipelineOptions::default()
    };
    let mut obj = widget(json!({"size": "small"}));
    obj["metadata"]["name"] = json!("Bad_Name");
    let r = process(obj, &widget_schema(), &opts);
    assert_eq!(fr(&r.causes), vec![pair("metadata.name", reason::INVALID)]);
}

#[test]
fn no_prune_keeps_unknown_fields() {
    let opts = PipelineOptions {
        prune: false,
        ..PipelineOptions::default()
    };
    let r = process(
        widget(json!({"size": "small", "bogus": 1})),
        &widget_schema(),
        &opts,
    );
    assert_eq!(r.object["spec"]["bogus"], 1);
    assert!(r.unknown_fields.is_empty());
}

#[test]
#[ignore = "timing probe: cargo test --release --lib pipeline_timing -- --ignored --nocapture"]
fn pipeline_timing() {
    let Some(path) =
        crate::shared_data::shared_or_skip("corpus/capi-core/components.yaml", "pipeline_timing")
    else {
        return;
    };
    let text = std::fs::read_to_string(path).unwrap();
    let crd = text
        .split("\n---")
        .filter_map(|d| serde_saphyr::from_str::<Value>(d).ok())
        .find(|v| {
            v["kind"] == "CustomResourceDefinition" && v["spec"]["names"]["kind"] == "Cluster"
        })
        .unwrap();
    let versions = crd["spec"]["versions"].as_array().unwrap();
    let schema = versions.last().unwrap()["schema"]["openAPIV3Schema"].clone();
    let obj = json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
        "metadata": {"name": "c1", "namespace": "default", "labels": {"a": "b"}},
        "spec": {"clusterNetwork": {"pods": {"cidrBlocks": ["192.168.0.0/16"]}},
                 "controlPlaneRef": {"apiGroup": "controlplane.cluster.x-k8s.io", "kind": "KubeadmControlPlane", "name": "cp"},
                 "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerCluster", "name": "c1"}}});
    let n = 2000;
    let start = std::time::Instant::now();
    for _ in 0..n {
        let r = process(obj.clone(), &schema, &PipelineOptions::default());
        assert!(r.causes.is_empty(), "{:?}", r.causes);
    }
    let per = start.elapsed() / n;
    let start = std::time::Instant::now();
    let s = structural_errors(&schema, "s");
    eprintln!(
        "process: {per:?}/object; structural_errors: {:?} ({} causes)",
        start.elapsed(),
        s.len()
    );
}

#[test]
fn string_formats_kube_keeps() {
    let schema =
        |f: &str| json!({"type": "object", "properties": {"v": {"type": "string", "format": f}}});
    for (format, good, bad) in [
        ("ipv4", "10.0.0.1", "10.0.0"),
        ("ipv6", "fd00::1", "10.0.0.1"),
        ("cidr", "10.0.0.0/8", "10.0.0.0/33"),
        ("uri", "https://example.com/x", "not a uri"),
        ("duration", "1h30m", "soon"),
        ("hostname", "api.example.com", "-bad-"),
        ("email", "a@example.com", "nobody"),
        ("mac", "00:11:22:33:44:55", "00:11"),
        ("uuid", "123e4567-e89b-12d3-a456-426614174000", "123"),
        ("byte", "aGVsbG8=", "%%%"),
        ("date-time", "2024-01-02T03:04:05Z", "2024-01-02"),
        ("int32", "anything", "anything"),
    ] {
        let ok = process(
            json!({"v": good}),
            &schema(format),
            &PipelineOptions::default(),
        );
        assert!(ok.causes.is_empty(), "{format} {good}: {:?}", ok.causes);
        let r = process(
            json!({"v": bad}),
            &schema(format),
            &PipelineOptions::default(),
        );
        let want = if good == bad { 0 } else { 1 };
        assert_eq!(r.causes.len(), want, "{format} {bad}");
        if want == 1 {
            assert_eq!(r.causes[0].reason, reason::TYPE_INVALID);
        }
    }
}

#[test]
fn corpus_builtin_objects_are_valid() {
    // Every built-in object real providers ship must pass, or the emulator rejects them.
    let Some(dir) =
        crate::shared_data::shared_or_skip("corpus", "corpus_builtin_objects_are_valid")
    else {
        return;
    };
    let mut checked = 0;
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let Ok(text) = std::fs::read_to_string(e.path().join("components.yaml")) else {
            continue;
        };
        for doc in text.split("\n---") {
            let Ok(mut v) = serde_saphyr::from_str::<Value>(doc) else {
                continue;
            };
            let kind = v["kind"].as_str().unwrap_or("").to_string();
            let namespaced = match kind.as_str() {
                "Secret" | "ConfigMap" | "ServiceAccount" | "Role" | "RoleBinding" => true,
                "Namespace" | "ClusterRole" | "ClusterRoleBinding" => false,
                _ => continue,
            };
            default_rbac_subjects(&mut v);
            let mut meta = v["metadata"].clone();
            if namespaced && meta.get("namespace").is_none() {
                meta["namespace"] = json!("default");
            }
            let mut causes = validate_object_meta_for_kind(&meta, namespaced, &kind);
            causes.extend(validate_builtin(&kind, &v));
            // Unrendered template variables (${NAMESPACE}) are not our concern here.
            causes.retain(|c| !c.message.contains("${"));
            assert!(
                causes.is_empty(),
                "{}: {kind} {}: {causes:?}",
                e.path().display(),
                meta["name"]
            );
            checked += 1;
        }
    }
    eprintln!("checked {checked} built-in corpus objects");
}

#[test]
#[ignore = "survey: cargo test --lib corpus_minimal_objects_survey -- --ignored --nocapture"]
fn corpus_minimal_objects_survey() {
    let Some(dir) = crate::shared_data::shared_or_skip("corpus", "corpus_minimal_objects_survey")
    else {
        return;
    };
    let mut counts: std::collections::BTreeMap<String, usize> = Default::default();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let Ok(text) = std::fs::read_to_string(e.path().join("components.yaml")) else {
            continue;
        };
        for doc in text.split("\n---") {
            let Ok(v) = serde_saphyr::from_str::<Value>(doc) else {
                continue;
            };
            if v["kind"] != "CustomResourceDefinition" {
                continue;
            }
            for ver in v["spec"]["versions"]
                .as_array()
                .cloned()
                .unwrap_or_default()
            {
                let schema = &ver["schema"]["openAPIV3Schema"];
                let obj = json!({"apiVersion": "x/v1", "kind": v["spec"]["names"]["kind"],
                    "metadata": {"name": "x", "namespace": "default"}, "spec": {}});
                let r = process(obj, schema, &PipelineOptions::default());
                for c in r.causes {
                    if c.reason != reason::REQUIRED {
                        eprintln!(
                            "{} {}: {}",
                            v["metadata"]["name"],
                            ver["name"],
                            c.error_string()
                        );
                    }
                    *counts.entry(c.reason).or_default() += 1;
                }
            }
        }
    }
    eprintln!("{counts:?}");
}

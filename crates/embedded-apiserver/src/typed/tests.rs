//! Unit tests of `typed`.

use super::*;
use serde_json::json;

fn schema() -> Value {
    json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {
            "size": {"type": "string"},
            "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}},
            "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "args": {"type": "array", "items": {"type": "string"}},
            "sel": {"type": "object", "x-kubernetes-map-type": "atomic", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}},
            "env": {"type": "object", "additionalProperties": {"type": "string"}}
        }},
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
    }})
}

fn f(s: &str) -> PathElement {
    PathElement::Field(s.into())
}

#[test]
fn field_set_by_list_type() {
    let s = schema();
    let v = json!({"apiVersion": "x/v1", "metadata": {"labels": {"a": "1"}, "finalizers": ["x/y"], "ownerReferences": [{"uid": "u1", "name": "o"}]},
        "spec": {"size": "s", "ports": [{"name": "http", "port": 80}], "tags": ["a"], "args": ["x"], "sel": {"a": "1"}, "env": {"K": "v"}}});
    let set = to_set(&v, Ty::root(Some(&s)));
    let http = PathElement::key_of(&json!({"name": "http"}), &["name".into()]);
    let owner = PathElement::key_of(&json!({"uid": "u1"}), &["uid".into()]);
    for p in [
        vec![f("spec"), f("size")],
        vec![f("spec"), f("ports"), http.clone()],
        vec![f("spec"), f("ports"), http.clone(), f("port")],
        vec![f("spec"), f("tags"), PathElement::value_of(&json!("a"))],
        vec![f("spec"), f("args")],
        vec![f("spec"), f("sel")],
        vec![f("spec"), f("env"), f("K")],
        vec![f("metadata"), f("labels"), f("a")],
        vec![
            f("metadata"),
            f("finalizers"),
            PathElement::value_of(&json!("x/y")),
        ],
        vec![f("metadata"), f("ownerReferences"), owner.clone()],
    ] {
        assert!(set.contains(&p), "missing {p:?} in {set:?}");
    }
    // An owner reference is atomic (kube's `+structType=atomic`): owned whole.
    assert!(!set.contains(&vec![f("metadata"), f("ownerReferences"), owner, f("name")]));
    assert!(!set.contains(&vec![f("spec")]));
    assert!(!set.contains(&vec![f("spec"), f("sel"), f("a")]));
}

#[test]
fn merge_by_list_type() {
    let s = schema();
    let t = Ty::root(Some(&s));
    let live = json!({"spec": {"ports": [{"name": "a", "port": 1}, {"name": "b", "port": 2}], "tags": ["x", "y"], "args": ["1", "2"], "sel": {"a": "1"}}});
    let cfg = json!({"spec": {"ports": [{"name": "b", "port": 3}, {"name": "c", "port": 4}], "tags": ["z"], "args": ["3"], "sel": {"b": "2"}}});
    let out = merge(&live, &cfg, t);
    assert_eq!(
        out["spec"]["ports"],
        json!([{"name": "a", "port": 1}, {"name": "b", "port": 3}, {"name": "c", "port": 4}])
    );
    assert_eq!(out["spec"]["tags"], json!(["x", "y", "z"]));
    assert_eq!(out["spec"]["args"], json!(["3"]));
    assert_eq!(out["spec"]["sel"], json!({"b": "2"}));
}

#[test]
fn compare_and_remove_items() {
    let s = schema();
    let t = Ty::root(Some(&s));
    let old = json!({"spec": {"ports": [{"name": "a", "port": 1}], "size": "s"}});
    let new = json!({"spec": {"ports": [{"name": "a", "port": 2}, {"name": "b"}]}});
    let c = compare(&old, &new, t);
    let a = PathElement::key_of(&json!({"name": "a"}), &["name".into()]);
    let b = PathElement::key_of(&json!({"name": "b"}), &["name".into()]);
    assert!(
        c.modified
            .contains(&vec![f("spec"), f("ports"), a.clone(), f("port")])
    );
    assert!(c.added.contains(&vec![f("spec"), f("ports"), b.clone()]));
    assert!(c.removed.contains(&vec![f("spec"), f("size")]));
    let mut v = new.clone();
    remove_paths(
        &mut v,
        &[vec![f("spec"), f("ports"), a]].into_iter().collect(),
        t,
    );
    assert_eq!(v["spec"]["ports"], json!([{"name": "b"}]));
    assert!(compare(&v, &v, t).is_same());
}

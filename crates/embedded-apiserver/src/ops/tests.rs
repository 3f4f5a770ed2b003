//! Unit tests of `ops`.

use super::*;
use crate::meta;
use crate::store::Store;
use serde_json::json;

fn cm_target(store: &Store, name: &str) -> Target {
    Target {
        rt: store.registry.get("", "configmaps").unwrap(),
        version: "v1".into(),
        namespace: "default".into(),
        name: name.into(),
        subresource: None,
    }
}

fn seeded() -> Store {
    let mut s = Store::new(100);
    let t = Target {
        rt: s.registry.get("", "namespaces").unwrap(),
        version: "v1".into(),
        namespace: String::new(),
        name: String::new(),
        subresource: None,
    };
    create(
        &mut s,
        &t,
        json!({"metadata": {"name": "default"}}),
        &WriteOpts::default(),
    )
    .unwrap();
    s
}

#[test]
fn noop_update_keeps_rv_and_emits_nothing() {
    let mut s = seeded();
    let t = cm_target(&s, "c");
    let w = create(
        &mut s,
        &t,
        json!({"metadata": {"name": "c"}, "data": {"a": "b"}}),
        &WriteOpts::default(),
    )
    .unwrap();
    let rv = s.rv;
    let again = update(
        &mut s,
        &t,
        (*w.object).clone(),
        UpdateKind::Put,
        &WriteOpts::default(),
    )
    .unwrap();
    assert_eq!(s.rv, rv);
    assert_eq!(
        meta::resource_version(&again.object),
        meta::resource_version(&w.object)
    );
}

#[test]
fn finalizers_defer_deletion() {
    let mut s = seeded();
    let t = cm_target(&s, "c");
    create(
        &mut s,
        &t,
        json!({"metadata": {"name": "c", "finalizers": ["x/y"]}}),
        &WriteOpts::default(),
    )
    .unwrap();
    let deleted = delete(&mut s, &t, &DeleteOpts::default()).unwrap();
    assert!(matches!(deleted, Deleted::Pending(_)), "expected pending");
    let Deleted::Pending(obj) = deleted else {
        return;
    };
    assert!(meta::is_deleting(&obj));
    let mut cleared = (*obj).clone();
    meta::set_finalizers(&mut cleared, &[]);
    update(
        &mut s,
        &t,
        cleared,
        UpdateKind::Patch,
        &WriteOpts::default(),
    )
    .unwrap();
    assert!(get(&s, &t).is_err());
}

#[test]
fn missing_namespace_is_404() {
    let mut s = seeded();
    let mut t = cm_target(&s, "c");
    t.namespace = "ghost".into();
    let e = create(
        &mut s,
        &t,
        json!({"metadata": {"name": "c"}}),
        &WriteOpts::default(),
    )
    .unwrap_err();
    assert_eq!(e.code, 404);
    assert_eq!(e.message, "namespaces \"ghost\" not found");
}

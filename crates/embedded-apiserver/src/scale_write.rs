//! Writes through the scale subresource (docs/embedded-apiserver.md M12): a Scale written back
//! into its object through the write pipeline, admission seeing the Scale.

use serde_json::{Value, json};

use super::error::ApiError;
use super::meta;
use super::ops::{self, UpdateKind, WriteOpts, Written};
use super::scale::to_scale;
use super::store::Store;
use super::target::Target;

/// Writes a Scale back into the object (RV precondition from the Scale).
pub fn write_scale(
    store: &mut Store,
    t: &Target,
    scale: Value,
    kind: UpdateKind,
    opts: &WriteOpts,
) -> Result<Written, ApiError> {
    let Some(def) = t.rt.version(&t.version).and_then(|v| v.scale.clone()) else {
        return Err(ApiError::path_not_found());
    };
    let stored = ops::get_shared(store, t)?;
    let current = ops::at_version(t, &stored, opts.oracle.as_deref())?.into_owned();
    let mut scale = scale;
    if let Some(oracle) = opts.oracle.as_deref() {
        // Admission sees the Scale (autoscaling/v1) of the scale subresource.
        let attrs = super::webhook::admission::Attributes {
            operation: "UPDATE",
            version: t.version.clone(),
            subresource: "scale".into(),
            name: t.name.clone(),
            namespace: if t.rt.namespaced {
                t.namespace.clone()
            } else {
                String::new()
            },
            dry_run: opts.dry_run,
            options: ops::write_options("UpdateOptions", opts),
        };
        scale = oracle.mutate(attrs, scale, &to_scale(t, &current))?;
    }
    let replicas = match scale.pointer("/spec/replicas") {
        Some(Value::Number(n)) if n.as_i64().is_some() => n.clone(),
        None | Some(Value::Null) => serde_json::Number::from(0),
        Some(other) => {
            return Err(ApiError::invalid(
                "autoscaling",
                "Scale",
                &t.name,
                vec![super::error::StatusCause::new(
                    "FieldValueTypeInvalid",
                    "spec.replicas",
                    format!("Invalid value: {other}: must be an integer"),
                )],
            ));
        }
    };
    // A custom resource's Scale is not validated itself: the object it is written into is,
    // by its schema and scale paths (kube's Widget.example.com "w" is invalid, not Scale's).
    if !t.rt.custom && replicas.as_i64().is_some_and(|r| r < 0) {
        return Err(ApiError::invalid(
            "autoscaling",
            "Scale",
            &t.name,
            vec![super::error::StatusCause::new(
                "FieldValueInvalid",
                "spec.replicas",
                format!("Invalid value: {replicas}: must be greater than or equal to 0"),
            )],
        ));
    }
    let mut new = current.clone();
    let scale_rv = meta::resource_version(&scale);
    let rv = if scale_rv.is_empty() {
        meta::resource_version(&current).to_string()
    } else {
        scale_rv.to_string()
    };
    meta::set_meta(&mut new, "resourceVersion", json!(rv));
    meta::set_dotted(&mut new, &def.spec_replicas_path, Value::Number(replicas));
    let main = Target {
        subresource: None,
        ..t.clone()
    };
    let _ = kind;
    let opts = WriteOpts {
        via_subresource: Some("scale".into()),
        ..opts.clone()
    };
    ops::update(store, &main, new, UpdateKind::Patch, &opts)
}

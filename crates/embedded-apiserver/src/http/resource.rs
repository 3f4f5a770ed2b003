//! Resource requests: the verbs on one resource path (get, list, watch, create, update, patch, delete, subresources).

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, header};
use axum::response::Response;
use serde_json::{Value, json};

use super::body::*;
use super::patching::*;
use super::paths::*;
use crate::access;
use crate::error::ApiError;
use crate::filter::Filter;
use crate::meta;
use crate::ops::{self, DeleteOpts, Deleted, Target, UpdateKind, WriteOpts};
use crate::patch::{self, PatchType};
use crate::query::{Query, truthy};
use crate::registry::ResourceType;
use crate::response::{json_response, with_warnings};
use crate::reviews;
use crate::state::EmbeddedServer;
use crate::table;
use crate::watch;
use crate::webhook::{self, oracle};

pub(super) async fn resource(
    server: &EmbeddedServer,
    user: &access::UserInfo,
    method: &Method,
    p: ResPath,
    headers: &HeaderMap,
    q: &Query,
    body: Bytes,
) -> Result<Response, ApiError> {
    let rt = {
        let store = server.lock();
        store.registry.lookup(&p.group, &p.version, &p.resource)
    }
    .ok_or_else(ApiError::path_not_found)?;
    if p.namespace.is_some() && !rt.namespaced {
        return Err(ApiError::path_not_found());
    }
    if let Some(sub) = &p.sub {
        let v = rt.version(&p.version);
        let ok = match sub.as_str() {
            "status" => v.is_some_and(|v| v.status),
            "scale" => v.is_some_and(|v| v.scale.is_some()),
            _ => false,
        };
        if !ok {
            // apiextensions answers a subresource a CRD does not define as a missing object.
            return Err(if rt.custom {
                ApiError::not_found(
                    &rt.group,
                    &rt.resource,
                    p.name.as_deref().unwrap_or_default(),
                )
            } else {
                ApiError::path_not_found()
            });
        }
    }
    let t = Target {
        rt: rt.clone(),
        version: p.version.clone(),
        namespace: p.namespace.clone().unwrap_or_default(),
        name: p.name.clone().unwrap_or_default(),
        subresource: p.sub.clone(),
    };
    let accept = header_str(headers, header::ACCEPT);
    if !acceptable(accept) {
        return Err(ApiError::new(
            406,
            "NotAcceptable",
            "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf",
        ));
    }
    if !rt.is_crud() {
        return if *method == Method::POST && p.name.is_none() {
            let obj = decode_body(headers, &body, &rt.api_version(&p.version), &rt.kind)?;
            // kube's field manager records the request's fields for any create, reviews too.
            let mut requested = obj.clone();
            crate::field_manager::track_update(
                &t,
                None,
                &mut requested,
                &crate::field_manager::update_manager(
                    q.get("fieldManager").map(String::as_str),
                    header_str(headers, header::USER_AGENT),
                ),
                None,
                None,
            );
            let store = server.lock();
            let mut answer = reviews::review(&store, user, &t, obj)?;
            // The access reviews answer the request object (its managedFields with it); the
            // rules and self reviews answer new objects.
            let echoes_request = rt.resource.ends_with("subjectaccessreviews");
            if echoes_request
                && let (Some(mf), Some(m)) = (
                    requested.pointer("/metadata/managedFields").cloned(),
                    answer.get_mut("metadata").and_then(Value::as_object_mut),
                )
            {
                m.insert("managedFields".into(), mf);
            }
            Ok(json_response(201, &answer))
        } else {
            Err(ApiError::method_not_allowed())
        };
    }
    let mut warnings: Vec<String> = Vec::new();
    if let Some(w) = rt
        .version(&p.version)
        .and_then(|v| v.deprecation_warning.clone())
    {
        warnings.push(if w.is_empty() {
            format!("{} is deprecated", rt.api_version(&p.version))
        } else {
            w
        });
    }
    let is_scale = t.subresource.as_deref() == Some("scale");
    let resp = match (method.clone(), p.name.is_some()) {
        (Method::GET, false) if truthy(q, "watch") => {
            crate::list::validate_watch(q)?;
            let filter = query_filter(&rt, &p, q)?;
            // The deprecation warning goes on a watch's response too.
            return Ok(with_warnings(
                watch::start(server, t, filter, q, accept),
                &warnings,
            ));
        }
        (Method::GET, false) => {
            let filter = query_filter(&rt, &p, q)?;
            let mut list = {
                let store = server.lock();
                crate::list::list(&store, &t, &filter, q)?
            };
            if rt.conversion.is_some() {
                convert_list(server, &t, &mut list).await?;
            }
            if table::wants_table(accept) {
                json_response(200, &table::list_table(&t, &list))
            } else if table::wants_metadata(accept) {
                json_response(200, &table::partial_list(&list))
            } else {
                json_response(200, &list)
            }
        }
        (Method::GET, true) => {
            let obj = ops::get_shared(&server.lock(), &t)?;
            let out = if is_scale {
                std::borrow::Cow::Owned(crate::scale::to_scale(
                    &t,
                    &*read_at_version(server, &t, &obj).await?,
                ))
            } else {
                read_at_version(server, &t, &obj).await?
            };
            if table::wants_table(accept) && t.subresource.is_none() {
                json_response(200, &table::object_table(&t, &out))
            } else if table::wants_metadata(accept) && t.subresource.is_none() {
                json_response(200, &table::partial(&out))
            } else {
                json_response(200, &out)
            }
        }
        (Method::POST, false) => {
            let obj = decode_body(headers, &body, &rt.api_version(&p.version), &rt.kind)?;
            let opts = write_opts(q, headers, "CreateOptions")?;
            let (w, hooked) = oracle::run(server, &t, user, obj, |store, oracle, obj| {
                escalation_check(store, user, &t, &obj, false)?;
                let opts = WriteOpts {
                    oracle,
                    ..opts.clone()
                };
                ops::create(store, &t, obj, &opts)
            })
            .await?;
            warnings.extend(w.warnings.iter().cloned());
            warnings.extend(hooked);
            json_response(201, &written_at_version(server, &t, &w.object).await?)
        }
        (Method::PUT, true) => {
            let obj = decode_body(headers, &body, &rt.api_version(&p.version), &rt.kind)?;
            let opts = write_opts(q, headers, "UpdateOptions")?;
            let (w, hooked) = oracle::run(server, &t, user, obj, |store, oracle, obj| {
                escalation_check(store, user, &t, &obj, true)?;
                let opts = WriteOpts {
                    oracle,
                    ..opts.clone()
                };
                if is_scale {
                    crate::scale_write::write_scale(store, &t, obj, UpdateKind::Put, &opts)
                } else {
                    ops::update(store, &t, obj, UpdateKind::Put, &opts)
                }
            })
            .await?;
            warnings.extend(w.warnings.iter().cloned());
            warnings.extend(hooked);
            let out = written_body(server, &t, is_scale, &w.object).await?;
            json_response(200, &out)
        }
        (Method::PATCH, true) => {
            let ct = header_str(headers, header::CONTENT_TYPE);
            let Some(ptype) = PatchType::from_content_type(ct) else {
                return Err(ApiError::unsupported_media_type(&patch::accepted(
                    rt.custom,
                )));
            };
            if ptype == PatchType::Strategic && rt.custom {
                return Err(ApiError::unsupported_media_type(&patch::accepted(true)));
            }
            let opts = write_opts(q, headers, "PatchOptions")?;
            if opts.force && ptype != PatchType::Apply {
                return Err(ApiError::invalid(
                    "meta.k8s.io",
                    "PatchOptions",
                    "",
                    vec![crate::error::StatusCause::new(
                        "FieldValueForbidden",
                        "force",
                        "Forbidden: may not be specified for non-apply patch",
                    )],
                ));
            }
            let body_value = if ptype == PatchType::Apply {
                decode_yaml_or_json(&body)?
            } else {
                serde_json::from_slice::<Value>(&body)
                    .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?
            };
            let guarded = guarded_rbac_write(user, &t);
            let ((w, code), hooked) = if !guarded
                && ptype != PatchType::Apply
                && !is_scale
                && !oracle::involved(server, &rt, user)
            {
                (
                    (patch_unlocked(server, &t, ptype, body_value, &opts)?, 200),
                    Vec::new(),
                )
            } else {
                oracle::run(server, &t, user, body_value, |store, oracle, body_value| {
                    let opts = WriteOpts {
                        oracle,
                        ..opts.clone()
                    };
                    if guarded {
                        // The patched object is what escalation prevention judges: compute
                        // it first (dry run, same lock), then write.
                        let dry = WriteOpts {
                            dry_run: true,
                            ..opts.clone()
                        };
                        let (preview, _) =
                            patch_object(store, &t, ptype, body_value.clone(), &dry)?;
                        escalation_check(store, user, &t, &preview.object, true)?;
                    }
                    patch_object(store, &t, ptype, body_value, &opts)
                })
                .await?
            };
            warnings.extend(w.warnings.iter().cloned());
            warnings.extend(hooked);
            let out = written_body(server, &t, is_scale, &w.object).await?;
            json_response(code, &out)
        }
        (Method::DELETE, true) => {
            let opts = delete_opts(headers, &body, q)?;
            let (d, hooked) = oracle::run(server, &t, user, Value::Null, |store, oracle, _| {
                let opts = DeleteOpts {
                    oracle,
                    ..opts.clone()
                };
                ops::delete(store, &t, &opts)
            })
            .await?;
            warnings.extend(hooked);
            match d {
                Deleted::Gone(status) => json_response(200, &status),
                Deleted::Pending(obj) => {
                    json_response(200, &written_at_version(server, &t, &obj).await?)
                }
            }
        }
        (Method::DELETE, false) => {
            if !rt.verbs.contains(&"deletecollection") {
                return Err(ApiError::method_not_allowed());
            }
            let filter = query_filter(&rt, &p, q)?;
            let opts = delete_opts(headers, &body, q)?;
            let names: Vec<(String, String, Value)> = {
                let store = server.lock();
                ops::list(&store, &t)
                    .into_iter()
                    .filter(|o| filter.matches(o))
                    .map(|o| {
                        (
                            meta::namespace(&o).to_string(),
                            meta::name(&o).to_string(),
                            o,
                        )
                    })
                    .collect()
            };
            // kube answers the list of what it deleted: the objects held by finalizers as
            // they are now, the others as they were.
            let mut items = Vec::new();
            for (ns, name, before) in names {
                let mut one = t.clone();
                one.namespace = ns;
                one.name = name;
                let deleted = oracle::run(server, &one, user, Value::Null, |store, oracle, _| {
                    let opts = DeleteOpts {
                        oracle,
                        ..opts.clone()
                    };
                    ops::delete(store, &one, &opts)
                })
                .await;
                match deleted {
                    Ok((Deleted::Pending(obj), hooked)) => {
                        warnings.extend(hooked);
                        items.push(written_at_version(server, &one, &obj).await?);
                    }
                    Ok((Deleted::Gone(_), hooked)) => {
                        warnings.extend(hooked);
                        items.push(written_at_version(server, &one, &before).await?);
                    }
                    Err(e) if e.code == 404 => {}
                    Err(e) => return Err(e),
                }
            }
            let rv = server.lock().rv;
            let mut metadata = json!({"resourceVersion": rv.to_string()});
            if rt.custom {
                metadata["continue"] = json!("");
            }
            json_response(
                200,
                &json!({"kind": rt.list_kind, "apiVersion": rt.api_version(&p.version),
                        "metadata": metadata, "items": items}),
            )
        }
        _ => return Err(ApiError::method_not_allowed()),
    };
    Ok(with_warnings(resp, &warnings))
}

/// Whether an Accept header names a media type kube's resource handlers serve (answered as JSON
/// here whichever it is, docs/embedded-apiserver.md L4); an empty header takes anything.
fn acceptable(accept: &str) -> bool {
    accept.trim().is_empty()
        || accept.split(',').any(|range| {
            let base = range.split(';').next().unwrap_or_default().trim();
            matches!(
                base.to_ascii_lowercase().as_str(),
                "*/*"
                    | "application/*"
                    | "application/json"
                    | "application/yaml"
                    | "application/vnd.kubernetes.protobuf"
            )
        })
}

/// A stored object as a read at `t`'s version shows it (a conversion webhook call when the
/// CRD converts by webhook: errors are 500 with no reason, as kube-apiserver's reads fail).
pub(super) async fn read_at_version<'a>(
    server: &EmbeddedServer,
    t: &Target,
    obj: &'a Value,
) -> Result<std::borrow::Cow<'a, Value>, ApiError> {
    if t.rt.conversion.is_none()
        || !webhook::crd_conversion::needs_conversion(obj, &t.rt.api_version(&t.version))
    {
        return Ok(ops::presented(&t.rt, &t.version, obj));
    }
    webhook::conversion::convert_stored(server, &t.rt, vec![obj.clone()], &t.version, false)
        .await
        .map(|mut v| std::borrow::Cow::Owned(v.pop().unwrap_or(Value::Null)))
        .map_err(|e| ApiError::new(500, "", e))
}

/// The body answering a write: the written object at the requested version, or its Scale.
async fn written_body(
    server: &EmbeddedServer,
    t: &Target,
    is_scale: bool,
    written: &Value,
) -> Result<Value, ApiError> {
    let obj = written_at_version(server, t, written).await?;
    Ok(if is_scale {
        crate::scale::to_scale(t, &obj)
    } else {
        obj
    })
}

/// The response object of a write at `t`'s version (conversion errors are InternalError, as
/// kube-apiserver's writes fail).
pub(super) async fn written_at_version(
    server: &EmbeddedServer,
    t: &Target,
    obj: &Value,
) -> Result<Value, ApiError> {
    if t.rt.conversion.is_none()
        || !webhook::crd_conversion::needs_conversion(obj, &t.rt.api_version(&t.version))
    {
        return Ok(ops::presented(&t.rt, &t.version, obj).into_owned());
    }
    webhook::conversion::convert_stored(server, &t.rt, vec![obj.clone()], &t.version, false)
        .await
        .map(|mut v| v.pop().unwrap_or(Value::Null))
        .map_err(ApiError::internal_error)
}

/// Converts the items of a list of a webhook-converted CRD in one ConversionReview.
pub(super) async fn convert_list(
    server: &EmbeddedServer,
    t: &Target,
    list: &mut Value,
) -> Result<(), ApiError> {
    let Some(items) = list.get_mut("items").and_then(Value::as_array_mut) else {
        return Ok(());
    };
    let taken = std::mem::take(items);
    let converted = webhook::conversion::convert_stored(server, &t.rt, taken, &t.version, true)
        .await
        .map_err(|e| ApiError::new(500, "", e))?;
    list["items"] = Value::Array(converted);
    Ok(())
}

/// RBAC escalation prevention for writes of roles and bindings by non-privileged users
/// (`update`: the stored object is the old one).
pub(super) fn escalation_check(
    store: &crate::store::Store,
    user: &access::UserInfo,
    t: &Target,
    obj: &Value,
    update: bool,
) -> Result<(), ApiError> {
    if !guarded_rbac_write(user, t) {
        return Ok(());
    }
    let old = if update {
        store.objects.get(&t.key()).map(|o| &**o)
    } else {
        None
    };
    access::check_rbac_write(store, user, &t.rt.resource, &t.namespace, obj, old)
}

/// Whether a write to `t` by `user` goes through RBAC escalation prevention.
pub(super) fn guarded_rbac_write(user: &access::UserInfo, t: &Target) -> bool {
    t.rt.group == "rbac.authorization.k8s.io"
        && t.subresource.is_none()
        && !access::is_privileged(user)
}

/// The label and field selectors of a collection request.
fn query_filter(rt: &ResourceType, p: &ResPath, q: &Query) -> Result<Filter, ApiError> {
    Filter::parse(
        rt,
        &p.version,
        p.namespace.as_deref(),
        q.get("labelSelector").map(String::as_str),
        q.get("fieldSelector").map(String::as_str),
    )
}

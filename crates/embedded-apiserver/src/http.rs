//! HTTP front: path routing, body decoding, content negotiation and response encoding.

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::access::{self, Identity};
use super::admission::FieldValidation;
use super::client_cert::{ClientCertAuthenticator, PeerCertificates};
use super::discovery;
use super::error::ApiError;
use super::filter::Filter;
use super::meta;
use super::openapi;
use super::ops::{self, DeleteOpts, Deleted, Target, UpdateKind, WriteOpts};
use super::patch::{self, PatchType};
use super::query::{Query, parse_query, truthy};
use super::response::{error_response, json_response, with_warnings};
use super::reviews;
use super::ssa;
use super::state::EmbeddedServer;
use super::table;
use super::watch;
use super::webhook::{self, oracle};

/// kube-apiserver's request body limit.
pub const MAX_BODY: usize = 3 * 1024 * 1024;

pub fn router(server: EmbeddedServer) -> Router {
    Router::new().fallback(handle).with_state(server)
}

/// The router behind authentication (TCP listener), kube-apiserver's union of authenticators
/// in its order: a client certificate verified by `client_auth` (user = CommonName, groups =
/// Organizations); then the bearer token: `token` is the admin (member of `system:masters`), a
/// token from the TokenRequest subresource authenticates as its ServiceAccount, whose every
/// request RBAC then authorizes. A certificate that does not verify does not stop a valid token;
/// a request nothing authenticates is 401.
pub fn authenticated_router(
    server: EmbeddedServer,
    token: String,
    client_auth: Option<ClientCertAuthenticator>,
) -> Router {
    let expected = format!("Bearer {token}");
    let authn = server.clone();
    router(server).layer(axum::middleware::from_fn(
        move |mut req: Request, next: axum::middleware::Next| {
            let user = authenticate(&req, &authn, &expected, client_auth.as_ref());
            if let Some(user) = user {
                req.extensions_mut().insert(Identity(user));
            }
            async move {
                if req.extensions().get::<Identity>().is_some() {
                    next.run(req).await
                } else {
                    error_response(&ApiError::new(401, "Unauthorized", "Unauthorized"))
                }
            }
        },
    ))
}

fn authenticate(
    req: &Request,
    server: &EmbeddedServer,
    expected: &str,
    client_auth: Option<&ClientCertAuthenticator>,
) -> Option<access::UserInfo> {
    if let (Some(auth), Some(PeerCertificates(chain))) =
        (client_auth, req.extensions().get::<PeerCertificates>())
        && let Ok(Some(user)) = auth.authenticate(chain)
    {
        return Some(user);
    }
    let header = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if header == expected {
        Some(access::admin())
    } else {
        header
            .strip_prefix("Bearer ")
            .and_then(|t| server.authenticate_token(t))
    }
}

/// A resource path.
#[derive(Debug, Clone)]
struct ResPath {
    group: String,
    version: String,
    namespace: Option<String>,
    resource: String,
    name: Option<String>,
    sub: Option<String>,
}

enum Route {
    Version,
    Health,
    ApiVersions,
    GroupList,
    Group(String),
    ResourceList(String, String),
    OpenApiRoot,
    OpenApiGv(String),
    Resource(ResPath),
    NotFound,
}

fn parse_resource(group: &str, version: &str, rest: &[&str]) -> Route {
    let (namespace, rest) = if rest.len() >= 3
        && rest[0] == "namespaces"
        && !(rest.len() == 3 && matches!(rest[2], "status" | "finalize"))
    {
        (Some(rest[1].to_string()), &rest[2..])
    } else {
        (None, rest)
    };
    if rest.is_empty() || rest.len() > 3 || rest.iter().any(|s| s.is_empty()) {
        return Route::NotFound;
    }
    Route::Resource(ResPath {
        group: group.to_string(),
        version: version.to_string(),
        namespace,
        resource: rest[0].to_string(),
        name: rest.get(1).map(|s| s.to_string()),
        sub: rest.get(2).map(|s| s.to_string()),
    })
}

fn route(path: &str) -> Route {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    match segs.as_slice() {
        ["version"] => Route::Version,
        ["healthz" | "livez" | "readyz", ..] => Route::Health,
        ["api"] => Route::ApiVersions,
        ["api", "v1"] => Route::ResourceList(String::new(), "v1".into()),
        ["api", v, rest @ ..] => parse_resource("", v, rest),
        ["apis"] => Route::GroupList,
        ["apis", g] => Route::Group(g.to_string()),
        ["apis", g, v] => Route::ResourceList(g.to_string(), v.to_string()),
        ["apis", g, v, rest @ ..] => parse_resource(g, v, rest),
        ["openapi", "v3"] => Route::OpenApiRoot,
        ["openapi", "v3", rest @ ..] => Route::OpenApiGv(rest.join("/")),
        _ => Route::NotFound,
    }
}

async fn handle(State(server): State<EmbeddedServer>, req: Request) -> Response {
    let faults = server.faults();
    let latency = faults.latency();
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    let path = req.uri().path().to_string();
    // Routed once per request (it splits and copies the path).
    let routed = route(&path);
    let is_health = matches!(routed, Route::Health);
    if !is_health && let Some(code) = faults.roll_error() {
        let e = if code == 429 {
            ApiError::too_many_requests(1)
        } else {
            ApiError::internal("injected fault: internal error")
        };
        return error_response(&e);
    }
    if let Route::Resource(res) = &routed
        && faults.resource_failing(&res.resource)
    {
        return error_response(&ApiError::internal(format!(
            "injected fault: every request on {} fails",
            res.resource
        )));
    }
    let user = req
        .extensions()
        .get::<Identity>()
        .map(|i| i.0.clone())
        .unwrap_or_else(access::admin);
    let resolved = if super::impersonation::requested_any(req.headers()) {
        super::impersonation::resolve(&server.lock(), user, req.headers())
    } else {
        Ok(user)
    };
    let user = match resolved {
        Ok(u) => u,
        Err(super::impersonation::Refusal::Forbidden(e)) => return error_response(&e),
        Err(super::impersonation::Refusal::Malformed(why)) => {
            let text = format!("Internal Server Error: {:?}: {why}", req.uri().to_string());
            let mut r = Response::new(Body::from(text));
            *r.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
            return r;
        }
    };
    let (parts, body) = req.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_BODY).await {
        Ok(b) => b,
        Err(_) => return error_response(&ApiError::too_large()),
    };
    let query = parse_query(&parts.uri);
    if !access::is_privileged(&user) {
        let attrs = access::request_attributes(&parts.method, &path, &query);
        let allowed = access::authorize(&server.lock(), &user, &attrs);
        if let Err(e) = allowed {
            return error_response(&e);
        }
    }
    match dispatch(
        &server,
        &user,
        &parts.method,
        routed,
        &parts.headers,
        &query,
        bytes,
    )
    .await
    {
        Ok(r) => r,
        Err(e) => error_response(&e),
    }
}

fn header_str(h: &HeaderMap, name: header::HeaderName) -> &str {
    h.get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

async fn dispatch(
    server: &EmbeddedServer,
    user: &access::UserInfo,
    method: &Method,
    routed: Route,
    headers: &HeaderMap,
    q: &Query,
    body: Bytes,
) -> Result<Response, ApiError> {
    let accept = header_str(headers, header::ACCEPT);
    let read_only = |m: &Method| m == Method::GET || m == Method::HEAD;
    match routed {
        Route::Version if read_only(method) => Ok(json_response(200, &discovery::version())),
        Route::Health if read_only(method) => {
            let mut r = Response::new(Body::from("ok"));
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; charset=utf-8"),
            );
            Ok(r)
        }
        Route::ApiVersions if read_only(method) => {
            if discovery::wants_aggregated_v2(accept) {
                let store = server.lock();
                Ok(aggregated_response(&discovery::aggregated(
                    &store.registry,
                    true,
                )))
            } else {
                Ok(json_response(200, &discovery::api_versions()))
            }
        }
        Route::GroupList if read_only(method) => {
            let store = server.lock();
            if discovery::wants_aggregated_v2(accept) {
                Ok(aggregated_response(&discovery::aggregated(
                    &store.registry,
                    false,
                )))
            } else {
                Ok(json_response(
                    200,
                    &discovery::api_group_list(&store.registry),
                ))
            }
        }
        Route::Group(g) if read_only(method) => {
            let store = server.lock();
            discovery::api_group(&store.registry, &g)
                .map(|d| json_response(200, &d))
                .ok_or_else(ApiError::path_not_found)
        }
        Route::ResourceList(g, v) if read_only(method) => {
            let store = server.lock();
            discovery::resource_list(&store.registry, &g, &v)
                .map(|d| json_response(200, &d))
                .ok_or_else(ApiError::path_not_found)
        }
        Route::OpenApiRoot if read_only(method) => {
            let store = server.lock();
            Ok(json_response(
                200,
                &openapi::root(&store.registry, store.schema_generation),
            ))
        }
        Route::OpenApiGv(gv) if read_only(method) => {
            let store = server.lock();
            openapi::group_version(&store.registry, &gv)
                .map(|d| json_response(200, &d))
                .ok_or_else(ApiError::path_not_found)
        }
        Route::Resource(p)
            if p.group.is_empty()
                && p.resource == "serviceaccounts"
                && p.sub.as_deref() == Some("token") =>
        {
            if *method != Method::POST {
                return Err(ApiError::method_not_allowed());
            }
            let store = server.lock();
            access::token_request(
                &store,
                server.tokens(),
                p.namespace.as_deref().unwrap_or_default(),
                p.name.as_deref().unwrap_or_default(),
                &body,
            )
            .map(|v| json_response(201, &v))
        }
        Route::Resource(p) => resource(server, user, method, p, headers, q, body).await,
        Route::NotFound => Err(ApiError::path_not_found()),
        _ => Err(ApiError::method_not_allowed()),
    }
}

fn aggregated_response(doc: &Value) -> Response {
    let mut r = json_response(200, doc);
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(discovery::AGGREGATED_V2),
    );
    r
}

/// Decodes a request body by Content-Type.
fn decode_body(
    headers: &HeaderMap,
    body: &Bytes,
    api_version: &str,
    kind_hint: &str,
) -> Result<Value, ApiError> {
    let ct = header_str(headers, header::CONTENT_TYPE);
    let base = ct.split(';').next().unwrap_or_default().trim();
    match base {
        "application/vnd.kubernetes.protobuf" => protobuf_body(body, api_version, kind_hint),
        "application/yaml" | "application/apply-patch+yaml" => decode_yaml_or_json(body),
        "" | "application/json" | "*/*" => serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("couldn't decode request body: {e}"))),
        b if PatchType::from_content_type(b).is_some() => serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}"))),
        other => Err(ApiError::unsupported_media_type(
            other,
            &[
                "application/json",
                "application/yaml",
                "application/vnd.kubernetes.protobuf",
            ],
        )),
    }
}

fn decode_yaml_or_json(body: &Bytes) -> Result<Value, ApiError> {
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        return Ok(v);
    }
    let text = std::str::from_utf8(body)
        .map_err(|e| ApiError::bad_request(format!("couldn't decode request body: {e}")))?;
    serde_saphyr::from_str::<Value>(text)
        .map_err(|e| ApiError::bad_request(format!("couldn't decode request body: {e}")))
}

fn write_opts(q: &Query, headers: &HeaderMap) -> Result<WriteOpts, ApiError> {
    let dry_run = match q.get("dryRun").map(String::as_str) {
        None | Some("") => false,
        Some("All") => true,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "Invalid dryRun value: {other}; supported values: [All]"
            )));
        }
    };
    Ok(WriteOpts {
        dry_run,
        validation: FieldValidation::parse(q.get("fieldValidation").map(String::as_str))?,
        field_manager: q.get("fieldManager").cloned().filter(|s| !s.is_empty()),
        force: truthy(q, "force"),
        update_manager: Some(super::field_manager::update_manager(
            q.get("fieldManager").map(String::as_str),
            header_str(headers, header::USER_AGENT),
        )),
        via_subresource: None,
        oracle: None,
    })
}

async fn resource(
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
            return Err(ApiError::path_not_found());
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
    if !rt.is_crud() {
        return if *method == Method::POST && p.name.is_none() {
            let obj = decode_body(headers, &body, &rt.api_version(&p.version), &rt.kind)?;
            let store = server.lock();
            reviews::review(&store, user, &t, obj).map(|v| json_response(201, &v))
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
            super::list::validate_watch(q)?;
            let filter = Filter::parse(
                &rt,
                &p.version,
                p.namespace.as_deref(),
                q.get("labelSelector").map(String::as_str),
                q.get("fieldSelector").map(String::as_str),
            )?;
            return Ok(watch::start(server, t, filter, q, accept));
        }
        (Method::GET, false) => {
            let filter = Filter::parse(
                &rt,
                &p.version,
                p.namespace.as_deref(),
                q.get("labelSelector").map(String::as_str),
                q.get("fieldSelector").map(String::as_str),
            )?;
            let mut list = {
                let store = server.lock();
                super::list::list(&store, &t, &filter, q)?
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
                std::borrow::Cow::Owned(super::scale::to_scale(
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
            let opts = write_opts(q, headers)?;
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
            let opts = write_opts(q, headers)?;
            let (w, hooked) = oracle::run(server, &t, user, obj, |store, oracle, obj| {
                escalation_check(store, user, &t, &obj, true)?;
                let opts = WriteOpts {
                    oracle,
                    ..opts.clone()
                };
                if is_scale {
                    super::scale_write::write_scale(store, &t, obj, UpdateKind::Put, &opts)
                } else {
                    ops::update(store, &t, obj, UpdateKind::Put, &opts)
                }
            })
            .await?;
            warnings.extend(w.warnings.iter().cloned());
            warnings.extend(hooked);
            let out = if is_scale {
                std::borrow::Cow::Owned(super::scale::to_scale(
                    &t,
                    &written_at_version(server, &t, &w.object).await?,
                ))
            } else {
                std::borrow::Cow::Owned(written_at_version(server, &t, &w.object).await?)
            };
            json_response(200, &out)
        }
        (Method::PATCH, true) => {
            let ct = header_str(headers, header::CONTENT_TYPE);
            let Some(ptype) = PatchType::from_content_type(ct) else {
                return Err(ApiError::unsupported_media_type(
                    ct,
                    &patch::accepted(rt.custom),
                ));
            };
            if ptype == PatchType::Strategic && rt.custom {
                return Err(ApiError::unsupported_media_type(ct, &patch::accepted(true)));
            }
            let opts = write_opts(q, headers)?;
            if opts.force && ptype != PatchType::Apply {
                return Err(ApiError::invalid(
                    "meta.k8s.io",
                    "PatchOptions",
                    "",
                    vec![super::error::StatusCause::new(
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
            let out = if is_scale {
                std::borrow::Cow::Owned(super::scale::to_scale(
                    &t,
                    &written_at_version(server, &t, &w.object).await?,
                ))
            } else {
                std::borrow::Cow::Owned(written_at_version(server, &t, &w.object).await?)
            };
            json_response(code, &out)
        }
        (Method::DELETE, true) => {
            let opts = delete_opts(&body, q)?;
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
            let filter = Filter::parse(
                &rt,
                &p.version,
                p.namespace.as_deref(),
                q.get("labelSelector").map(String::as_str),
                q.get("fieldSelector").map(String::as_str),
            )?;
            let opts = delete_opts(&body, q)?;
            let names: Vec<(String, String)> = {
                let store = server.lock();
                ops::list(&store, &t)
                    .iter()
                    .filter(|o| filter.matches(o))
                    .map(|o| (meta::namespace(o).to_string(), meta::name(o).to_string()))
                    .collect()
            };
            let mut items = Vec::new();
            for (ns, name) in names {
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
                    Ok((Deleted::Gone(_), hooked)) => warnings.extend(hooked),
                    Err(e) if e.code == 404 => {}
                    Err(e) => return Err(e),
                }
            }
            let rv = server.lock().rv;
            json_response(
                200,
                &json!({"kind": rt.list_kind, "apiVersion": rt.api_version(&p.version),
                        "metadata": {"resourceVersion": rv.to_string()}, "items": items}),
            )
        }
        _ => return Err(ApiError::method_not_allowed()),
    };
    Ok(with_warnings(resp, &warnings))
}

/// A stored object as a read at `t`'s version shows it (a conversion webhook call when the
/// CRD converts by webhook: errors are 500 with no reason, as kube-apiserver's reads fail).
async fn read_at_version<'a>(
    server: &EmbeddedServer,
    t: &Target,
    obj: &'a Value,
) -> Result<std::borrow::Cow<'a, Value>, ApiError> {
    if t.rt.conversion.is_none()
        || !webhook::crd_conversion::needs_conversion(obj, &t.rt.api_version(&t.version))
    {
        return Ok(ops::presented(&t.rt, &t.version, obj));
    }
    webhook::conversion::convert(server, &t.rt, vec![obj.clone()], &t.version, false)
        .await
        .map(|mut v| std::borrow::Cow::Owned(v.pop().unwrap_or(Value::Null)))
        .map_err(|e| ApiError::new(500, "", e))
}

/// The response object of a write at `t`'s version (conversion errors are InternalError, as
/// kube-apiserver's writes fail).
async fn written_at_version(
    server: &EmbeddedServer,
    t: &Target,
    obj: &Value,
) -> Result<Value, ApiError> {
    if t.rt.conversion.is_none()
        || !webhook::crd_conversion::needs_conversion(obj, &t.rt.api_version(&t.version))
    {
        return Ok(ops::presented(&t.rt, &t.version, obj).into_owned());
    }
    webhook::conversion::convert(server, &t.rt, vec![obj.clone()], &t.version, false)
        .await
        .map(|mut v| v.pop().unwrap_or(Value::Null))
        .map_err(ApiError::internal_error)
}

/// Converts the items of a list of a webhook-converted CRD in one ConversionReview.
async fn convert_list(
    server: &EmbeddedServer,
    t: &Target,
    list: &mut Value,
) -> Result<(), ApiError> {
    let Some(items) = list.get_mut("items").and_then(Value::as_array_mut) else {
        return Ok(());
    };
    let taken = std::mem::take(items);
    let converted = webhook::conversion::convert(server, &t.rt, taken, &t.version, true)
        .await
        .map_err(|e| ApiError::new(500, "", e))?;
    list["items"] = Value::Array(converted);
    Ok(())
}

/// RBAC escalation prevention for writes of roles and bindings by non-privileged users
/// (`update`: the stored object is the old one).
fn escalation_check(
    store: &super::store::Store,
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
fn guarded_rbac_write(user: &access::UserInfo, t: &Target) -> bool {
    t.rt.group == "rbac.authorization.k8s.io"
        && t.subresource.is_none()
        && !access::is_privileged(user)
}

fn delete_opts(body: &Bytes, q: &Query) -> Result<DeleteOpts, ApiError> {
    let b: Value = if body.is_empty() {
        json!({})
    } else {
        serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("couldn't decode DeleteOptions: {e}")))?
    };
    let dry_run = q.get("dryRun").is_some_and(|v| v == "All")
        || b.get("dryRun")
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(|v| v == "All"));
    let propagation = q
        .get("propagationPolicy")
        .cloned()
        .or_else(|| {
            b.get("propagationPolicy")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .or_else(
            || match b.get("orphanDependents").and_then(Value::as_bool) {
                Some(true) => Some("Orphan".to_string()),
                Some(false) => Some("Background".to_string()),
                None => None,
            },
        );
    if let Some(p) = &propagation
        && !matches!(p.as_str(), "Foreground" | "Background" | "Orphan")
    {
        return Err(ApiError::invalid(
            "meta.k8s.io",
            "DeleteOptions",
            "",
            vec![super::error::StatusCause::new(
                "FieldValueNotSupported",
                "propagationPolicy",
                format!(
                    "Unsupported value: \"{p}\": supported values: \"Foreground\", \"Background\", \"Orphan\""
                ),
            )],
        ));
    }
    Ok(DeleteOpts {
        propagation,
        precondition_uid: b
            .pointer("/preconditions/uid")
            .and_then(Value::as_str)
            .map(str::to_string),
        precondition_rv: b
            .pointer("/preconditions/resourceVersion")
            .and_then(Value::as_str)
            .map(str::to_string),
        dry_run,
        oracle: None,
    })
}

/// Applies a patch of any type to the stored object and runs the update strategy.
fn patch_object(
    store: &mut super::store::Store,
    t: &Target,
    ptype: PatchType,
    body: Value,
    opts: &WriteOpts,
) -> Result<(ops::Written, u16), ApiError> {
    if ptype == PatchType::Apply {
        return ssa::apply(store, t, body, opts);
    }
    let current = ops::get_shared(store, t)?;
    let is_scale = t.subresource.as_deref() == Some("scale");
    let base = if is_scale {
        super::scale::to_scale(t, &current)
    } else {
        ops::at_version(t, &current, opts.oracle.as_deref())?.into_owned()
    };
    let patched = apply_patch(t, ptype, base, &body)?;
    let w = if is_scale {
        super::scale_write::write_scale(store, t, patched, UpdateKind::Patch, opts)?
    } else {
        ops::update(store, t, patched, UpdateKind::Patch, opts)?
    };
    Ok((w, 200))
}

/// A non-apply patch body applied to `base` (the object as the client's version presents it).
fn apply_patch(t: &Target, ptype: PatchType, base: Value, body: &Value) -> Result<Value, ApiError> {
    match ptype {
        PatchType::Merge => patch::merge_into(base, body),
        PatchType::Json => patch::json_patch(&base, body),
        PatchType::Strategic => smp_patch(&base, body, &t.rt.kind),
        PatchType::Apply => Err(ApiError::internal("unreachable apply")),
    }
}

/// Optimistic attempts of [`patch_unlocked`] before it holds the lock throughout.
const OPTIMISTIC_ATTEMPTS: usize = 8;

/// A non-apply patch of the main resource or `/status`, computed outside the store lock: the
/// stored object is read, patched and run through the update strategy unlocked, and the result
/// is committed only if the object was not written meanwhile; otherwise the patch is computed
/// again from the newer object (kube-apiserver's patcher retries on conflict the same way). The
/// lock is held only to read and to commit, so concurrent writers do not queue behind each
/// other's admission and managedFields work. After [`OPTIMISTIC_ATTEMPTS`] lost races the patch
/// runs under the lock.
fn patch_unlocked(
    server: &EmbeddedServer,
    t: &Target,
    ptype: PatchType,
    body: Value,
    opts: &WriteOpts,
) -> Result<ops::Written, ApiError> {
    for _ in 0..OPTIMISTIC_ATTEMPTS {
        let current = ops::get_shared(&server.lock(), t)?;
        let base = ops::present(&t.rt, &t.version, (*current).clone());
        let patched = apply_patch(t, ptype, base, &body)?;
        let prepared = ops::prepare_update(t, Some(&current), patched, UpdateKind::Patch, opts)?;
        if let Ok(w) = ops::commit_if_unchanged(&mut server.lock(), t, prepared) {
            return Ok(w);
        }
    }
    let mut store = server.lock();
    patch_object(&mut store, t, ptype, body, opts).map(|(w, _)| w)
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        error_response(&self)
    }
}

/// Protobuf request bodies (kubectl ≥1.32), decoded by [`protobuf`].
fn protobuf_body(body: &[u8], api_version: &str, kind: &str) -> Result<Value, ApiError> {
    super::protobuf::decode_with_default(body, Some((api_version, kind))).map_err(|e| match e {
        super::protobuf::ProtoError::UnsupportedKind { .. } => ApiError::unsupported_media_type(
            "application/vnd.kubernetes.protobuf",
            &["application/json", "application/yaml"],
        ),
        other => ApiError::bad_request(format!("couldn't decode protobuf body: {other}")),
    })
}

/// Strategic merge patch for built-ins, by [`smp`].
fn smp_patch(original: &Value, patch: &Value, kind: &str) -> Result<Value, ApiError> {
    super::smp::apply(original, patch, kind).map_err(|e| ApiError::bad_request(e.to_string()))
}

//! HTTP front: path routing, body decoding, content negotiation and response encoding.

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::access::{self, Identity};
use super::client_cert::ClientCertAuthenticator;
use super::discovery;
use super::error::ApiError;
use super::metrics::{self, RequestLabels};
use super::openapi;
use super::query::{Query, parse_query};
use super::response::{error_response, json_response, throttled};
use super::state::EmbeddedServer;

mod authn;
mod body;
mod patching;
mod paths;
mod resource;

use self::authn::authenticate;
pub use self::body::MAX_BODY;
use self::body::*;
use self::paths::*;
use self::resource::*;

/// The `host:port` a TCP listener serves on, as a request extension (what `/api` advertises).
#[derive(Clone, Debug)]
pub struct ServingAddress(pub String);

/// Go's `http.NotFound`, what kube-apiserver answers for a path no API serves (an unknown
/// group, a path outside the APIs): plain text, not a Status.
fn page_not_found() -> Response {
    let mut r = Response::new(Body::from("404 page not found\n"));
    *r.status_mut() = StatusCode::NOT_FOUND;
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    h.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    r
}

/// Whether `group` is served by CRDs alone and none serves `version` (or `resource` there).
fn crd_group_misses(
    server: &EmbeddedServer,
    group: &str,
    version: &str,
    resource: Option<&str>,
) -> bool {
    if group.is_empty() {
        return false;
    }
    let store = server.lock();
    let reg = &store.registry;
    let in_group: Vec<_> = reg.all().filter(|t| t.group == group).collect();
    if in_group.is_empty() || in_group.iter().any(|t| !t.custom) {
        return false;
    }
    match resource {
        Some(r) => reg.lookup(group, version, r).is_none(),
        None => reg.in_group_version(group, version).is_empty(),
    }
}

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
        if !matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS) {
            faults
                .refused_writes()
                .record(&path, server.resource_version());
        }
        return if code == 429 {
            throttled(1)
        } else {
            error_response(&ApiError::internal("injected fault: internal error"))
        };
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
    let labels = MetricLabels::of(&routed, &parts.method, &query, &parts.headers, &path);
    let mutating = match &labels {
        Some(l) => l.mutating,
        None => Some(parts.method != Method::GET && parts.method != Method::HEAD),
    };
    let _inflight = server.metrics().in_flight(mutating);
    let address = parts
        .extensions
        .get::<ServingAddress>()
        .map(|a| a.0.clone())
        .unwrap_or_else(|| "127.0.0.1:0".to_string());
    let response = match dispatch(
        &server,
        &user,
        &parts.method,
        routed,
        &parts.headers,
        &query,
        bytes,
        &address,
    )
    .await
    {
        Ok(r) => r,
        Err(e) => error_response(&e),
    };
    let status = response.status().as_u16();
    if let Some(l) = labels {
        server.metrics().record(&l.borrowed(), status);
    }
    // A write the server failed (a webhook it could not call, a conversion that failed): as
    // with an injected fault, its writer's next write may land without it.
    if mutating == Some(true) && (status == 429 || status >= 500) {
        faults
            .refused_writes()
            .record(&path, server.resource_version());
    }
    response
}

/// What `apiserver_request_total` records of a request (`None`: not instrumented, as kube's
/// legacy discovery, `/`, `/version`, OpenAPI v2 and metrics handlers are not, though in flight
/// all the same), and its in-flight kind (`mutating`: `None` for watches, long-running).
struct MetricLabels {
    verb: &'static str,
    dry_run: &'static str,
    group: String,
    version: String,
    resource: String,
    subresource: String,
    scope: &'static str,
    component: &'static str,
    mutating: Option<bool>,
}

impl MetricLabels {
    /// kube's `CleanVerb`, `CleanScope` and `cleanDryRun` over the routed request.
    fn of(
        routed: &Route,
        method: &Method,
        q: &Query,
        headers: &HeaderMap,
        path: &str,
    ) -> Option<Self> {
        let read = *method == Method::GET || *method == Method::HEAD;
        match routed {
            Route::Resource(p) => {
                let named = p.name.is_some();
                let watch = read && super::query::truthy(q, "watch");
                let apply = header_str(headers, header::CONTENT_TYPE)
                    .starts_with("application/apply-patch+yaml");
                let verb = match *method {
                    _ if watch => "WATCH",
                    Method::GET | Method::HEAD if named => "GET",
                    Method::GET | Method::HEAD => "LIST",
                    Method::POST => "POST",
                    Method::PUT => "PUT",
                    Method::PATCH if apply => "APPLY",
                    Method::PATCH => "PATCH",
                    Method::DELETE if named => "DELETE",
                    Method::DELETE => "DELETECOLLECTION",
                    _ => "CONNECT",
                };
                let scope = if named || *method == Method::POST {
                    "resource"
                } else if p.namespace.is_some() {
                    "namespace"
                } else {
                    "cluster"
                };
                let dry_run = match q.get("dryRun").map(String::as_str) {
                    None | Some("") => "",
                    Some("All") => "All",
                    Some(_) => "invalid",
                };
                Some(Self {
                    verb,
                    dry_run,
                    group: p.group.clone(),
                    version: p.version.clone(),
                    resource: p.resource.clone(),
                    subresource: p.sub.clone().unwrap_or_default(),
                    scope,
                    component: "apiserver",
                    mutating: (!watch).then_some(!read),
                })
            }
            // kube instruments the root health checks (not their named sub-checks), the OpenAPI
            // v3 handlers and the aggregated discovery handlers, by path.
            Route::Health if matches!(path, "/healthz" | "/livez" | "/readyz") => {
                Some(Self::non_resource(path, "", read))
            }
            Route::OpenApiRoot => Some(Self::non_resource("openapi/v3", "", read)),
            Route::OpenApiGv(_) => Some(Self::non_resource("openapi/v3/", "", read)),
            Route::ApiVersions | Route::GroupList
                if discovery::wants_aggregated_v2(header_str(headers, header::ACCEPT)) =>
            {
                let p = if matches!(routed, Route::ApiVersions) {
                    "/api"
                } else {
                    "/apis"
                };
                Some(Self::non_resource(p, "apiserver", read))
            }
            _ => None,
        }
    }

    fn non_resource(subresource: &str, component: &'static str, read: bool) -> Self {
        Self {
            verb: "GET",
            dry_run: "",
            group: String::new(),
            version: String::new(),
            resource: String::new(),
            subresource: subresource.to_string(),
            scope: "",
            component,
            mutating: Some(!read),
        }
    }

    fn borrowed(&self) -> RequestLabels<'_> {
        RequestLabels {
            verb: self.verb,
            dry_run: self.dry_run,
            group: &self.group,
            version: &self.version,
            resource: &self.resource,
            subresource: &self.subresource,
            scope: self.scope,
            component: self.component,
        }
    }
}

#[allow(clippy::too_many_arguments)]
async fn dispatch(
    server: &EmbeddedServer,
    user: &access::UserInfo,
    method: &Method,
    routed: Route,
    headers: &HeaderMap,
    q: &Query,
    body: Bytes,
    address: &str,
) -> Result<Response, ApiError> {
    let accept = header_str(headers, header::ACCEPT);
    let read_only = |m: &Method| m == Method::GET || m == Method::HEAD;
    match routed {
        Route::Root if read_only(method) => {
            let store = server.lock();
            Ok(json_response(200, &discovery::root_paths(&store.registry)))
        }
        Route::Metrics if read_only(method) => {
            let mut r = Response::new(Body::from(server.metrics().text()));
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static(metrics::CONTENT_TYPE),
            );
            Ok(r)
        }
        Route::OpenApiV2 if read_only(method) => Ok(openapi_v2(server, headers)),
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
                Ok(json_response(200, &discovery::api_versions(address)))
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
        Route::Group(g) | Route::ResourceList(g, _) | Route::Resource(ResPath { group: g, .. })
            if !g.is_empty() && server.lock().registry.group_versions(&g).is_empty() =>
        {
            Ok(page_not_found())
        }
        // A CRD group is apiextensions' to serve: what no CRD defines there falls through to
        // the 404 page too (a built-in group answers the NotFound Status).
        Route::ResourceList(g, v) if crd_group_misses(server, &g, &v, None) => Ok(page_not_found()),
        Route::Resource(ref p)
            if crd_group_misses(server, &p.group, &p.version, Some(&p.resource)) =>
        {
            Ok(page_not_found())
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
            // kube-openapi writes the index without a Content-Type: Go sniffs text/plain.
            let mut r = json_response(
                200,
                &openapi::root(&store.registry, store.schema_generation),
            );
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; charset=utf-8"),
            );
            Ok(r)
        }
        Route::OpenApiGv(gv) if read_only(method) => {
            let store = server.lock();
            Ok(match openapi::group_version(&store.registry, &gv) {
                Some(d) => json_response(200, &d),
                // kube-openapi's 404 for a group version it has no document of: no body.
                None => {
                    let mut r = Response::new(Body::empty());
                    *r.status_mut() = StatusCode::NOT_FOUND;
                    r
                }
            })
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
            let manager = super::field_manager::update_manager(
                q.get("fieldManager").map(String::as_str),
                header_str(headers, header::USER_AGENT),
            );
            access::token_request(
                &store,
                server.tokens(),
                p.namespace.as_deref().unwrap_or_default(),
                p.name.as_deref().unwrap_or_default(),
                &body,
                &manager,
            )
            .map(|v| json_response(201, &v))
        }
        Route::Resource(p) => resource(server, user, method, p, headers, q, body).await,
        Route::NotFound => Ok(page_not_found()),
        _ => Err(ApiError::method_not_allowed()),
    }
}

/// `GET /openapi/v2` as kube-openapi's handler serves it: JSON or gnostic protobuf by `Accept`
/// (406 when neither is acceptable), `Vary: Accept`, a quoted `ETag` per encoding and 304 for a
/// matching `If-None-Match`.
fn openapi_v2(server: &EmbeddedServer, headers: &HeaderMap) -> Response {
    use std::hash::{Hash, Hasher};
    let Some(format) = openapi::v2_format(header_str(headers, header::ACCEPT)) else {
        let mut r = Response::new(Body::empty());
        *r.status_mut() = StatusCode::NOT_ACCEPTABLE;
        return r;
    };
    let doc = openapi::v2_document(&server.lock().registry);
    let (bytes, content_type) = match format {
        openapi::V2Format::Json => (
            serde_json::to_vec(&doc).unwrap_or_default(),
            "application/json",
        ),
        openapi::V2Format::Protobuf => (openapi::v2_protobuf(&doc), openapi::V2_PROTOBUF),
    };
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut h);
    let etag = format!("\"{:016X}\"", h.finish());
    let fresh = header_str(headers, header::IF_NONE_MATCH) == etag;
    let mut r = if fresh {
        let mut r = Response::new(Body::empty());
        *r.status_mut() = StatusCode::NOT_MODIFIED;
        r
    } else {
        Response::new(Body::from(bytes))
    };
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(header::VARY, HeaderValue::from_static("Accept"));
    if let Ok(v) = HeaderValue::from_str(&etag) {
        h.insert(header::ETAG, v);
    }
    r
}

fn aggregated_response(doc: &Value) -> Response {
    let mut r = json_response(200, doc);
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(discovery::AGGREGATED_V2),
    );
    r
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        error_response(&self)
    }
}

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

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        error_response(&self)
    }
}

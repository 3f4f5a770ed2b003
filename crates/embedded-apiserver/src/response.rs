//! Response encoding shared by the request handlers and watch: a JSON body, an `ApiError` as a
//! `Status` with its headers, webhook warnings as `Warning` headers.

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use serde_json::Value;

use super::error::ApiError;

pub fn json_response(code: u16, body: &Value) -> Response {
    // One buffer sized for a typical object: no regrowth while serializing.
    let mut bytes = Vec::with_capacity(1024);
    if serde_json::to_writer(&mut bytes, body).is_err() {
        bytes.clear();
    }
    let mut resp = Response::new(Body::from(bytes));
    *resp.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::OK);
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}

/// kube-apiserver's throttling answer (its max-in-flight and priority-and-fairness filters,
/// `tooManyRequests`): not a `Status` but Go's `http.Error`, a plain-text line with
/// `Retry-After`. Clients must tell throttling from the status code, not the body.
pub fn throttled(retry_after_secs: u64) -> Response {
    let mut resp = Response::new(Body::from("Too many requests, please try again later.\n"));
    *resp.status_mut() = StatusCode::TOO_MANY_REQUESTS;
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::RETRY_AFTER, HeaderValue::from(retry_after_secs));
    resp
}

pub fn error_response(e: &ApiError) -> Response {
    let mut resp = json_response(e.code, &e.status());
    for (k, v) in &e.headers {
        if let Ok(v) = HeaderValue::from_str(v) {
            resp.headers_mut().append(*k, v);
        }
    }
    resp
}

pub fn with_warnings(mut resp: Response, warnings: &[String]) -> Response {
    let mut seen: Vec<&String> = Vec::new();
    for w in warnings {
        if seen.contains(&w) {
            continue;
        }
        seen.push(w);
        if let Ok(v) = HeaderValue::from_str(&warning_header(w)) {
            resp.headers_mut().append(header::WARNING, v);
        }
    }
    resp
}

/// `299 - "<text>"`, as kube-apiserver's warning recorder writes it.
pub fn warning_header(w: &str) -> String {
    let escaped = w.replace('\\', "\\\\").replace('"', "\\\"");
    format!("299 - \"{escaped}\"")
}

//! Client-side retries for every `kube::Client` the tool builds (in-process and from a
//! kubeconfig): 429 honouring `Retry-After`, 5xx and connection errors with capped exponential
//! backoff and jitter, all within the policy's budget (the step deadline of a run).
//!
//! Non-idempotent requests: a retried create (POST) may have reached the server the first time;
//! when the retry answers 409 AlreadyExists and the stored object carries the same run label
//! (`capi-conformance.io/run`) as the request, the create succeeded and the stored object is
//! returned as `201 Created`. Requests that still fail when the budget is spent are reported to
//! the run's [`TroubleLog`] (when the client was built with one) so the run reports them as the
//! cause of inconclusive results.

pub mod forbidden;
mod policy;
pub mod trouble;

pub use policy::{RetryPolicy, idempotent, retry_after, retryable_status};
pub use trouble::TroubleLog;

use bytes::Bytes;
use capi_contract::model::labels::RUN_LABEL;
use http::{Method, Request, Response, StatusCode};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};
use kube::client::Body;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use tokio::time::Instant;
use tower::{Layer, Service};

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
/// The response body every retrying client hands to kube.
pub type RetryBody = UnsyncBoxBody<Bytes, BoxError>;

/// Adds retries to a service stack (outermost, so each attempt goes through auth again).
#[derive(Debug, Clone, Default)]
pub struct RetryLayer {
    pub policy: RetryPolicy,
    /// Where requests that failed past the budget are reported.
    pub trouble: Option<TroubleLog>,
}

impl RetryLayer {
    pub fn new(policy: RetryPolicy) -> Self {
        RetryLayer {
            policy,
            trouble: None,
        }
    }

    /// Reports requests that failed past the budget to `log`.
    pub fn reporting_to(mut self, log: &TroubleLog) -> Self {
        self.trouble = Some(log.clone());
        self
    }
}

impl<S> Layer<S> for RetryLayer {
    type Service = Retry<S>;

    fn layer(&self, inner: S) -> Retry<S> {
        Retry {
            inner: Arc::new(Mutex::new(inner)),
            policy: self.policy,
            trouble: self.trouble.clone(),
        }
    }
}

/// The retrying service. The inner service is shared (kube's stack is not `Clone`); it is
/// locked only to poll readiness and start a call, never across a response.
pub struct Retry<S> {
    inner: Arc<Mutex<S>>,
    policy: RetryPolicy,
    trouble: Option<TroubleLog>,
}

impl<S> Clone for Retry<S> {
    fn clone(&self) -> Self {
        Retry {
            inner: self.inner.clone(),
            policy: self.policy,
            trouble: self.trouble.clone(),
        }
    }
}

impl<S, B> Service<Request<Body>> for Retry<S>
where
    S: Service<Request<Body>, Response = Response<B>> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: hyper::body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Response<RetryBody>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Response<RetryBody>, BoxError>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        // Readiness of the inner service is awaited per attempt.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<Body>) -> Self::Future {
        Box::pin(send(
            self.inner.clone(),
            self.policy,
            self.trouble.clone(),
            req,
        ))
    }
}

/// A kube client over `service` (e.g. the embedded server's router) with retries.
pub fn client<S, B>(service: S, default_namespace: &str, layer: RetryLayer) -> kube::Client
where
    S: Service<Request<Body>, Response = Response<B>> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: hyper::body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    kube::Client::new(layer.layer(service), default_namespace)
}

/// Retrying clients of the embedded API server (whose own clients send each request once).
pub trait RetryingClient {
    /// A kube client talking to the server in-process (no socket), retrying throttled and
    /// failed requests with the default policy.
    fn retrying_client(&self) -> kube::Client {
        self.retrying_client_with(RetryPolicy::default())
    }

    /// [`Self::retrying_client`] with an explicit retry policy (a run's step deadline).
    fn retrying_client_with(&self, policy: RetryPolicy) -> kube::Client {
        self.retrying_client_layered(RetryLayer::new(policy))
    }

    /// [`Self::retrying_client`] with an explicit retry layer (policy and trouble log).
    fn retrying_client_layered(&self, layer: RetryLayer) -> kube::Client;
}

impl RetryingClient for embedded_apiserver::EmbeddedServer {
    fn retrying_client_layered(&self, layer: RetryLayer) -> kube::Client {
        client(self.router(), "default", layer)
    }
}

/// A kube client for a kubeconfig-derived configuration, with retries.
pub fn client_for_config(
    config: kube::Config,
    policy: RetryPolicy,
) -> Result<kube::Client, kube::Error> {
    Ok(kube::client::ClientBuilder::try_from(config)?
        .with_layer(&RetryLayer::new(policy))
        .build())
}

async fn attempt<S, B>(
    inner: &Arc<Mutex<S>>,
    req: Request<Body>,
) -> Result<Response<RetryBody>, BoxError>
where
    S: Service<Request<Body>, Response = Response<B>>,
    S::Error: Into<BoxError>,
    B: hyper::body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let mut req = Some(req);
    let call = futures::future::poll_fn(|cx| {
        let mut svc = inner.lock().unwrap_or_else(PoisonError::into_inner);
        match svc.poll_ready(cx) {
            Poll::Ready(Ok(())) => match req.take() {
                Some(r) => Poll::Ready(Ok(svc.call(r))),
                None => Poll::Ready(Err(BoxError::from("request already sent"))),
            },
            Poll::Ready(Err(e)) => Poll::Ready(Err(e.into())),
            Poll::Pending => Poll::Pending,
        }
    })
    .await?;
    let resp = call.await.map_err(Into::into)?;
    Ok(resp.map(|b| b.map_err(Into::into).boxed_unsync()))
}

async fn send<S, B>(
    inner: Arc<Mutex<S>>,
    policy: RetryPolicy,
    trouble: Option<TroubleLog>,
    req: Request<Body>,
) -> Result<Response<RetryBody>, BoxError>
where
    S: Service<Request<Body>, Response = Response<B>>,
    S::Error: Into<BoxError>,
    B: hyper::body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let (parts, body) = req.into_parts();
    // A streamed body cannot be replayed: one attempt.
    let Some(replay) = body.try_clone() else {
        return attempt(&inner, Request::from_parts(parts, body)).await;
    };
    let started = Instant::now();
    let deadline = started + policy.budget;
    let mut first = Some(body);
    let mut retries = 0u32;
    loop {
        let body = first
            .take()
            .or_else(|| replay.try_clone())
            .unwrap_or_else(Body::empty);
        let mut result = attempt(&inner, Request::from_parts(parts.clone(), body)).await;
        if let Ok(resp) = result {
            let (provider_webhook, resp) = webhook_failure(resp).await;
            if provider_webhook {
                return Ok(resp);
            }
            result = Ok(resp);
        }
        let status = result.as_ref().ok().map(|r| r.status());
        if let Some(status) = status
            && !retryable_status(status)
        {
            if retries > 0
                && parts.method == Method::POST
                && status == StatusCode::CONFLICT
                && let Some(created) = recover_create(&inner, &parts, replay.try_clone()).await
            {
                return Ok(created);
            }
            return result;
        }
        let (wait, cause) = match &result {
            Ok(resp) => {
                let wait = match retry_after(resp.headers()) {
                    Some(d) if resp.status() == StatusCode::TOO_MANY_REQUESTS => d,
                    _ => policy.backoff(retries),
                };
                (wait, format!("HTTP {}", resp.status()))
            }
            Err(e) => (policy.backoff(retries), format!("connection error: {e}")),
        };
        let now = Instant::now();
        if let Some(log) = &trouble {
            log.fault(now);
        }
        if now + wait > deadline {
            if let Some(log) = &trouble {
                log.record(trouble::Persistent {
                    at: now,
                    method: parts.method.to_string(),
                    path: parts.uri.path().to_string(),
                    cause,
                    attempts: retries + 1,
                    elapsed: now - started,
                });
            }
            return result;
        }
        drop(result);
        tokio::time::sleep(wait).await;
        retries += 1;
    }
}

/// Whether `resp` is kube-apiserver's 500 for a webhook it called for the request (`failed
/// calling webhook "…"`, `conversion webhook for … failed`): the provider's own webhook answered
/// wrong or not in time. Not retried and not recorded as server trouble: asking again asks the
/// same webhook, and the environment is not to blame. The response is returned whole.
async fn webhook_failure(resp: Response<RetryBody>) -> (bool, Response<RetryBody>) {
    if resp.status() != StatusCode::INTERNAL_SERVER_ERROR {
        return (false, resp);
    }
    let (head, body) = resp.into_parts();
    let bytes = match body.collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => {
            let body =
                futures::stream::once(async move { Err::<hyper::body::Frame<Bytes>, BoxError>(e) });
            let body = http_body_util::StreamBody::new(body).boxed_unsync();
            return (false, Response::from_parts(head, body));
        }
    };
    let text = String::from_utf8_lossy(&bytes);
    let provider_webhook =
        text.contains("failed calling webhook") || text.contains("conversion webhook for");
    let body = Full::new(bytes).map_err(|e| match e {}).boxed_unsync();
    (provider_webhook, Response::from_parts(head, body))
}

/// After a retried create answered 409: the stored object, as `201 Created`, when it carries the
/// request's run label (the first attempt created it); `None` otherwise.
async fn recover_create<S, B>(
    inner: &Arc<Mutex<S>>,
    parts: &http::request::Parts,
    sent: Option<Body>,
) -> Option<Response<RetryBody>>
where
    S: Service<Request<Body>, Response = Response<B>>,
    S::Error: Into<BoxError>,
    B: hyper::body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let bytes = sent?.collect_bytes().await.ok()?;
    let sent: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    let name = sent.pointer("/metadata/name")?.as_str()?;
    let run = sent.pointer("/metadata/labels")?.get(RUN_LABEL)?.as_str()?;
    let uri = format!("{}/{name}", parts.uri.path().trim_end_matches('/'));
    let mut get = Request::builder()
        .method(Method::GET)
        .uri(uri)
        .header(http::header::ACCEPT, "application/json")
        .body(Body::empty())
        .ok()?;
    *get.extensions_mut() = parts.extensions.clone();
    let resp = attempt(inner, get).await.ok()?;
    if resp.status() != StatusCode::OK {
        return None;
    }
    let (mut head, body) = resp.into_parts();
    let stored = body.collect().await.ok()?.to_bytes();
    let obj: serde_json::Value = serde_json::from_slice(&stored).ok()?;
    if obj.pointer("/metadata/labels")?.get(RUN_LABEL)?.as_str()? != run {
        return None;
    }
    head.status = StatusCode::CREATED;
    let body = Full::new(stored).map_err(|e| match e {}).boxed_unsync();
    Some(Response::from_parts(head, body))
}

#[cfg(test)]
mod tests;

//! RBAC denials seen by `check`: a client layer that records the first 403 whose Status says
//! the tool's identity lacks a permission, so `check` ends with `forbidden: <verb> <resource>
//! (<server message>)` and exit 2 instead of a verdict built on requests the cluster refused
//! (a scenario step that could not create its object would otherwise read as a provider
//! failure).

use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::future::BoxFuture;
use http::{Request, Response, StatusCode};
use http_body_util::BodyExt;
use http_body_util::combinators::UnsyncBoxBody;
use tower::{BoxError, Layer, Service};

/// One refused request: what was asked and what the API server said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denial {
    /// The RBAC verb (`get`, `list`, `watch`, `create`, `patch`, …).
    pub verb: String,
    /// `<plural>[.<group>][/<subresource>]`, as `kubectl auth can-i` names resources.
    pub resource: String,
    /// The namespace of the request (empty: cluster scope).
    pub namespace: String,
    /// The API server's Status message.
    pub message: String,
}

impl std::fmt::Display for Denial {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let scope = if self.namespace.is_empty() {
            String::new()
        } else {
            format!(" in namespace {}", self.namespace)
        };
        write!(
            f,
            "forbidden: {} {}{scope} ({}); grant it to the tool's identity (see `capi-conformance rbac`)",
            self.verb, self.resource, self.message
        )
    }
}

impl std::error::Error for Denial {}

/// Shared slot for the first denial of a run, and a signal that one was recorded (the run
/// stops there: whatever it would still do cannot give a verdict).
#[derive(Debug, Clone, Default)]
pub struct Denials(Arc<DenialSlot>);

#[derive(Debug, Default)]
struct DenialSlot {
    first: Mutex<Option<Denial>>,
    recorded: tokio::sync::Notify,
}

impl Denials {
    pub fn first(&self) -> Option<Denial> {
        match self.0.first.lock() {
            Ok(g) => g.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Completes once a denial is recorded (at once if one already was).
    pub async fn denied(&self) {
        loop {
            let recorded = self.0.recorded.notified();
            if self.first().is_some() {
                return;
            }
            recorded.await;
        }
    }

    fn record(&self, denial: Denial) {
        let mut slot = match self.0.first.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        if slot.is_none() {
            *slot = Some(denial);
            self.0.recorded.notify_waiters();
        }
    }
}

const ESCALATION: &str = "is attempting to grant RBAC permissions not currently held";

/// Whether a 403 Status message is an authorization denial (not e.g. a terminating namespace
/// refusing new content, which kube also answers with 403 Forbidden).
pub fn is_rbac_denial(message: &str) -> bool {
    message.contains("forbidden: User ") || message.contains(ESCALATION)
}

/// The denial a request/response pair describes.
pub fn denial(method: &http::Method, uri: &http::Uri, message: &str) -> Denial {
    let query = uri
        .query()
        .unwrap_or_default()
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let a = embedded_apiserver::access::request_attributes(method, uri.path(), &query);
    if message.contains(ESCALATION) {
        // Creating a binding without `bind` on its role (nor all of the role's permissions).
        return Denial {
            verb: "bind".into(),
            resource: "clusterroles.rbac.authorization.k8s.io".into(),
            namespace: a.namespace,
            message: message.to_string(),
        };
    }
    let resource = match &a.non_resource_path {
        Some(path) => path.clone(),
        None => {
            let mut r = a.resource.clone();
            if !a.group.is_empty() {
                r = format!("{r}.{}", a.group);
            }
            if !a.subresource.is_empty() {
                r = format!("{r}/{}", a.subresource);
            }
            r
        }
    };
    Denial {
        verb: a.verb,
        resource,
        namespace: a.namespace,
        message: message.to_string(),
    }
}

/// A kube client for `config` whose 403 denials are recorded in `denials`.
pub fn client(
    config: kube::Config,
    retry: crate::client_retry::RetryLayer,
    denials: &Denials,
) -> anyhow::Result<kube::Client> {
    let builder = kube::client::ClientBuilder::try_from(config)?;
    Ok(builder
        .with_layer(&retry)
        .with_layer(&RecordLayer {
            denials: denials.clone(),
        })
        .build())
}

#[derive(Clone)]
struct RecordLayer {
    denials: Denials,
}

impl<S> Layer<S> for RecordLayer {
    type Service = Record<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Record {
            inner,
            denials: self.denials.clone(),
        }
    }
}

#[derive(Clone)]
struct Record<S> {
    inner: S,
    denials: Denials,
}

type OutBody = UnsyncBoxBody<Bytes, BoxError>;

impl<S, B, ReqB> Service<Request<ReqB>> for Record<S>
where
    S: Service<Request<ReqB>, Response = Response<B>> + Send,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: hyper::body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Response<OutBody>;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<Self::Response, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, req: Request<ReqB>) -> Self::Future {
        let method = req.method().clone();
        let uri = req.uri().clone();
        let denials = self.denials.clone();
        let fut = self.inner.call(req);
        Box::pin(async move {
            let resp = fut.await.map_err(Into::into)?;
            if resp.status() != StatusCode::FORBIDDEN {
                return Ok(resp.map(|b| b.map_err(Into::into).boxed_unsync()));
            }
            let (parts, body) = resp.into_parts();
            let bytes = body.collect().await.map_err(Into::into)?.to_bytes();
            let message = serde_json::from_slice::<serde_json::Value>(&bytes)
                .ok()
                .and_then(|v| {
                    v.get("message")
                        .and_then(|m| m.as_str())
                        .map(str::to_string)
                })
                .unwrap_or_else(|| String::from_utf8_lossy(&bytes).into_owned());
            if is_rbac_denial(&message) {
                denials.record(denial(&method, &uri, &message));
            }
            let body = http_body_util::Full::new(bytes)
                .map_err(|never| match never {})
                .boxed_unsync();
            Ok(Response::from_parts(parts, body))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `denied` waits for the first denial (the run stops there), and returns at once after
    /// it; a second denial keeps the first.
    #[tokio::test]
    async fn denied_completes_once_the_first_denial_is_recorded() {
        let denials = Denials::default();
        let waiter = tokio::spawn({
            let d = denials.clone();
            async move { d.denied().await }
        });
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        assert!(!waiter.is_finished());
        let uri: http::Uri = "/api/v1/namespaces/run/secrets".parse().unwrap();
        denials.record(denial(&http::Method::POST, &uri, "first"));
        denials.record(denial(&http::Method::GET, &uri, "second"));
        let wait = std::time::Duration::from_secs(5);
        tokio::time::timeout(wait, waiter).await.unwrap().unwrap();
        tokio::time::timeout(wait, denials.denied()).await.unwrap();
        assert_eq!(denials.first().map(|d| d.message), Some("first".into()));
    }

    #[test]
    fn denial_names_verb_and_resource_like_kubectl_auth_can_i() {
        let uri: http::Uri = "/apis/cluster.x-k8s.io/v1beta2/namespaces/run/machines/m1/status"
            .parse()
            .unwrap();
        let d = denial(&http::Method::PATCH, &uri, "m");
        assert_eq!(d.verb, "patch");
        assert_eq!(d.resource, "machines.cluster.x-k8s.io/status");
        assert_eq!(d.namespace, "run");
        let uri: http::Uri = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?watch=true"
            .parse()
            .unwrap();
        let d = denial(&http::Method::GET, &uri, "no");
        assert_eq!(
            (d.verb.as_str(), d.resource.as_str()),
            ("watch", "customresourcedefinitions.apiextensions.k8s.io")
        );
        assert!(
            d.to_string().starts_with(
                "forbidden: watch customresourcedefinitions.apiextensions.k8s.io (no)"
            )
        );
        let uri: http::Uri = "/api/v1/namespaces/ns/secrets".parse().unwrap();
        let d = denial(&http::Method::POST, &uri, "no");
        assert_eq!(
            d.to_string().split(" (").next(),
            Some("forbidden: create secrets in namespace ns")
        );
    }

    #[test]
    fn only_authorization_denials_count() {
        assert!(is_rbac_denial(
            "secrets is forbidden: User \"u\" cannot list resource \"secrets\" in API group \"\" in the namespace \"n\""
        ));
        assert!(!is_rbac_denial(
            "secrets \"s\" is forbidden: unable to create new content in namespace n because it is being terminated"
        ));
    }

    #[test]
    fn first_denial_wins() {
        let d = Denials::default();
        assert_eq!(d.first(), None);
        let uri: http::Uri = "/api/v1/secrets".parse().unwrap();
        d.record(denial(&http::Method::GET, &uri, "a"));
        d.record(denial(&http::Method::POST, &uri, "b"));
        assert_eq!(d.first().map(|x| x.message), Some("a".to_string()));
    }
}

//! Shared helpers: an in-process server, raw HTTP through the router, the Widget fixture.

use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderMap, Method, Request};
use embedded_apiserver::{EmbeddedServer, ServerOptions};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;

pub struct Resp {
    pub code: u16,
    pub headers: HeaderMap,
    pub body: Value,
}

impl Resp {
    pub fn header(&self, name: &str) -> String {
        self.headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

pub struct H {
    pub server: EmbeddedServer,
}

pub const JSON: &str = "application/json";
pub const MERGE: &str = "application/merge-patch+json";
pub const JSONPATCH: &str = "application/json-patch+json";
pub const SMP: &str = "application/strategic-merge-patch+json";
pub const APPLY: &str = "application/apply-patch+yaml";
pub const W: &str = "/apis/example.com/v1/namespaces/default/widgets";

impl H {
    pub fn new() -> Self {
        Self::with(ServerOptions::default())
    }

    pub fn with(opts: ServerOptions) -> Self {
        Self {
            server: EmbeddedServer::new(opts),
        }
    }

    pub async fn widgets() -> Self {
        let h = Self::new();
        h.install_widgets().await;
        h
    }

    pub async fn install_widgets(&self) {
        let r = self
            .post(
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                widget_crd(),
            )
            .await;
        assert_eq!(r.code, 201, "{}", r.body);
        self.server
            .wait_established("widgets.example.com", Duration::from_secs(5))
            .await
            .unwrap();
    }

    pub async fn raw(
        &self,
        method: Method,
        path: &str,
        ct: &str,
        accept: &str,
        body: Vec<u8>,
    ) -> Resp {
        let mut b = Request::builder().method(method).uri(path);
        if !ct.is_empty() {
            b = b.header("content-type", ct);
        }
        if !accept.is_empty() {
            b = b.header("accept", accept);
        }
        let req = b.body(Body::from(body)).unwrap();
        let resp = self.server.router().oneshot(req).await.unwrap();
        let code = resp.status().as_u16();
        let headers = resp.headers().clone();
        let bytes = resp.into_body().collect().await.unwrap().to_bytes();
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()))
        };
        Resp {
            code,
            headers,
            body,
        }
    }

    pub async fn send(&self, method: Method, path: &str, ct: &str, body: Option<Value>) -> Resp {
        let bytes = body
            .map(|b| serde_json::to_vec(&b).unwrap())
            .unwrap_or_default();
        self.raw(method, path, ct, JSON, bytes).await
    }

    pub async fn get(&self, path: &str) -> Resp {
        self.send(Method::GET, path, "", None).await
    }

    pub async fn post(&self, path: &str, body: Value) -> Resp {
        self.send(Method::POST, path, JSON, Some(body)).await
    }

    pub async fn put(&self, path: &str, body: Value) -> Resp {
        self.send(Method::PUT, path, JSON, Some(body)).await
    }

    pub async fn patch(&self, path: &str, ct: &str, body: Value) -> Resp {
        self.send(Method::PATCH, path, ct, Some(body)).await
    }

    pub async fn delete(&self, path: &str) -> Resp {
        self.send(Method::DELETE, path, "", None).await
    }

    pub async fn delete_with(&self, path: &str, body: Value) -> Resp {
        self.send(Method::DELETE, path, JSON, Some(body)).await
    }

    /// Creates widget `name` with `spec`.
    pub async fn widget(&self, name: &str, spec: Value) -> Value {
        let r = self.post(W, json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name}, "spec": spec})).await;
        assert_eq!(r.code, 201, "{}", r.body);
        r.body
    }

    /// Opens a watch and returns a reader of its events.
    pub async fn watch(&self, path: &str) -> Watch {
        let req = Request::builder().uri(path).body(Body::empty()).unwrap();
        let resp = self.server.router().oneshot(req).await.unwrap();
        assert_eq!(resp.status().as_u16(), 200);
        Watch {
            body: resp.into_body(),
            buf: Vec::new(),
        }
    }
}

pub struct Watch {
    body: Body,
    buf: Vec<u8>,
}

impl Watch {
    /// Next event, or `None` on end of stream or after `wait`.
    pub async fn next_within(&mut self, wait: Duration) -> Option<Value> {
        loop {
            if let Some(pos) = self.buf.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=pos).collect();
                return Some(
                    serde_json::from_slice(&line[..line.len() - 1])
                        .expect("one JSON document per line"),
                );
            }
            match tokio::time::timeout(wait, self.body.frame()).await {
                Ok(Some(Ok(frame))) => {
                    if let Ok(data) = frame.into_data() {
                        self.buf.extend_from_slice(&data);
                    }
                }
                _ => return None,
            }
        }
    }

    pub async fn next(&mut self) -> Value {
        self.next_within(Duration::from_secs(5))
            .await
            .expect("a watch event")
    }

    /// True when the stream has ended (not merely idle).
    pub async fn ended_within(&mut self, wait: Duration) -> bool {
        matches!(
            tokio::time::timeout(wait, self.body.frame()).await,
            Ok(None)
        )
    }
}

pub fn widget_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wd"], "categories": ["all"]},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.selector"}},
                "additionalPrinterColumns": [{"name": "Size", "type": "string", "jsonPath": ".spec.size"}],
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": {"type": "object", "required": ["size"], "properties": {
                            "replicas": {"type": "integer", "minimum": 0},
                            "size": {"type": "string", "enum": ["small", "large"]},
                            "mode": {"type": "string", "default": "auto"}
                        }},
                        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
                    }
                }}
            }]
        }
    })
}

pub fn causes(body: &Value) -> Vec<(String, String)> {
    body["details"]["causes"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|c| {
                    (
                        c["field"].as_str().unwrap_or_default().to_string(),
                        c["reason"].as_str().unwrap_or_default().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

pub fn rv(obj: &Value) -> u64 {
    obj["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap()
}

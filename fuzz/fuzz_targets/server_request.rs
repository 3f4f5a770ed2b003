//! The embedded server's request decoding: method, path + query, Content-Type and body into
//! the in-process router. Must not panic, never answer 5xx, and every error is a JSON Status.
//! Input: byte 0 picks the method and Accept, then `<path?query>\n<content-type>\n<body>`.
#![no_main]

use embedded_apiserver::{EmbeddedServer, ServerOptions};
use http_body_util::BodyExt;
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use tower::ServiceExt;

const METHODS: [&str; 7] = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

struct Harness {
    rt: tokio::runtime::Runtime,
    server: EmbeddedServer,
}

fn harness() -> &'static Harness {
    static H: OnceLock<Harness> = OnceLock::new();
    H.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime");
        let server = {
            let _guard = rt.enter();
            EmbeddedServer::new(ServerOptions::default())
        };
        Harness { rt, server }
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let method = METHODS[usize::from(first) % METHODS.len()];
    let table = first & 0x80 != 0;
    let mut parts = rest.splitn(3, |b| *b == b'\n');
    let uri = String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
    let ct = String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
    let body = parts.next().unwrap_or_default().to_vec();
    let uri = if uri.starts_with('/') {
        uri
    } else {
        format!("/{uri}")
    };
    let mut req = http::Request::builder().method(method).uri(&uri);
    if !ct.is_empty() {
        req = req.header("content-type", ct.as_str());
    }
    if table {
        req = req.header(
            "accept",
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
        );
    }
    let Ok(req) = req.body(axum::body::Body::from(body)) else {
        return; // not a valid HTTP request (hyper refuses it before the router)
    };
    let h = harness();
    h.rt.block_on(async {
        let resp = match h.server.router().oneshot(req).await {
            Ok(r) => r,
            Err(never) => match never {},
        };
        let status = resp.status().as_u16();
        assert!(status < 500, "{method} {uri} ({ct}) answered {status}");
        if status >= 400 && method != "HEAD" {
            let collected = tokio::time::timeout(
                std::time::Duration::from_secs(5),
                resp.into_body().collect(),
            )
            .await
            .expect("error body ends");
            let bytes = collected.expect("error body").to_bytes();
            let v: serde_json::Value = serde_json::from_slice(&bytes).expect("error body is JSON");
            assert_eq!(v["kind"].as_str(), Some("Status"), "{method} {uri}: {v}");
        }
    });
});

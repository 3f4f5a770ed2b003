//! `GET /metrics` (docs/embedded-apiserver.md S9): the Prometheus text exposition
//! (`text/plain; version=0.0.4`) of the two apiserver metrics tools read most, with
//! kube-apiserver's names, help texts and label names (`k8s.io/apiserver/pkg/endpoints/metrics`):
//!
//! - `apiserver_request_total{code,component,dry_run,group,resource,scope,subresource,verb,version}`,
//!   one count per request the API handlers answered (resource requests: component `apiserver`,
//!   kube's verbs `GET`/`LIST`/`WATCH`/`POST`/`PUT`/`PATCH`/`APPLY`/`DELETE`/`DELETECOLLECTION`,
//!   scope `resource`/`namespace`/`cluster`; the non-resource handlers kube instruments, with
//!   verb `GET` and their path as `subresource`: the root health checks (`/healthz`, `/livez`,
//!   `/readyz`), OpenAPI v3 (`openapi/v3`, `openapi/v3/`) and aggregated discovery (`/api`,
//!   `/apis`, component `apiserver`));
//! - `apiserver_current_inflight_requests{request_kind}`, `readOnly` and `mutating` requests being
//!   served now (watches, long-running, are not counted, as in kube's max-in-flight filter).
//!
//! A request costs one label lookup (a read lock on a hash map) and atomic increments.

use prometheus::{Encoder, IntCounterVec, IntGaugeVec, Opts, Registry, TextEncoder};

/// The Content-Type of the text exposition format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The labels of one `apiserver_request_total` series.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestLabels<'a> {
    pub verb: &'a str,
    pub dry_run: &'a str,
    pub group: &'a str,
    pub version: &'a str,
    pub resource: &'a str,
    pub subresource: &'a str,
    pub scope: &'a str,
    pub component: &'a str,
}

/// The metrics of one server.
pub struct Metrics {
    registry: Registry,
    requests: IntCounterVec,
    inflight: IntGaugeVec,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

/// Decrements the in-flight gauge it was taken from when dropped.
pub struct InflightGuard(Option<prometheus::IntGauge>);

impl Drop for InflightGuard {
    fn drop(&mut self) {
        if let Some(g) = &self.0 {
            g.dec();
        }
    }
}

impl Metrics {
    pub fn new() -> Self {
        let registry = Registry::new();
        let requests = IntCounterVec::new(
            Opts::new(
                "apiserver_request_total",
                "[STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
            ),
            &[
                "code",
                "component",
                "dry_run",
                "group",
                "resource",
                "scope",
                "subresource",
                "verb",
                "version",
            ],
        )
        .expect("valid metric");
        let inflight = IntGaugeVec::new(
            Opts::new(
                "apiserver_current_inflight_requests",
                "[STABLE] Maximal number of currently used inflight request limit of this apiserver per request kind in last second.",
            ),
            &["request_kind"],
        )
        .expect("valid metric");
        registry
            .register(Box::new(requests.clone()))
            .expect("registered once");
        registry
            .register(Box::new(inflight.clone()))
            .expect("registered once");
        // Both request kinds are exposed from the start, as kube does.
        inflight.with_label_values(&["mutating"]).set(0);
        inflight.with_label_values(&["readOnly"]).set(0);
        Self {
            registry,
            requests,
            inflight,
        }
    }

    /// Counts one answered request.
    pub fn record(&self, l: &RequestLabels<'_>, code: u16) {
        let buf = itoa_buf(code);
        let code = code_str(&buf);
        self.requests
            .with_label_values(&[
                code,
                l.component,
                l.dry_run,
                l.group,
                l.resource,
                l.scope,
                l.subresource,
                l.verb,
                l.version,
            ])
            .inc();
    }

    /// Counts a request in flight until the guard is dropped (`None`: long-running, not counted).
    pub fn in_flight(&self, mutating: Option<bool>) -> InflightGuard {
        InflightGuard(mutating.map(|m| {
            let g = self
                .inflight
                .with_label_values(&[if m { "mutating" } else { "readOnly" }]);
            g.inc();
            g
        }))
    }

    /// The text exposition of every metric.
    pub fn text(&self) -> String {
        let mut out = Vec::new();
        // Encoding into a Vec cannot fail for well-formed metrics.
        let _ = TextEncoder::new().encode(&self.registry.gather(), &mut out);
        String::from_utf8(out).unwrap_or_default()
    }
}

fn itoa_buf(code: u16) -> [u8; 3] {
    let c = code.min(999);
    [
        b'0' + (c / 100) as u8,
        b'0' + (c / 10 % 10) as u8,
        b'0' + (c % 10) as u8,
    ]
}

fn code_str(buf: &[u8; 3]) -> &str {
    std::str::from_utf8(buf).unwrap_or("0")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_requests_with_kubes_labels_and_exposes_text() {
        let m = Metrics::new();
        let l = RequestLabels {
            verb: "LIST",
            group: "",
            version: "v1",
            resource: "namespaces",
            scope: "cluster",
            component: "apiserver",
            ..Default::default()
        };
        m.record(&l, 200);
        m.record(&l, 200);
        {
            let _g = m.in_flight(Some(true));
            assert!(
                m.text()
                    .contains("apiserver_current_inflight_requests{request_kind=\"mutating\"} 1")
            );
        }
        let text = m.text();
        assert!(
            text.contains("# TYPE apiserver_request_total counter"),
            "{text}"
        );
        assert!(
            text.contains("apiserver_request_total{code=\"200\",component=\"apiserver\",dry_run=\"\",group=\"\",resource=\"namespaces\",scope=\"cluster\",subresource=\"\",verb=\"LIST\",version=\"v1\"} 2"),
            "{text}"
        );
        assert!(text.contains("apiserver_current_inflight_requests{request_kind=\"mutating\"} 0"));
        assert_eq!(code_str(&itoa_buf(404)), "404");
    }
}

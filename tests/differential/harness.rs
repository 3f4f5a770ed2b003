//! The recorder of the differential test: each request goes to both servers (with each one's
//! kubeconfig credentials), the two answers are normalised and compared, and every difference is
//! kept with where it is (`status`, `header content-type`, `body/metadata/labels/x`, …).
//!
//! Normalised (values that differ between any two runs of one server): uids, RFC 3339 times
//! (creationTimestamp, managedFields times, conditions' lastTransitionTime, …), resourceVersions,
//! continue tokens, the five characters `generateName` adds, the server's own address, the
//! resource versions inside kube's "too old resource version" and precondition messages, the
//! `?hash=` of OpenAPI v3 URLs (an opaque cache key, computed differently). Watches are compared
//! without their periodic bookmarks (sent when the server's timer says; the initial-events-end
//! bookmark is compared); managedFields entries are matched by manager, operation and
//! subresource, not by their order (by time in seconds). Nothing else is dropped:
//! a field, header, group or resource only one server has is a difference.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use http::{Method, Request};
use http_body_util::BodyExt;
use serde_json::Value;

#[path = "harness/compare.rs"]
mod compare;
use compare::compare_resps;
use compare::{diff, normalise};

/// The headers clients read; the others (Date, Audit-Id, Content-Length, Cache-Control, the
/// priority-and-fairness uids) are not compared.
const COMPARED_HEADERS: &[&str] = &["content-type", "warning", "retry-after", "location"];

/// One server under comparison.
pub struct Target {
    pub name: &'static str,
    pub client: kube::Client,
    pub kubeconfig: PathBuf,
    /// `host:port`, replaced by `<server>` in bodies.
    server: String,
    /// Values captured from this server's answers, substituted for `${name}` in later requests.
    pub vars: BTreeMap<String, String>,
}

impl Target {
    pub async fn new(name: &'static str, kubeconfig: &Path) -> Target {
        let kc = kube::config::Kubeconfig::read_from(kubeconfig).unwrap();
        let mut config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
            .await
            .unwrap();
        // Every answer as the server gave it: no retries of 429/503.
        config.default_retry = false;
        config.read_timeout = Some(Duration::from_secs(30));
        let server = config
            .cluster_url
            .authority()
            .map(|a| a.to_string())
            .unwrap_or_default();
        Target {
            name,
            client: kube::Client::try_from(config).unwrap(),
            kubeconfig: kubeconfig.to_path_buf(),
            server,
            vars: BTreeMap::new(),
        }
    }

    /// `text` with `${name}` replaced by this server's captured values.
    pub fn subst(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (k, v) in &self.vars {
            out = out.replace(&format!("${{{k}}}"), v);
            out = out.replace(&format!("%24%7B{k}%7D"), v);
        }
        out
    }

    fn subst_value(&self, v: &Value) -> Value {
        match v {
            Value::String(s) => Value::String(self.subst(s)),
            Value::Array(a) => Value::Array(a.iter().map(|x| self.subst_value(x)).collect()),
            Value::Object(o) => Value::Object(
                o.iter()
                    .map(|(k, x)| (k.clone(), self.subst_value(x)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    /// The server's answer to `req` (a watch read as the request says).
    async fn send(&self, req: &Req) -> Resp {
        let uri = self.subst(&req.uri);
        let mut builder = Request::builder().method(req.method.clone()).uri(&uri);
        for (k, v) in &req.headers {
            builder = builder.header(k.as_str(), self.subst(v));
        }
        let body = match &req.body {
            ReqBody::None => Vec::new(),
            ReqBody::Json(v) => serde_json::to_vec(&self.subst_value(v)).unwrap(),
            ReqBody::Raw(b) => self.subst(b).into_bytes(),
        };
        let request = builder.body(kube::client::Body::from(body)).unwrap();
        let response = match self.client.send(request).await {
            Ok(r) => r,
            Err(e) => {
                return Resp {
                    status: 0,
                    headers: BTreeMap::new(),
                    body: Value::String(format!("request failed: {e}")),
                };
            }
        };
        let status = response.status().as_u16();
        let mut headers: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (k, v) in response.headers() {
            if COMPARED_HEADERS.contains(&k.as_str()) {
                headers
                    .entry(k.as_str().to_string())
                    .or_default()
                    .push(String::from_utf8_lossy(v.as_bytes()).into_owned());
            }
        }
        let mut body = response.into_body();
        let body = match req.watch {
            Some((events, within)) => {
                let deadline = tokio::time::Instant::now() + within;
                let mut buf = Vec::new();
                let mut end = "open at the reading deadline";
                loop {
                    if buf.iter().filter(|b| **b == b'\n').count() >= events {
                        end = "open after the events read";
                        break;
                    }
                    match tokio::time::timeout_at(deadline, body.frame()).await {
                        Ok(Some(Ok(frame))) => {
                            if let Ok(data) = frame.into_data() {
                                buf.extend_from_slice(&data);
                            }
                        }
                        Ok(Some(Err(_))) => {
                            end = "broken";
                            break;
                        }
                        Ok(None) => {
                            end = "closed by the server";
                            break;
                        }
                        Err(_) => break,
                    }
                }
                let text = String::from_utf8_lossy(&buf);
                let events: Vec<Value> = text
                    .split_terminator('\n')
                    .take(events)
                    .map(|l| {
                        serde_json::from_str(l)
                            .unwrap_or_else(|_| Value::String(format!("not JSON: {l}")))
                    })
                    .filter(|e: &Value| !periodic_bookmark(e))
                    .collect();
                if status == 200 {
                    serde_json::json!({"events": events, "stream": end})
                } else {
                    parse_body(text.as_bytes())
                }
            }
            None => match body.collect().await {
                Ok(b) => parse_body(&b.to_bytes()),
                Err(e) => Value::String(format!("body failed: {e}")),
            },
        };
        Resp {
            status,
            headers,
            body,
        }
    }
}

/// A BOOKMARK other than the initial-events-end one: sent when the server's timer says
/// ("at the server's discretion", kube's cacher about a second before a watch times out), so
/// not compared.
fn periodic_bookmark(e: &Value) -> bool {
    e["type"] == "BOOKMARK"
        && e.pointer("/object/metadata/annotations/k8s.io~1initial-events-end")
            .is_none()
}

fn parse_body(bytes: &[u8]) -> Value {
    if bytes.is_empty() {
        return Value::Null;
    }
    match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(_) => match std::str::from_utf8(bytes) {
            Ok(s) => Value::String(s.to_string()),
            Err(_) => Value::String(format!("<{} bytes, not UTF-8>", bytes.len())),
        },
    }
}

/// One answer.
#[derive(Clone, Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: BTreeMap<String, Vec<String>>,
    /// JSON, or a string for any other body, `{"events": […], "stream": …}` for a watch.
    pub body: Value,
}

enum ReqBody {
    None,
    Json(Value),
    Raw(String),
}

type Until = Box<dyn Fn(&Resp) -> bool + Send + Sync>;

/// A request, with what to do with its answer.
pub struct Req {
    method: Method,
    uri: String,
    headers: Vec<(String, String)>,
    body: ReqBody,
    watch: Option<(usize, Duration)>,
    until: Option<(Until, Duration)>,
    captures: Vec<(String, String)>,
    label: Option<String>,
    focus: Option<Focus>,
}

type Focus = Box<dyn Fn(&Value) -> Value + Send + Sync>;

fn req(method: Method, uri: &str) -> Req {
    Req {
        method,
        uri: uri.to_string(),
        headers: vec![("user-agent".into(), "differential/v0.0.0".into())],
        body: ReqBody::None,
        watch: None,
        until: None,
        captures: Vec::new(),
        label: None,
        focus: None,
    }
}

/// The request kube-rs builds (`kube::core::Request`: the query, content type and body its `Api`
/// methods send).
pub fn kube(r: http::Request<Vec<u8>>) -> Req {
    let (parts, body) = r.into_parts();
    let mut out = req(parts.method, &parts.uri.to_string());
    for (k, v) in &parts.headers {
        out = out.header(k.as_str(), &String::from_utf8_lossy(v.as_bytes()));
    }
    if !body.is_empty() {
        out.body = ReqBody::Raw(String::from_utf8_lossy(&body).into_owned());
    }
    out
}

pub fn get(uri: &str) -> Req {
    req(Method::GET, uri)
}

pub fn post(uri: &str, body: Value) -> Req {
    req(Method::POST, uri)
        .header("content-type", "application/json")
        .json(body)
}

/// A PATCH with the given content type (`merge`, `json`, `strategic`, `apply` or a full type).
pub fn patch(uri: &str, kind: &str, body: Value) -> Req {
    let ct = match kind {
        "merge" => "application/merge-patch+json",
        "json" => "application/json-patch+json",
        "strategic" => "application/strategic-merge-patch+json",
        "apply" => "application/apply-patch+yaml",
        other => other,
    };
    req(Method::PATCH, uri)
        .header("content-type", ct)
        .json(body)
}

pub fn delete(uri: &str) -> Req {
    req(Method::DELETE, uri)
}

impl Req {
    pub fn header(mut self, k: &str, v: &str) -> Req {
        self.headers.retain(|(h, _)| !h.eq_ignore_ascii_case(k));
        self.headers.push((k.to_ascii_lowercase(), v.to_string()));
        self
    }

    pub fn accept(self, v: &str) -> Req {
        self.header("accept", v)
    }

    pub fn json(mut self, body: Value) -> Req {
        self.body = ReqBody::Json(body);
        self
    }

    /// A body sent as is (YAML, bad JSON).
    pub fn raw(mut self, content_type: &str, body: &str) -> Req {
        self.body = ReqBody::Raw(body.to_string());
        self.header("content-type", content_type)
    }

    /// Reads a watch: at most `events` events, for at most `within`.
    pub fn watch(mut self, events: usize, within: Duration) -> Req {
        self.watch = Some((events, within));
        self
    }

    /// Repeats the request (every 100 ms, for at most `within`) until `until` holds; the last
    /// answer is compared.
    pub fn until(
        mut self,
        within: Duration,
        until: impl Fn(&Resp) -> bool + Send + Sync + 'static,
    ) -> Req {
        self.until = Some((Box::new(until), within));
        self
    }

    /// Keeps the string at `pointer` of each server's answer as `${var}` for later requests.
    pub fn capture(mut self, var: &str, pointer: &str) -> Req {
        self.captures.push((var.to_string(), pointer.to_string()));
        self
    }

    /// Compares only what `focus` takes from each body (a CRD's part of a document listing
    /// everything the server serves); said in the request's label.
    pub fn focus(mut self, focus: impl Fn(&Value) -> Value + Send + Sync + 'static) -> Req {
        self.focus = Some(Box::new(focus));
        self
    }

    /// The name of the comparison (default: method and path).
    pub fn label(mut self, label: &str) -> Req {
        self.label = Some(label.to_string());
        self
    }

    fn id(&self) -> String {
        match &self.label {
            Some(l) => l.clone(),
            None => format!("{} {}", self.method, self.uri),
        }
    }
}

/// A difference at one place of one comparison.
#[derive(Clone, Debug)]
pub struct Diff {
    pub at: String,
    pub real: String,
    pub embedded: String,
}

/// One comparison: a request, a kubectl command, a Python call.
#[derive(Debug)]
pub struct Unit {
    pub trace: String,
    pub id: String,
    pub diffs: Vec<Diff>,
}

/// Sends requests to both servers and keeps the comparisons.
pub struct Recorder {
    pub real: Target,
    pub emb: Target,
    pub trace: String,
    pub units: Vec<Unit>,
    /// Traces skipped (their tools missing), with why.
    pub skipped: Vec<(String, String)>,
}

impl Recorder {
    pub fn new(real: Target, emb: Target) -> Recorder {
        Recorder {
            real,
            emb,
            trace: String::new(),
            units: Vec::new(),
            skipped: Vec::new(),
        }
    }

    pub fn trace(&mut self, name: &str) {
        self.trace = name.to_string();
    }

    /// Sends `req` to both servers, compares the answers and returns them (real, embedded).
    pub async fn send(&mut self, req: Req) -> (Resp, Resp) {
        let (a, b) = tokio::join!(run(&self.real, &req), run(&self.emb, &req));
        let mut diffs = Vec::new();
        if let (Some(w), None) | (None, Some(w)) = (&a.1, &b.1) {
            let (ra, rb) = if a.1.is_some() {
                (w.clone(), "reached".to_string())
            } else {
                ("reached".to_string(), w.clone())
            };
            diffs.push(Diff {
                at: "condition".into(),
                real: ra,
                embedded: rb,
            });
        }
        let (mut a, mut b) = (a.0, b.0);
        for (var, pointer) in &req.captures {
            for (t, r) in [(&mut self.real, &a), (&mut self.emb, &b)] {
                let v = match r.body.pointer(pointer) {
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                    None => String::new(),
                };
                t.vars.insert(var.clone(), v);
            }
        }
        if let Some(f) = &req.focus {
            a.body = f(&a.body);
            b.body = f(&b.body);
        }
        diffs.extend(compare_resps(&a, &b, &self.real.server, &self.emb.server));
        self.record(req.id(), diffs);
        (a, b)
    }

    /// Compares two values obtained some other way (a client's output) as bodies.
    pub fn compare(&mut self, id: &str, real: &Value, emb: &Value) {
        let mut diffs = Vec::new();
        diff(
            "",
            &normalise(real, &self.real.server),
            &normalise(emb, &self.emb.server),
            &mut diffs,
        );
        self.record(id.to_string(), diffs);
    }

    pub fn record(&mut self, id: String, diffs: Vec<Diff>) {
        self.units.push(Unit {
            trace: self.trace.clone(),
            id,
            diffs,
        });
    }
}

/// Sends `req` to `t`, repeating it while its condition does not hold; the answer and, when
/// the condition was never met, a note saying so.
async fn run(t: &Target, req: &Req) -> (Resp, Option<String>) {
    let Some((until, within)) = &req.until else {
        return (t.send(req).await, None);
    };
    let start = Instant::now();
    loop {
        let r = t.send(req).await;
        if until(&r) {
            return (r, None);
        }
        if start.elapsed() >= *within {
            return (r, Some(format!("not reached within {within:?}")));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

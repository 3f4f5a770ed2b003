//! Watch streams (docs/embedded-apiserver.md M8): replay from a resourceVersion, in-stream 410, selector
//! transitions, bookmarks, sendInitialEvents, timeoutSeconds; one `\n`-terminated JSON per event.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, header};
use axum::response::Response;
use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;

use super::error::ApiError;
use super::filter::Filter;
use super::meta;
use super::ops::{self, Target};
use super::query::Query;
use super::state::EmbeddedServer;
use super::store::{EventType, StoreEvent};
use super::table;

/// Default server-side watch timeout when the client gives none (kube's min-request-timeout).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1800);

/// How watch events are rendered.
#[derive(Clone)]
struct Render {
    target: Target,
    table: bool,
    metadata: bool,
}

impl Render {
    fn line(&self, type_: &str, obj: Value) -> Bytes {
        let obj = if type_ == "ERROR" || type_ == "BOOKMARK" {
            obj
        } else {
            let presented = super::target::present(&self.target.rt, &self.target.version, obj);
            if self.table {
                table::object_table(&self.target, &presented)
            } else if self.metadata {
                table::partial(&presented)
            } else {
                presented
            }
        };
        let mut bytes =
            serde_json::to_vec(&json!({"type": type_, "object": obj})).unwrap_or_default();
        bytes.push(b'\n');
        Bytes::from(bytes)
    }

    fn bookmark(&self, rv: u64, initial_end: bool) -> Bytes {
        // kube ≥ 1.35 leaves an unset creationTimestamp out (omitzero), typed or not.
        let mut md = json!({"resourceVersion": rv.to_string()});
        if initial_end {
            md["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        let obj = json!({
            "kind": self.target.rt.kind,
            "apiVersion": self.target.rt.api_version(&self.target.version),
            "metadata": md,
        });
        self.line("BOOKMARK", obj)
    }
}

/// What one stored event means for a filtered watcher.
fn translate(filter: &Filter, t: &Target, ev: &StoreEvent) -> Option<(&'static str, Value)> {
    if ev.group != t.rt.group || ev.resource != t.rt.resource {
        return None;
    }
    let now = filter.matches(&ev.object);
    let before = ev.old.as_ref().is_some_and(|o| filter.matches(o));
    match ev.type_ {
        EventType::Added => now.then(|| ("ADDED", (*ev.object).clone())),
        EventType::Deleted => now.then(|| ("DELETED", ev.object_at_rv())),
        EventType::Modified => match (before, now) {
            (true, true) => Some(("MODIFIED", (*ev.object).clone())),
            (false, true) => Some(("ADDED", (*ev.object).clone())),
            (true, false) => {
                let mut old = ev.old.as_deref().cloned().unwrap_or_default();
                meta::set_meta(&mut old, "resourceVersion", json!(ev.rv.to_string()));
                Some(("DELETED", old))
            }
            (false, false) => None,
        },
    }
}

fn parse_rv(s: Option<&String>) -> Result<Option<u64>, ApiError> {
    match s.map(String::as_str) {
        None | Some("") => Ok(None),
        Some(v) => v
            .parse::<u64>()
            .map(Some)
            // A 500 without a reason, as the watch cache refuses it.
            .map_err(|_| ApiError::new(500, "", crate::list::rv_syntax_error(v))),
    }
}

fn error_line(e: &ApiError) -> Bytes {
    let mut bytes =
        serde_json::to_vec(&json!({"type": "ERROR", "object": e.status()})).unwrap_or_default();
    bytes.push(b'\n');
    Bytes::from(bytes)
}

fn stream_response(body: Body) -> Response {
    let mut resp = Response::new(body);
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache, private"),
    );
    resp
}

/// One initial event: rendered already, or waiting for its conversion.
enum Initial {
    Line(Bytes),
    Event(&'static str, Value),
}

/// A watch event object at the watch's version (a conversion review per event and watcher, unless
/// a webhook server of this process converted that stored version already); None when
/// the conversion webhook failed.
async fn converted(server: &EmbeddedServer, t: &Target, obj: Value) -> Option<Value> {
    super::webhook::conversion::convert_stored(server, &t.rt, vec![obj], &t.version, false)
        .await
        .ok()
        .and_then(|mut v| v.pop())
}

/// Starts a watch; always answers 200 with a stream (errors become an ERROR event).
pub fn start(
    server: &EmbeddedServer,
    t: Target,
    filter: Filter,
    q: &Query,
    accept: &str,
) -> Response {
    let render = Render {
        target: t.clone(),
        table: table::wants_table(accept),
        metadata: table::wants_metadata(accept),
    };
    let rv = match parse_rv(q.get("resourceVersion")) {
        Ok(rv) => rv,
        Err(e) => return super::response::error_response(&e),
    };
    // kube ≥ 1.34 (WatchList): a watch from "" or "0" that says neither sendInitialEvents nor
    // resourceVersionMatch is defaulted to sendInitialEvents=true (SetListOptionsDefaults), so
    // with bookmarks it ends its initial events with the initial-events-end bookmark.
    let legacy = matches!(rv, None | Some(0))
        && !q.contains_key("sendInitialEvents")
        && q.get("resourceVersionMatch").is_none_or(String::is_empty);
    let send_initial = legacy
        || matches!(
            q.get("sendInitialEvents").map(String::as_str),
            Some("true" | "1")
        );
    let bookmarks = matches!(
        q.get("allowWatchBookmarks").map(String::as_str),
        Some("true" | "1")
    );
    let timeout = q
        .get("timeoutSeconds")
        .and_then(|s| s.parse::<u64>().ok())
        .map(Duration::from_secs)
        .unwrap_or(DEFAULT_TIMEOUT);
    let drop_after = server.faults().drop_watch_after();
    let dropping = drop_after.is_some_and(|d| d < timeout);
    let deadline = tokio::time::Instant::now() + drop_after.map_or(timeout, |d| d.min(timeout));
    let faults_server = server.clone();
    let bookmark_every = server.options().bookmark_interval;

    // Snapshot + subscription under one lock: no gap, no duplicate. Events of a kind converted
    // by webhook are rendered in the stream, after their (per event) conversion.
    let converting = t.rt.conversion.is_some();
    let mut initial: Vec<Initial> = Vec::new();
    let event = |ty: &'static str, obj: Value| {
        if converting {
            Initial::Event(ty, obj)
        } else {
            Initial::Line(render.line(ty, obj))
        }
    };
    let (mut rx, start_rv) = {
        let store = server.lock();
        let rx = store.subscribe();
        let current = store.rv;
        let resume = rv.filter(|r| *r != 0 && !send_initial);
        match resume {
            None => {
                for obj in ops::list(&store, &t)
                    .into_iter()
                    .filter(|o| filter.matches(o))
                {
                    initial.push(event("ADDED", obj));
                }
                if send_initial && bookmarks {
                    initial.push(Initial::Line(render.bookmark(current, true)));
                }
            }
            Some(from) => {
                if let Some(start) = store
                    .watch_start
                    .get(&(t.rt.group.clone(), t.rt.resource.clone()))
                    .filter(|start| from < **start)
                {
                    let e =
                        ApiError::expired(format!("too old resource version: {from} ({start})"));
                    return stream_response(Body::from(error_line(&e)));
                }
                let expired = server.faults().take_watch_expiry();
                match store.events_since(from) {
                    Ok(events) if !expired => {
                        for ev in events {
                            if let Some((ty, obj)) = translate(&filter, &t, &ev) {
                                initial.push(event(ty, obj));
                            }
                        }
                    }
                    Ok(_) | Err(_) => {
                        let oldest = store.events_since(from).err().map_or(current, |e| e.oldest);
                        let e = ApiError::expired(format!(
                            "too old resource version: {from} ({oldest})"
                        ));
                        let body = Body::from(error_line(&e));
                        return stream_response(body);
                    }
                }
            }
        }
        (rx, current)
    };
    let target = t;
    let conv_server = server.clone();
    let stream = async_stream::stream! {
        for item in initial {
            match item {
                Initial::Line(line) => yield Ok::<Bytes, Infallible>(line),
                Initial::Event(ty, obj) => match converted(&conv_server, &target, obj).await {
                    Some(obj) => yield Ok(render.line(ty, obj)),
                    // kube-apiserver ends a watch whose object it cannot encode.
                    None => return,
                },
            }
        }
        let mut last_rv = start_rv;
        let mut ticker = tokio::time::interval(bookmark_every);
        ticker.tick().await;
        loop {
            tokio::select! {
                _ = tokio::time::sleep_until(deadline) => {
                    if dropping {
                        faults_server.faults().record_drop();
                    }
                    break;
                }
                _ = ticker.tick(), if bookmarks => {
                    yield Ok(render.bookmark(last_rv, false));
                }
                ev = rx.recv() => match ev {
                    Ok(ev) => {
                        let ev: Arc<StoreEvent> = ev;
                        if ev.rv <= start_rv {
                            continue;
                        }
                        if ev.group == target.rt.group && ev.resource == target.rt.resource {
                            last_rv = ev.rv;
                        }
                        if let Some((ty, obj)) = translate(&filter, &target, &ev) {
                            if converting {
                                match converted(&conv_server, &target, obj).await {
                                    Some(obj) => yield Ok(render.line(ty, obj)),
                                    None => break,
                                }
                            } else {
                                yield Ok(render.line(ty, obj));
                            }
                        }
                    }
                    Err(RecvError::Lagged(missed)) => {
                        // A watcher that does not keep up is cut off (bounded buffer), like
                        // kube-apiserver: the client relists.
                        let e = ApiError::expired(format!(
                            "watch too slow: {missed} events dropped after resourceVersion {last_rv}"
                        ));
                        yield Ok(error_line(&e));
                        break;
                    }
                    Err(RecvError::Closed) => break,
                }
            }
        }
    };
    stream_response(Body::from_stream(stream))
}

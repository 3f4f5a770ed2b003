use super::*;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

type Reply = Result<Response<Full<Bytes>>, BoxError>;

fn json(status: u16, body: &serde_json::Value) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap()
}

fn status(code: u16, reason: &str) -> Response<Full<Bytes>> {
    json(
        code,
        &serde_json::json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
            "message": reason, "reason": reason, "code": code}),
    )
}

/// A fake API server answering from `f(attempt number, method, path, body)`.
fn fake<F>(f: F) -> (kube::Client, Arc<AtomicU32>)
where
    F: Fn(u32, &Method, &str, Bytes) -> Reply + Send + Sync + 'static,
{
    fake_with(f, RetryPolicy::within(Duration::from_secs(3)))
}

fn fake_with<F>(f: F, policy: RetryPolicy) -> (kube::Client, Arc<AtomicU32>)
where
    F: Fn(u32, &Method, &str, Bytes) -> Reply + Send + Sync + 'static,
{
    fake_layered(f, RetryLayer::new(policy))
}

/// [`fake`] with a retry budget of `within`, reporting server trouble to `log`.
fn fake_logged<F>(f: F, within: Duration, log: &TroubleLog) -> (kube::Client, Arc<AtomicU32>)
where
    F: Fn(u32, &Method, &str, Bytes) -> Reply + Send + Sync + 'static,
{
    fake_layered(
        f,
        RetryLayer::new(RetryPolicy::within(within)).reporting_to(log),
    )
}

fn fake_layered<F>(f: F, layer: RetryLayer) -> (kube::Client, Arc<AtomicU32>)
where
    F: Fn(u32, &Method, &str, Bytes) -> Reply + Send + Sync + 'static,
{
    let calls = Arc::new(AtomicU32::new(0));
    let counter = calls.clone();
    let f = Arc::new(f);
    let svc = tower::service_fn(move |req: Request<Body>| {
        let n = counter.fetch_add(1, Ordering::SeqCst);
        let f = f.clone();
        async move {
            let (parts, body) = req.into_parts();
            let bytes = body.collect_bytes().await.unwrap_or_default();
            f(n, &parts.method, parts.uri.path(), bytes)
        }
    });
    (client(svc, "default", layer), calls)
}

fn cm(name: &str, run: Option<&str>) -> ConfigMap {
    let mut c = ConfigMap::default();
    c.metadata.name = Some(name.into());
    c.metadata.namespace = Some("default".into());
    if let Some(r) = run {
        c.metadata.labels = Some(BTreeMap::from([(RUN_LABEL.to_string(), r.to_string())]));
    }
    c
}

#[tokio::test]
async fn retries_500_and_connection_errors_then_succeeds() {
    let (client, calls) = fake(|n, _, _, _| match n {
        0 => Err("connection reset".into()),
        1 => Ok(status(500, "InternalError")),
        2 => Ok(status(503, "ServiceUnavailable")),
        _ => Ok(json(200, &serde_json::to_value(cm("a", None)).unwrap())),
    });
    let api: Api<ConfigMap> = Api::default_namespaced(client);
    let got = api.get("a").await.unwrap();
    assert_eq!(got.metadata.name.as_deref(), Some("a"));
    assert_eq!(calls.load(Ordering::SeqCst), 4);
}

/// Every attempt that met a server fault is counted, also when a retry then succeeded: the
/// step deadlines read the count ([`crate::server_trouble::recent_faults`]).
#[tokio::test]
async fn retried_faults_are_counted_though_the_request_succeeded() {
    let since = Instant::now();
    let log = TroubleLog::default();
    let (client, calls) = fake_logged(
        |n, _, _, _| match n {
            0 => Err("connection reset".into()),
            1 => Ok(status(500, "InternalError")),
            _ => Ok(json(200, &serde_json::to_value(cm("a", None)).unwrap())),
        },
        Duration::from_secs(3),
        &log,
    );
    let api: Api<ConfigMap> = Api::namespaced(client, "ns-fault-count");
    api.get("a").await.unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    assert_eq!(log.faults_since(since), 2);
    assert!(
        log.in_namespace("ns-fault-count", since, &[]).is_empty(),
        "nothing persisted past the budget"
    );
}

#[tokio::test]
async fn honours_retry_after_on_429() {
    let (client, calls) = fake(|n, _, _, _| {
        if n == 0 {
            let mut r = status(429, "TooManyRequests");
            r.headers_mut()
                .insert(http::header::RETRY_AFTER, "1".parse().unwrap());
            Ok(r)
        } else {
            Ok(json(200, &serde_json::to_value(cm("a", None)).unwrap()))
        }
    });
    let api: Api<ConfigMap> = Api::default_namespaced(client);
    let start = std::time::Instant::now();
    api.get("a").await.unwrap();
    assert!(
        start.elapsed() >= Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn gives_up_at_the_budget_and_records_the_cause() {
    let since = Instant::now();
    let log = TroubleLog::default();
    let (client, calls) = fake_logged(
        |_, _, _, _| Ok(status(500, "InternalError")),
        Duration::from_millis(400),
        &log,
    );
    let api: Api<ConfigMap> = Api::namespaced(client, "ns-budget-test");
    let start = std::time::Instant::now();
    let err = api.get("a").await.unwrap_err();
    assert!(
        matches!(err, kube::Error::Api(ref s) if s.code == 500),
        "{err}"
    );
    assert!(start.elapsed() <= Duration::from_millis(900));
    assert!(
        calls.load(Ordering::SeqCst) >= 3,
        "{}",
        calls.load(Ordering::SeqCst)
    );
    let t = log.in_namespace("ns-budget-test", since, &["configmaps"]);
    assert_eq!(t.len(), 1, "{t:?}");
    assert!(t[0].cause.contains("500"), "{}", t[0].cause);
    assert_eq!(t[0].method, "GET");
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let (client, calls) = fake(|_, _, _, _| Ok(status(404, "NotFound")));
    let api: Api<ConfigMap> = Api::default_namespaced(client);
    assert!(api.get("a").await.is_err());
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

/// The first create reaches the server but its answer is lost; the retry gets 409.
fn lost_create_answer(stored_run: Option<&'static str>) -> (kube::Client, Arc<AtomicU32>) {
    fake(move |n, method, path, _| match (n, method.as_str()) {
        (0, "POST") => Err("connection closed before the response".into()),
        (_, "POST") => Ok(status(409, "AlreadyExists")),
        (_, "GET") if path.ends_with("/configmaps/made") => Ok(json(
            200,
            &serde_json::to_value(cm("made", stored_run)).unwrap(),
        )),
        _ => Ok(status(404, "NotFound")),
    })
}

#[tokio::test]
async fn retried_create_of_an_object_the_run_owns_is_success() {
    let (client, _) = lost_create_answer(Some("run1"));
    let api: Api<ConfigMap> = Api::default_namespaced(client);
    let made = api
        .create(&PostParams::default(), &cm("made", Some("run1")))
        .await
        .unwrap();
    assert_eq!(made.metadata.name.as_deref(), Some("made"));
}

#[tokio::test]
async fn retried_create_of_someone_elses_object_stays_a_conflict() {
    for stored in [None, Some("other-run")] {
        let (client, _) = lost_create_answer(stored);
        let api: Api<ConfigMap> = Api::default_namespaced(client);
        let err = api
            .create(&PostParams::default(), &cm("made", Some("run1")))
            .await
            .unwrap_err();
        assert!(
            matches!(err, kube::Error::Api(ref s) if s.code == 409),
            "{err}"
        );
    }
}

#[tokio::test]
async fn first_create_conflict_is_not_reinterpreted() {
    let (client, calls) = fake(|_, method, _, _| match method.as_str() {
        "POST" => Ok(status(409, "AlreadyExists")),
        _ => Ok(json(
            200,
            &serde_json::to_value(cm("made", Some("run1"))).unwrap(),
        )),
    });
    let api: Api<ConfigMap> = Api::default_namespaced(client);
    let err = api
        .create(&PostParams::default(), &cm("made", Some("run1")))
        .await
        .unwrap_err();
    assert!(
        matches!(err, kube::Error::Api(ref s) if s.code == 409),
        "{err}"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

/// A 500 naming a webhook the API server called is the provider's webhook failing: answered at
/// once, not retried, not recorded as server trouble.
#[tokio::test]
async fn a_failed_webhook_call_is_not_retried_nor_server_trouble() {
    let since = Instant::now();
    let log = TroubleLog::default();
    let (client, calls) = fake_logged(
        |_, _, _, _| {
            Ok(status(
                500,
                "Internal error occurred: failed calling webhook \"d.example.com\": failed to call webhook: context deadline exceeded",
            ))
        },
        Duration::from_secs(3),
        &log,
    );
    let api: Api<ConfigMap> = Api::namespaced(client, "ns-webhook-test");
    let err = api.get("a").await.unwrap_err();
    assert!(
        matches!(err, kube::Error::Api(ref s) if s.code == 500 && s.message.contains("failed calling webhook")),
        "{err}"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert!(
        log.in_namespace("ns-webhook-test", since, &["configmaps"])
            .is_empty()
    );
    assert_eq!(
        log.faults_since(since),
        0,
        "a provider's webhook is no server fault"
    );
}

//! Hostile input and embedded-server hardening: each case ends in a
//! clear error or safe handling, with bounded memory (peak RSS of the `lint` child measured from
//! `/proc/<pid>/status` VmHWM and printed) and no panic.

use capi_conformance::apiserver::{EmbeddedServer, ServerOptions};
use capi_conformance::inventory::{InputError, parse_text};
use capi_conformance::report::paths::safe_component;
use capi_conformance::source::load_paths;
use http_body_util::BodyExt;
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tower::ServiceExt;

const BIN: &str = env!("CARGO_BIN_EXE_capi-conformance");

/// Outcome of one `lint` child run.
struct Run {
    code: Option<i32>,
    stderr: String,
    peak_rss_kb: u64,
    elapsed: Duration,
}

fn vm_hwm_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Runs the binary, polling its peak RSS until it exits (killed after 120 s).
fn run_measured(args: &[&str], stdin_file: Option<&Path>) -> Run {
    let start = Instant::now();
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .env("NO_COLOR", "1");
    match stdin_file {
        Some(p) => cmd.stdin(std::fs::File::open(p).unwrap()),
        None => cmd.stdin(Stdio::null()),
    };
    let mut child = cmd.spawn().unwrap();
    let pid = child.id();
    let mut peak = 0;
    let status = loop {
        if let Some(kb) = vm_hwm_kb(pid) {
            peak = peak.max(kb);
        }
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(120) {
            child.kill().unwrap();
            panic!("{args:?} did not finish in 120 s");
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    Run {
        code: status.code(),
        stderr,
        peak_rss_kb: peak,
        elapsed: start.elapsed(),
    }
}

fn lint(case: &str, file: &Path, bound_mb: u64) -> Run {
    let run = run_measured(&["lint", file.to_str().unwrap()], None);
    report(case, &run, bound_mb);
    run
}

fn report(case: &str, run: &Run, bound_mb: u64) {
    println!(
        "hostile {case}: exit {:?}, peak RSS {:.1} MB (bound {bound_mb} MB), {:.2} s",
        run.code,
        run.peak_rss_kb as f64 / 1024.0,
        run.elapsed.as_secs_f64()
    );
    assert!(
        !run.stderr.contains("panicked"),
        "{case} panicked: {}",
        run.stderr
    );
    assert!(
        run.peak_rss_kb < bound_mb * 1024,
        "{case}: peak RSS {} kB above {bound_mb} MB",
        run.peak_rss_kb
    );
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// A CRD whose schema nests `depth` levels of `properties.a` (flow style: one line).
fn deep_crd_json(depth: usize) -> String {
    let mut schema = String::new();
    for _ in 0..depth {
        schema.push_str(r#"{"type":"object","properties":{"a":"#);
    }
    schema.push_str(r#"{"type":"string"}"#);
    for _ in 0..depth {
        schema.push_str("}}");
    }
    format!(
        r#"{{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{{"name":"foos.example.com"}},"spec":{{"group":"example.com","names":{{"kind":"Foo","plural":"foos"}},"scope":"Namespaced","versions":[{{"name":"v1","served":true,"storage":true,"schema":{{"openAPIV3Schema":{schema}}}}}]}}}}"#
    )
}

// ---------------------------------------------------------------------------------------------
// Hostile input to `lint`
// ---------------------------------------------------------------------------------------------

#[test]
fn yaml_alias_bomb_is_refused_with_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    // Nine levels of nine aliases each: 9^9 ≈ 387 million nodes if expanded.
    let mut text = String::from("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
    for w in names.windows(2) {
        let refs = vec![format!("*{}", w[0]); 9].join(", ");
        text.push_str(&format!("{}: &{} [{refs}]\n", w[1], w[1]));
    }
    text.push_str("kind: ConfigMap\n");
    let file = write(dir.path(), "bomb.yaml", text.as_bytes());
    let run = lint("alias bomb", &file, 128);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(run.stderr.contains("bomb.yaml"), "{}", run.stderr);
    assert!(run.stderr.contains("invalid YAML"), "{}", run.stderr);
    assert!(run.elapsed < Duration::from_secs(30));
}

#[test]
fn hundred_megabyte_document_is_refused_with_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.yaml");
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        f.write_all(b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n")
            .unwrap();
        let line = format!("  k: {}\n", "x".repeat(1021));
        for i in 0..100 * 1024 {
            // Distinct keys so the document would be valid YAML if read.
            let l = line.replacen("k:", &format!("k{i}:"), 1);
            f.write_all(l.as_bytes()).unwrap();
        }
    }
    let size = std::fs::metadata(&path).unwrap().len();
    assert!(size >= 100 * 1024 * 1024, "{size}");
    let run = lint("100 MB file", &path, 64);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr.contains("huge.yaml: too large"),
        "{}",
        run.stderr
    );
    // The same bytes on stdin: read up to the limit, then refused.
    let run = run_measured(&["lint", "-"], Some(&path));
    report("100 MB stdin", &run, 160);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(run.stderr.contains("-: too large"), "{}", run.stderr);
}

#[test]
fn schema_nested_ten_thousand_deep_is_refused_by_lint() {
    let dir = tempfile::tempdir().unwrap();
    let json = deep_crd_json(10_000);
    let as_json = write(dir.path(), "deep.json", json.as_bytes());
    let run = lint("10,000-deep schema (JSON)", &as_json, 64);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(run.stderr.contains("deep.json"), "{}", run.stderr);
    assert!(run.stderr.contains("recursion limit"), "{}", run.stderr);
    // YAML flow style (the same text is valid YAML).
    let as_yaml = write(dir.path(), "deep.yaml", json.as_bytes());
    let run = lint("10,000-deep schema (YAML)", &as_yaml, 64);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(run.stderr.contains("deep.yaml"), "{}", run.stderr);
    assert!(run.stderr.contains("invalid YAML"), "{}", run.stderr);
}

#[test]
fn non_utf8_bytes_are_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "latin1.yaml",
        b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: caf\xe9}\n",
    );
    let run = lint("non-UTF-8", &file, 64);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("latin1.yaml: cannot read: not valid UTF-8"),
        "{}",
        run.stderr
    );
    // Library level: the loader names the file, no panic.
    let err = load_paths(&[file], false).unwrap_err();
    assert!(matches!(err, InputError::Unreadable { .. }), "{err}");
}

#[test]
fn duplicate_keys_in_yaml_and_json_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let yaml = write(
        dir.path(),
        "dup.yaml",
        b"apiVersion: v1\nkind: ConfigMap\nkind: Secret\nmetadata: {name: x}\n",
    );
    let run = lint("duplicate keys (YAML)", &yaml, 64);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr.contains("dup.yaml: document 0 (line 1)")
            && run.stderr.contains("duplicate mapping key: kind"),
        "{}",
        run.stderr
    );
    // JSON: the same clear error (a silently-last-wins `kind` or `scope` would mislead).
    let docs = parse_text(
        "dup.json",
        r#"{"apiVersion": "v1", "kind": "ConfigMap", "kind": "Secret", "metadata": {"name": "x"}}"#,
    );
    assert_eq!(docs.len(), 1);
    let err = docs[0].as_ref().unwrap_err().to_string();
    assert!(err.contains("duplicate key \"kind\""), "{err}");
    let json = write(
        dir.path(),
        "dup.json",
        br#"{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "name": "y"}}"#,
    );
    let run = lint("duplicate keys (JSON)", &json, 64);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("dup.json: document 0 (line 1): invalid JSON")
            && run.stderr.contains("duplicate key \"name\""),
        "{}",
        run.stderr
    );
}

#[test]
fn names_with_dot_dot_slash_stay_inside_the_report_dir() {
    let root = tempfile::tempdir().unwrap();
    let report_dir = root.path().join("reports");
    std::fs::create_dir(&report_dir).unwrap();
    let hostile = [
        "../../etc/passwd",
        "..",
        ".",
        "",
        "a/../../b",
        "..\\..\\win",
        "x\0y",
        "ünïcödé/..",
        "/absolute/path",
    ];
    for name in hostile {
        let c = safe_component(name);
        assert!(!c.is_empty() && c != "." && c != "..", "{name:?} → {c:?}");
        assert!(!c.contains('/') && !c.contains('\\') && !c.contains('\0'));
        let p = report_dir.join(&c);
        std::fs::create_dir_all(&p).unwrap();
        std::fs::write(p.join("timeline.json"), "{}").unwrap();
        let canon = p.canonicalize().unwrap();
        assert_eq!(
            canon.parent().unwrap(),
            report_dir.canonicalize().unwrap(),
            "{name:?} escaped the report dir as {c:?}"
        );
    }
    // Nothing was written beside the report dir.
    let siblings: Vec<_> = std::fs::read_dir(root.path()).unwrap().collect();
    assert_eq!(siblings.len(), 1);
}

// ---------------------------------------------------------------------------------------------
// Embedded server hardening
// ---------------------------------------------------------------------------------------------

async fn call(
    router: axum::Router,
    method: &str,
    uri: &str,
    ct: &str,
    body: Vec<u8>,
) -> (u16, Value) {
    let req = http::Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", ct)
        .body(axum::body::Body::from(body))
        .unwrap();
    let resp = router.oneshot(req).await.unwrap();
    let code = resp.status().as_u16();
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    (code, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

#[tokio::test]
async fn server_refuses_deeply_nested_crd() {
    let server = EmbeddedServer::new(ServerOptions::default());
    let body = deep_crd_json(10_000).into_bytes();
    let uri = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    for ct in ["application/json", "application/yaml"] {
        let (code, status) = call(server.router(), "POST", uri, ct, body.clone()).await;
        println!(
            "hostile 10,000-deep CRD create ({ct}): {code} {}",
            status["message"]
        );
        assert!((400..500).contains(&code), "{ct}: {code} {status}");
        assert_eq!(status["kind"], "Status", "{status}");
    }
    let (code, _) = call(
        server.router(),
        "GET",
        &format!("{uri}/foos.example.com"),
        "",
        vec![],
    )
    .await;
    assert_eq!(code, 404, "the deep CRD must not have been stored");
}

#[tokio::test]
async fn server_hostile_bodies() {
    let server = EmbeddedServer::new(ServerOptions::default());
    let uri = "/api/v1/namespaces/default/configmaps";
    // Non-UTF-8 bytes in JSON and YAML bodies.
    for ct in ["application/json", "application/yaml"] {
        let (code, status) = call(
            server.router(),
            "POST",
            uri,
            ct,
            b"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"caf\xe9\"}}"
                .to_vec(),
        )
        .await;
        assert_eq!(code, 400, "{ct}: {status}");
        assert_eq!(status["kind"], "Status");
    }
    // An alias bomb as a YAML body.
    let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x]\n");
    for w in ["a", "b", "c", "d", "e", "f", "g", "h", "i"].windows(2) {
        let refs = vec![format!("*{}", w[0]); 9].join(", ");
        bomb.push_str(&format!("{}: &{} [{refs}]\n", w[1], w[1]));
    }
    let (code, status) = call(
        server.router(),
        "POST",
        uri,
        "application/yaml",
        bomb.into_bytes(),
    )
    .await;
    assert!((400..500).contains(&code), "{code} {status}");
    // Over the 3 MiB body limit: 413.
    let big = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"},
                     "data": {"k": "x".repeat(4 * 1024 * 1024)}});
    let (code, status) = call(
        server.router(),
        "POST",
        uri,
        "application/json",
        serde_json::to_vec(&big).unwrap(),
    )
    .await;
    assert_eq!(code, 413, "{status}");
    assert_eq!(status["reason"], "RequestEntityTooLarge", "{status}");
    // A name with `../` is rejected by name validation, not used as a path.
    let evil = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "../etc"}});
    let (code, status) = call(
        server.router(),
        "POST",
        uri,
        "application/json",
        serde_json::to_vec(&evil).unwrap(),
    )
    .await;
    assert_eq!(code, 422, "{status}");
}

#[tokio::test]
async fn server_listens_on_loopback_only_unless_allowed() {
    let server = EmbeddedServer::new(ServerOptions::default());
    let err = server
        .listen("0.0.0.0:0".parse().unwrap())
        .await
        .err()
        .expect("non-loopback bind must be refused");
    assert!(
        err.to_string()
            .contains("refusing to listen on non-loopback"),
        "{err}"
    );
    let listener = server.listen("127.0.0.1:0".parse().unwrap()).await.unwrap();
    assert!(listener.addr.ip().is_loopback());
    listener.shutdown().await;
    let open = EmbeddedServer::new(ServerOptions {
        allow_remote: true,
        ..ServerOptions::default()
    });
    let listener = open.listen("0.0.0.0:0".parse().unwrap()).await.unwrap();
    listener.shutdown().await;
}

#[tokio::test]
async fn server_tcp_requires_the_bearer_token() {
    use k8s_openapi::api::core::v1::Namespace;
    use kube::api::{Api, ListParams};
    let server = EmbeddedServer::new(ServerOptions::default());
    let listener = server.listen("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let good: Api<Namespace> = Api::all(listener.client().unwrap());
    assert!(good.list(&ListParams::default()).await.is_ok());
    for token in [
        None,
        Some(String::new()),
        Some(format!("{}x", listener.token)),
    ] {
        let mut config = listener.config().unwrap();
        config.auth_info.token = token.clone().map(Into::into);
        let api: Api<Namespace> = Api::all(kube::Client::try_from(config).unwrap());
        let err = api.list(&ListParams::default()).await.unwrap_err();
        assert!(
            matches!(err, kube::Error::Api(ref s) if s.code == 401),
            "token {token:?}: {err:?}"
        );
    }
    listener.shutdown().await;
}

#[tokio::test]
async fn slow_watcher_is_cut_off_with_410() {
    let server = EmbeddedServer::new(ServerOptions::default());
    let uri = "/api/v1/namespaces/default/configmaps";
    let req = http::Request::builder()
        .uri(format!("{uri}?watch=true"))
        .body(axum::body::Body::empty())
        .unwrap();
    // The watcher connects but never reads while thousands of events happen.
    let resp = server.router().oneshot(req).await.unwrap();
    assert_eq!(resp.status(), 200);
    let n = 5_000;
    for i in 0..n {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": format!("cm{i}")}});
        let (code, status) = call(
            server.router(),
            "POST",
            uri,
            "application/json",
            serde_json::to_vec(&cm).unwrap(),
        )
        .await;
        assert_eq!(code, 201, "{status}");
    }
    // Now it reads: the stream ends with an ERROR 410 instead of replaying an unbounded backlog.
    let body = tokio::time::timeout(Duration::from_secs(30), resp.into_body().collect())
        .await
        .expect("the slow watcher's stream must end")
        .unwrap()
        .to_bytes();
    let lines: Vec<Value> = body
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "ERROR", "{last}");
    assert_eq!(last["object"]["code"], 410, "{last}");
    let delivered = lines.len() - 1;
    println!("hostile slow watcher: {delivered} of {n} events buffered, then 410");
    assert!(delivered < n, "{delivered} events buffered: unbounded");
}

//! Item 4: no Secret payload of the run (bootstrap data, kubeconfigs, certificate keys) and not
//! the embedded server's token appear in any output format, the report directory or the logs,
//! raw or base64-encoded; redaction markers name the hidden key.

use super::common::bin;
use base64::Engine;
use futures::StreamExt;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, WatchEvent, WatchParams};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Mock faults whose failures put Secrets into evidence and the report directory.
const SECRET_FAULTS: &str =
    "bootstrap/secret-value,control-plane/kubeconfig-secret,control-plane/certificates";

/// Every data value of every Secret the server ever stored, read through a watch that replays
/// the history from the start (the process's kubeconfig appears in its private `$TMPDIR`).
async fn collect_secrets(
    tmp: PathBuf,
    stop: tokio::sync::watch::Receiver<bool>,
) -> (BTreeSet<Vec<u8>>, String) {
    let kubeconfig = loop {
        let found = std::fs::read_dir(&tmp).ok().and_then(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.path())
                .find(|p| p.extension().is_some_and(|x| x == "kubeconfig"))
        });
        if let Some(p) = found
            && std::fs::read_to_string(&p).is_ok_and(|t| t.contains("token:"))
        {
            break p;
        }
        assert!(
            !*stop.borrow(),
            "the run ended before its kubeconfig appeared"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    let text = std::fs::read_to_string(&kubeconfig).unwrap();
    let token = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("token: "))
        .unwrap()
        .to_string();
    let kc = kube::config::Kubeconfig::from_yaml(&text).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    let client = kube::Client::try_from(config).unwrap();
    let api: Api<Secret> = Api::all(client);
    let mut values = BTreeSet::new();
    let mut stream = api
        .watch(&WatchParams::default().timeout(290), "1")
        .await
        .unwrap()
        .boxed();
    let mut stop = stop;
    loop {
        tokio::select! {
            ev = stream.next() => match ev {
                Some(Ok(WatchEvent::Added(s) | WatchEvent::Modified(s) | WatchEvent::Deleted(s))) => {
                    for v in s.data.unwrap_or_default().into_values() {
                        values.insert(v.0);
                    }
                    for v in s.string_data.unwrap_or_default().into_values() {
                        values.insert(v.into_bytes());
                    }
                }
                Some(Ok(WatchEvent::Error(e))) => panic!("watch error: {e:?}"),
                Some(_) => {}
                None => break,
            },
            _ = stop.changed() => break,
        }
    }
    (values, token)
}

/// Runs `check --embedded` (SC-bootstrap, SC-controlplane) as a process with the mock as the
/// provider process; returns the Secret values, the server token and every output byte.
async fn run(
    dir: &Path,
    stdout_format: &str,
    faults: &str,
) -> (BTreeSet<Vec<u8>>, String, Vec<(String, Vec<u8>)>) {
    let tmp = dir.join("tmp");
    let out = dir.join("out");
    let report_dir = out.join("report-dir");
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::create_dir_all(&report_dir).unwrap();
    let mut provider = format!(
        "{} mock-provider run --kubeconfig {{kubeconfig}} --watch-namespace {{namespace}}",
        bin()
    );
    if !faults.is_empty() {
        provider.push_str(&format!(" --faults {faults}"));
    }
    let child = Command::new(bin())
        .args([
            "check",
            "--embedded",
            "--progress",
            "always",
            "-o",
            stdout_format,
        ])
        .args(["--scenarios", "SC-bootstrap,SC-controlplane"])
        .args(["--provider-cmd", &provider])
        .arg("--json")
        .arg(out.join("r.json"))
        .arg("--junit")
        .arg(out.join("r.xml"))
        .arg("--markdown")
        .arg(out.join("r.md"))
        .arg("--html")
        .arg(out.join("r.html"))
        .arg("--sarif")
        .arg(out.join("r.sarif"))
        .arg("--report-dir")
        .arg(&report_dir)
        .env("TMPDIR", &tmp)
        .env("RUST_LOG", "debug")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = tokio::sync::watch::channel(false);
    let collector = tokio::spawn(collect_secrets(tmp.clone(), rx));
    let output = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    let _ = tx.send(true);
    let (values, token) = collector.await.unwrap();
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut bytes = vec![
        ("stdout".to_string(), output.stdout),
        ("stderr".to_string(), output.stderr),
    ];
    let mut files = vec![out.clone()];
    while let Some(p) = files.pop() {
        if p.is_dir() {
            files.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
        } else {
            bytes.push((p.display().to_string(), std::fs::read(&p).unwrap()));
        }
    }
    assert!(
        std::fs::read_dir(&tmp).unwrap().next().is_none(),
        "the private kubeconfig outlived the run"
    );
    (values, token, bytes)
}

/// What must not appear: each value raw and base64-encoded, and each distinctive line of it
/// (≥ 16 bytes, not PEM armour, not text of the public rule catalog).
fn needles(values: &BTreeSet<Vec<u8>>, token: &str) -> BTreeSet<Vec<u8>> {
    let catalog: String = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/suites"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap_or_default())
        .collect();
    let mut out = BTreeSet::new();
    out.insert(token.as_bytes().to_vec());
    for v in values {
        if v.len() >= 8 {
            out.insert(v.clone());
            out.insert(
                base64::engine::general_purpose::STANDARD
                    .encode(v)
                    .into_bytes(),
            );
        }
        for line in String::from_utf8_lossy(v).lines() {
            let line = line.trim();
            if line.len() >= 16 && !line.starts_with("-----") && !catalog.contains(line) {
                out.insert(line.as_bytes().to_vec());
            }
        }
    }
    out
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_secret_value_in_any_output_format_report_dir_or_log() {
    let _shared = super::common::sharing_the_machine().await;
    let dir = tempfile::tempdir().unwrap();
    let (table_dir, yaml_dir) = (dir.path().join("table"), dir.path().join("yaml"));
    let (a, b) = tokio::join!(
        run(&table_dir, "table", SECRET_FAULTS),
        run(&yaml_dir, "yaml", "")
    );
    let mut checked = 0;
    let mut markers = 0;
    for (values, token, outputs) in [a, b] {
        assert!(
            values.len() >= 5,
            "too few Secret values seen: {}",
            values.len()
        );
        let needles = needles(&values, &token);
        for (name, hay) in &outputs {
            for n in &needles {
                assert!(
                    !contains(hay, n),
                    "{name} contains a Secret value: {:?}",
                    String::from_utf8_lossy(n)
                );
            }
            checked += hay.len();
            if name.ends_with("objects.yaml") {
                let text = String::from_utf8_lossy(hay);
                markers += text.matches("<redacted> (Secret data key").count();
            }
        }
        assert!(
            outputs.len() >= 6,
            "{:?}",
            outputs.iter().map(|o| &o.0).collect::<Vec<_>>()
        );
    }
    println!("searched {checked} bytes, {markers} redaction markers naming their key");
    assert!(
        markers > 0,
        "the failing scenarios' Secrets were not in the report dir"
    );
}

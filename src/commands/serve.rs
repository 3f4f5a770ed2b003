//! `capi-conformance serve`: the embedded API server on a loopback port until Ctrl-C.

use std::net::SocketAddr;

use anyhow::Context as _;
use serde_json::Value;

use crate::apiserver::{EmbeddedServer, ServerOptions};
use crate::cli::ServeArgs;

/// Reads every YAML/JSON document from files (or `*.yaml|*.yml|*.json` files in directories).
pub fn load_documents(paths: &[std::path::PathBuf]) -> anyhow::Result<Vec<Value>> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut entries: Vec<_> = std::fs::read_dir(p)
                .with_context(|| format!("reading {}", p.display()))?
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|f| {
                    matches!(
                        f.extension().and_then(|e| e.to_str()),
                        Some("yaml" | "yml" | "json")
                    )
                })
                .collect();
            entries.sort();
            files.extend(entries);
        } else {
            files.push(p.clone());
        }
    }
    let mut docs = Vec::new();
    for f in files {
        let text =
            std::fs::read_to_string(&f).with_context(|| format!("reading {}", f.display()))?;
        let parsed: Vec<Value> = serde_saphyr::from_multiple(&text)
            .with_context(|| format!("parsing {}", f.display()))?;
        for d in parsed {
            if d.get("kind").and_then(Value::as_str) == Some("List") {
                docs.extend(
                    d.get("items")
                        .and_then(Value::as_array)
                        .cloned()
                        .unwrap_or_default(),
                );
            } else if d.is_object() {
                docs.push(d);
            }
        }
    }
    Ok(docs)
}

pub async fn run(args: ServeArgs) -> anyhow::Result<i32> {
    let addr: SocketAddr = args
        .addr
        .parse()
        .with_context(|| format!("invalid --addr {:?}", args.addr))?;
    let server = EmbeddedServer::new(ServerOptions {
        allow_remote: args.allow_remote,
        ..ServerOptions::default()
    });
    if let Some(spec) = &args.faults {
        server.faults().apply_spec(spec)?;
    }
    let docs = load_documents(&args.load)?;
    server.apply_documents(docs).await?;
    let listener = server.listen(addr).await?;
    let kubeconfig = match &args.write_kubeconfig {
        Some(p) => p.clone(),
        None => std::env::temp_dir().join(format!(
            "capi-conformance-{}.kubeconfig",
            listener.addr.port()
        )),
    };
    listener.write_kubeconfig(&kubeconfig)?;
    println!(
        "serving {} kubeconfig {}",
        listener.url,
        kubeconfig.display()
    );
    tokio::signal::ctrl_c()
        .await
        .context("waiting for Ctrl-C")?;
    listener.shutdown().await;
    Ok(0)
}

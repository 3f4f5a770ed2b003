//! `capi-conformance serve`: the embedded API server on a loopback port until Ctrl-C.

use std::net::SocketAddr;

use crate::cli::ServeArgs;
use crate::client_retry::RetryingClient;
use anyhow::Context as _;
use embedded_apiserver::{EmbeddedServer, ServerOptions};

pub async fn run(args: ServeArgs) -> anyhow::Result<i32> {
    let addr: SocketAddr = args
        .addr
        .parse()
        .with_context(|| format!("invalid --addr {:?}", args.addr))?;
    // Registered before anything is announced: a SIGINT right after the ready line is
    // handled, not fatal.
    let mut stop = crate::run::interrupt::Signals::register();
    let server = EmbeddedServer::new(ServerOptions {
        allow_remote: args.allow_remote,
        ..ServerOptions::default()
    });
    if !args.load.is_empty() {
        let vars = crate::manifests::Variables::from_flags(&args.vars)?;
        let report =
            crate::manifests::load_and_install(&server.retrying_client(), &args.load, &vars)
                .await?;
        for (origin, line) in crate::manifests::skipped_lines(&report) {
            eprintln!("{origin}: {line}");
        }
    } else if !args.vars.is_empty() {
        anyhow::bail!("--var needs --load (it sets clusterctl variables of the loaded manifests)");
    }
    // Faults are for the clients of the server, not for loading it.
    if let Some(spec) = &args.faults {
        server.faults().apply_spec(spec)?;
    }
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
    stop.next().await;
    listener.shutdown().await;
    Ok(0)
}

//! Waiting for a provider's webhook server: kube-apiserver can call it once a TLS handshake with
//! the served certificate succeeds (verified against the run's CA for `server_name`), or, for a
//! manager whose webhooks are not known, once its health endpoint answers `/readyz` with 200.
//! A port cannot be watched: these probe every 25 ms until the deadline.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::ServerName;

const PROBE_INTERVAL: Duration = Duration::from_millis(25);
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(2);

/// One TLS handshake with `addr`, verifying the certificate for `server_name`.
pub async fn handshake(
    addr: SocketAddr,
    server_name: &str,
    config: Arc<rustls::ClientConfig>,
) -> Result<(), String> {
    let name = ServerName::try_from(server_name.to_string())
        .map_err(|e| format!("invalid server name {server_name:?}: {e}"))?;
    let attempt = async {
        let tcp = tokio::net::TcpStream::connect(addr)
            .await
            .map_err(|e| format!("dial tcp {addr}: {e}"))?;
        let mut tls = TlsConnector::from(config)
            .connect(name, tcp)
            .await
            .map_err(|e| format!("TLS handshake with {addr} for {server_name}: {e}"))?;
        let _ = tls.shutdown().await;
        Ok(())
    };
    tokio::time::timeout(ATTEMPT_TIMEOUT, attempt)
        .await
        .unwrap_or_else(|_| Err(format!("TLS handshake with {addr}: timed out")))
}

/// Waits until [`handshake`] succeeds, at most `limit`; `Err` holds the last failure.
pub async fn wait_tls(
    addr: SocketAddr,
    server_name: &str,
    config: Arc<rustls::ClientConfig>,
    limit: Duration,
) -> Result<(), String> {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        match handshake(addr, server_name, config.clone()).await {
            Ok(()) => return Ok(()),
            Err(e) if tokio::time::Instant::now() >= deadline => return Err(e),
            Err(_) => tokio::time::sleep(PROBE_INTERVAL).await,
        }
    }
}

/// One plain-HTTP `GET /readyz` at `addr`: `Ok` on 200.
pub async fn readyz(addr: SocketAddr) -> Result<(), String> {
    let attempt = async {
        let mut tcp = tokio::net::TcpStream::connect(addr)
            .await
            .map_err(|e| format!("dial tcp {addr}: {e}"))?;
        tcp.write_all(
            format!("GET /readyz HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes(),
        )
        .await
        .map_err(|e| format!("GET http://{addr}/readyz: {e}"))?;
        let mut head = Vec::new();
        let mut buf = [0u8; 256];
        while !head.windows(2).any(|w| w == b"\r\n") {
            let n = tcp
                .read(&mut buf)
                .await
                .map_err(|e| format!("GET http://{addr}/readyz: {e}"))?;
            if n == 0 {
                break;
            }
            head.extend_from_slice(&buf[..n]);
        }
        let line = String::from_utf8_lossy(&head);
        let status = line
            .split_whitespace()
            .nth(1)
            .unwrap_or_default()
            .to_string();
        if status == "200" {
            Ok(())
        } else {
            Err(format!("GET http://{addr}/readyz: status {status:?}"))
        }
    };
    tokio::time::timeout(ATTEMPT_TIMEOUT, attempt)
        .await
        .unwrap_or_else(|_| Err(format!("GET http://{addr}/readyz: timed out")))
}

/// Waits until [`readyz`] succeeds, at most `limit`.
pub async fn wait_readyz(addr: SocketAddr, limit: Duration) -> Result<(), String> {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        match readyz(addr).await {
            Ok(()) => return Ok(()),
            Err(e) if tokio::time::Instant::now() >= deadline => return Err(e),
            Err(_) => tokio::time::sleep(PROBE_INTERVAL).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serving::ServingCerts;

    #[tokio::test]
    async fn handshake_needs_the_right_certificate_and_a_listener() {
        let certs = ServingCerts::generate(&["svc.ns.svc".into()]).unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(certs.server_config().unwrap());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    let _ = acceptor.accept(tcp).await;
                });
            }
        });
        let client = certs.client_config().unwrap();
        wait_tls(addr, "svc.ns.svc", client.clone(), Duration::from_secs(5))
            .await
            .unwrap();
        let wrong = handshake(addr, "other.ns.svc", client.clone()).await;
        assert!(wrong.unwrap_err().contains("other.ns.svc"));
        let other_ca = ServingCerts::generate(&["svc.ns.svc".into()]).unwrap();
        assert!(
            handshake(addr, "svc.ns.svc", other_ca.client_config().unwrap())
                .await
                .is_err()
        );
        let closed = crate::serving::placeholders::free_addr().unwrap();
        let err = wait_tls(closed, "localhost", client, Duration::from_millis(100))
            .await
            .unwrap_err();
        assert!(err.contains("dial tcp"), "{err}");
        assert!(readyz(closed).await.is_err());
    }
}

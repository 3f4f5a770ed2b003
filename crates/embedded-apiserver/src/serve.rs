//! Serving an axum `Router` over TLS: the accept loop of the API server's listener, public for
//! embedders that serve their own endpoints (webhooks) the same way.

use std::sync::Arc;

use tokio::sync::oneshot;

use super::client_cert::PeerCertificates;

/// Serves `app` on `listener` over TLS (`acceptor`) until `stop` fires (or its sender is
/// dropped), then drops every open connection. HTTP/1.1 (with upgrades) and h2; the client's
/// certificate chain, when it presented one, is a [`PeerCertificates`] extension of each
/// request.
pub async fn serve_tls(
    listener: tokio::net::TcpListener,
    acceptor: tokio_rustls::TlsAcceptor,
    app: axum::Router,
    mut stop: oneshot::Receiver<()>,
) {
    use hyper_util::rt::{TokioExecutor, TokioIo};
    use hyper_util::server::conn::auto;
    use hyper_util::service::TowerToHyperService;

    let mut connections = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            _ = &mut stop => break,
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let acceptor = acceptor.clone();
                let app = app.clone();
                connections.spawn(async move {
                    let Ok(tls) = acceptor.accept(stream).await else { return };
                    let peer = tls.get_ref().1.peer_certificates().map(|chain| {
                        PeerCertificates(Arc::new(
                            chain.iter().map(|c| c.clone().into_owned()).collect(),
                        ))
                    });
                    let app = tower::ServiceExt::map_request(
                        app,
                        move |mut req: hyper::Request<hyper::body::Incoming>| {
                            if let Some(peer) = &peer {
                                req.extensions_mut().insert(peer.clone());
                            }
                            req
                        },
                    );
                    let service = TowerToHyperService::new(app);
                    let _ = auto::Builder::new(TokioExecutor::new())
                        .serve_connection_with_upgrades(TokioIo::new(tls), service)
                        .await;
                });
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    connections.abort_all();
}

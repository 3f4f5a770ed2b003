//! Authentication of a TCP request: a client certificate, then the bearer token (kube-apiserver's union of authenticators).

use axum::extract::Request;
use axum::http::header;

use crate::access::{self};
use crate::client_cert::{ClientCertAuthenticator, PeerCertificates};
use crate::state::EmbeddedServer;

pub(super) fn authenticate(
    req: &Request,
    server: &EmbeddedServer,
    expected: &str,
    client_auth: Option<&ClientCertAuthenticator>,
) -> Option<access::UserInfo> {
    if let (Some(auth), Some(PeerCertificates(chain))) =
        (client_auth, req.extensions().get::<PeerCertificates>())
        && let Ok(Some(user)) = auth.authenticate(chain)
    {
        return Some(user);
    }
    let header = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if header == expected {
        Some(access::admin())
    } else {
        header
            .strip_prefix("Bearer ")
            .and_then(|t| server.authenticate_token(t))
    }
}

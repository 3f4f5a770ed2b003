//! `--provider-cmd` placeholders.
//!
//! | placeholder | value |
//! |---|---|
//! | `{kubeconfig}` | kubeconfig of the embedded server (a private temporary file) |
//! | `{namespace}` | the run's target namespace (`--namespace` of CAPI managers) |
//! | `{watch_filter}` | the run's watch-filter label value (`--watch-filter`) |
//! | `{webhook-cert-dir}` | directory with `tls.crt`, `tls.key`, `ca.crt` (`--webhook-cert-dir` of CAPI managers, `--webhook-cert-path` of kubebuilder v4 scaffolds) |
//! | `{webhook-cert-path}`, `{webhook-key-path}`, `{webhook-ca-path}` | those three files |
//! | `{webhook-port}` | a free port for the webhook server (`--webhook-port`) |
//! | `{metrics-addr}`, `{health-addr}` | `127.0.0.1:<free port>` (`--metrics-bind-address`/`--diagnostics-address`, `--health-addr`/`--health-probe-bind-address`) |

use std::net::{Ipv4Addr, SocketAddr, TcpListener};

/// The webhook-related placeholders (any of them makes the run issue serving certificates).
pub const WEBHOOK_PLACEHOLDERS: [&str; 5] = [
    "{webhook-cert-dir}",
    "{webhook-cert-path}",
    "{webhook-key-path}",
    "{webhook-ca-path}",
    "{webhook-port}",
];

/// Every placeholder `--provider-cmd` takes (`check --help` lists each).
pub const ALL: [&str; 10] = [
    "{kubeconfig}",
    "{namespace}",
    "{watch_filter}",
    "{webhook-cert-dir}",
    "{webhook-cert-path}",
    "{webhook-key-path}",
    "{webhook-ca-path}",
    "{webhook-port}",
    "{metrics-addr}",
    "{health-addr}",
];

/// Values for the placeholders of one run.
#[derive(Debug, Clone, Default)]
pub struct Placeholders {
    pub kubeconfig: String,
    pub namespace: String,
    pub watch_filter: String,
    pub webhook_cert_dir: Option<String>,
    pub webhook_cert_path: Option<String>,
    pub webhook_key_path: Option<String>,
    pub webhook_ca_path: Option<String>,
    pub webhook_port: Option<u16>,
    pub metrics_addr: Option<SocketAddr>,
    pub health_addr: Option<SocketAddr>,
}

/// Whether `cmd` uses placeholder `p`.
pub fn uses(cmd: &str, p: &str) -> bool {
    cmd.contains(p)
}

/// Whether `cmd` takes any webhook placeholder.
pub fn uses_webhooks(cmd: &str) -> bool {
    WEBHOOK_PLACEHOLDERS.iter().any(|p| cmd.contains(p))
}

/// A port nothing listens on right now (bound to 127.0.0.1:0 and released).
pub fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?
        .local_addr()?
        .port())
}

/// `127.0.0.1:<free port>`.
pub fn free_addr() -> std::io::Result<SocketAddr> {
    Ok(SocketAddr::from((Ipv4Addr::LOCALHOST, free_port()?)))
}

impl Placeholders {
    /// `cmd` with every placeholder that has a value replaced.
    pub fn expand(&self, cmd: &str) -> String {
        let mut out = cmd
            .replace("{kubeconfig}", &self.kubeconfig)
            .replace("{namespace}", &self.namespace)
            .replace("{watch_filter}", &self.watch_filter);
        let optional = [
            ("{webhook-cert-dir}", self.webhook_cert_dir.clone()),
            ("{webhook-cert-path}", self.webhook_cert_path.clone()),
            ("{webhook-key-path}", self.webhook_key_path.clone()),
            ("{webhook-ca-path}", self.webhook_ca_path.clone()),
            ("{webhook-port}", self.webhook_port.map(|p| p.to_string())),
            ("{metrics-addr}", self.metrics_addr.map(|a| a.to_string())),
            ("{health-addr}", self.health_addr.map(|a| a.to_string())),
        ];
        for (p, v) in optional {
            if let Some(v) = v {
                out = out.replace(p, &v);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_expand() {
        let p = Placeholders {
            kubeconfig: "/k".into(),
            namespace: "ns".into(),
            watch_filter: "f".into(),
            webhook_cert_dir: Some("/d".into()),
            webhook_cert_path: Some("/d/tls.crt".into()),
            webhook_key_path: Some("/d/tls.key".into()),
            webhook_ca_path: Some("/d/ca.crt".into()),
            webhook_port: Some(9443),
            metrics_addr: Some("127.0.0.1:8080".parse().unwrap()),
            health_addr: Some("127.0.0.1:9440".parse().unwrap()),
        };
        assert_eq!(
            p.expand("m --kubeconfig {kubeconfig} -n {namespace} -f {watch_filter} --webhook-cert-dir {webhook-cert-dir} --c {webhook-cert-path} --k {webhook-key-path} --ca {webhook-ca-path} --webhook-port {webhook-port} --metrics {metrics-addr} --health-addr {health-addr}"),
            "m --kubeconfig /k -n ns -f f --webhook-cert-dir /d --c /d/tls.crt --k /d/tls.key --ca /d/ca.crt --webhook-port 9443 --metrics 127.0.0.1:8080 --health-addr 127.0.0.1:9440"
        );
        // Every placeholder has a value.
        let all = ALL.join(" ");
        let expanded = p.expand(&all);
        assert!(ALL.iter().all(|a| !expanded.contains(a)), "{expanded}");
        assert!(uses_webhooks("x --webhook-port {webhook-port}"));
        assert!(!uses_webhooks("x --kubeconfig {kubeconfig} {health-addr}"));
        assert_ne!(free_port().unwrap(), 0);
    }
}

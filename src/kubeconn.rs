//! kubectl-compatible connection setup: [`KubeOptions`] (the CLI's kubectl-style flags) →
//! [`kube::Config`].
//!
//! Resolution order, as kubectl does it:
//! 1. `--kubeconfig PATH` (only that file; a missing file is an error);
//! 2. else `$KUBECONFIG`, a colon-separated list merged first-wins (missing files are skipped);
//! 3. else `~/.kube/config` when it exists;
//! 4. else the in-cluster service-account config (or `--server` alone): the API server at
//!    `KUBERNETES_SERVICE_HOST`:`KUBERNETES_SERVICE_PORT`, the pod's service-account `token`,
//!    `ca.crt` and `namespace` files in [`SERVICE_ACCOUNT_DIR`] (or the directory
//!    `CAPI_CONFORMANCE_SERVICEACCOUNT_DIR` names: credentials mounted elsewhere, and the tests).
//!    The token file is re-read as kubelet rotates it.
//!
//! Then `--context/--cluster/--user` select entries, and `--server`, `--token`,
//! `--certificate-authority`, `--insecure-skip-tls-verify`, `--request-timeout` and `-n` override.

use kube::config::{
    AuthInfo, Cluster, Context, KubeConfigOptions, Kubeconfig, NamedAuthInfo, NamedCluster,
    NamedContext,
};
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

/// kubectl's connection flags, as the command line gave them (`cli::KubeArgs` converts).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KubeOptions {
    /// `--kubeconfig`: only this file.
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    pub cluster: Option<String>,
    pub user: Option<String>,
    pub namespace: Option<String>,
    /// `--request-timeout`, as given (`30s`; 0 = none).
    pub request_timeout: Option<String>,
    pub server: Option<String>,
    pub token: Option<String>,
    pub certificate_authority: Option<PathBuf>,
    pub insecure_skip_tls_verify: bool,
}

/// Why no connection could be configured. Every variant is an input error (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum KubeConnError {
    #[error("kubeconfig {path}: {message}")]
    Read { path: PathBuf, message: String },
    #[error("cannot merge kubeconfig {path}: {message}")]
    Merge { path: PathBuf, message: String },
    #[error("context {context:?} not found in {files} (contexts: {known})")]
    MissingContext {
        context: String,
        files: String,
        known: String,
    },
    #[error("cluster {cluster:?} not found in {files}")]
    MissingCluster { cluster: String, files: String },
    #[error("no current-context set in {files}; pass --context")]
    NoCurrentContext { files: String },
    #[error(
        "no kubeconfig found (--kubeconfig, $KUBECONFIG, ~/.kube/config) and not running in a cluster; pass --kubeconfig or --server"
    )]
    NothingFound,
    #[error("invalid kubeconfig from {files}: {message}")]
    Invalid { files: String, message: String },
    #[error("in-cluster config: {0}")]
    InCluster(String),
    #[error("invalid --server {server:?}: {message}")]
    Server { server: String, message: String },
    #[error("invalid duration {value:?} (use e.g. 30s, 1m, 300ms, or a bare number of seconds)")]
    Duration { value: String },
}

/// A usable connection configuration plus a description of where it came from.
#[derive(Debug, Clone)]
pub struct Connection {
    pub config: kube::Config,
    /// Human-readable origin: `context kind-mgmt (/home/u/.kube/config)` or `in-cluster`.
    pub source: String,
}

impl Connection {
    /// A client retrying throttled and failed requests (crate::client_retry) for up to 10 s.
    pub fn client(&self) -> anyhow::Result<kube::Client> {
        self.client_with(crate::client_retry::RetryPolicy::default())
    }

    /// [`Self::client`] with an explicit retry policy (a run's step deadline).
    pub fn client_with(
        &self,
        policy: crate::client_retry::RetryPolicy,
    ) -> anyhow::Result<kube::Client> {
        crate::client_retry::client_for_config(self.config.clone(), policy)
            .map_err(|e| anyhow::anyhow!("cannot build a client for {}: {e}", self.source))
    }
}

/// Where Kubernetes mounts a pod's service-account credentials (`token`, `ca.crt`, `namespace`).
pub const SERVICE_ACCOUNT_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
/// Names another directory holding those files instead of [`SERVICE_ACCOUNT_DIR`].
pub const SERVICE_ACCOUNT_DIR_ENV: &str = "CAPI_CONFORMANCE_SERVICEACCOUNT_DIR";

/// The in-cluster configuration a pod has: the API server's service address and the mounted
/// service-account files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InCluster {
    /// `$KUBERNETES_SERVICE_HOST`.
    pub host: String,
    /// `$KUBERNETES_SERVICE_PORT`.
    pub port: String,
    /// The service-account directory (`token`, `ca.crt`, `namespace`).
    pub dir: PathBuf,
}

/// What the process environment contributes (injected so tests need not mutate the env).
#[derive(Debug, Clone, Default)]
pub struct Environment {
    /// `$KUBECONFIG`, unsplit.
    pub kubeconfig: Option<OsString>,
    /// The home directory (for `~/.kube/config`).
    pub home: Option<PathBuf>,
    /// The in-cluster configuration, when `KUBERNETES_SERVICE_HOST` is set and the token file
    /// exists (client-go's condition).
    pub in_cluster: Option<InCluster>,
}

impl Environment {
    pub fn from_process() -> Self {
        let dir = match std::env::var_os(SERVICE_ACCOUNT_DIR_ENV) {
            Some(dir) if !dir.is_empty() => PathBuf::from(dir),
            _ => PathBuf::from(SERVICE_ACCOUNT_DIR),
        };
        let in_cluster = match (
            std::env::var("KUBERNETES_SERVICE_HOST"),
            std::env::var("KUBERNETES_SERVICE_PORT"),
        ) {
            (Ok(host), Ok(port)) if !host.is_empty() && dir.join("token").exists() => {
                Some(InCluster { host, port, dir })
            }
            _ => None,
        };
        Environment {
            kubeconfig: std::env::var_os("KUBECONFIG"),
            home: std::env::var_os("HOME").map(PathBuf::from),
            in_cluster,
        }
    }
}

/// Builds the connection the way kubectl would, from the process environment.
pub async fn connect(args: &KubeOptions) -> Result<Connection, KubeConnError> {
    connect_with(args, &Environment::from_process()).await
}

/// Builds the connection from `args` and an explicit environment.
pub async fn connect_with(
    args: &KubeOptions,
    env: &Environment,
) -> Result<Connection, KubeConnError> {
    let timeout = match &args.request_timeout {
        Some(v) => parse_duration(v)?,
        None => None,
    };
    let files = kubeconfig_files(args, env)?;
    let mut conn = if files.is_empty() {
        if let Some(server) = &args.server {
            from_kubeconfig(synthetic_kubeconfig(server), args, "--server").await?
        } else if let Some(pod) = &env.in_cluster {
            let source = format!("in-cluster ({})", pod.dir.display());
            let mut conn = from_kubeconfig(incluster_kubeconfig(pod)?, args, &source).await?;
            conn.source = source;
            conn
        } else {
            return Err(KubeConnError::NothingFound);
        }
    } else {
        let merged = read_merged(&files)?;
        let names = files
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(":");
        from_kubeconfig(merged, args, &names).await?
    };
    if let Some(ns) = &args.namespace {
        conn.config.default_namespace = ns.clone();
    }
    if let Some(t) = timeout {
        conn.config.connect_timeout = Some(t);
        conn.config.read_timeout = Some(t);
        conn.config.write_timeout = Some(t);
    }
    Ok(conn)
}

/// The kubeconfig files to read, in precedence order (empty: none found).
pub fn kubeconfig_files(
    args: &KubeOptions,
    env: &Environment,
) -> Result<Vec<PathBuf>, KubeConnError> {
    if let Some(path) = &args.kubeconfig {
        if !path.exists() {
            return Err(KubeConnError::Read {
                path: path.clone(),
                message: "no such file".into(),
            });
        }
        return Ok(vec![path.clone()]);
    }
    if let Some(list) = &env.kubeconfig {
        let existing: Vec<PathBuf> = std::env::split_paths(list)
            .filter(|p| !p.as_os_str().is_empty() && p.exists())
            .collect();
        if !existing.is_empty() {
            return Ok(existing);
        }
        if std::env::split_paths(list).any(|p| !p.as_os_str().is_empty()) {
            // kubectl: a KUBECONFIG that names only missing files means "no config".
            return Ok(Vec::new());
        }
    }
    if let Some(home) = &env.home {
        let default = home.join(".kube").join("config");
        if default.exists() {
            return Ok(vec![default]);
        }
    }
    Ok(Vec::new())
}

/// Reads and merges kubeconfig files, first file wins per key (kubectl's rule).
pub fn read_merged(files: &[PathBuf]) -> Result<Kubeconfig, KubeConnError> {
    let mut merged = Kubeconfig::default();
    for path in files {
        let next = Kubeconfig::read_from(path).map_err(|e| KubeConnError::Read {
            path: path.clone(),
            message: e.to_string(),
        })?;
        merged = merged.merge(next).map_err(|e| KubeConnError::Merge {
            path: path.clone(),
            message: e.to_string(),
        })?;
    }
    Ok(merged)
}

fn synthetic_kubeconfig(server: &str) -> Kubeconfig {
    Kubeconfig {
        clusters: vec![NamedCluster {
            name: "flags".into(),
            cluster: Some(Cluster {
                server: Some(server.to_string()),
                ..Cluster::default()
            }),
            other: Default::default(),
        }],
        auth_infos: vec![NamedAuthInfo {
            name: "flags".into(),
            auth_info: Some(AuthInfo::default()),
            other: Default::default(),
        }],
        contexts: vec![NamedContext {
            name: "flags".into(),
            context: Some(Context {
                cluster: "flags".into(),
                user: Some("flags".into()),
                ..Context::default()
            }),
            other: Default::default(),
        }],
        current_context: Some("flags".into()),
        ..Kubeconfig::default()
    }
}

async fn from_kubeconfig(
    mut kc: Kubeconfig,
    args: &KubeOptions,
    files: &str,
) -> Result<Connection, KubeConnError> {
    let context_name = match (&args.context, &kc.current_context) {
        (Some(c), _) => c.clone(),
        (None, Some(c)) if !c.is_empty() => c.clone(),
        _ => {
            return Err(KubeConnError::NoCurrentContext {
                files: files.to_string(),
            });
        }
    };
    let Some(context) = kc
        .contexts
        .iter()
        .find(|c| c.name == context_name)
        .and_then(|c| c.context.clone())
    else {
        let known = kc
            .contexts
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        return Err(KubeConnError::MissingContext {
            context: context_name,
            files: files.to_string(),
            known,
        });
    };
    let cluster_name = args.cluster.clone().unwrap_or(context.cluster.clone());
    let Some(cluster) = kc
        .clusters
        .iter_mut()
        .find(|c| c.name == cluster_name)
        .and_then(|c| c.cluster.as_mut())
    else {
        return Err(KubeConnError::MissingCluster {
            cluster: cluster_name,
            files: files.to_string(),
        });
    };
    if let Some(server) = &args.server {
        cluster.server = Some(server.clone());
    }
    if let Some(ca) = &args.certificate_authority {
        cluster.certificate_authority = Some(ca.display().to_string());
        cluster.certificate_authority_data = None;
    }
    if args.insecure_skip_tls_verify {
        cluster.insecure_skip_tls_verify = Some(true);
        cluster.certificate_authority = None;
        cluster.certificate_authority_data = None;
    }
    let user_name = args.user.clone().or(context.user.clone());
    if let Some(token) = &args.token {
        let name = user_name.clone().unwrap_or_else(|| "flags".into());
        match kc.auth_infos.iter_mut().find(|u| u.name == name) {
            Some(named) => {
                let auth = named.auth_info.get_or_insert_with(AuthInfo::default);
                set_token(auth, token);
            }
            None => {
                let mut auth = AuthInfo::default();
                set_token(&mut auth, token);
                kc.auth_infos.push(NamedAuthInfo {
                    name: name.clone(),
                    auth_info: Some(auth),
                    other: Default::default(),
                });
            }
        }
    }
    let options = KubeConfigOptions {
        context: Some(context_name.clone()),
        cluster: Some(cluster_name),
        user: match (&args.token, user_name) {
            (Some(_), None) => Some("flags".into()),
            (_, u) => u,
        },
    };
    let config = kube::Config::from_custom_kubeconfig(kc, &options)
        .await
        .map_err(|e| KubeConnError::Invalid {
            files: files.to_string(),
            message: e.to_string(),
        })?;
    Ok(Connection {
        config,
        source: format!("context {context_name} ({files})"),
    })
}

fn set_token(auth: &mut AuthInfo, token: &str) {
    auth.token = Some(token.to_string().into());
    auth.token_file = None;
    auth.exec = None;
    auth.auth_provider = None;
    auth.username = None;
    auth.password = None;
}

/// The in-cluster configuration as a kubeconfig (so `--server`, `--token`, `-n` … override it
/// exactly as they override a file): the server at the service address (client-go's
/// `https://host:port`, IPv6 bracketed), the CA file, the token file (re-read by kube as it
/// rotates) and the pod's namespace as the context's.
fn incluster_kubeconfig(pod: &InCluster) -> Result<Kubeconfig, KubeConnError> {
    let port: u16 = pod.port.trim().parse().map_err(|_| {
        KubeConnError::InCluster(format!(
            "KUBERNETES_SERVICE_PORT {:?} is not a port number",
            pod.port
        ))
    })?;
    let host = match pod.host.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V6(ip)) => format!("[{ip}]"),
        _ => pod.host.clone(),
    };
    let ca = pod.dir.join("ca.crt");
    if !ca.exists() {
        return Err(KubeConnError::InCluster(format!(
            "{} not found (the service account's CA certificate)",
            ca.display()
        )));
    }
    let namespace = std::fs::read_to_string(pod.dir.join("namespace"))
        .ok()
        .map(|ns| ns.trim().to_string())
        .filter(|ns| !ns.is_empty());
    let mut kc = synthetic_kubeconfig(&format!("https://{host}:{port}"));
    if let Some(cluster) = kc.clusters.first_mut().and_then(|c| c.cluster.as_mut()) {
        cluster.certificate_authority = Some(ca.display().to_string());
    }
    if let Some(user) = kc.auth_infos.first_mut().and_then(|u| u.auth_info.as_mut()) {
        user.token_file = Some(pod.dir.join("token").display().to_string());
    }
    if let Some(context) = kc.contexts.first_mut().and_then(|c| c.context.as_mut()) {
        context.namespace = namespace;
    }
    Ok(kc)
}

/// Parses a kubectl duration: Go syntax (`1h2m3s`, `300ms`, `1.5s`) or a bare number of seconds.
/// `0` (in any unit) means "no timeout" and returns `None`.
pub fn parse_duration(value: &str) -> Result<Option<Duration>, KubeConnError> {
    let err = || KubeConnError::Duration {
        value: value.to_string(),
    };
    let s = value.trim();
    if s.is_empty() {
        return Err(err());
    }
    if let Ok(secs) = s.parse::<u64>() {
        return Ok((secs > 0).then(|| Duration::from_secs(secs)));
    }
    let mut total = 0f64;
    let mut rest = s;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(err)?;
        if num_len == 0 {
            return Err(err());
        }
        let number: f64 = rest[..num_len].parse().map_err(|_| err())?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let factor = match &rest[..unit_len] {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return Err(err()),
        };
        total += number * factor;
        rest = &rest[unit_len..];
    }
    if !total.is_finite() {
        return Err(err());
    }
    Ok((total > 0.0).then(|| Duration::from_secs_f64(total)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::path::Path;

    fn kubeconfig(
        dir: &Path,
        file: &str,
        current: Option<&str>,
        entries: &[(&str, &str)],
    ) -> PathBuf {
        // entries: (context name, server)
        let mut y = String::from("apiVersion: v1\nkind: Config\n");
        if let Some(c) = current {
            y.push_str(&format!("current-context: {c}\n"));
        }
        y.push_str("clusters:\n");
        for (name, server) in entries {
            y.push_str(&format!(
                "- name: {name}\n  cluster:\n    server: {server}\n"
            ));
        }
        y.push_str("users:\n");
        for (name, _) in entries {
            y.push_str(&format!("- name: {name}\n  user:\n    token: tok-{name}\n"));
        }
        y.push_str("contexts:\n");
        for (name, _) in entries {
            y.push_str(&format!(
                "- name: {name}\n  context:\n    cluster: {name}\n    user: {name}\n    namespace: ns-{name}\n"
            ));
        }
        let path = dir.join(file);
        let mut f = std::fs::File::create(&path).unwrap();
        f.write_all(y.as_bytes()).unwrap();
        path
    }

    fn env_with(list: &[&Path]) -> Environment {
        Environment {
            kubeconfig: Some(std::env::join_paths(list).unwrap()),
            home: None,
            in_cluster: None,
        }
    }

    fn token_of(c: &Connection) -> Option<String> {
        use secrecy::ExposeSecret;
        c.config
            .auth_info
            .token
            .as_ref()
            .map(|t| t.expose_secret().to_string())
    }

    #[tokio::test]
    async fn two_files_merge_first_wins_and_current_context_from_first() {
        let dir = tempfile::tempdir().unwrap();
        let a = kubeconfig(
            dir.path(),
            "a",
            Some("alpha"),
            &[("alpha", "https://a.example:6443")],
        );
        let b = kubeconfig(
            dir.path(),
            "b",
            Some("beta"),
            &[
                ("beta", "https://b.example:6443"),
                ("alpha", "https://shadowed.example"),
            ],
        );
        let conn = connect_with(&KubeOptions::default(), &env_with(&[&a, &b]))
            .await
            .unwrap();
        assert_eq!(conn.config.cluster_url.host(), Some("a.example"));
        assert_eq!(conn.config.default_namespace, "ns-alpha");
        assert!(conn.source.contains("context alpha"));

        let args = KubeOptions {
            context: Some("beta".into()),
            ..KubeOptions::default()
        };
        let conn = connect_with(&args, &env_with(&[&a, &b])).await.unwrap();
        assert_eq!(conn.config.cluster_url.host(), Some("b.example"));
        assert_eq!(token_of(&conn).as_deref(), Some("tok-beta"));
    }

    #[tokio::test]
    async fn missing_files_in_kubeconfig_list_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let a = kubeconfig(
            dir.path(),
            "a",
            Some("alpha"),
            &[("alpha", "https://a.example")],
        );
        let missing = dir.path().join("nope");
        let conn = connect_with(&KubeOptions::default(), &env_with(&[&missing, &a]))
            .await
            .unwrap();
        assert_eq!(conn.config.cluster_url.host(), Some("a.example"));
    }

    #[tokio::test]
    async fn explicit_kubeconfig_wins_over_env_and_missing_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let a = kubeconfig(
            dir.path(),
            "a",
            Some("alpha"),
            &[("alpha", "https://a.example")],
        );
        let b = kubeconfig(
            dir.path(),
            "b",
            Some("beta"),
            &[("beta", "https://b.example")],
        );
        let args = KubeOptions {
            kubeconfig: Some(b.clone()),
            ..KubeOptions::default()
        };
        let conn = connect_with(&args, &env_with(&[&a])).await.unwrap();
        assert_eq!(conn.config.cluster_url.host(), Some("b.example"));

        let args = KubeOptions {
            kubeconfig: Some(dir.path().join("absent")),
            ..KubeOptions::default()
        };
        let err = connect_with(&args, &env_with(&[&a])).await.unwrap_err();
        assert!(err.to_string().contains("absent"), "{err}");
    }

    #[tokio::test]
    async fn missing_context_names_context_and_file() {
        let dir = tempfile::tempdir().unwrap();
        let a = kubeconfig(
            dir.path(),
            "a",
            Some("alpha"),
            &[("alpha", "https://a.example")],
        );
        let args = KubeOptions {
            context: Some("gamma".into()),
            ..KubeOptions::default()
        };
        let err = connect_with(&args, &env_with(&[&a])).await.unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("\"gamma\""), "{msg}");
        assert!(msg.contains(&a.display().to_string()), "{msg}");
        assert!(msg.contains("alpha"), "{msg}");
    }

    #[tokio::test]
    async fn no_current_context_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let a = kubeconfig(dir.path(), "a", None, &[("alpha", "https://a.example")]);
        let err = connect_with(&KubeOptions::default(), &env_with(&[&a]))
            .await
            .unwrap_err();
        assert!(
            matches!(err, KubeConnError::NoCurrentContext { .. }),
            "{err}"
        );
    }

    #[tokio::test]
    async fn flags_override_server_token_namespace_timeout_and_cluster() {
        let dir = tempfile::tempdir().unwrap();
        let a = kubeconfig(
            dir.path(),
            "a",
            Some("alpha"),
            &[
                ("alpha", "https://a.example"),
                ("other", "https://o.example"),
            ],
        );
        let args = KubeOptions {
            server: Some("https://s.example:7443".into()),
            token: Some("flag-token".into()),
            namespace: Some("work".into()),
            request_timeout: Some("1m".into()),
            insecure_skip_tls_verify: true,
            ..KubeOptions::default()
        };
        let conn = connect_with(&args, &env_with(&[&a])).await.unwrap();
        assert_eq!(conn.config.cluster_url.host(), Some("s.example"));
        assert_eq!(token_of(&conn).as_deref(), Some("flag-token"));
        assert_eq!(conn.config.default_namespace, "work");
        assert_eq!(conn.config.read_timeout, Some(Duration::from_secs(60)));
        assert!(conn.config.accept_invalid_certs);

        let args = KubeOptions {
            cluster: Some("other".into()),
            ..KubeOptions::default()
        };
        let conn = connect_with(&args, &env_with(&[&a])).await.unwrap();
        assert_eq!(conn.config.cluster_url.host(), Some("o.example"));
    }

    #[tokio::test]
    async fn home_default_and_server_only_and_nothing() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".kube")).unwrap();
        kubeconfig(
            &dir.path().join(".kube"),
            "config",
            Some("home"),
            &[("home", "https://h.example")],
        );
        let env = Environment {
            kubeconfig: None,
            home: Some(dir.path().to_path_buf()),
            in_cluster: None,
        };
        let conn = connect_with(&KubeOptions::default(), &env).await.unwrap();
        assert_eq!(conn.config.cluster_url.host(), Some("h.example"));

        let empty = Environment::default();
        let err = connect_with(&KubeOptions::default(), &empty)
            .await
            .unwrap_err();
        assert!(matches!(err, KubeConnError::NothingFound));

        let args = KubeOptions {
            server: Some("http://127.0.0.1:8080".into()),
            token: Some("t".into()),
            ..KubeOptions::default()
        };
        let conn = connect_with(&args, &empty).await.unwrap();
        assert_eq!(conn.config.cluster_url.port_u16(), Some(8080));
        assert_eq!(token_of(&conn).as_deref(), Some("t"));
    }

    /// A service-account directory as kubelet mounts it.
    fn service_account_dir(namespace: Option<&str>) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let ca = embedded_apiserver::tls::generate("127.0.0.1".parse().unwrap()).unwrap();
        std::fs::write(dir.path().join("ca.crt"), ca.ca_pem).unwrap();
        std::fs::write(dir.path().join("token"), "sa-token\n").unwrap();
        if let Some(ns) = namespace {
            std::fs::write(dir.path().join("namespace"), ns).unwrap();
        }
        dir
    }

    fn in_cluster_env(host: &str, port: &str, dir: &Path) -> Environment {
        Environment {
            kubeconfig: None,
            home: None,
            in_cluster: Some(InCluster {
                host: host.into(),
                port: port.into(),
                dir: dir.to_path_buf(),
            }),
        }
    }

    #[tokio::test]
    async fn in_cluster_reads_service_address_token_ca_and_namespace() {
        let sa = service_account_dir(Some("conformance\n"));
        let env = in_cluster_env("10.96.0.1", "443", sa.path());
        let conn = connect_with(&KubeOptions::default(), &env).await.unwrap();
        assert_eq!(
            conn.config.cluster_url.to_string(),
            "https://10.96.0.1:443/"
        );
        assert_eq!(conn.config.default_namespace, "conformance");
        assert_eq!(
            conn.config.auth_info.token_file.as_deref(),
            Some(sa.path().join("token").to_str().unwrap())
        );
        assert_eq!(conn.config.root_cert.as_ref().map(Vec::len), Some(1));
        assert!(conn.source.starts_with("in-cluster ("), "{}", conn.source);

        // IPv6 service addresses are bracketed; a missing namespace file means `default`.
        let sa = service_account_dir(None);
        let env = in_cluster_env("fd00::1", "6443", sa.path());
        let conn = connect_with(&KubeOptions::default(), &env).await.unwrap();
        assert_eq!(conn.config.cluster_url.host(), Some("[fd00::1]"));
        assert_eq!(conn.config.cluster_url.port_u16(), Some(6443));
        assert_eq!(conn.config.default_namespace, "default");

        // Flags override it as they override a kubeconfig.
        let args = KubeOptions {
            token: Some("flag-token".into()),
            namespace: Some("other".into()),
            ..KubeOptions::default()
        };
        let conn = connect_with(&args, &env).await.unwrap();
        assert_eq!(token_of(&conn).as_deref(), Some("flag-token"));
        assert_eq!(conn.config.auth_info.token_file, None);
        assert_eq!(conn.config.default_namespace, "other");
    }

    #[tokio::test]
    async fn in_cluster_errors_name_what_is_wrong() {
        let sa = service_account_dir(None);
        let env = in_cluster_env("10.96.0.1", "https", sa.path());
        let err = connect_with(&KubeOptions::default(), &env)
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("KUBERNETES_SERVICE_PORT \"https\""), "{err}");
        std::fs::remove_file(sa.path().join("ca.crt")).unwrap();
        let env = in_cluster_env("10.96.0.1", "443", sa.path());
        let err = connect_with(&KubeOptions::default(), &env)
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("ca.crt not found"), "{err}");
    }

    #[test]
    fn durations_follow_kubectl() {
        assert_eq!(parse_duration("30").unwrap(), Some(Duration::from_secs(30)));
        assert_eq!(
            parse_duration("30s").unwrap(),
            Some(Duration::from_secs(30))
        );
        assert_eq!(parse_duration("1m").unwrap(), Some(Duration::from_secs(60)));
        assert_eq!(
            parse_duration("300ms").unwrap(),
            Some(Duration::from_millis(300))
        );
        assert_eq!(
            parse_duration("1h2m3s").unwrap(),
            Some(Duration::from_secs(3723))
        );
        assert_eq!(
            parse_duration("1.5s").unwrap(),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(parse_duration("0").unwrap(), None);
        assert_eq!(parse_duration("0s").unwrap(), None);
        for bad in ["", "s", "1x", "-1s", "1m-", "abc"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}

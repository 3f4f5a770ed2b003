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
    /// The kubeconfig of the chosen context alone (its cluster and user, the flags applied):
    /// what a manager the run starts beside the cluster is given ([`Self::kubeconfig_yaml`]).
    pub kubeconfig: Kubeconfig,
    /// Human-readable origin: `context kind-mgmt (/home/u/.kube/config)` or `in-cluster`.
    pub source: String,
}

impl Connection {
    /// [`Self::kubeconfig`] as a document a Go manager reads (`--kubeconfig`): JSON, which
    /// client-go reads as YAML.
    pub fn kubeconfig_yaml(&self) -> Result<String, KubeConnError> {
        serde_json::to_string_pretty(&self.kubeconfig).map_err(|e| KubeConnError::Invalid {
            files: self.source.clone(),
            message: e.to_string(),
        })
    }

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
    let minified = minify(&kc, &context_name, &options);
    let config = kube::Config::from_custom_kubeconfig(kc, &options)
        .await
        .map_err(|e| KubeConnError::Invalid {
            files: files.to_string(),
            message: e.to_string(),
        })?;
    Ok(Connection {
        config,
        kubeconfig: minified,
        source: format!("context {context_name} ({files})"),
    })
}

/// `kc` with only the context `name` (as `options` chose its cluster and user) and what it
/// names, that context current (`kubectl config view --minify`).
fn minify(kc: &Kubeconfig, name: &str, options: &KubeConfigOptions) -> Kubeconfig {
    let mut context = kc
        .contexts
        .iter()
        .find(|c| c.name == name)
        .cloned()
        .unwrap_or_else(|| NamedContext {
            name: name.to_string(),
            context: None,
            other: Default::default(),
        });
    if let Some(c) = context.context.as_mut() {
        if let Some(cluster) = &options.cluster {
            c.cluster = cluster.clone();
        }
        if options.user.is_some() {
            c.user = options.user.clone();
        }
    }
    let cluster = context.context.as_ref().map(|c| c.cluster.clone());
    let user = context.context.as_ref().and_then(|c| c.user.clone());
    Kubeconfig {
        clusters: kc
            .clusters
            .iter()
            .filter(|c| Some(&c.name) == cluster.as_ref())
            .cloned()
            .collect(),
        auth_infos: kc
            .auth_infos
            .iter()
            .filter(|u| Some(&u.name) == user.as_ref())
            .cloned()
            .collect(),
        contexts: vec![context],
        current_context: Some(name.to_string()),
        ..Kubeconfig::default()
    }
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
    capi_lifecycle::duration::parse_duration(value)
        .map_err(|e| KubeConnError::Duration { value: e.value })
}

#[cfg(test)]
mod tests;

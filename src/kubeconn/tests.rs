use super::*;
use std::io::Write;
use std::path::Path;

fn kubeconfig(dir: &Path, file: &str, current: Option<&str>, entries: &[(&str, &str)]) -> PathBuf {
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

/// A kubeconfig file with one context, `name`, current.
fn single(dir: &Path, file: &str, name: &str, server: &str) -> PathBuf {
    kubeconfig(dir, file, Some(name), &[(name, server)])
}

/// `--kubeconfig path`.
fn from_file(path: PathBuf) -> KubeOptions {
    KubeOptions {
        kubeconfig: Some(path),
        ..KubeOptions::default()
    }
}

/// `--context name`.
fn in_context(name: &str) -> KubeOptions {
    KubeOptions {
        context: Some(name.into()),
        ..KubeOptions::default()
    }
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
    let a = single(dir.path(), "a", "alpha", "https://a.example:6443");
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

    let args = in_context("beta");
    let conn = connect_with(&args, &env_with(&[&a, &b])).await.unwrap();
    assert_eq!(conn.config.cluster_url.host(), Some("b.example"));
    assert_eq!(token_of(&conn).as_deref(), Some("tok-beta"));
}

#[tokio::test]
async fn missing_files_in_kubeconfig_list_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let a = single(dir.path(), "a", "alpha", "https://a.example");
    let missing = dir.path().join("nope");
    let conn = connect_with(&KubeOptions::default(), &env_with(&[&missing, &a]))
        .await
        .unwrap();
    assert_eq!(conn.config.cluster_url.host(), Some("a.example"));
}

#[tokio::test]
async fn explicit_kubeconfig_wins_over_env_and_missing_file_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let a = single(dir.path(), "a", "alpha", "https://a.example");
    let b = single(dir.path(), "b", "beta", "https://b.example");
    let args = from_file(b.clone());
    let conn = connect_with(&args, &env_with(&[&a])).await.unwrap();
    assert_eq!(conn.config.cluster_url.host(), Some("b.example"));

    let args = from_file(dir.path().join("absent"));
    let err = connect_with(&args, &env_with(&[&a])).await.unwrap_err();
    assert!(err.to_string().contains("absent"), "{err}");
}

#[tokio::test]
async fn missing_context_names_context_and_file() {
    let dir = tempfile::tempdir().unwrap();
    let a = single(dir.path(), "a", "alpha", "https://a.example");
    let args = in_context("gamma");
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

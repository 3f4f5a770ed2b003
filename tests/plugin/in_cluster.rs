//! The tool where the cluster is: `manifests job` applied with the real kubectl to
//! `serve`, then the Job's container command run as the kubelet would run it — the image's
//! binary, the stored Job's arguments, the pod's ServiceAccount token (TokenRequest) and the
//! server CA as mounted files, `KUBERNETES_SERVICE_HOST/PORT`, no kubeconfig, no home — with the
//! same verdict and results as the admin's run.

use crate::least_privilege::{
    FULL, assert_same, check, cluster, provider, verdict_of, verdict_of_report,
};
use crate::support::{Kubectl, stderr, stdout, tool_bin};
use base64::Engine;
use capi_conformance::commands::manifests::IMAGE_BINARY;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// What a pod gets from the cluster: the API server's service address and the mounted
/// service-account files.
pub(crate) struct Pod {
    pub(crate) host: String,
    pub(crate) port: String,
    /// `token`, `ca.crt`, `namespace` (what kubelet mounts at
    /// /var/run/secrets/kubernetes.io/serviceaccount).
    pub(crate) service_account: tempfile::TempDir,
}

/// The admin kubeconfig's server address, CA (PEM) and token.
pub(crate) fn admin_kubeconfig(path: &Path) -> (String, String, String, String) {
    let kc: Value = serde_saphyr::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let server = kc["clusters"][0]["cluster"]["server"].as_str().unwrap();
    let url = server.trim_start_matches("https://");
    let (host, port) = url.trim_end_matches('/').rsplit_once(':').unwrap();
    let ca = base64::engine::general_purpose::STANDARD
        .decode(
            kc["clusters"][0]["cluster"]["certificate-authority-data"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
    let token = kc["users"][0]["user"]["token"].as_str().unwrap();
    (
        host.to_string(),
        port.to_string(),
        String::from_utf8(ca).unwrap(),
        token.to_string(),
    )
}

/// The files kubelet mounts for a pod whose token is `token`.
pub(crate) fn pod(admin: &Path, namespace: &str, token: &str) -> Pod {
    let (host, port, ca, _) = admin_kubeconfig(admin);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("token"), token).unwrap();
    std::fs::write(dir.path().join("ca.crt"), ca).unwrap();
    std::fs::write(dir.path().join("namespace"), namespace).unwrap();
    Pod {
        host,
        port,
        service_account: dir,
    }
}

/// A token for ServiceAccount `ns/name` from its TokenRequest subresource (what kubelet
/// projects into the pod).
async fn token_for(admin: &kube::Client, ns: &str, name: &str) -> String {
    let req = http::Request::post(format!(
        "/api/v1/namespaces/{ns}/serviceaccounts/{name}/token"
    ))
    .header("content-type", "application/json")
    .body(
        serde_json::to_vec(&json!({"apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest", "spec": {"expirationSeconds": 3600}}))
        .unwrap(),
    )
    .unwrap();
    let answer: Value = admin.request(req).await.unwrap();
    answer["status"]["token"].as_str().unwrap().to_string()
}

/// Runs `container` (of a stored pod template) as the kubelet would: the image's binary,
/// its arguments with each volume's mount path mapped to a host directory, only the given
/// environment plus the in-cluster one.
pub(crate) fn run_container(
    container: &Value,
    mounts: &BTreeMap<String, PathBuf>,
    pod: &Pod,
    env: &[(&str, &str)],
) -> Output {
    let command: Vec<&str> = container["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(command, [IMAGE_BINARY], "the image's binary");
    let args: Vec<String> = container["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            let a = a.as_str().unwrap();
            match mounts.iter().find(|(m, _)| a.starts_with(m.as_str())) {
                Some((m, dir)) => format!("{}{}", dir.display(), &a[m.len()..]),
                None => a.to_string(),
            }
        })
        .collect();
    let workdir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(tool_bin());
    cmd.args(&args)
        .env_clear()
        .env("KUBERNETES_SERVICE_HOST", &pod.host)
        .env("KUBERNETES_SERVICE_PORT", &pod.port)
        .env(
            capi_conformance::kubeconn::SERVICE_ACCOUNT_DIR_ENV,
            pod.service_account.path(),
        )
        .current_dir(workdir.path())
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// The volume mounts of `container`, each mapped to a fresh host directory.
fn host_mounts(container: &Value, root: &Path) -> BTreeMap<String, PathBuf> {
    container["volumeMounts"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| {
            let path = m["mountPath"].as_str().unwrap().to_string();
            let dir = root.join(m["name"].as_str().unwrap());
            std::fs::create_dir_all(&dir).unwrap();
            (path, dir)
        })
        .collect()
}

/// `manifests job ARGS`, written to `dir/name`.
fn job_manifests(dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    let out = Command::new(tool_bin())
        .args(["manifests", "job"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let path = dir.join(name);
    std::fs::write(&path, &out.stdout).unwrap();
    path
}

/// The Job as the server stored it.
fn stored_job(kubectl: &Kubectl, kubeconfig: &str, ns: &str) -> Value {
    let out = kubectl.run(&[
        "--kubeconfig",
        kubeconfig,
        "-n",
        ns,
        "get",
        "job",
        "capi-conformance",
        "-o",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Applies the printed manifests with the real kubectl, then runs the stored Job's container as
/// its ServiceAccount; returns the container's output and its report directory.
async fn apply_and_run_job(
    kubectl: &Kubectl,
    cluster: &crate::least_privilege::Cluster,
    manifests: &Path,
    ns: &str,
    reports: &Path,
) -> (Output, BTreeMap<String, PathBuf>) {
    let kc = cluster.served.kubeconfig.to_string_lossy().into_owned();
    let applied = kubectl.run(&[
        "--kubeconfig",
        &kc,
        "apply",
        "-f",
        manifests.to_str().unwrap(),
    ]);
    assert!(applied.status.success(), "{}", stderr(&applied));
    assert!(
        stdout(&applied).contains("job.batch/capi-conformance created"),
        "{}",
        stdout(&applied)
    );
    let job = stored_job(kubectl, &kc, ns);
    let pod_spec = &job["spec"]["template"]["spec"];
    assert_eq!(pod_spec["restartPolicy"], "Never");
    let sa = pod_spec["serviceAccountName"].as_str().unwrap();
    let container = &pod_spec["containers"][0];
    let mounts = host_mounts(container, reports);
    let token = token_for(&cluster.admin, ns, sa).await;
    let pod = pod(&cluster.served.kubeconfig, ns, &token);
    let out = tokio::task::block_in_place(|| run_container(container, &mounts, &pod, &[]));
    (out, mounts)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_printed_job_applied_with_kubectl_runs_check_in_cluster_with_the_admins_verdict() {
    let test = "the_printed_job_applied_with_kubectl_runs_check_in_cluster_with_the_admins_verdict";
    let Some(kubectl) = Kubectl::find(test) else {
        return;
    };
    let Some(cluster) = cluster(test).await else {
        return;
    };
    let _provider = provider(&cluster.served.kubeconfig);

    // Full check: the Job in the default namespace with short quiet windows after `--`.
    let mut extra = vec!["--"];
    extra.extend(FULL);
    let manifests = job_manifests(cluster.dir.path(), "job.yaml", &extra);
    let admin = check(&cluster.served.kubeconfig, &FULL);
    let want = verdict_of(&admin);
    assert!(
        matches!(want.0, Some(0 | 1 | 3)),
        "a verdict, not an error: {}",
        stderr(&admin)
    );
    let reports = tempfile::tempdir().unwrap();
    let (out, mounts) = apply_and_run_job(
        &kubectl,
        &cluster,
        &manifests,
        "capi-conformance",
        reports.path(),
    )
    .await;
    let dir = &mounts["/reports"];
    let report: Value = serde_json::from_slice(
        &std::fs::read(dir.join("report.json"))
            .unwrap_or_else(|e| panic!("no report.json ({e}): {}", stderr(&out))),
    )
    .unwrap();
    assert_same(
        &verdict_of_report(out.status.code(), &report),
        &want,
        &stderr(&out),
    );
    // `kubectl logs`: the table on stdout; the other reports on the volume.
    assert!(stdout(&out).contains("Summary: "), "{}", stdout(&out));
    for file in ["junit.xml", "summary.md", "report.html"] {
        assert!(dir.join(file).is_file(), "{file} missing from the volume");
    }

    // Static only, in another namespace: only the read-only role is bound.
    let manifests = job_manifests(
        cluster.dir.path(),
        "job-static.yaml",
        &["--static-only", "--namespace", "conformance-static"],
    );
    let admin = check(&cluster.served.kubeconfig, &["--static-only"]);
    let want = verdict_of(&admin);
    let reports = tempfile::tempdir().unwrap();
    let (out, mounts) = apply_and_run_job(
        &kubectl,
        &cluster,
        &manifests,
        "conformance-static",
        reports.path(),
    )
    .await;
    let report: Value =
        serde_json::from_slice(&std::fs::read(mounts["/reports"].join("report.json")).unwrap())
            .unwrap();
    assert_same(
        &verdict_of_report(out.status.code(), &report),
        &want,
        &stderr(&out),
    );
}

/// Without the mounted credentials the container has no configuration at all (no kubeconfig,
/// no home): the in-cluster path is the one the Job's run used, and its absence is a clear error.
#[test]
fn without_service_account_files_the_container_says_what_is_missing() {
    let pod = Pod {
        host: "127.0.0.1".into(),
        port: "1".into(),
        service_account: tempfile::tempdir().unwrap(),
    };
    let container = json!({"command": [IMAGE_BINARY], "args": ["check", "--static-only"]});
    let out = run_container(&container, &BTreeMap::new(), &pod, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no kubeconfig found"),
        "{}",
        stderr(&out)
    );
}

/// Every `capi-conformance manifests …` command README and docs/ci.md show runs and prints YAML.
#[test]
fn readme_manifests_commands_run() {
    let root = crate::support::repo_root();
    let readme = ["README.md", "docs/ci.md"]
        .map(|f| std::fs::read_to_string(root.join(f)).unwrap())
        .join("\n");
    let commands: Vec<&str> = readme
        .lines()
        .filter_map(|l| l.trim().strip_prefix("capi-conformance manifests "))
        .collect();
    assert!(commands.len() >= 2, "{commands:?}");
    for command in commands {
        let args = command.split('>').next().unwrap();
        let out = Command::new(tool_bin())
            .arg("manifests")
            .args(args.split_whitespace())
            .output()
            .unwrap();
        assert!(out.status.success(), "{command}: {}", stderr(&out));
        let docs: Vec<Value> = serde_saphyr::from_multiple(&stdout(&out)).unwrap();
        assert!(!docs.is_empty(), "{command}");
    }
}

//! docs/embedded-apiserver.md §7 checks 54–64: the real kubectl binaries against `capi-conformance serve`.
//! Every versioned binary `kubectl.1.29` … `kubectl.1.33` beside the `kubectl` on PATH is used;
//! absent ones are skipped with a printed reason.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

#[path = "shared/components_file.rs"]
mod components_file;
#[path = "shared/shared_data.rs"]
mod shared_data;

const VERSIONS: &[&str] = &["1.29", "1.30", "1.31", "1.32", "1.33"];

fn kubectl_dir() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    let found = std::env::split_paths(&path)
        .map(|d| d.join("kubectl"))
        .find(|p| p.is_file())?;
    std::fs::canonicalize(found)
        .ok()?
        .parent()
        .map(Path::to_path_buf)
}

/// The versioned kubectl binaries present (printing why others are skipped).
fn binaries() -> Vec<(String, PathBuf)> {
    let Some(dir) = kubectl_dir() else {
        println!("skip: no kubectl on PATH");
        return Vec::new();
    };
    VERSIONS
        .iter()
        .filter_map(|v| {
            let p = dir.join(format!("kubectl.{v}"));
            if p.is_file() {
                Some((v.to_string(), p))
            } else {
                println!("skip: kubectl.{v} not found in {}", dir.display());
                None
            }
        })
        .collect()
}

struct Serve {
    child: Child,
    dir: tempfile::TempDir,
    kubeconfig: PathBuf,
}

impl Serve {
    fn start() -> Self {
        Self::start_with(tempfile::tempdir().unwrap(), &[])
    }

    /// `serve` with more arguments (e.g. `--load FILE`), its kubeconfig in `dir`.
    fn start_with(dir: tempfile::TempDir, args: &[&std::ffi::OsStr]) -> Self {
        let kubeconfig = dir.path().join("kubeconfig");
        let mut child = Command::new(env!("CARGO_BIN_EXE_capi-conformance"))
            .args(["serve", "--write-kubeconfig"])
            .arg(&kubeconfig)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(line.starts_with("serving https://127.0.0.1:"), "{line}");
        assert!(
            line.trim_end()
                .ends_with(&format!("kubeconfig {}", kubeconfig.display())),
            "{line}"
        );
        Self {
            child,
            dir,
            kubeconfig,
        }
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.dir.path().join(name);
        std::fs::File::create(&p)
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        p
    }

    fn run(&self, bin: &Path, args: &[&str]) -> Output {
        Command::new(bin)
            .args(args)
            .env("KUBECONFIG", &self.kubeconfig)
            .env("KUBECACHEDIR", self.dir.path().join("cache"))
            .env_remove("KUBECTL_EXTERNAL_DIFF")
            .output()
            .unwrap()
    }

    /// Runs kubectl and returns stdout, asserting success.
    fn ok(&self, bin: &Path, args: &[&str]) -> String {
        let out = self.run(bin, args);
        assert!(
            out.status.success(),
            "kubectl {args:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn spawn(&self, bin: &Path, args: &[&str]) -> Child {
        Command::new(bin)
            .args(args)
            .env("KUBECONFIG", &self.kubeconfig)
            .env("KUBECACHEDIR", self.dir.path().join("cache"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    fn install_crd(&self, bin: &Path) -> PathBuf {
        let crd = self.write("crd.yaml", CRD);
        let out = self.ok(bin, &["apply", "-f", crd.to_str().unwrap()]);
        assert!(out.contains("widgets.example.com created"), "{out}");
        self.ok(
            bin,
            &[
                "wait",
                "--for=condition=Established",
                "crd/widgets.example.com",
                "--timeout=10s",
            ],
        );
        crd
    }

    fn apply_widget(&self, bin: &Path, size: &str) -> String {
        let cr = self.write("cr.yaml", &CR.replace("SIZE", size));
        self.ok(bin, &["apply", "-f", cr.to_str().unwrap()])
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd], categories: [all]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas, labelSelectorPath: .status.selector}
    additionalPrinterColumns:
    - {name: Size, type: string, jsonPath: .spec.size}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            properties:
              replicas: {type: integer, minimum: 0}
              size: {type: string, enum: [small, large]}
              mode: {type: string, default: auto}
          status:
            type: object
            x-kubernetes-preserve-unknown-fields: true
"#;

const CR: &str = "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w1\n  namespace: default\nspec:\n  size: SIZE\n";

fn each_kubectl(check: impl Fn(&str, &Path)) {
    for (v, bin) in binaries() {
        println!("kubectl {v}");
        check(&v, &bin);
    }
}

#[test]
fn check_54_apply_crd_unchanged_and_wait_established() {
    each_kubectl(|_, k| {
        let s = Serve::start();
        let crd = s.install_crd(k);
        let again = s.ok(k, &["apply", "-f", crd.to_str().unwrap()]);
        assert!(again.contains("widgets.example.com unchanged"), "{again}");
        let w = s.ok(
            k,
            &[
                "wait",
                "--for=condition=Established",
                "crd/widgets.example.com",
            ],
        );
        assert!(w.contains("condition met"), "{w}");
    });
}

#[test]
fn check_55_apply_edit_reapply_configured() {
    each_kubectl(|_, k| {
        let s = Serve::start();
        s.install_crd(k);
        assert!(
            s.apply_widget(k, "small")
                .contains("widget.example.com/w1 created")
        );
        assert!(
            s.apply_widget(k, "large")
                .contains("widget.example.com/w1 configured")
        );
        let last = s.ok(k, &["get", "widget", "w1", "-o", "jsonpath={.metadata.annotations.kubectl\\.kubernetes\\.io/last-applied-configuration}"]);
        assert!(last.contains("\"size\":\"large\""), "{last}");
        assert!(s.apply_widget(k, "large").contains("unchanged"));
    });
}

#[test]
fn check_56_server_side_apply() {
    each_kubectl(|_, k| {
        let s = Serve::start();
        s.install_crd(k);
        let cr = s.write("cr.yaml", &CR.replace("SIZE", "small"));
        let out = s.ok(k, &["apply", "--server-side", "-f", cr.to_str().unwrap()]);
        assert!(out.contains("serverside-applied"), "{out}");
        let mf = s.ok(
            k,
            &[
                "get",
                "widget",
                "w1",
                "--show-managed-fields",
                "-o",
                "jsonpath={.metadata.managedFields[0].manager}",
            ],
        );
        assert_eq!(mf, "kubectl");
    });
}

#[test]
fn check_57_get_all_namespaces_and_api_resources() {
    each_kubectl(|_, k| {
        let s = Serve::start();
        s.install_crd(k);
        s.apply_widget(k, "small");
        assert!(
            s.ok(k, &["get", "wd", "-A", "-o", "yaml"])
                .contains("name: w1")
        );
        assert!(s.ok(k, &["get", "all"]).contains("w1"));
        let ar = s.ok(k, &["api-resources", "--api-group=example.com"]);
        assert!(
            ar.lines()
                .any(|l| l.starts_with("widgets") && l.contains(" wd ")),
            "{ar}"
        );
    });
}

#[test]
fn check_58_scale() {
    each_kubectl(|_, k| {
        let s = Serve::start();
        s.install_crd(k);
        s.apply_widget(k, "small");
        assert!(
            s.ok(k, &["scale", "widget", "w1", "--replicas=3"])
                .contains("scaled")
        );
        assert_eq!(
            s.ok(
                k,
                &["get", "widget", "w1", "-o", "jsonpath={.spec.replicas}"]
            ),
            "3"
        );
    });
}

#[test]
fn check_59_wait_for_condition() {
    each_kubectl(|_, k| {
        let s = Serve::start();
        s.install_crd(k);
        s.apply_widget(k, "small");
        let waiter = s.spawn(
            k,
            &[
                "wait",
                "--for=condition=Ready",
                "widget/w1",
                "--timeout=20s",
            ],
        );
        std::thread::sleep(Duration::from_millis(500));
        s.ok(
            k,
            &[
                "patch",
                "widget",
                "w1",
                "--subresource=status",
                "--type=merge",
                "-p",
                r#"{"status":{"conditions":[{"type":"Ready","status":"True"}]}}"#,
            ],
        );
        let out = waiter.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("condition met"));
    });
}

#[test]
fn check_60_delete_waits_for_finalizer() {
    each_kubectl(|_, k| {
        let s = Serve::start();
        s.install_crd(k);
        s.apply_widget(k, "small");
        s.ok(
            k,
            &[
                "patch",
                "widget",
                "w1",
                "--type=merge",
                "-p",
                r#"{"metadata":{"finalizers":["example.com/hold"]}}"#,
            ],
        );
        let mut deleter = s.spawn(k, &["delete", "widget", "w1", "--timeout=20s"]);
        std::thread::sleep(Duration::from_millis(800));
        assert!(
            deleter.try_wait().unwrap().is_none(),
            "delete must block on the finalizer"
        );
        let ts = s.ok(
            k,
            &[
                "get",
                "widget",
                "w1",
                "-o",
                "jsonpath={.metadata.deletionTimestamp}",
            ],
        );
        assert!(!ts.is_empty());
        s.ok(
            k,
            &[
                "patch",
                "widget",
                "w1",
                "--type=merge",
                "-p",
                r#"{"metadata":{"finalizers":null}}"#,
            ],
        );
        let out = deleter.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("deleted"));
        assert!(!s.run(k, &["get", "widget", "w1"]).status.success());
    });
}

#[test]
fn check_61_auth_can_i_and_create_secret() {
    each_kubectl(|_, k| {
        let s = Serve::start();
        s.install_crd(k);
        assert_eq!(
            s.ok(k, &["auth", "can-i", "create", "widgets"]).trim(),
            "yes"
        );
        assert!(
            s.ok(
                k,
                &["create", "secret", "generic", "s", "--from-literal=a=b"]
            )
            .contains("secret/s created")
        );
        assert_eq!(
            s.ok(k, &["get", "secret", "s", "-o", "jsonpath={.data.a}"]),
            "Yg=="
        );
    });
}

/// `kubectl create role|clusterrole|rolebinding|clusterrolebinding` (protobuf bodies from 1.32
/// on) and impersonation (`--as`, `--as-group`): the created RBAC is what `auth can-i` answers
/// for the impersonated user, and a ServiceAccount without the `impersonate` verb is refused.
#[test]
fn create_rbac_objects_and_impersonate() {
    each_kubectl(|_, k| {
        let s = Serve::start();
        s.ok(
            k,
            &["create", "secret", "generic", "s1", "--from-literal=a=b"],
        );
        s.ok(
            k,
            &[
                "create",
                "role",
                "r1",
                "--verb=get",
                "--resource=secrets",
                "--resource-name=s1",
            ],
        );
        s.ok(
            k,
            &["create", "rolebinding", "rb1", "--role=r1", "--user=bob"],
        );
        s.ok(
            k,
            &[
                "create",
                "clusterrole",
                "cm-reader",
                "--verb=get,list",
                "--resource=configmaps",
            ],
        );
        s.ok(
            k,
            &[
                "create",
                "clusterrolebinding",
                "crb1",
                "--clusterrole=cm-reader",
                "--group=devs",
            ],
        );
        s.ok(
            k,
            &["create", "clusterrole", "agg", "--aggregation-rule=team=a"],
        );
        let role = s.ok(k, &["get", "role", "r1", "-o", "jsonpath={.rules}"]);
        let role: serde_json::Value = serde_json::from_str(&role).unwrap();
        assert_eq!(
            role,
            serde_json::json!([{"apiGroups": [""], "resources": ["secrets"],
                                "resourceNames": ["s1"], "verbs": ["get"]}])
        );
        assert_eq!(
            s.ok(
                k,
                &[
                    "get",
                    "rolebinding",
                    "rb1",
                    "-o",
                    "jsonpath={.subjects[0].name}/{.roleRef.kind}/{.roleRef.name}"
                ]
            ),
            "bob/Role/r1"
        );
        assert_eq!(
            s.ok(
                k,
                &[
                    "get",
                    "clusterrole",
                    "agg",
                    "-o",
                    "jsonpath={.aggregationRule.clusterRoleSelectors[0].matchLabels.team}"
                ]
            ),
            "a"
        );
        let can = |args: &[&str]| {
            let out = s.run(k, &[&["auth", "can-i"], args].concat());
            String::from_utf8_lossy(&out.stdout).trim().to_string()
        };
        assert_eq!(can(&["get", "secrets/s1", "--as=bob"]), "yes");
        assert_eq!(can(&["get", "secrets/s2", "--as=bob"]), "no");
        assert_eq!(can(&["list", "configmaps", "--as=alice"]), "no");
        assert_eq!(
            can(&["list", "configmaps", "--as=alice", "--as-group=devs"]),
            "yes"
        );
        let who = s.ok(
            k,
            &[
                "auth",
                "whoami",
                "--as=alice",
                "--as-group=devs",
                "-o",
                "jsonpath={.status.userInfo.groups}",
            ],
        );
        assert_eq!(who, r#"["devs","system:authenticated"]"#);
        let out = s.run(k, &["get", "secrets", "--as=bob"]);
        assert!(!out.status.success());
        assert!(
            String::from_utf8_lossy(&out.stderr)
                .contains(r#"User "bob" cannot list resource "secrets" in API group "" in the namespace "default""#),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        s.ok(k, &["create", "serviceaccount", "robot"]);
        let token = s.ok(k, &["create", "token", "robot"]);
        let out = s.run(
            k,
            &["get", "configmaps", "--as=bob", "--token", token.trim()],
        );
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(
                r#"users "bob" is forbidden: User "system:serviceaccount:default:robot" cannot impersonate resource "users""#
            ),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    });
}

/// `kubectl create deployment` (a protobuf body from 1.32 on, JSON before): the stored object is
/// the same whichever encoding the kubectl version uses.
#[test]
fn create_deployment_stores_what_kubectl_generated() {
    each_kubectl(|_, k| {
        let s = Serve::start();
        s.ok(
            k,
            &[
                "create",
                "deployment",
                "web",
                "--image=nginx:1.25",
                "--port=80",
                "--replicas=2",
                "--",
                "sleep",
                "10",
            ],
        );
        s.ok(
            k,
            &[
                "create",
                "deployment",
                "two",
                "--image=a",
                "--image=b",
                "--replicas=0",
            ],
        );
        let spec = |name: &str| -> serde_json::Value {
            serde_json::from_str(&s.ok(k, &["get", "deployment", name, "-o", "jsonpath={.spec}"]))
                .unwrap()
        };
        // What kubectl sent, with kube-apiserver's apps/v1 and core/v1 defaults.
        assert_eq!(
            spec("web"),
            serde_json::json!({"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                "progressDeadlineSeconds": 600, "revisionHistoryLimit": 10,
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
                "template": {"metadata": {"creationTimestamp": null, "labels": {"app": "web"}}, "spec": {
                    "containers": [
                    {"name": "nginx", "image": "nginx:1.25", "command": ["sleep", "10"],
                     "ports": [{"containerPort": 80, "protocol": "TCP"}], "resources": {},
                     "imagePullPolicy": "IfNotPresent", "terminationMessagePath": "/dev/termination-log",
                     "terminationMessagePolicy": "File"}],
                    "dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "schedulerName": "default-scheduler",
                    "securityContext": {}, "terminationGracePeriodSeconds": 30}}})
        );
        let two = spec("two");
        assert_eq!(two["replicas"], 0);
        assert_eq!(
            two["template"]["spec"]["containers"][1],
            serde_json::json!({"name": "b", "image": "b", "resources": {}, "imagePullPolicy": "Always",
                "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"})
        );
    });
}

/// The rows kubectl prints under one `get` section header (`NAMESPACE NAME …`), split on runs
/// of spaces.
fn section<'a>(out: &'a str, header_start: &str) -> (Vec<&'a str>, Vec<Vec<&'a str>>) {
    let mut lines = out.lines().skip_while(|l| !l.starts_with(header_start));
    let header = lines
        .next()
        .unwrap_or_else(|| panic!("no section {header_start:?} in:\n{out}"))
        .split_whitespace()
        .collect();
    let rows = lines
        .take_while(|l| !l.trim().is_empty())
        .map(|l| {
            l.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect()
        })
        .collect();
    (header, rows)
}

/// Issue 13: `serve --load components.yaml` stores every built-in kind a provider's components
/// file holds (variables substituted, cert-manager's kinds skipped) and the real kubectl lists
/// them with kube's columns.
#[test]
fn components_file_kinds_listed_by_kubectl() {
    let dir = tempfile::tempdir().unwrap();
    let file = components_file::our_components(dir.path());
    let args: Vec<&std::ffi::OsStr> = vec![
        "--load".as_ref(),
        file.as_os_str(),
        "--var".as_ref(),
        "FOO_CREDENTIALS=Zm9v".as_ref(),
    ];
    let s = Serve::start_with(dir, &args);
    each_kubectl(|_, k| {
        let what = "deployments,services,serviceaccounts,validatingwebhookconfigurations";
        let out = s.ok(k, &["get", what, "-A"]);
        let (h, rows) = section(&out, "NAMESPACE");
        assert_eq!(
            h,
            [
                "NAMESPACE",
                "NAME",
                "READY",
                "UP-TO-DATE",
                "AVAILABLE",
                "AGE"
            ],
            "{out}"
        );
        assert_eq!(rows.len(), 1, "{out}");
        assert_eq!(
            rows[0][..5],
            [
                "foo-system",
                "deployment.apps/foo-controller-manager",
                "0/1",
                "0",
                "0"
            ],
            "{out}"
        );
        let svc = out
            .lines()
            .skip_while(|l| !l.contains("CLUSTER-IP"))
            .collect::<Vec<_>>()
            .join("\n");
        let (h, rows) = section(&svc, "NAMESPACE");
        assert_eq!(
            h,
            [
                "NAMESPACE",
                "NAME",
                "TYPE",
                "CLUSTER-IP",
                "EXTERNAL-IP",
                "PORT(S)",
                "AGE"
            ],
            "{out}"
        );
        assert_eq!(
            rows[0][..3],
            ["foo-system", "service/foo-webhook-service", "ClusterIP"]
        );
        assert!(rows[0][3].starts_with("10.96."), "{out}");
        assert_eq!(rows[0][4..6], ["<none>", "443/TCP"], "{out}");
        assert!(out.contains("serviceaccount/foo-manager"), "{out}");
        let hooks = out
            .lines()
            .skip_while(|l| !l.contains("WEBHOOKS"))
            .collect::<Vec<_>>()
            .join("\n");
        let (h, rows) = section(&hooks, "NAMESPACE");
        assert_eq!(h, ["NAMESPACE", "NAME", "WEBHOOKS", "AGE"], "{out}");
        assert_eq!(
            rows[0][..2],
            [
                "validatingwebhookconfiguration.admissionregistration.k8s.io/foo-validating-webhook-configuration",
                "1"
            ],
            "{out}"
        );
        // The cert-manager kinds were skipped, not stored (their API is not served).
        let out = s.run(k, &["get", "certificates.cert-manager.io", "-A"]);
        assert!(!out.status.success());
        // -o wide adds the containers, images and selector kube prints.
        let wide = s.ok(k, &["get", "deployments", "-n", "foo-system", "-o", "wide"]);
        assert!(
            wide.contains("CONTAINERS")
                && wide.contains("manager")
                && wide.contains("registry.example.io/foo/foo-controller:v0.3.0"),
            "{wide}"
        );
    });
}

/// The same with a real provider's release manifest (CAPD's), when `../shared` is there.
#[test]
fn corpus_components_listed_by_kubectl() {
    let Some(file) = shared_data::shared_or_skip(
        "corpus/capd/components.yaml",
        "kubectl get on serve --load of CAPD's components",
    ) else {
        return;
    };
    let s = Serve::start_with(
        tempfile::tempdir().unwrap(),
        &["--load".as_ref(), file.as_os_str()],
    );
    each_kubectl(|_, k| {
        let out = s.ok(
            k,
            &[
                "get",
                "deployments,services,serviceaccounts,validatingwebhookconfigurations",
                "-A",
                "-o",
                "name",
            ],
        );
        for name in [
            "deployment.apps/capd-controller-manager",
            "service/capd-webhook-service",
            "serviceaccount/capd-manager",
            "validatingwebhookconfiguration.admissionregistration.k8s.io/capd-validating-webhook-configuration",
        ] {
            assert!(out.lines().any(|l| l == name), "{name}:\n{out}");
        }
    });
}

#[test]
fn check_62_label_selected_clusterroles() {
    each_kubectl(|_, k| {
        let s = Serve::start();
        let roles = s.write(
            "roles.yaml",
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: labelled\n  labels: {rbac: \"yes\"}\nrules: []\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: plain\nrules: []\n",
        );
        s.ok(k, &["apply", "-f", roles.to_str().unwrap()]);
        let out = s.ok(k, &["get", "clusterroles", "-l", "rbac=yes", "-o", "name"]);
        assert_eq!(out.trim(), "clusterrole.rbac.authorization.k8s.io/labelled");
    });
}

#[test]
fn check_63_unknown_field_strict_and_warn() {
    each_kubectl(|_, k| {
        let s = Serve::start();
        s.install_crd(k);
        let bogus = s.write("bogus.yaml", "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w2\nspec:\n  size: small\n  bogus: 1\n");
        let out = s.run(k, &["apply", "-f", bogus.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&out.stderr).contains("unknown field \"spec.bogus\""));
        let out = s.run(
            k,
            &["apply", "--validate=warn", "-f", bogus.to_str().unwrap()],
        );
        assert!(out.status.success());
        assert!(String::from_utf8_lossy(&out.stderr).contains("unknown field \"spec.bogus\""));
    });
}

#[test]
fn check_64_printer_columns() {
    each_kubectl(|_, k| {
        let s = Serve::start();
        s.install_crd(k);
        s.apply_widget(k, "large");
        let out = s.ok(k, &["get", "widgets"]);
        let mut lines = out.lines();
        let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
        assert_eq!(header, ["NAME", "SIZE", "AGE"]);
        let row: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
        assert_eq!(&row[..2], ["w1", "large"]);
    });
}

/// `serve --load` establishes CRDs before reporting ready; SIGINT shuts it down cleanly.
#[test]
fn serve_loads_manifests_and_stops_on_interrupt() {
    let dir = tempfile::tempdir().unwrap();
    let crd = dir.path().join("crd.yaml");
    std::fs::write(&crd, CRD).unwrap();
    let cm = dir.path().join("cm.yaml");
    std::fs::write(&cm, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: loaded\n  namespace: default\ndata: {a: b}\n").unwrap();
    let kubeconfig = dir.path().join("kc");
    let mut child = Command::new(env!("CARGO_BIN_EXE_capi-conformance"))
        .args(["serve", "--addr", "127.0.0.1:0", "--load"])
        .arg(&crd)
        .arg("--load")
        .arg(&cm)
        .arg("--write-kubeconfig")
        .arg(&kubeconfig)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.starts_with("serving https://"), "{line}");
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let kc = kube::config::Kubeconfig::read_from(&kubeconfig).unwrap();
        let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default()).await.unwrap();
        let client = kube::Client::try_from(cfg).unwrap();
        let crds: kube::Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> = kube::Api::all(client.clone());
        let crd = crds.get("widgets.example.com").await.unwrap();
        let conds = crd.status.unwrap().conditions.unwrap();
        assert!(conds.iter().any(|c| c.type_ == "Established" && c.status == "True"));
        let cms: kube::Api<k8s_openapi::api::core::v1::ConfigMap> = kube::Api::default_namespaced(client);
        assert!(cms.get("loaded").await.is_ok());
    });
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let start = std::time::Instant::now();
    loop {
        if let Some(code) = child.try_wait().unwrap() {
            assert!(code.success(), "{code:?}");
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "serve did not stop on SIGINT"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
}

#[test]
fn serve_refuses_remote_bind_without_flag() {
    let out = Command::new(env!("CARGO_BIN_EXE_capi-conformance"))
        .args(["serve", "--addr", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--allow-remote"));
    let out = Command::new(env!("CARGO_BIN_EXE_capi-conformance"))
        .args(["serve", "--faults", "bogus"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[path = "../crates/embedded-apiserver/tests/support/webhooks.rs"]
mod webhook_support;

/// An in-process embedded server listening on TCP (so webhooks can be routed to a test server
/// in the same process), with the HTTPS webhook test server beside it.
struct InProcess {
    rt: tokio::runtime::Runtime,
    server: capi_conformance::apiserver::EmbeddedServer,
    _listener: capi_conformance::apiserver::Listener,
    hooks: webhook_support::WebhookServer,
    dir: tempfile::TempDir,
    kubeconfig: PathBuf,
}

impl InProcess {
    fn start() -> Self {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let (server, listener, hooks) = rt.block_on(async {
            let server = capi_conformance::apiserver::EmbeddedServer::new(Default::default());
            let listener = server.listen("127.0.0.1:0".parse().unwrap()).await.unwrap();
            let hooks = webhook_support::WebhookServer::start().await;
            (server, listener, hooks)
        });
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = dir.path().join("kubeconfig");
        listener.write_kubeconfig(&kubeconfig).unwrap();
        Self {
            rt,
            server,
            _listener: listener,
            hooks,
            dir,
            kubeconfig,
        }
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    fn run(&self, bin: &Path, args: &[&str]) -> Output {
        Command::new(bin)
            .args(args)
            .env("KUBECONFIG", &self.kubeconfig)
            .env("KUBECACHEDIR", self.dir.path().join("cache"))
            .output()
            .unwrap()
    }

    fn ok(&self, bin: &Path, args: &[&str]) -> String {
        let out = self.run(bin, args);
        assert!(
            out.status.success(),
            "kubectl {args:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Applies YAML text through kubectl.
    fn apply(&self, bin: &Path, name: &str, yaml: &str) -> String {
        let f = self.write(name, yaml);
        self.ok(bin, &["apply", "-f", f.to_str().unwrap()])
    }
}

fn to_yaml(v: &serde_json::Value) -> String {
    serde_json::to_string(v).unwrap()
}

/// A port nothing listens on.
fn dead_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// Issue 15: kubectl creating through a mutating and a validating webhook gets what
/// kube-apiserver gives (defaults applied, denials with kube's message, Ignore admits on a dead
/// webhook), and `kubectl get <kind>.<version>.<group>` shows the converted shape.
#[test]
fn webhooks_through_real_kubectl() {
    use serde_json::json;
    use webhook_support::{gadget_crd, gadget_rules, hook};
    each_kubectl(|v, k| {
        let env = InProcess::start();
        let hooks = &env.hooks;
        let crd = gadget_crd(Some(
            json!({"url": hooks.url("/convert"), "caBundle": hooks.ca_bundle}),
        ));
        env.apply(k, "crd.json", &to_yaml(&crd));
        env.ok(
            k,
            &[
                "wait",
                "--for=condition=Established",
                "crd/gadgets.conv.example.com",
                "--timeout=10s",
            ],
        );
        // The mutating webhook is reached through a Service routed to the test server.
        env.apply(
            k,
            "ns.json",
            &to_yaml(
                &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "webhooks"}}),
            ),
        );
        env.apply(
            k,
            "svc.json",
            &to_yaml(&json!({"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "hooks", "namespace": "webhooks"},
            "spec": {"ports": [{"port": 443, "targetPort": "webhook-server"}]}})),
        );
        env.server
            .route_service("webhooks", "hooks", 443, hooks.addr);
        let svc_cc = json!({"service": {"namespace": "webhooks", "name": "hooks", "path": "/mutate"}, "caBundle": hooks.ca_bundle});
        env.apply(
            k,
            "mwc.json",
            &to_yaml(&json!({"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration", "metadata": {"name": "gadget-defaults"},
            "webhooks": [hook("mgadget.conv.example.com", svc_cc, gadget_rules(&["v1"]))]})),
        );
        let mut warn = hook(
            "warn.conv.example.com",
            json!({"url": hooks.url("/warn"), "caBundle": hooks.ca_bundle}),
            gadget_rules(&["v1"]),
        );
        warn["objectSelector"] = json!({"matchLabels": {"warn": "yes"}});
        env.apply(k, "vwc.json", &to_yaml(&json!({"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "gadget-checks"},
            "webhooks": [hook("vgadget.conv.example.com", json!({"url": hooks.url("/validate"), "caBundle": hooks.ca_bundle}), gadget_rules(&["v1"])), warn]})));

        // Created at v1alpha1: the v1 webhooks see it converted, the default comes back.
        let ok = env.write("ok.yaml", "apiVersion: conv.example.com/v1alpha1\nkind: Gadget\nmetadata:\n  name: ok\n  namespace: default\nspec:\n  size: large\n");
        let out = env.ok(k, &["create", "-f", ok.to_str().unwrap()]);
        assert_eq!(
            out.trim(),
            "gadget.conv.example.com/ok created",
            "kubectl {v}"
        );
        let color = env.ok(
            k,
            &[
                "get",
                "gadget.v1.conv.example.com",
                "ok",
                "-o",
                "jsonpath={.spec.paint.color} {.spec.paint.finish} {.metadata.labels.mutated-by}",
            ],
        );
        assert_eq!(color, "blue matte webhook", "kubectl {v}");
        let alpha = env.ok(
            k,
            &[
                "get",
                "gadgets.v1alpha1.conv.example.com",
                "ok",
                "-o",
                "jsonpath={.apiVersion} {.spec.size} {.spec.color}",
            ],
        );
        assert_eq!(alpha, "conv.example.com/v1alpha1 large blue", "kubectl {v}");
        let table = env.ok(k, &["get", "gadgets.v1alpha1.conv.example.com"]);
        let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
        assert_eq!(
            header,
            ["NAME", "SIZE", "COLOR", "AGE"],
            "kubectl {v}: {table}"
        );
        let table = env.ok(k, &["get", "gadgets.v1.conv.example.com"]);
        let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
        assert_eq!(
            header,
            ["NAME", "SIZE", "COLOR", "FINISH", "AGE"],
            "kubectl {v}: {table}"
        );
        let yaml = env.ok(
            k,
            &["get", "gadget.v1.conv.example.com", "ok", "-o", "yaml"],
        );
        assert!(yaml.contains("apiVersion: conv.example.com/v1\n"), "{yaml}");
        assert!(yaml.contains("dimensions:"), "{yaml}");

        // Denied: kube's message, as kubectl prints it.
        let red = env.write("red.yaml", "apiVersion: conv.example.com/v1\nkind: Gadget\nmetadata:\n  name: red\n  namespace: default\nspec:\n  paint:\n    color: red\n");
        let out = env.run(k, &["create", "-f", red.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "kubectl {v}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!(
                "Error from server (Forbidden): error when creating \"{}\": admission webhook \"vgadget.conv.example.com\" denied the request: red is not allowed\n",
                red.display()
            ),
            "kubectl {v}"
        );
        // Warnings are printed.
        let warned = env.write("warned.yaml", "apiVersion: conv.example.com/v1\nkind: Gadget\nmetadata:\n  name: warned\n  namespace: default\n  labels:\n    warn: \"yes\"\nspec: {}\n");
        let out = env.run(k, &["create", "-f", warned.to_str().unwrap()]);
        assert!(out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("Warning: first warning"), "kubectl {v}: {err}");

        // A dead webhook: Fail refuses with kube's text, Ignore admits.
        let port = dead_port();
        let dead = |policy: &str| {
            to_yaml(&json!({"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "dead"},
            "webhooks": [{"name": "dead.conv.example.com", "clientConfig": {"url": format!("https://127.0.0.1:{port}/validate")},
                "rules": gadget_rules(&["v1"]), "failurePolicy": policy, "sideEffects": "None", "admissionReviewVersions": ["v1"]}]}))
        };
        env.apply(k, "dead.json", &dead("Fail"));
        let g = env.write("g.yaml", "apiVersion: conv.example.com/v1\nkind: Gadget\nmetadata:\n  name: g\n  namespace: default\nspec: {}\n");
        let out = env.run(k, &["create", "-f", g.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!(
                "Error from server (InternalError): error when creating \"{}\": Internal error occurred: failed calling webhook \"dead.conv.example.com\": failed to call webhook: Post \"https://127.0.0.1:{port}/validate?timeout=10s\": dial tcp 127.0.0.1:{port}: connect: connection refused\n",
                g.display()
            ),
            "kubectl {v}"
        );
        env.apply(k, "dead.json", &dead("Ignore"));
        let out = env.ok(k, &["create", "-f", g.to_str().unwrap()]);
        assert_eq!(
            out.trim(),
            "gadget.conv.example.com/g created",
            "kubectl {v}"
        );
        drop(env.rt);
    });
}

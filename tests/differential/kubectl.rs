//! The kubectl suite's commands (tests/kubectl/*.rs), run with the newest versioned kubectl
//! against both servers (each with its own kubeconfig and a fresh cache folder); compared on
//! exit code, stdout and stderr after normalisation (ages, uids, times, resourceVersions, the
//! server's address, runs of spaces that only align columns).

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;
use serde_json::json;

use super::harness::{Recorder, Target};

/// Newest first: the one used.
const VERSIONS: &[&str] = &["1.33", "1.32", "1.31", "1.30", "1.29"];
const NS: &str = "diff-kubectl";

fn kubectl() -> Result<PathBuf, String> {
    let path = std::env::var_os("PATH").ok_or("no PATH")?;
    let found = std::env::split_paths(&path)
        .map(|d| d.join("kubectl"))
        .find(|p| p.is_file())
        .ok_or("no kubectl on PATH")?;
    let dir = std::fs::canonicalize(&found)
        .map_err(|e| format!("{}: {e}", found.display()))?
        .parent()
        .map(Path::to_path_buf)
        .ok_or("kubectl has no folder")?;
    VERSIONS
        .iter()
        .map(|v| dir.join(format!("kubectl.{v}")))
        .find(|p| p.is_file())
        .ok_or_else(|| format!("no kubectl.1.29 … kubectl.1.33 in {}", dir.display()))
}

const CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.kubectl.diff.example.com
spec:
  group: kubectl.diff.example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [kwd], categories: [all]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
    additionalPrinterColumns:
    - {name: Size, type: string, jsonPath: .spec.size}
    schema:
      openAPIV3Schema:
        type: object
        description: A widget of the differential test.
        properties:
          spec:
            type: object
            description: What the widget should be.
            required: [size]
            properties:
              replicas: {type: integer, minimum: 0}
              size: {type: string, enum: [small, large], description: How big.}
              mode: {type: string, default: auto}
          status:
            type: object
            x-kubernetes-preserve-unknown-fields: true
"#;

fn widget(name: &str, size: &str) -> String {
    format!(
        "apiVersion: kubectl.diff.example.com/v1\nkind: Widget\nmetadata:\n  name: {name}\n  namespace: {NS}\nspec:\n  size: {size}\n"
    )
}

static AGE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(^|\s)\d+(\.\d+)?[smhd](\d+[smh])?(\s|$)").unwrap());
static TIME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)").unwrap()
});
static UUID: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}").unwrap()
});
static RV: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"(resourceVersion|"resourceVersion"): ?"\d+""#).unwrap());
static SPACES: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"[ \t]{2,}").unwrap());
/// `kubectl diff`'s temporary folders and the times of its `diff -u` header.
static DIFF_TMP: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"/(LIVE|MERGED)-\d+/").unwrap());
static DIFF_TIME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)? [+-]\d{4}").unwrap());

fn normalise(text: &str, server: &str, cache: &Path) -> String {
    text.lines()
        .map(|l| {
            let l = l.replace(server, "<server>");
            let l = l.replace(&cache.display().to_string(), "<cache>");
            let l = DIFF_TMP.replace_all(&l, "/$1-<n>/");
            let l = DIFF_TIME.replace_all(&l, "<time>");
            let l = TIME.replace_all(&l, "<time>");
            let l = UUID.replace_all(&l, "<uid>");
            let l = RV.replace_all(&l, "$1: <rv>");
            let l = AGE.replace_all(&l, "$1<age>$4");
            let l = AGE.replace_all(&l, "$1<age>$4");
            SPACES.replace_all(&l, " ").trim_end().to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

struct Kubectl {
    bin: PathBuf,
    dir: PathBuf,
}

impl Kubectl {
    fn write(&self, name: &str, text: &str) -> String {
        let p = self.dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    }

    async fn one(&self, t: &Target, args: &[&str]) -> serde_json::Value {
        let cache = self.dir.join(format!("cache-{}", t.name));
        let server = t.vars.get("server").cloned().unwrap_or_default();
        let out = tokio::process::Command::new(&self.bin)
            .args(args)
            .arg("--request-timeout=30s")
            .env("KUBECONFIG", &t.kubeconfig)
            .env("KUBECACHEDIR", &cache)
            .env_remove("KUBECTL_EXTERNAL_DIFF")
            .output()
            .await
            .unwrap();
        json!({
            "exit": out.status.code(),
            "stdout": normalise(&String::from_utf8_lossy(&out.stdout), &server, &cache),
            "stderr": normalise(&String::from_utf8_lossy(&out.stderr), &server, &cache),
        })
    }

    async fn run(&self, rec: &mut Recorder, args: &[&str]) {
        let (a, b) = tokio::join!(self.one(&rec.real, args), self.one(&rec.emb, args));
        rec.compare(&format!("kubectl {}", args.join(" ")), &a, &b);
    }
}

pub async fn run(rec: &mut Recorder, dir: &Path) {
    rec.trace("kubectl");
    let bin = match kubectl() {
        Ok(b) => b,
        Err(why) => {
            rec.skipped.push(("kubectl".into(), why));
            return;
        }
    };
    let dir = dir.join("kubectl");
    std::fs::create_dir_all(&dir).unwrap();
    for t in [&mut rec.real, &mut rec.emb] {
        let kc = std::fs::read_to_string(&t.kubeconfig).unwrap();
        let server = kc
            .lines()
            .find_map(|l| l.trim().strip_prefix("server: "))
            .map(|s| s.trim_start_matches("https://").to_string())
            .unwrap_or_default();
        t.vars.insert("server".into(), server);
    }
    let k = Kubectl { bin, dir };
    let crd = k.write("crd.yaml", CRD);
    let w1 = k.write("w1.yaml", &widget("w1", "small"));
    let w1_large = k.write("w1-large.yaml", &widget("w1", "large"));
    let w2 = k.write("w2.yaml", &widget("w2", "large"));
    let bogus = k.write(
        "bogus.yaml",
        &widget("w3", "small").replace("spec:\n", "spec:\n  bogus: 1\n"),
    );
    let invalid = k.write("invalid.yaml", &widget("w4", "huge"));
    let cm = k.write(
        "cm.yaml",
        &format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  namespace: {NS}\n  labels: {{a: \"1\", b: \"2\"}}\ndata:\n  k1: v1\n  k2: v2\n"),
    );
    let cm2 = k.write(
        "cm2.yaml",
        &format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  namespace: {NS}\n  labels: {{a: \"1\"}}\ndata:\n  k1: v1b\n"),
    );
    let list = k.write(
        "list.yaml",
        &format!("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {{name: in-list, namespace: {NS}}}\n  data: {{a: b}}\n- apiVersion: kubectl.diff.example.com/v1\n  kind: Widget\n  metadata: {{name: w5, namespace: {NS}}}\n  spec: {{size: small, typo: 1}}\n"),
    );
    let dep_typo = k.write(
        "dep-typo.yaml",
        &format!("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: typo\n  namespace: {NS}\nspec:\n  selector: {{matchLabels: {{app: t}}}}\n  template:\n    metadata: {{labels: {{app: t}}}}\n    spec:\n      containers:\n      - {{name: c, image: nginx, imagePullPolicyy: Always}}\n"),
    );
    let n = ["-n", NS];
    let with_ns = |args: &[&'static str]| -> Vec<&'static str> {
        let mut v = args.to_vec();
        v.extend_from_slice(&n);
        v
    };
    k.run(rec, &["create", "namespace", NS]).await;
    k.run(rec, &["apply", "-f", &crd]).await;
    k.run(rec, &["apply", "-f", &crd]).await;
    k.run(
        rec,
        &[
            "wait",
            "--for=condition=Established",
            "crd/widgets.kubectl.diff.example.com",
            "--timeout=20s",
        ],
    )
    .await;
    k.run(rec, &["apply", "-f", &w1]).await;
    k.run(rec, &["apply", "-f", &w1]).await;
    k.run(rec, &["apply", "-f", &w1_large]).await;
    k.run(
        rec,
        &with_ns(&[
            "get",
            "widget",
            "w1",
            "-o",
            "jsonpath={.metadata.annotations.kubectl\\.kubernetes\\.io/last-applied-configuration}",
        ]),
    )
    .await;
    k.run(rec, &["apply", "--server-side", "-f", &w2]).await;
    k.run(
        rec,
        &["apply", "--server-side", "--field-manager=other", "-f", &w1],
    )
    .await;
    k.run(rec, &["diff", "-f", &w1]).await;
    k.run(rec, &["get", "kwd", "-A", "-o", "yaml"]).await;
    k.run(rec, &with_ns(&["get", "widgets"])).await;
    k.run(rec, &with_ns(&["get", "widgets", "-o", "wide"]))
        .await;
    k.run(rec, &with_ns(&["get", "widget", "w1", "-o", "json"]))
        .await;
    k.run(rec, &with_ns(&["get", "all"])).await;
    k.run(
        rec,
        &["api-resources", "--api-group=kubectl.diff.example.com"],
    )
    .await;
    k.run(rec, &["api-resources"]).await;
    k.run(rec, &["api-versions"]).await;
    k.run(rec, &with_ns(&["scale", "widget", "w1", "--replicas=3"]))
        .await;
    k.run(
        rec,
        &with_ns(&["get", "widget", "w1", "-o", "jsonpath={.spec.replicas}"]),
    )
    .await;
    k.run(
        rec,
        &with_ns(&[
            "patch",
            "widget",
            "w1",
            "--type=merge",
            "-p",
            r#"{"spec":{"mode":"manual"}}"#,
        ]),
    )
    .await;
    k.run(
        rec,
        &with_ns(&[
            "patch",
            "widget",
            "w1",
            "--type=json",
            "-p",
            r#"[{"op":"replace","path":"/spec/size","value":"huge"}]"#,
        ]),
    )
    .await;
    k.run(
        rec,
        &with_ns(&["patch", "widget", "w1", "-p", r#"{"spec":{"mode":"x"}}"#]),
    )
    .await;
    k.run(
        rec,
        &with_ns(&[
            "patch",
            "widget",
            "w1",
            "--subresource=status",
            "--type=merge",
            "-p",
            r#"{"status":{"conditions":[{"type":"Ready","status":"True"}]}}"#,
        ]),
    )
    .await;
    k.run(
        rec,
        &with_ns(&[
            "wait",
            "--for=condition=Ready",
            "widget/w1",
            "--timeout=20s",
        ]),
    )
    .await;
    k.run(
        rec,
        &with_ns(&[
            "wait",
            "--for=jsonpath={.spec.replicas}=3",
            "widget/w1",
            "--timeout=20s",
        ]),
    )
    .await;
    k.run(rec, &with_ns(&["label", "widget", "w1", "team=a"]))
        .await;
    k.run(rec, &with_ns(&["annotate", "widget", "w1", "note=x"]))
        .await;
    k.run(
        rec,
        &with_ns(&["get", "widgets", "-l", "team=a", "-o", "name"]),
    )
    .await;
    k.run(
        rec,
        &with_ns(&[
            "get",
            "widgets",
            "--field-selector",
            "metadata.name=w2",
            "-o",
            "name",
        ]),
    )
    .await;
    k.run(
        rec,
        &with_ns(&["get", "widgets", "--field-selector", "spec.size=large"]),
    )
    .await;
    k.run(rec, &["apply", "-f", &bogus]).await;
    k.run(rec, &["apply", "--validate=warn", "-f", &bogus])
        .await;
    k.run(rec, &["apply", "-f", &invalid]).await;
    k.run(rec, &["apply", "-f", &list]).await;
    k.run(rec, &["create", "-f", &dep_typo]).await;
    k.run(rec, &["create", "--validate=warn", "-f", &dep_typo])
        .await;
    k.run(rec, &["explain", "widgets.spec.size"]).await;
    k.run(rec, &["explain", "widgets.kubectl.diff.example.com"])
        .await;
    k.run(rec, &["explain", "configmap.data"]).await;
    k.run(rec, &["auth", "can-i", "create", "widgets"]).await;
    k.run(rec, &["auth", "can-i", "--list", "-n", NS]).await;
    k.run(
        rec,
        &with_ns(&["create", "secret", "generic", "s", "--from-literal=a=b"]),
    )
    .await;
    k.run(
        rec,
        &with_ns(&["get", "secret", "s", "-o", "jsonpath={.data.a}"]),
    )
    .await;
    k.run(
        rec,
        &with_ns(&["create", "secret", "generic", "s", "--from-literal=a=b"]),
    )
    .await;
    k.run(rec, &["apply", "-f", &cm]).await;
    k.run(rec, &["apply", "-f", &cm2]).await;
    k.run(
        rec,
        &with_ns(&[
            "get",
            "configmap",
            "cm",
            "-o",
            "jsonpath={.data} {.metadata.labels}",
        ]),
    )
    .await;
    k.run(
        rec,
        &with_ns(&["create", "deployment", "d", "--image=nginx", "--replicas=2"]),
    )
    .await;
    k.run(
        rec,
        &with_ns(&["get", "deployment", "d", "-o", "jsonpath={.spec}"]),
    )
    .await;
    k.run(
        rec,
        &with_ns(&["set", "image", "deployment/d", "nginx=nginx:2"]),
    )
    .await;
    k.run(
        rec,
        &with_ns(&["create", "role", "r1", "--verb=get", "--resource=secrets"]),
    )
    .await;
    k.run(
        rec,
        &with_ns(&["create", "rolebinding", "rb1", "--role=r1", "--user=bob"]),
    )
    .await;
    k.run(
        rec,
        &with_ns(&["auth", "can-i", "get", "secrets", "--as=bob"]),
    )
    .await;
    k.run(
        rec,
        &with_ns(&["auth", "can-i", "list", "secrets", "--as=bob"]),
    )
    .await;
    k.run(rec, &with_ns(&["get", "secrets", "--as=bob"])).await;
    k.run(rec, &with_ns(&["create", "serviceaccount", "robot"]))
        .await;
    k.run(rec, &with_ns(&["get", "nosuchkinds"])).await;
    k.run(rec, &with_ns(&["get", "widget", "nope"])).await;
    k.run(rec, &["get", "namespaces", NS]).await;
    k.run(rec, &with_ns(&["delete", "widget", "w2"])).await;
    k.run(rec, &with_ns(&["delete", "widget", "w2"])).await;
    k.run(
        rec,
        &with_ns(&["delete", "widget", "w2", "--ignore-not-found"]),
    )
    .await;
    k.run(rec, &["delete", "-f", &crd, "--timeout=30s"]).await;
    k.run(rec, &with_ns(&["get", "widgets"])).await;
    k.run(rec, &["delete", "namespace", NS, "--wait=false"])
        .await;
}

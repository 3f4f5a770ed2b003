//! What the kubectl tests share: the versioned kubectl binaries, a `capi-conformance serve`
//! child process, the Widget CRD and CR.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

pub(crate) const VERSIONS: &[&str] = &["1.29", "1.30", "1.31", "1.32", "1.33"];

pub(crate) fn kubectl_dir() -> Option<PathBuf> {
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
pub(crate) fn binaries() -> Vec<(String, PathBuf)> {
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

pub(crate) struct Serve {
    pub(crate) child: Child,
    pub(crate) dir: tempfile::TempDir,
    pub(crate) kubeconfig: PathBuf,
}

impl Serve {
    pub(crate) fn start() -> Self {
        Self::start_with(tempfile::tempdir().unwrap(), &[])
    }

    /// `serve` with more arguments (e.g. `--load FILE`), its kubeconfig in `dir`.
    pub(crate) fn start_with(dir: tempfile::TempDir, args: &[&std::ffi::OsStr]) -> Self {
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

    pub(crate) fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.dir.path().join(name);
        std::fs::File::create(&p)
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        p
    }

    pub(crate) fn run(&self, bin: &Path, args: &[&str]) -> Output {
        Command::new(bin)
            .args(args)
            .env("KUBECONFIG", &self.kubeconfig)
            .env("KUBECACHEDIR", self.dir.path().join("cache"))
            .env_remove("KUBECTL_EXTERNAL_DIFF")
            .output()
            .unwrap()
    }

    /// Runs kubectl and returns stdout, asserting success.
    pub(crate) fn ok(&self, bin: &Path, args: &[&str]) -> String {
        let out = self.run(bin, args);
        assert!(
            out.status.success(),
            "kubectl {args:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub(crate) fn spawn(&self, bin: &Path, args: &[&str]) -> Child {
        Command::new(bin)
            .args(args)
            .env("KUBECONFIG", &self.kubeconfig)
            .env("KUBECACHEDIR", self.dir.path().join("cache"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    pub(crate) fn install_crd(&self, bin: &Path) -> PathBuf {
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

    pub(crate) fn apply_widget(&self, bin: &Path, size: &str) -> String {
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

pub(crate) const CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
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

pub(crate) const CR: &str = "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w1\n  namespace: default\nspec:\n  size: SIZE\n";

pub(crate) fn each_kubectl(check: impl Fn(&str, &Path)) {
    for (v, bin) in binaries() {
        println!("kubectl {v}");
        check(&v, &bin);
    }
}

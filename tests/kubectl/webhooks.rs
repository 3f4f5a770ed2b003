//! Admission and conversion webhooks through the real kubectl, against an in-process server.

use crate::support::*;
use crate::webhook_support;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

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

/// kubectl creating through a mutating and a validating webhook gets what
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
        // The CRD's columns, no AGE (kube adds it only to versions without columns).
        let table = env.ok(k, &["get", "gadgets.v1alpha1.conv.example.com"]);
        let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
        assert_eq!(header, ["NAME", "SIZE", "COLOR"], "kubectl {v}: {table}");
        let table = env.ok(k, &["get", "gadgets.v1.conv.example.com"]);
        let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
        assert_eq!(
            header,
            ["NAME", "SIZE", "COLOR", "FINISH"],
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

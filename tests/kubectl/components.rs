//! Components files and the real providers' release manifests, loaded and listed by kubectl.

use crate::support::*;
use crate::{components_file, shared_data};

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

/// `serve --load components.yaml` stores every built-in kind a provider's components
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

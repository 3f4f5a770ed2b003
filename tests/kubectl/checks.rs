//! docs/embedded-apiserver.md §7 checks 54–64 against every kubectl: apply, server-side apply,
//! get, scale, wait, delete with finalizers, auth can-i, label-selected ClusterRoles, strict
//! field validation, printer columns.

use crate::support::*;
use std::time::Duration;

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
        // kube-apiserver adds no AGE column to a CRD version that defines its own columns.
        assert_eq!(header, ["NAME", "SIZE"]);
        let row: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
        assert_eq!(&row[..2], ["w1", "large"]);
    });
}

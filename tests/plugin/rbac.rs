//! `capi-conformance rbac`: parseable multi-document YAML with the least-privilege rules.

use crate::support::{Kubectl, Serve, not_built, serve, stderr, stdout, tool_bin};
use k8s_openapi::api::rbac::v1::{ClusterRole, PolicyRule};
use std::process::Command;

fn rbac(args: &[&str]) -> Vec<ClusterRole> {
    let output = Command::new(tool_bin())
        .arg("rbac")
        .args(args)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    serde_saphyr::from_multiple(&stdout(&output)).unwrap()
}

fn role<'a>(roles: &'a [ClusterRole], name: &str) -> &'a ClusterRole {
    roles
        .iter()
        .find(|r| r.metadata.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("no ClusterRole {name}"))
}

/// True when some rule of `role` grants `verb` on `resource` of `group` (exact names or `*`).
fn allows(role: &ClusterRole, group: &str, resource: &str, verb: &str) -> bool {
    role.rules.iter().flatten().any(|rule: &PolicyRule| {
        let any = |list: &Option<Vec<String>>, want: &str| {
            list.iter().flatten().any(|v| v == want || v == "*")
        };
        any(&rule.api_groups, group)
            && any(&rule.resources, resource)
            && rule.verbs.iter().any(|v| v == verb || v == "*")
            && rule.resource_names.is_none()
    })
}

fn has_wildcard(role: &ClusterRole) -> bool {
    role.rules.iter().flatten().any(|rule| {
        rule.verbs.iter().any(|v| v == "*") || rule.api_groups.iter().flatten().any(|g| g == "*")
    })
}

#[test]
fn static_role_reads_crds_and_rbac_and_creates_sars() {
    let roles = rbac(&[]);
    let role = role(&roles, "capi-conformance-static");
    for verb in ["get", "list"] {
        assert!(allows(
            role,
            "apiextensions.k8s.io",
            "customresourcedefinitions",
            verb
        ));
    }
    for res in ["clusterroles", "roles"] {
        assert!(
            allows(role, "rbac.authorization.k8s.io", res, "list"),
            "{res}"
        );
    }
    assert!(allows(role, "apps", "deployments", "list"));
    assert!(allows(
        role,
        "authorization.k8s.io",
        "subjectaccessreviews",
        "create"
    ));
    // Only what `check --static-only` uses (tests/plugin/least_privilege.rs removes each one).
    for (group, res, verb) in [
        ("apiextensions.k8s.io", "customresourcedefinitions", "watch"),
        ("rbac.authorization.k8s.io", "clusterrolebindings", "list"),
        ("rbac.authorization.k8s.io", "rolebindings", "list"),
        ("rbac.authorization.k8s.io", "clusterroles", "get"),
    ] {
        assert!(!allows(role, group, res, verb), "{verb} {res}");
    }
    for verb in ["create", "update", "patch", "delete"] {
        assert!(!allows(
            role,
            "apiextensions.k8s.io",
            "customresourcedefinitions",
            verb
        ));
        assert!(!allows(
            role,
            "rbac.authorization.k8s.io",
            "clusterroles",
            verb
        ));
    }
    assert!(
        !allows(role, "", "secrets", "get"),
        "static role must not read secrets"
    );
}

#[test]
fn static_only_is_the_static_subset() {
    let full = rbac(&[]);
    let only = rbac(&["--static-only"]);
    assert_eq!(only.len(), 1);
    assert_eq!(only[0], *role(&full, "capi-conformance-static"));
    let names: Vec<_> = full
        .iter()
        .filter_map(|r| r.metadata.name.clone())
        .collect();
    assert_eq!(
        names,
        [
            "capi-conformance-static",
            "capi-conformance-check",
            "capi-conformance-run"
        ]
    );
}

#[test]
fn check_role_manages_namespaces_and_binds_only_the_run_role() {
    let roles = rbac(&[]);
    let check = role(&roles, "capi-conformance-check");
    for verb in ["create", "delete", "get"] {
        assert!(allows(check, "", "namespaces", verb), "namespaces {verb}");
    }
    for verb in ["list", "watch", "patch", "update"] {
        assert!(!allows(check, "", "namespaces", verb), "namespaces {verb}");
    }
    assert!(allows(
        check,
        "rbac.authorization.k8s.io",
        "rolebindings",
        "create"
    ));
    assert!(
        !allows(check, "", "secrets", "get"),
        "no cluster-wide secrets"
    );
    assert!(!allows(check, "cluster.x-k8s.io", "machines", "create"));
    let bind: Vec<_> = check
        .rules
        .iter()
        .flatten()
        .filter(|r| r.verbs.iter().any(|v| v == "bind"))
        .collect();
    assert_eq!(bind.len(), 1);
    assert_eq!(
        bind[0].resource_names.as_deref(),
        Some(&["capi-conformance-run".to_string()][..])
    );
    assert!(!has_wildcard(check));
}

#[test]
fn run_role_covers_core_objects_secrets_and_given_groups() {
    let roles = rbac(&["--group", "infrastructure.cluster.x-k8s.io"]);
    let run = role(&roles, "capi-conformance-run");
    for res in ["clusters", "machines", "machinepools"] {
        // list/watch: the in-process mock baseline watches them in its run namespace.
        for verb in ["create", "delete", "get", "list", "patch", "watch"] {
            assert!(allows(run, "cluster.x-k8s.io", res, verb), "{res} {verb}");
        }
        for verb in ["update", "deletecollection"] {
            assert!(!allows(run, "cluster.x-k8s.io", res, verb), "{res} {verb}");
        }
    }
    assert!(allows(run, "cluster.x-k8s.io", "clusters/status", "patch"));
    // Core's Machine controller (simulated) writes the status of a control plane's Machines.
    assert!(allows(run, "cluster.x-k8s.io", "machines/status", "patch"));
    assert!(!allows(
        run,
        "cluster.x-k8s.io",
        "machinepools/status",
        "patch"
    ));
    // SC-ipam claims addresses and reads what the provider made of them.
    for res in ["ipaddressclaims", "ipaddresses"] {
        for verb in ["create", "delete", "get", "watch"] {
            assert!(
                allows(run, "ipam.cluster.x-k8s.io", res, verb),
                "{res} {verb}"
            );
        }
    }
    assert!(allows(
        run,
        "ipam.mock.capi-conformance.io",
        "mockippools",
        "create"
    ));
    assert!(allows(run, "", "secrets", "create"));
    // control-plane/kubeconfig-rotation puts an expiring certificate into `<cluster>-kubeconfig`.
    assert!(allows(run, "", "secrets", "patch"));
    assert!(
        !allows(run, "", "events", "create"),
        "the tool writes no events"
    );
    assert!(allows(
        run,
        "infrastructure.cluster.x-k8s.io",
        "awsmachines",
        "create"
    ));
    assert!(allows(
        run,
        "infrastructure.mock.capi-conformance.io",
        "mockmachines",
        "create"
    ));
    assert!(!allows(run, "apps", "deployments", "create"));
    assert!(!allows(run, "", "namespaces", "create"));
    assert!(!has_wildcard(run));

    let without = rbac(&[]);
    let run = role(&without, "capi-conformance-run");
    assert!(!allows(
        run,
        "infrastructure.cluster.x-k8s.io",
        "awsmachines",
        "create"
    ));
}

#[test]
fn invalid_group_is_a_usage_error() {
    let output = Command::new(tool_bin())
        .args(["rbac", "--group", "*"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("--group"), "{}", stderr(&output));
    assert!(stdout(&output).is_empty());
}

#[test]
fn help_documents_the_least_privilege_decision() {
    let output = Command::new(tool_bin())
        .args(["rbac", "--help"])
        .output()
        .unwrap();
    let help = stdout(&output);
    for needle in ["capi-conformance-run", "RoleBinding", "--group", "bind"] {
        assert!(help.contains(needle), "{needle} missing from:\n{help}");
    }
}

#[test]
fn kubectl_prints_rbac_through_the_plugin() {
    let Some(kubectl) = Kubectl::find("kubectl_prints_rbac_through_the_plugin") else {
        return;
    };
    let output = kubectl.run(&["capi-conformance", "rbac", "--static-only"]);
    assert!(!not_built(&output));
    assert!(output.status.success(), "{}", stderr(&output));
    let roles: Vec<ClusterRole> = serde_saphyr::from_multiple(&stdout(&output)).unwrap();
    assert_eq!(roles.len(), 1);
    let bad = kubectl.run(&["capi-conformance", "rbac", "--group", "*"]);
    assert_eq!(
        bad.status.code(),
        Some(2),
        "kubectl passes the exit code on"
    );
}

#[test]
fn kubectl_applies_the_rbac_to_the_embedded_server() {
    let test = "kubectl_applies_the_rbac_to_the_embedded_server";
    let Some(kubectl) = Kubectl::find(test) else {
        return;
    };
    let served = match serve(&[]) {
        Serve::Ready(served) => served,
        Serve::NotBuilt(reason) => {
            eprintln!("skip {test}: {reason}");
            return;
        }
    };
    let manifest = served.kubeconfig.with_file_name("rbac.yaml");
    let output = kubectl.run(&[
        "capi-conformance",
        "rbac",
        "--group",
        "infrastructure.cluster.x-k8s.io",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    std::fs::write(&manifest, &output.stdout).unwrap();
    let kubeconfig = served.kubeconfig.to_string_lossy().into_owned();
    let manifest = manifest.to_string_lossy().into_owned();
    let applied = kubectl.run(&["--kubeconfig", &kubeconfig, "apply", "-f", &manifest]);
    let server_url = std::fs::read_to_string(&served.kubeconfig).unwrap();
    assert!(
        applied.status.success(),
        "{}{}",
        stderr(&applied),
        if server_url.contains("server: http://") {
            "\n(kubectl sends no bearer token over plain http, kubernetes/kubectl#744: \
             `serve` must listen with TLS for kubectl to authenticate)"
        } else {
            ""
        }
    );
    let got = kubectl.run(&[
        "--kubeconfig",
        &kubeconfig,
        "get",
        "clusterrole",
        "capi-conformance-run",
        "-o",
        "json",
    ]);
    assert!(got.status.success(), "{}", stderr(&got));
    let role: ClusterRole = serde_json::from_str(&stdout(&got)).unwrap();
    let printed: Vec<ClusterRole> = serde_saphyr::from_multiple(&stdout(&output)).unwrap();
    assert_eq!(
        role.rules, printed[2].rules,
        "the server stores the rules as printed"
    );
}

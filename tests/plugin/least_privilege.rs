//! Least privilege, proven: `check` run as a ServiceAccount whose token comes
//! from the embedded server's TokenRequest subresource and which is bound to exactly the roles
//! `capi-conformance rbac` prints gets the admin's verdict; with any single permission of those
//! roles removed it stops with `forbidden: <verb> <resource>` and exit 2.

use crate::manifests::write_docs;
use crate::support::{Serve, serve, stderr, tool_bin};
use capi_conformance::apiserver::access::expand_rule;
use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule};
use kube::api::{Api, PostParams};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const STATIC_ROLE: &str = "capi-conformance-static";
const CHECK_ROLE: &str = "capi-conformance-check";
const RUN_ROLE: &str = "capi-conformance-run";

/// `serve` with the mock provider's CRDs and CAPI core's CRDs loaded, plus an admin client.
pub(crate) struct Cluster {
    pub(crate) served: crate::support::Served,
    pub(crate) admin: kube::Client,
    pub(crate) dir: tempfile::TempDir,
}

pub(crate) async fn cluster(test: &str) -> Option<Cluster> {
    cluster_with(test, |_| Vec::new()).await
}

/// [`cluster`] with more manifests loaded (written by `extra` into the cluster's directory).
pub(crate) async fn cluster_with(
    test: &str,
    extra: impl FnOnce(&Path) -> Vec<PathBuf>,
) -> Option<Cluster> {
    let dir = tempfile::tempdir().unwrap();
    let mut mock: Vec<Value> = capi_conformance::mock::crds::mock_crds()
        .unwrap()
        .into_iter()
        .map(|c| serde_json::to_value(c).unwrap())
        .collect();
    mock.push(capi_conformance::mock::manifests::aggregated_cluster_role());
    mock.push(capi_conformance::mock::manifests::manager_cluster_role());
    let mock = write_docs(dir.path(), "mock.yaml", &mock);
    let core = write_docs(
        dir.path(),
        "core.yaml",
        &capi_conformance::mock::core_crds::core_crd_documents(),
    );
    let mut load = vec![mock, core];
    load.extend(extra(dir.path()));
    let served = match serve(&load) {
        Serve::Ready(s) => s,
        Serve::NotBuilt(reason) => {
            eprintln!("skip {test}: {reason}");
            return None;
        }
    };
    let kc = kube::config::Kubeconfig::read_from(&served.kubeconfig).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    let admin = kube::Client::try_from(config).unwrap();
    Some(Cluster { served, admin, dir })
}

/// The ClusterRoles `capi-conformance rbac` prints.
fn printed_roles(static_only: bool) -> Vec<ClusterRole> {
    let mut cmd = Command::new(tool_bin());
    cmd.arg("rbac");
    if static_only {
        cmd.arg("--static-only");
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    serde_saphyr::from_multiple(&String::from_utf8_lossy(&out.stdout)).unwrap()
}

/// One permission per rule: `(group, resource, verb, resourceNames)` of each expanded rule.
fn single_permissions(role: &ClusterRole) -> Vec<PolicyRule> {
    let mut out = Vec::new();
    for rule in role.rules.iter().flatten() {
        let value = serde_json::to_value(rule).unwrap();
        for a in expand_rule(&value, "") {
            let resource = if a.subresource.is_empty() {
                a.resource.clone()
            } else {
                format!("{}/{}", a.resource, a.subresource)
            };
            out.push(PolicyRule {
                api_groups: Some(vec![a.group.clone()]),
                resources: Some(vec![resource]),
                verbs: vec![a.verb.clone()],
                resource_names: (!a.name.is_empty()).then(|| vec![a.name.clone()]),
                ..PolicyRule::default()
            });
        }
    }
    out
}

fn role_with(name: &str, rules: Vec<PolicyRule>) -> ClusterRole {
    let mut role: ClusterRole =
        serde_json::from_value(json!({"metadata": {"name": name}})).unwrap();
    role.rules = Some(rules);
    role
}

impl Cluster {
    async fn put_role(&self, role: &ClusterRole) {
        let api: Api<ClusterRole> = Api::all(self.admin.clone());
        let name = role.metadata.name.clone().unwrap();
        match api.get_opt(&name).await.unwrap() {
            Some(old) => {
                let mut new = role.clone();
                new.metadata.resource_version = old.metadata.resource_version;
                api.replace(&name, &PostParams::default(), &new)
                    .await
                    .unwrap();
            }
            None => {
                api.create(&PostParams::default(), role).await.unwrap();
            }
        }
    }

    /// A ServiceAccount bound (ClusterRoleBindings) to `roles`, and a kubeconfig with a token
    /// for it from the TokenRequest subresource.
    async fn service_account(&self, name: &str, roles: &[String]) -> PathBuf {
        let sas: Api<ServiceAccount> = Api::namespaced(self.admin.clone(), "default");
        let sa: ServiceAccount =
            serde_json::from_value(json!({"metadata": {"name": name}})).unwrap();
        sas.create(&PostParams::default(), &sa).await.unwrap();
        let crbs: Api<ClusterRoleBinding> = Api::all(self.admin.clone());
        for role in roles {
            let crb: ClusterRoleBinding = serde_json::from_value(json!({
                "metadata": {"name": format!("{name}-{role}")},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
                "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": "default"}]
            }))
            .unwrap();
            crbs.create(&PostParams::default(), &crb).await.unwrap();
        }
        let req = http::Request::post(format!(
            "/api/v1/namespaces/default/serviceaccounts/{name}/token"
        ))
        .header("content-type", "application/json")
        .body(
            serde_json::to_vec(&json!({"apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenRequest", "spec": {"expirationSeconds": 600}}))
            .unwrap(),
        )
        .unwrap();
        let answer: Value = self.admin.request(req).await.unwrap();
        let token = answer["status"]["token"].as_str().unwrap().to_string();
        let admin_kc = std::fs::read_to_string(&self.served.kubeconfig).unwrap();
        let kc: String = admin_kc
            .lines()
            .map(|l| {
                if l.trim_start().starts_with("token: ") {
                    format!("    token: {token}")
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        let path = self.dir.path().join(format!("{name}.kubeconfig"));
        std::fs::write(&path, kc + "\n").unwrap();
        path
    }
}

pub(crate) fn check(kubeconfig: &Path, extra: &[&str]) -> Output {
    Command::new(tool_bin())
        .arg("check")
        .args(extra)
        .args(["-o", "json", "--progress", "never", "--kubeconfig"])
        .arg(kubeconfig)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// The parts of a JSON report that must not depend on who ran it.
pub(crate) fn verdict_of(out: &Output) -> (Option<i32>, Value, Value) {
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no JSON report ({e}): {}", stderr(out)));
    verdict_of_report(out.status.code(), &report)
}

/// [`verdict_of`] for a JSON report read from a file.
pub(crate) fn verdict_of_report(code: Option<i32>, report: &Value) -> (Option<i32>, Value, Value) {
    let mut results = report["results"].clone();
    for r in results.as_array_mut().into_iter().flatten() {
        if let Some(o) = r.as_object_mut() {
            o.remove("duration_ms");
        }
    }
    (code, report["verdict"].clone(), results)
}

/// The ServiceAccount's report equals the admin's (the differing results listed).
pub(crate) fn assert_same(
    got: &(Option<i32>, Value, Value),
    want: &(Option<i32>, Value, Value),
    err: &str,
) {
    if got == want {
        return;
    }
    let empty = Vec::new();
    let g = got.2.as_array().unwrap_or(&empty);
    let w = want.2.as_array().unwrap_or(&empty);
    let only_got: Vec<&Value> = g.iter().filter(|r| !w.contains(r)).collect();
    let only_want: Vec<&Value> = w.iter().filter(|r| !g.contains(r)).collect();
    panic!(
        "exit {:?} vs admin {:?}, verdict {} vs {}\nonly with the ServiceAccount: {only_got:#?}\nonly with admin: {only_want:#?}\n{err}",
        got.0, want.0, got.1, want.1
    );
}

/// Exit 2 and `forbidden: <verb> <resource>` naming the removed permission, or what differed.
fn forbidden_problem(out: &Output, removed: &PolicyRule) -> Option<String> {
    let err = stderr(out);
    let verb = &removed.verbs[0];
    let group = removed.api_groups.as_ref().unwrap()[0].clone();
    let resource = removed.resources.as_ref().unwrap()[0].clone();
    if out.status.code() != Some(2) {
        return Some(format!(
            "without {verb} {resource} in {group:?}: exit {:?} (the role grants more than check uses?) {err}",
            out.status.code()
        ));
    }
    let Some(at) = err.find("forbidden: ") else {
        return Some(format!("no `forbidden:` for {verb} {resource}: {err}"));
    };
    let mut words = err[at + "forbidden: ".len()..].split_whitespace();
    let (got_verb, got_resource) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let (plural, sub) = match resource.split_once('/') {
        Some((p, s)) => (p.to_string(), format!("/{s}")),
        None => (resource.clone(), String::new()),
    };
    let qualified = |p: &str| {
        if group.is_empty() {
            format!("{p}{sub}")
        } else {
            format!("{p}.{group}{sub}")
        }
    };
    let matches = if verb == "bind" {
        got_verb == "bind" && got_resource.starts_with(&qualified(&plural))
    } else if plural == "*" {
        got_verb == verb && got_resource.ends_with(&format!(".{group}"))
    } else {
        got_verb == verb && got_resource == qualified(&plural)
    };
    (!matches).then(|| {
        format!(
            "removed {verb} {resource} ({group:?}) but got `forbidden: {got_verb} {got_resource}`: {err}"
        )
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn static_check_passes_with_exactly_the_printed_role_and_fails_without_any_one_permission() {
    let test =
        "static_check_passes_with_exactly_the_printed_role_and_fails_without_any_one_permission";
    let Some(cluster) = cluster(test).await else {
        return;
    };
    let roles = printed_roles(true);
    assert_eq!(roles.len(), 1);
    for role in &roles {
        cluster.put_role(role).await;
    }
    let admin = check(&cluster.served.kubeconfig, &["--static-only"]);
    let want = verdict_of(&admin);
    assert!(
        matches!(want.0, Some(0 | 1 | 3)),
        "a verdict, not an error: {}",
        stderr(&admin)
    );
    let exact = cluster
        .service_account("exact", &[STATIC_ROLE.to_string()])
        .await;
    let got = check(&exact, &["--static-only"]);
    assert_same(&verdict_of(&got), &want, &stderr(&got));

    // Every single permission removed in turn (all of them, concurrently).
    let perms = single_permissions(&roles[0]);
    assert!(perms.len() >= 5, "{perms:?}");
    let mut kubeconfigs = Vec::new();
    for (i, _) in perms.iter().enumerate() {
        let mut rules = perms.clone();
        rules.remove(i);
        let name = format!("{STATIC_ROLE}-minus-{i}");
        cluster.put_role(&role_with(&name, rules)).await;
        kubeconfigs.push(
            cluster
                .service_account(&format!("minus-{i}"), &[name])
                .await,
        );
    }
    let outputs: Vec<Output> = std::thread::scope(|s| {
        let handles: Vec<_> = kubeconfigs
            .iter()
            .map(|kc| s.spawn(move || check(kc, &["--static-only"])))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let problems: Vec<String> = outputs
        .iter()
        .zip(&perms)
        .filter_map(|(out, removed)| forbidden_problem(out, removed))
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The mock provider as the provider's controller, out of process, with the admin kubeconfig.
pub(crate) struct Provider(std::process::Child);

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// What the provider under test, itself the mock, reconciles: objects no watch filter claims.
/// The in-process baseline's objects carry its filter, so they are left to the baseline (as a
/// real provider, whose kinds are not the mock's, leaves them), and a permission only the
/// baseline uses (e.g. `create ipaddresses` for SC-ipam's IPAddress) is proven needed.
pub(crate) const PROVIDER_SELECTOR: &str = "!cluster.x-k8s.io/watch-filter";

pub(crate) fn provider(admin_kubeconfig: &Path) -> Provider {
    Provider(
        Command::new(tool_bin())
            .args([
                "mock-provider",
                "run",
                "--label-selector",
                PROVIDER_SELECTOR,
                "--kubeconfig",
            ])
            .arg(admin_kubeconfig)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    )
}

/// A full check (every scenario) with short quiet windows.
pub(crate) const FULL: [&str; 4] = ["--timeout", "10s", "--quiet-window", "300ms"];

/// The full-check removals to try: all with `CAPI_CONFORMANCE_RBAC_ALL=1`, otherwise a covering
/// sample (`CAPI_CONFORMANCE_RBAC_GROUP=<group>`: every permission on that API group), or a covering
/// sample (every resource of every printed role once, verbs rotated so each verb is removed at
/// least once), which bounds CI time: each removal is a fresh server, provider and full check.
fn full_check_removals(roles: &[ClusterRole]) -> Vec<(usize, PolicyRule)> {
    let mut all = Vec::new();
    for (i, role) in roles.iter().enumerate() {
        for p in single_permissions(role) {
            all.push((i, p));
        }
    }
    if std::env::var_os("CAPI_CONFORMANCE_RBAC_ALL").is_some() {
        return all;
    }
    if let Ok(group) = std::env::var("CAPI_CONFORMANCE_RBAC_GROUP") {
        return all
            .into_iter()
            .filter(|(_, p)| p.api_groups.iter().flatten().any(|g| *g == group))
            .collect();
    }
    let key = |p: &PolicyRule| (p.api_groups.clone(), p.resources.clone());
    let mut seen_resources = Vec::new();
    let mut seen_verbs: Vec<String> = Vec::new();
    let mut sample = Vec::new();
    for (i, p) in &all {
        if seen_resources.contains(&(*i, key(p))) {
            continue;
        }
        let candidates: Vec<&(usize, PolicyRule)> = all
            .iter()
            .filter(|(j, q)| j == i && key(q) == key(p))
            .collect();
        let pick = candidates
            .iter()
            .find(|(_, q)| !seen_verbs.contains(&q.verbs[0]))
            .unwrap_or(&candidates[0]);
        seen_verbs.push(pick.1.verbs[0].clone());
        seen_resources.push((*i, key(p)));
        sample.push((*i, pick.1.clone()));
    }
    sample
}

/// One full check on a fresh server with `removed` taken out of role `role_index`.
fn full_check_without(roles: &[ClusterRole], role_index: usize, removed: &PolicyRule) -> Output {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let cluster = cluster("full_check_without").await.unwrap();
        let _provider = provider(&cluster.served.kubeconfig);
        for (i, role) in roles.iter().enumerate() {
            let mut role = role.clone();
            if i == role_index {
                let kept: Vec<PolicyRule> = single_permissions(&role)
                    .into_iter()
                    .filter(|p| p != removed)
                    .collect();
                role.rules = Some(kept);
            }
            cluster.put_role(&role).await;
        }
        let bound = [STATIC_ROLE.to_string(), CHECK_ROLE.to_string()];
        let kc = cluster.service_account("tool", &bound).await;
        let started = std::time::Instant::now();
        let out = check(&kc, &FULL);
        eprintln!(
            "without {:?} {:?} {:?}: exit {:?} after {:.1}s",
            removed.verbs,
            removed.api_groups,
            removed.resources,
            out.status.code(),
            started.elapsed().as_secs_f64()
        );
        out
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_check_passes_with_exactly_the_printed_roles_and_fails_without_a_permission() {
    let test = "full_check_passes_with_exactly_the_printed_roles_and_fails_without_a_permission";
    let Some(cluster) = cluster(test).await else {
        return;
    };
    let _provider = provider(&cluster.served.kubeconfig);
    let roles = printed_roles(false);
    let names: Vec<String> = roles
        .iter()
        .filter_map(|r| r.metadata.name.clone())
        .collect();
    assert_eq!(names, [STATIC_ROLE, CHECK_ROLE, RUN_ROLE]);
    for role in &roles {
        cluster.put_role(role).await;
    }
    let started = std::time::Instant::now();
    let admin = check(&cluster.served.kubeconfig, &FULL);
    let want = verdict_of(&admin);
    eprintln!("admin full check: {:?} in {:?}", want.0, started.elapsed());
    assert!(
        matches!(want.0, Some(0 | 1 | 3)),
        "a verdict, not an error: {}",
        stderr(&admin)
    );
    // The tool binds the run role to itself; the ServiceAccount gets the two cluster roles.
    let bound = [STATIC_ROLE.to_string(), CHECK_ROLE.to_string()];
    let exact = cluster.service_account("exact", &bound).await;
    let started = std::time::Instant::now();
    let got = check(&exact, &FULL);
    eprintln!("exact-role full check in {:?}", started.elapsed());
    assert_same(&verdict_of(&got), &want, &stderr(&got));
}

#[test]
fn full_check_without_a_sampled_permission_is_forbidden() {
    let roles = printed_roles(false);
    let removals = full_check_removals(&roles);
    let outputs: Vec<Output> = removals
        .chunks(4)
        .flat_map(|chunk| {
            std::thread::scope(|s| {
                let handles: Vec<_> = chunk
                    .iter()
                    .map(|(i, p)| {
                        let roles = &roles;
                        s.spawn(move || full_check_without(roles, *i, p))
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap())
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let problems: Vec<String> = outputs
        .iter()
        .zip(&removals)
        .filter_map(|(out, (_, removed))| forbidden_problem(out, removed))
        .collect();
    eprintln!("{} full-check removals tried", removals.len());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The real kubectl with a TokenRequest token: forbidden (kube-apiserver's message) until a role
/// is bound, then allowed; `auth can-i` and `auth whoami` answer for the ServiceAccount.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_with_a_service_account_token_is_authorized_by_rbac() {
    let test = "kubectl_with_a_service_account_token_is_authorized_by_rbac";
    let Some(kubectl) = crate::support::Kubectl::find(test) else {
        return;
    };
    let Some(cluster) = cluster(test).await else {
        return;
    };
    let kc = cluster.service_account("reader", &[]).await;
    let kc = kc.to_string_lossy().into_owned();
    let cache = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let mut all = vec!["--kubeconfig", kc.as_str(), "--cache-dir"];
        let dir = cache.path().to_str().unwrap();
        all.push(dir);
        all.extend_from_slice(args);
        kubectl.run(&all)
    };
    let denied = run(&["get", "secrets"]);
    assert!(!denied.status.success());
    assert!(
        stderr(&denied).contains(
            "secrets is forbidden: User \"system:serviceaccount:default:reader\" cannot list resource \"secrets\" in API group \"\" in the namespace \"default\""
        ),
        "{}",
        stderr(&denied)
    );
    assert_eq!(
        crate::support::stdout(&run(&["auth", "can-i", "list", "secrets"])).trim(),
        "no"
    );
    let whoami = crate::support::stdout(&run(&["auth", "whoami", "-o", "json"]));
    assert!(
        whoami.contains("system:serviceaccount:default:reader"),
        "{whoami}"
    );
    cluster
        .put_role(&role_with(
            "secret-reader",
            vec![PolicyRule {
                api_groups: Some(vec![String::new()]),
                resources: Some(vec!["secrets".into()]),
                verbs: vec!["get".into(), "list".into()],
                ..PolicyRule::default()
            }],
        ))
        .await;
    let crbs: Api<ClusterRoleBinding> = Api::all(cluster.admin.clone());
    let crb: ClusterRoleBinding = serde_json::from_value(json!({
        "metadata": {"name": "reader-secrets"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "secret-reader"},
        "subjects": [{"kind": "ServiceAccount", "name": "reader", "namespace": "default"}]
    }))
    .unwrap();
    crbs.create(&PostParams::default(), &crb).await.unwrap();
    let allowed = run(&["get", "secrets"]);
    assert!(allowed.status.success(), "{}", stderr(&allowed));
    assert_eq!(
        crate::support::stdout(&run(&["auth", "can-i", "list", "secrets"])).trim(),
        "yes"
    );
    assert_eq!(
        crate::support::stdout(&run(&["auth", "can-i", "delete", "secrets"])).trim(),
        "no"
    );
}

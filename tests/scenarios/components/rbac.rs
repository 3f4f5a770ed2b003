//! The components' RBAC through `check --embedded --crds`: the effective permissions the
//! manager's roles grant, the minimal grants of CAPI core's roles, and ClusterRoles without a
//! provider label read as `lint` reads them.

use super::*;

/// The effective part decides when it disagrees: core's binding removed, the manager may do
/// nothing, while the aggregated ClusterRole the static part reads is still there. One cell,
/// failed, with both parts' evidence.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn effective_rbac_failure_fails_the_one_cell() {
    use capi_conformance::commands::check::cluster_static_matrix;
    use capi_conformance::mock::core_rbac::CORE_MANAGER_BINDING;
    use capi_conformance::source::embedded::base_documents;
    use k8s_openapi::api::rbac::v1::ClusterRoleBinding;
    let server = EmbeddedServer::new(ServerOptions::default());
    server
        .apply_documents(base_documents().unwrap())
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = our_components(dir.path());
    let vars = capi_conformance::manifests::Variables::only(&[("FOO_CREDENTIALS", "Zm9v")]);
    capi_conformance::manifests::load_and_install(&server.retrying_client(), &[file], &vars)
        .await
        .unwrap();
    let user = "system:serviceaccount:capi-system:capi-manager";
    let opts = capi_conformance::checks::LintOptions::default();
    let foo_cells = |m: &Matrix| -> Vec<(Outcome, Option<String>, usize)> {
        m.results
            .iter()
            .filter(|r| {
                r.rule_id == RBAC && r.column.provider.contains("foo") && r.column.kind != "*"
            })
            .map(|r| (r.outcome, r.reason.clone(), r.evidence.len()))
            .collect()
    };
    let before = cluster_static_matrix(&server.retrying_client(), opts.clone(), user)
        .await
        .unwrap();
    one_rbac_cell_per_column(&before, "before");
    assert!(foo_cells(&before).iter().all(|c| c.0 == Outcome::Pass));
    let bindings: kube::Api<ClusterRoleBinding> = kube::Api::all(server.retrying_client());
    bindings
        .delete(CORE_MANAGER_BINDING, &Default::default())
        .await
        .unwrap();
    let after = cluster_static_matrix(&server.retrying_client(), opts.clone(), user)
        .await
        .unwrap();
    one_rbac_cell_per_column(&after, "after");
    let cells = foo_cells(&after);
    assert!(!cells.is_empty());
    for (outcome, reason, evidence) in cells {
        assert_eq!(outcome, Outcome::Fail);
        let reason = reason.unwrap();
        assert!(
            reason.starts_with("effective RBAC (SubjectAccessReview as system:serviceaccount:capi-system:capi-manager):")
                && reason.contains("may not create, delete, get, list, patch, update, watch"),
            "{reason}"
        );
        // The static part's evidence (the aggregated role grants it) and the effective denial.
        assert!(evidence >= 3, "{evidence}");
    }
}

/// Our minimal core's manager grants exactly what CAPI core's released manager role grants
/// (outside rules restricted by resourceNames, which name core's own CRDs).
#[test]
fn minimal_core_grants_what_capi_core_grants() {
    let Some(path) = shared_or_skip(
        "corpus/capi-core/components.yaml",
        "minimal_core_grants_what_capi_core_grants",
    ) else {
        return;
    };
    let text = std::fs::read_to_string(path).unwrap();
    let released: Vec<serde_json::Value> = capi_conformance::inventory::parse_text("c.yaml", &text)
        .into_iter()
        .filter_map(Result::ok)
        .map(|d| d.value)
        .filter(|v| v["kind"] == "ClusterRole" && v["metadata"]["name"] == "capi-manager-role")
        .flat_map(|v| v["rules"].as_array().cloned().unwrap_or_default())
        .collect();
    assert!(!released.is_empty(), "capi-manager-role not found");
    let triples = |rules: &[serde_json::Value]| -> BTreeSet<(String, String, String)> {
        let list = |r: &serde_json::Value, k: &str| -> Vec<String> {
            r[k].as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default()
        };
        let mut out = BTreeSet::new();
        for r in rules.iter().filter(|r| r.get("resourceNames").is_none()) {
            for g in list(r, "apiGroups") {
                for res in list(r, "resources") {
                    for v in list(r, "verbs") {
                        out.insert((g.clone(), res.clone(), v));
                    }
                }
            }
        }
        out
    };
    let ours = capi_conformance::mock::core_rbac::core_manager_rules();
    let (want, got) = (triples(&released), triples(&ours));
    let missing: Vec<_> = want.difference(&got).collect();
    let extra: Vec<_> = got.difference(&want).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing {missing:#?}\nextra {extra:#?}"
    );
}

/// A small bootstrap provider laid out as a kubebuilder `config/default` render without
/// `commonLabels` (no `cluster.x-k8s.io/provider` label anywhere): a BootstrapConfig kind and
/// its template in `group`, and the manager's unlabelled ClusterRole. `finalizers`: whether the
/// role grants `update` on `tinyconfigs/finalizers`.
fn unlabelled_bootstrap_components(
    dir: &Path,
    group: &str,
    finalizers: bool,
) -> std::path::PathBuf {
    let crd = |kind: &str, plural: &str, spec: &str, status: &str| {
        format!(
            r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: {plural}.{group}
  labels:
    cluster.x-k8s.io/v1beta2: v1beta2
spec:
  group: {group}
  names:
    kind: {kind}
    listKind: {kind}List
    plural: {plural}
    singular: {singular}
    categories: [cluster-api]
  scope: Namespaced
  versions:
  - name: v1beta2
    served: true
    storage: true
    subresources:
      status: {{}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          apiVersion: {{type: string}}
          kind: {{type: string}}
          metadata: {{type: object}}
          spec:
            type: object
            properties:
{spec}
          status:
            type: object
            properties:
{status}
"#,
            singular = kind.to_lowercase()
        )
    };
    let config_spec = "              format: {type: string}\n              files:\n                type: array\n                items: {type: object, properties: {path: {type: string}, content: {type: string}}}";
    let conditions = "              conditions:\n                type: array\n                items:\n                  type: object\n                  required: [type, status, lastTransitionTime, reason]\n                  properties:\n                    type: {type: string}\n                    status: {type: string}\n                    observedGeneration: {type: integer, format: int64}\n                    lastTransitionTime: {type: string, format: date-time}\n                    reason: {type: string}\n                    message: {type: string}";
    let config_status = format!(
        "              initialization:\n                type: object\n                properties:\n                  dataSecretCreated: {{type: boolean}}\n              dataSecretName: {{type: string}}\n              observedGeneration: {{type: integer, format: int64}}\n{conditions}"
    );
    let template_spec = "              template:\n                type: object\n                properties:\n                  metadata: {type: object}\n                  spec:\n                    type: object\n                    properties:\n                      format: {type: string}";
    let finalizers_resource = if finalizers {
        "\n  - tinyconfigs/finalizers"
    } else {
        ""
    };
    let docs = [
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: tiny-system\n".to_string(),
        crd("TinyConfig", "tinyconfigs", config_spec, &config_status),
        crd(
            "TinyConfigTemplate",
            "tinyconfigtemplates",
            template_spec,
            "              observedGeneration: {type: integer, format: int64}",
        ),
        "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: tiny-manager\n  namespace: tiny-system\n".to_string(),
        format!(
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: tiny-manager-role\nrules:\n- apiGroups: [\"\"]\n  resources: [secrets, configmaps, events]\n  verbs: [create, delete, get, list, patch, update, watch]\n- apiGroups: [{group}]\n  resources:\n  - tinyconfigs\n  - tinyconfigs/status\n  - tinyconfigtemplates{finalizers_resource}\n  verbs: [create, delete, get, list, patch, update, watch]\n- apiGroups: [cluster.x-k8s.io]\n  resources: [clusters, machines, machinepools]\n  verbs: [get, list, watch]\n"
        ),
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: tiny-manager-rolebinding\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: tiny-manager-role\nsubjects:\n- kind: ServiceAccount\n  name: tiny-manager\n  namespace: tiny-system\n".to_string(),
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: tiny-controller-manager\n  namespace: tiny-system\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {control-plane: tiny-controller-manager}\n  template:\n    metadata:\n      labels: {control-plane: tiny-controller-manager}\n    spec:\n      serviceAccountName: tiny-manager\n      containers:\n      - name: manager\n        image: example.com/tiny-bootstrap:v0.1.0\n        args: [--leader-elect]\n".to_string(),
    ];
    let path = dir.join(format!(
        "bootstrap-components-{}{}.yaml",
        group.replace('.', "-"),
        if finalizers { "" } else { "-no-finalizers" }
    ));
    std::fs::write(&path, docs.join("---\n")).unwrap();
    path
}

/// A components file whose ClusterRoles carry no provider label (a
/// kubebuilder `config/default` render without `commonLabels`, as microk8s' bootstrap
/// provider's). `lint` takes the file's unlabelled roles as the provider's; `check --embedded
/// --crds` installed the same roles from the same file and must read them the same way, not
/// skip "no ClusterRole … among the inputs". Both for a provider group of its own and for the
/// SIG group `bootstrap.cluster.x-k8s.io`; with and without the finalizers grant.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unlabelled_cluster_roles_give_lints_rbac_cells() {
    const RULES: [&str; 2] = ["all/rbac-owner-finalizers", "bootstrap/provider-rbac"];
    let dir = tempfile::tempdir().unwrap();
    for group in ["bootstrap.tiny.example.io", "bootstrap.cluster.x-k8s.io"] {
        for finalizers in [true, false] {
            let what = format!("{group}, finalizers granted: {finalizers}");
            let file = unlabelled_bootstrap_components(dir.path(), group, finalizers);
            let linted = lint(&file);
            let (_server, checked) =
                embedded_on(&["--crds", file.to_str().unwrap(), "--scenarios", "none"]).await;
            let checked = checked.unwrap();
            assert!(
                checked.problems.is_empty(),
                "{what}: {:?}",
                checked.problems
            );
            let (a, b) = (cells(&linted), cells(&checked));
            for rule in RULES {
                let lint_cells: Vec<_> = a.iter().filter(|((r, _), _)| r == rule).collect();
                assert!(!lint_cells.is_empty(), "{what}: no {rule} cell in lint");
                for ((r, col), outcome) in &lint_cells {
                    let expected = if *r == "all/rbac-owner-finalizers" && !finalizers {
                        Outcome::Fail
                    } else {
                        Outcome::Pass
                    };
                    assert_eq!(**outcome, expected, "{what}: lint {r} {col}");
                    let in_check = checked
                        .results
                        .iter()
                        .find(|x| x.rule_id == *r && x.column.id() == *col && !x.column.baseline)
                        .unwrap_or_else(|| panic!("{what}: no {r} cell {col} in check"));
                    assert_eq!(
                        in_check.outcome, **outcome,
                        "{what}: {r} {col}: check says {:?} ({:?})",
                        in_check.outcome, in_check.reason
                    );
                }
            }
            assert_eq!(
                a.iter()
                    .filter(|((r, _), _)| RULES.contains(&r.as_str()))
                    .count(),
                b.iter()
                    .filter(|((r, c), _)| RULES.contains(&r.as_str())
                        && a.keys().any(|(_, lc)| lc == c))
                    .count(),
                "{what}"
            );
            assert_same_cells(&what, &linted, &checked);
        }
    }
}

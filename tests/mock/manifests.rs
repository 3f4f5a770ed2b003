//! Structure of `mock-provider manifests` and of the generated CRDs.

use capi_conformance::contract::flect;
use capi_conformance::mock::core_crds::core_crds;
use capi_conformance::mock::crds::mock_crds;
use capi_conformance::mock::kinds::ALL;
use capi_conformance::mock::manifests::{ManifestOptions, manifests, manifests_yaml};
use serde_json::Value;

fn docs() -> Vec<Value> {
    manifests(&ManifestOptions::default()).unwrap()
}

fn crd_docs() -> Vec<Value> {
    docs()
        .into_iter()
        .filter(|d| d["kind"] == "CustomResourceDefinition")
        .collect()
}

fn version<'a>(crd: &'a Value, name: &str) -> &'a Value {
    crd["spec"]["versions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == name)
        .unwrap()
}

fn schema_at<'a>(crd: &'a Value, version_name: &str, path: &str) -> Option<&'a Value> {
    let mut node = &version(crd, version_name)["schema"]["openAPIV3Schema"];
    for part in path.split('.') {
        node = node.get("properties")?.get(part)?;
    }
    Some(node)
}

fn crd(kind: &str) -> Value {
    crd_docs()
        .into_iter()
        .find(|c| c["spec"]["names"]["kind"] == kind)
        .unwrap()
}

#[test]
fn every_kind_has_a_crd_named_by_flect_with_both_versions_and_labels() {
    let crds = crd_docs();
    // The ten contract kinds and the two IPAM pools (their own test: `ipam.rs`).
    assert_eq!(crds.len(), 12);
    for kind in ALL {
        let crd = crds
            .iter()
            .find(|c| c["spec"]["names"]["kind"] == kind.kind)
            .unwrap();
        assert_eq!(
            crd["metadata"]["name"],
            flect::crd_name(kind.group, kind.kind)
        );
        assert_eq!(crd["spec"]["names"]["plural"], kind.plural);
        assert_eq!(
            crd["spec"]["names"]["listKind"],
            format!("{}List", kind.kind)
        );
        assert_eq!(crd["spec"]["scope"], "Namespaced");
        assert_eq!(crd["spec"]["names"]["categories"][0], "cluster-api");
        let labels = &crd["metadata"]["labels"];
        assert_eq!(labels["cluster.x-k8s.io/v1beta1"], "v1beta1");
        assert_eq!(labels["cluster.x-k8s.io/v1beta2"], "v1beta2");
        assert_eq!(labels["cluster.x-k8s.io/provider"], kind.provider_label());
        let versions = crd["spec"]["versions"].as_array().unwrap();
        assert_eq!(versions.len(), 2);
        assert!(versions.iter().all(|v| v["served"] == true));
        assert_eq!(version(crd, "v1beta2")["storage"], true);
        assert_eq!(version(crd, "v1beta1")["storage"], false);
        for v in ["v1beta1", "v1beta2"] {
            assert_eq!(schema_at(crd, v, "apiVersion").unwrap()["type"], "string");
            assert_eq!(schema_at(crd, v, "metadata").unwrap()["type"], "object");
            let has_status = version(crd, v)
                .get("subresources")
                .and_then(|s| s.get("status"))
                .is_some();
            assert_eq!(has_status, !kind.role.is_template(), "{} {v}", kind.kind);
            if kind.role.is_template() {
                assert_eq!(
                    schema_at(crd, v, "spec.template.spec").unwrap()["type"],
                    "object"
                );
            }
        }
    }
}

#[test]
fn status_shapes_follow_each_contract_and_stay_disjoint() {
    let cluster = crd("MockCluster");
    assert_eq!(
        schema_at(&cluster, "v1beta1", "status.ready").unwrap()["type"],
        "boolean"
    );
    assert!(schema_at(&cluster, "v1beta1", "status.initialization").is_none());
    assert_eq!(
        schema_at(&cluster, "v1beta1", "status.failureDomains").unwrap()["type"],
        "object"
    );
    assert_eq!(
        schema_at(&cluster, "v1beta2", "status.initialization.provisioned").unwrap()["type"],
        "boolean"
    );
    assert!(schema_at(&cluster, "v1beta2", "status.ready").is_none());
    assert_eq!(
        schema_at(&cluster, "v1beta2", "status.failureDomains").unwrap()["type"],
        "array"
    );
    let b1_cond = &schema_at(&cluster, "v1beta1", "status.conditions").unwrap()["items"];
    assert!(b1_cond["properties"].get("severity").is_some());
    let b2_cond = &schema_at(&cluster, "v1beta2", "status.conditions").unwrap()["items"];
    assert_eq!(
        b2_cond["properties"]["observedGeneration"]["type"],
        "integer"
    );

    let machine = crd("MockMachine");
    for v in ["v1beta1", "v1beta2"] {
        assert_eq!(
            schema_at(&machine, v, "spec.providerID").unwrap()["type"],
            "string"
        );
        let addr = &schema_at(&machine, v, "status.addresses").unwrap()["items"];
        assert_eq!(
            addr["properties"]["type"]["enum"].as_array().unwrap().len(),
            5
        );
    }
    assert_eq!(
        schema_at(&machine, "v1beta2", "spec.providerID").unwrap()["maxLength"],
        512
    );
    assert!(schema_at(&machine, "v1beta2", "status.failureDomain").is_some());

    let config = crd("MockConfig");
    assert_eq!(
        schema_at(&config, "v1beta1", "status.ready").unwrap()["type"],
        "boolean"
    );
    assert_eq!(
        schema_at(
            &config,
            "v1beta2",
            "status.initialization.dataSecretCreated"
        )
        .unwrap()["type"],
        "boolean"
    );
    for v in ["v1beta1", "v1beta2"] {
        assert_eq!(
            schema_at(&config, v, "status.dataSecretName").unwrap()["type"],
            "string"
        );
    }

    let cp = crd("MockControlPlane");
    for field in [
        "replicas",
        "updatedReplicas",
        "readyReplicas",
        "unavailableReplicas",
    ] {
        assert_eq!(
            schema_at(&cp, "v1beta1", &format!("status.{field}")).unwrap()["type"],
            "integer"
        );
    }
    for field in [
        "replicas",
        "readyReplicas",
        "availableReplicas",
        "upToDateReplicas",
    ] {
        assert_eq!(
            schema_at(&cp, "v1beta2", &format!("status.{field}")).unwrap()["type"],
            "integer"
        );
    }
    assert!(schema_at(&cp, "v1beta2", "status.updatedReplicas").is_none());
    assert_eq!(
        schema_at(&cp, "v1beta1", "status.version").unwrap()["type"],
        "string"
    );
    assert_eq!(
        schema_at(&cp, "v1beta2", "status.versions").unwrap()["type"],
        "array"
    );
    assert_eq!(
        schema_at(&cp, "v1beta1", "status.initialized").unwrap()["type"],
        "boolean"
    );
    assert_eq!(
        schema_at(
            &cp,
            "v1beta2",
            "status.initialization.controlPlaneInitialized"
        )
        .unwrap()["type"],
        "boolean"
    );
    assert!(
        schema_at(
            &cp,
            "v1beta2",
            "spec.machineTemplate.spec.infrastructureRef.apiGroup"
        )
        .is_some()
    );
    assert!(
        schema_at(
            &cp,
            "v1beta1",
            "spec.machineTemplate.infrastructureRef.apiVersion"
        )
        .is_some()
    );

    let pool = crd("MockMachinePool");
    for v in ["v1beta1", "v1beta2"] {
        assert_eq!(
            schema_at(&pool, v, "spec.providerIDList").unwrap()["type"],
            "array"
        );
        assert_eq!(
            schema_at(&pool, v, "status.ready").unwrap()["type"],
            "boolean"
        );
        assert_eq!(
            schema_at(&pool, v, "status.replicas").unwrap()["type"],
            "integer"
        );
        assert_eq!(
            schema_at(&pool, v, "status.infrastructureMachineKind").unwrap()["type"],
            "string"
        );
    }
    assert!(schema_at(&pool, "v1beta2", "status.initialization.provisioned").is_some());
    assert!(schema_at(&pool, "v1beta1", "status.initialization").is_none());
}

#[test]
fn control_plane_and_machine_pool_have_the_scale_subresource() {
    for kind in ["MockControlPlane", "MockMachinePool"] {
        let crd = crd(kind);
        for v in ["v1beta1", "v1beta2"] {
            let scale = &version(&crd, v)["subresources"]["scale"];
            assert_eq!(scale["specReplicasPath"], ".spec.replicas", "{kind}");
            assert_eq!(scale["statusReplicasPath"], ".status.replicas");
            assert_eq!(scale["labelSelectorPath"], ".status.selector");
        }
    }
    assert!(
        version(&crd("MockCluster"), "v1beta2")["subresources"]
            .get("scale")
            .is_none()
    );
}

#[test]
fn aggregated_role_grants_every_verb_on_every_plural() {
    let docs = docs();
    let role = docs
        .iter()
        .find(|d| {
            d["kind"] == "ClusterRole"
                && d["metadata"]["labels"]["cluster.x-k8s.io/aggregate-to-manager"] == "true"
        })
        .unwrap();
    for kind in ALL {
        let rule = role["rules"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| {
                r["apiGroups"][0] == kind.group
                    && r["resources"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|p| p == kind.plural)
            })
            .unwrap_or_else(|| panic!("no rule for {}", kind.plural));
        let verbs: Vec<&str> = rule["verbs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        for verb in [
            "create", "delete", "get", "list", "patch", "update", "watch",
        ] {
            assert!(verbs.contains(&verb), "{} lacks {verb}", kind.plural);
        }
    }
}

#[test]
fn manager_role_covers_status_finalizers_secrets_and_core_reads() {
    let docs = docs();
    let role = docs
        .iter()
        .find(|d| {
            d["kind"] == "ClusterRole" && d["metadata"]["name"] == "capi-conformance-mock-manager"
        })
        .unwrap();
    let rules = role["rules"].as_array().unwrap();
    let grants = |group: &str, resource: &str, verb: &str| {
        rules.iter().any(|r| {
            r["apiGroups"]
                .as_array()
                .unwrap()
                .iter()
                .any(|g| g == group)
                && r["resources"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|x| x == resource)
                && r["verbs"].as_array().unwrap().iter().any(|v| v == verb)
        })
    };
    assert!(grants(
        "infrastructure.mock.capi-conformance.io",
        "mockmachines/status",
        "patch"
    ));
    assert!(grants(
        "controlplane.mock.capi-conformance.io",
        "mockcontrolplanes/finalizers",
        "update"
    ));
    assert!(grants("", "secrets", "create"));
    assert!(grants("coordination.k8s.io", "leases", "update"));
    assert!(grants("cluster.x-k8s.io", "machinepools", "watch"));
    // Its control plane's Machines: created, kept (UpToDate condition), deleted.
    assert!(grants("cluster.x-k8s.io", "machines", "create"));
    assert!(grants("cluster.x-k8s.io", "machines/status", "patch"));
    assert!(!grants("cluster.x-k8s.io", "clusters", "update"));
}

#[test]
fn deployment_runs_the_manager_container_with_multi_instance_flags() {
    let opts = ManifestOptions {
        image: "example.test/mock:v1".into(),
        namespace: "mock-ns".into(),
    };
    let docs = manifests(&opts).unwrap();
    assert_eq!(docs.iter().filter(|d| d["kind"] == "Namespace").count(), 1);
    for d in docs
        .iter()
        .filter(|d| d["metadata"].get("namespace").is_some())
    {
        assert_eq!(d["metadata"]["namespace"], "mock-ns");
    }
    let deploy = docs.iter().find(|d| d["kind"] == "Deployment").unwrap();
    let container = &deploy["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["name"], "manager");
    assert_eq!(container["image"], "example.test/mock:v1");
    let args: Vec<&str> = container["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(&args[..2], ["mock-provider", "run"]);
    assert!(args.iter().any(|a| a.starts_with("--namespace")));
    assert!(args.iter().any(|a| a.starts_with("--watch-filter")));
    for d in &docs {
        assert!(
            d["metadata"]["labels"]["cluster.x-k8s.io/provider"].is_string(),
            "{} lacks the provider label",
            d["metadata"]["name"]
        );
    }
}

#[test]
fn yaml_stream_round_trips_to_the_same_documents() {
    let yaml = manifests_yaml(&ManifestOptions::default()).unwrap();
    let parsed: Vec<Value> = serde_saphyr::from_multiple(&yaml).unwrap();
    assert_eq!(parsed, docs());
}

#[test]
fn mock_crds_are_typed_crds_and_core_crds_are_minimal() {
    // Ten contract kinds and the two IPAM pools.
    assert_eq!(mock_crds().unwrap().len(), 12);
    let core = core_crds().unwrap();
    let names: Vec<&str> = core
        .iter()
        .map(|c| c.metadata.name.as_deref().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "clusters.cluster.x-k8s.io",
            "machines.cluster.x-k8s.io",
            "machinepools.cluster.x-k8s.io",
            "machinesets.cluster.x-k8s.io",
            "machinedeployments.cluster.x-k8s.io",
            "ipaddressclaims.ipam.cluster.x-k8s.io",
            "ipaddresses.ipam.cluster.x-k8s.io",
        ]
    );
    for crd in &core {
        assert_eq!(crd.spec.versions.iter().filter(|v| v.storage).count(), 1);
        assert!(
            crd.spec
                .versions
                .iter()
                .any(|v| v.name == "v1beta2" && v.storage)
        );
        // Every kind but IPAddress (CAPI's has no status) has a status subresource.
        let with_status = crd.spec.names.kind != "IPAddress";
        assert!(
            crd.spec.versions.iter().all(|v| v
                .subresources
                .as_ref()
                .is_some_and(|s| s.status.is_some())
                == with_status)
        );
    }
}

#[test]
fn manifests_lint_clean() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("infrastructure-components.yaml");
    std::fs::write(&file, manifests_yaml(&ManifestOptions::default()).unwrap()).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_capi-conformance"))
        .arg("lint")
        .arg(dir.path())
        .args(["-o", "json"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "lint JSON: {e}; stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let results = report["results"].as_array().unwrap();
    let failed: Vec<String> = results
        .iter()
        .filter(|r| matches!(r["outcome"].as_str(), Some("fail" | "inconclusive")))
        .map(|r| format!("{} {} {}", r["rule_id"], r["column"], r["reason"]))
        .collect();
    assert!(
        failed.is_empty(),
        "lint findings on the mock's manifests: {failed:#?}"
    );
    let passed = results.iter().filter(|r| r["outcome"] == "pass").count();
    assert!(passed > 100, "only {passed} rules passed");
    assert_eq!(out.status.code(), Some(0));
}

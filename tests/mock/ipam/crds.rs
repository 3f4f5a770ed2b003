//! The pool CRDs the mock ships: scope, versions, labels, and their place in the manifests and
//! the manager's role.

use super::*;

#[test]
fn the_global_pool_crd_is_cluster_scoped_and_in_the_manager_role() {
    use capi_conformance::mock::manifests::manager_cluster_role;
    let crd = serde_json::to_value(&mock_ipam_crds()[1]).unwrap();
    assert_eq!(
        crd["metadata"]["name"],
        "mockglobalippools.ipam.mock.capi-conformance.io"
    );
    assert_eq!(crd["spec"]["scope"], "Cluster");
    assert_eq!(
        serde_json::to_value(&mock_ipam_crds()[0]).unwrap()["spec"]["scope"],
        "Namespaced"
    );
    let labels = crd["metadata"]["labels"].as_object().unwrap();
    assert_eq!(labels["cluster.x-k8s.io/provider"], "ipam-mock");
    assert!(!labels.keys().any(|k| k.starts_with("cluster.x-k8s.io/v1")));
    let rules = manager_cluster_role()["rules"].clone();
    for resource in ["mockglobalippools", "mockglobalippools/status"] {
        assert!(
            rules
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["apiGroups"][0] == POOL_GROUP
                    && r["resources"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|x| x == resource)),
            "{resource}"
        );
    }
}

#[test]
fn the_pool_crd_has_one_version_no_contract_labels_and_is_in_the_manifests() {
    use capi_conformance::mock::manifests::{ManifestOptions, manager_cluster_role, manifests};
    let crd = serde_json::to_value(&mock_ipam_crds()[0]).unwrap();
    assert_eq!(
        crd["metadata"]["name"],
        "mockippools.ipam.mock.capi-conformance.io"
    );
    let labels = crd["metadata"]["labels"].as_object().unwrap();
    assert_eq!(labels["cluster.x-k8s.io/provider"], "ipam-mock");
    assert!(!labels.keys().any(|k| k.starts_with("cluster.x-k8s.io/v1")));
    let versions = crd["spec"]["versions"].as_array().unwrap();
    assert_eq!(versions.len(), 1);
    assert_eq!(versions[0]["name"], "v1alpha1");
    assert!(versions[0]["subresources"]["status"].is_object());
    let spec = &versions[0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
    assert_eq!(spec["required"], json!(["prefix"]));
    assert_eq!(spec["properties"]["prefix"]["maximum"], 128.0);
    let docs = manifests(&ManifestOptions::default()).unwrap();
    assert!(
        docs.iter()
            .any(|d| d["metadata"]["name"] == crd["metadata"]["name"])
    );
    let rules = manager_cluster_role()["rules"].clone();
    for (group, resource) in [
        (POOL_GROUP, "mockippools"),
        (POOL_GROUP, "mockippools/status"),
        ("ipam.cluster.x-k8s.io", "ipaddressclaims"),
        ("ipam.cluster.x-k8s.io", "ipaddressclaims/status"),
        ("ipam.cluster.x-k8s.io", "ipaddresses"),
    ] {
        assert!(
            rules
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["apiGroups"][0] == group
                    && r["resources"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|x| x == resource)
                    && r["verbs"].as_array().unwrap().iter().any(|v| v == "patch")),
            "{group} {resource}"
        );
    }
    let core = ipam_crd_documents();
    assert_eq!(core.len(), 2);
    assert!(core[0]["spec"]["versions"][0]["subresources"]["status"].is_object());
    assert!(core[1]["spec"]["versions"][0].get("subresources").is_none());
}

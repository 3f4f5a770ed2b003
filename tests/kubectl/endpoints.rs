//! The real kubectl against the endpoints beside discovery (docs/embedded-apiserver.md
//! "Endpoints"): `apply -f` of a `kind: List` validates client-side against `/openapi/v2`
//! (protobuf) on every kubectl 1.27–1.33, and 1.27/1.28 (which read only v2) apply with
//! validation on; `get --raw` of `/` and `/metrics`.

use crate::support::*;
use std::path::PathBuf;

/// The versioned kubectl binaries 1.27 … 1.33 present (1.27 and 1.28 read OpenAPI v2 only).
fn every_kubectl() -> Vec<(String, PathBuf)> {
    let Some(dir) = kubectl_dir() else {
        println!("skip: no kubectl on PATH");
        return Vec::new();
    };
    ["1.27", "1.28"]
        .iter()
        .chain(VERSIONS)
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

#[test]
fn apply_of_a_list_validates_client_side_against_openapi_v2() {
    for (v, k) in every_kubectl() {
        println!("kubectl {v}");
        let s = Serve::start();
        // kubectl 1.27/1.28 check fieldValidation support in /openapi/v2: `apply` with the
        // default --validate=strict needs it.
        s.install_crd(&k);
        assert!(
            s.apply_widget(&k, "small")
                .contains("widget.example.com/w1 created")
        );
        let cm = s.write(
            "cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c1\n  namespace: default\ndata:\n  a: b\n",
        );
        s.ok(&k, &["apply", "-f", cm.to_str().unwrap()]);
        // What `kubectl get -o yaml` prints for several objects: a v1 List, which kubectl
        // validates client-side (the server cannot validate a List), item by item against
        // the models of /openapi/v2.
        let list = s.ok(&k, &["get", "widgets,configmaps", "-o", "yaml"]);
        assert!(list.contains("kind: List"), "{list}");
        let edited = list
            .replace("size: small", "size: large")
            .replace("a: b", "a: c");
        let file = s.write("list.yaml", &edited);
        let out = s.run(&k, &["apply", "-f", file.to_str().unwrap()]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "kubectl {v}: {stdout}{stderr}");
        assert!(
            stdout.contains("widget.example.com/w1 configured"),
            "kubectl {v}: {stdout}"
        );
        assert!(
            stdout.contains("configmap/c1 configured"),
            "kubectl {v}: {stdout}"
        );
        assert!(!stderr.contains("error"), "kubectl {v}: {stderr}");
        assert_eq!(
            s.ok(&k, &["get", "widget", "w1", "-o", "jsonpath={.spec.size}"]),
            "large"
        );
        // Client-side validation of the List's items does reject what the schema forbids.
        let bad = s.write(
            "bad.yaml",
            &list.replace("    size: small", "    bogus: 1\n    size: small"),
        );
        let out = s.run(&k, &["apply", "-f", bad.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "kubectl {v} accepted spec.bogus");
        assert!(
            stderr.contains("unknown field \"bogus\""),
            "kubectl {v}: {stderr}"
        );
    }
}

#[test]
fn get_raw_of_the_root_index_and_metrics() {
    each_kubectl(|_, k| {
        let s = Serve::start();
        let root: serde_json::Value =
            serde_json::from_str(&s.ok(k, &["get", "--raw", "/"])).unwrap();
        let paths = root["paths"].as_array().unwrap();
        for p in ["/api", "/apis", "/metrics", "/openapi/v2", "/version"] {
            assert!(paths.iter().any(|x| x == p), "{p}: {root}");
        }
        s.ok(k, &["get", "namespaces"]);
        let metrics = s.ok(k, &["get", "--raw", "/metrics"]);
        assert!(
            metrics.lines().any(|l| l.starts_with(
                "apiserver_request_total{code=\"200\",component=\"apiserver\",dry_run=\"\",group=\"\",resource=\"namespaces\",scope=\"cluster\",subresource=\"\",verb=\"LIST\",version=\"v1\"}"
            )),
            "{metrics}"
        );
    });
}

/// kubectl parses every definition of `/openapi/v2` before validating anything (one that does
/// not parse fails them all): with the CRDs of every corpus provider loaded (CAPI's own, CAPD,
/// AWS, Azure, …), a List holding a real `cluster.x-k8s.io/v1beta2` Cluster validates and
/// applies, on the oldest and the newest kubectl.
#[test]
fn a_list_of_real_capi_objects_validates_against_the_corpus_crds() {
    let Some(corpus) = crate::shared_data::shared_or_skip(
        "corpus",
        "kubectl apply of a List against the corpus providers' CRDs",
    ) else {
        return;
    };
    let mut crds = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path().join("components.yaml"))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for doc in text.split("\n---") {
            if doc
                .lines()
                .any(|l| l.trim_end() == "kind: CustomResourceDefinition")
            {
                crds.push(doc.trim_start_matches('\n').to_string());
            }
        }
    }
    assert!(
        crds.len() > 50,
        "{} CRDs in {}",
        crds.len(),
        corpus.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("crds.yaml");
    std::fs::write(&file, crds.join("\n---\n")).unwrap();
    let s = Serve::start_with(dir, &["--load".as_ref(), file.as_os_str()]);
    let cluster = s.write(
        "cluster.yaml",
        "apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata:\n  name: c1\n  namespace: default\nspec:\n  clusterNetwork:\n    pods:\n      cidrBlocks: [192.168.0.0/16]\n  controlPlaneEndpoint:\n    host: example.com\n    port: 6443\n",
    );
    let every = every_kubectl();
    let ends = [every.first(), every.last()];
    for (v, k) in ends.into_iter().flatten() {
        println!("kubectl {v}");
        s.ok(k, &["apply", "-f", cluster.to_str().unwrap()]);
        let list = s.ok(k, &["get", "clusters.cluster.x-k8s.io", "-o", "yaml"]);
        assert!(list.contains("kind: List"), "{list}");
        let edited = if list.contains("port: 6443") {
            list.replace("port: 6443", "port: 6444")
        } else {
            list.replace("port: 6444", "port: 6443")
        };
        let file = s.write("list.yaml", &edited);
        let out = s.ok(k, &["apply", "-f", file.to_str().unwrap()]);
        assert!(
            out.contains("cluster.cluster.x-k8s.io/c1 configured"),
            "kubectl {v}: {out}"
        );
    }
}

/// `kubectl explain` reads the built-in kinds' schemas from `/openapi/v3` (k8s-openapi's).
#[test]
fn explain_knows_built_in_fields() {
    each_kubectl(|v, k| {
        let s = Serve::start();
        let out = s.ok(k, &["explain", "deployment.spec.replicas"]);
        assert!(
            out.contains("replicas") && out.contains("<integer>"),
            "kubectl {v}: {out}"
        );
        let out = s.ok(k, &["explain", "configmap.data"]);
        assert!(out.contains("map[string]string"), "kubectl {v}: {out}");
    });
}

/// CustomResourceDefinitions are decoded as kube-apiserver decodes them into the Go struct:
/// every CRD of the twelve corpus providers and of CAPI v1.11.11's components
/// decodes with nothing dropped (their `default`, `enum`, `example` values are free-form,
/// `items` and `additionalProperties` unions), and the newest kubectl creates them all under its
/// default strict field validation.
#[test]
fn real_crds_decode_as_go_structs_with_nothing_dropped() {
    let (Some(corpus), Some(providers)) = (
        crate::shared_data::shared_or_skip("corpus", "decoding of the corpus providers' CRDs"),
        crate::shared_data::shared_or_skip(
            "providers/capi-v1.11.11/components",
            "decoding of CAPI's components' CRDs",
        ),
    ) else {
        return;
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path().join("components.yaml"))
        .filter(|p| p.is_file())
        .collect();
    files.extend(
        std::fs::read_dir(&providers)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml")),
    );
    files.sort();
    // Decoded all; created once per name (the corpus and CAPI's components share some).
    let mut crds = Vec::new();
    let mut names = std::collections::BTreeSet::new();
    let mut decoded = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for doc in text.split("\n---") {
            if !doc
                .lines()
                .any(|l| l.trim_end() == "kind: CustomResourceDefinition")
            {
                continue;
            }
            let obj: serde_json::Value =
                serde_saphyr::from_str(doc).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            let name = obj["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let d = embedded_apiserver::schema::typed_decode::decode_builtin(
                "apiextensions.k8s.io",
                "v1",
                "CustomResourceDefinition",
                obj.clone(),
            )
            .unwrap_or_else(|e| panic!("{} {name}: {e}", f.display()));
            assert!(
                d.unknown_fields.is_empty(),
                "{} {name}: {:?}",
                f.display(),
                d.unknown_fields
            );
            assert_eq!(d.object, obj, "{} {name}", f.display());
            decoded += 1;
            if names.insert(name) {
                crds.push(doc.trim_start_matches('\n').to_string());
            }
        }
    }
    assert!(decoded > 100, "{decoded} CRDs in {files:?}");
    let Some((v, k)) = every_kubectl().pop() else {
        return;
    };
    let s = Serve::start();
    let file = s.write("crds.yaml", &crds.join("\n---\n"));
    let out = s.ok(&k, &["create", "-f", file.to_str().unwrap()]);
    assert_eq!(
        out.lines().filter(|l| l.ends_with(" created")).count(),
        crds.len(),
        "kubectl {v}: {out}"
    );
    // A misspelt schema keyword is an unknown field of the Go struct: refused under strict
    // validation, as kube-apiserver refuses it (not stored with the keyword lost silently).
    let typo = s.write(
        "typo.yaml",
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: ws.example.com}\nspec:\n  group: example.com\n  scope: Namespaced\n  names: {plural: ws, kind: W}\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema: {type: object, descripton: typo}\n",
    );
    let out = s.run(&k, &["create", "-f", typo.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "kubectl {v}: {out:?}");
    assert!(
        err.contains(
            "strict decoding error: unknown field \"spec.versions[0].schema.openAPIV3Schema.descripton\""
        ),
        "kubectl {v}: {err}"
    );
}

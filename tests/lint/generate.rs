//! Builds the conformant fixtures (`fixtures/conformant-v1beta1|v1beta2/`) from code, so their
//! shapes stay exactly the contract's. `fixtures_match_generator` keeps the committed files equal
//! to this output (regenerate with `CAPI_CONFORMANCE_REGEN=1 cargo test --test lint fixtures`).

use serde_json::{Value, json};

pub const PROVIDER: &str = "infrastructure-foo";
pub const NAMESPACE: &str = "foo-system";

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum C {
    B1,
    B2,
}

impl C {
    pub fn version(self) -> &'static str {
        match self {
            C::B1 => "v1beta1",
            C::B2 => "v1beta2",
        }
    }
    pub fn dir(self) -> String {
        format!("conformant-{}", self.version())
    }
}

fn s() -> Value {
    json!({"type": "string"})
}
fn b() -> Value {
    json!({"type": "boolean"})
}
fn i() -> Value {
    json!({"type": "integer", "format": "int32"})
}
fn smap() -> Value {
    json!({"type": "object", "additionalProperties": {"type": "string"}})
}
fn obj(props: Value) -> Value {
    json!({"type": "object", "properties": props})
}
fn arr(items: Value) -> Value {
    json!({"type": "array", "items": items})
}

fn conditions(c: C) -> Value {
    let mut item = json!({
        "type": "object",
        "required": ["type", "status"],
        "properties": {
            "type": s(), "status": s(), "reason": s(), "message": s(),
            "lastTransitionTime": {"type": "string", "format": "date-time"}
        }
    });
    match c {
        C::B1 => item["properties"]["severity"] = s(),
        C::B2 => {
            item["properties"]["observedGeneration"] = json!({"type": "integer", "format": "int64"})
        }
    }
    arr(item)
}

fn endpoint() -> Value {
    obj(json!({"host": s(), "port": i()}))
}

fn status_common(c: C, mut props: Value) -> Value {
    props["conditions"] = conditions(c);
    props["failureReason"] = s();
    props["failureMessage"] = s();
    obj(props)
}

fn spec_of(role: &str, c: C) -> Value {
    match role {
        "cluster" => obj(json!({"controlPlaneEndpoint": endpoint()})),
        "machine" => {
            let mut p = json!({"providerID": s(), "instanceType": s()});
            if c == C::B1 {
                p["failureDomain"] = s();
            }
            obj(p)
        }
        "machinepool" => {
            obj(json!({"providerIDList": arr(s()), "providerID": s(), "instanceType": s()}))
        }
        "config" => {
            obj(json!({"format": s(), "files": arr(obj(json!({"path": s(), "content": s()})))}))
        }
        "controlplane" => {
            let mt = match c {
                C::B1 => obj(json!({
                    "metadata": obj(json!({"labels": smap(), "annotations": smap()})),
                    "infrastructureRef": obj(json!({"apiVersion": s(), "kind": s(), "name": s(), "namespace": s()})),
                    "nodeDrainTimeout": s(), "nodeVolumeDetachTimeout": s(), "nodeDeletionTimeout": s(),
                    "readinessGates": arr(obj(json!({"conditionType": s()})))
                })),
                C::B2 => obj(json!({
                    "metadata": obj(json!({"labels": smap(), "annotations": smap()})),
                    "spec": obj(json!({
                        "infrastructureRef": obj(json!({"apiGroup": s(), "kind": s(), "name": s()})),
                        "deletion": obj(json!({
                            "nodeDrainTimeoutSeconds": i(), "nodeVolumeDetachTimeoutSeconds": i(),
                            "nodeDeletionTimeoutSeconds": i()
                        })),
                        "readinessGates": arr(obj(json!({"conditionType": s()}))),
                        "taints": arr(obj(json!({"key": s(), "value": s(), "effect": s()})))
                    }))
                })),
            };
            let mut p = json!({"replicas": i(), "version": s(), "machineTemplate": mt, "controlPlaneEndpoint": endpoint()});
            if c == C::B2 {
                p["rollout"] = obj(json!({"after": {"type": "string", "format": "date-time"}}));
            }
            obj(p)
        }
        _ => obj(json!({})),
    }
}

fn status_of(role: &str, c: C) -> Value {
    let init = |field: &str| obj(json!({ field: b() }));
    match (role, c) {
        ("cluster", C::B1) => status_common(
            c,
            json!({
                "ready": b(),
                "failureDomains": {"type": "object", "additionalProperties": obj(json!({"controlPlane": b(), "attributes": smap()}))}
            }),
        ),
        ("cluster", C::B2) => status_common(
            c,
            json!({
                "initialization": init("provisioned"),
                "failureDomains": arr(obj(json!({"name": s(), "controlPlane": b(), "attributes": smap()})))
            }),
        ),
        ("machine", _) => {
            let mut p = json!({"addresses": arr(obj(json!({"type": s(), "address": s()})))});
            match c {
                C::B1 => p["ready"] = b(),
                C::B2 => {
                    p["initialization"] = init("provisioned");
                    p["failureDomain"] = s();
                }
            }
            status_common(c, p)
        }
        ("machinepool", _) => {
            let mut p = json!({
                "ready": b(), "replicas": i(), "infrastructureMachineKind": s(),
                "instances": arr(obj(json!({"instanceName": s(), "providerID": s(), "ready": b()})))
            });
            if c == C::B2 {
                p["initialization"] = init("provisioned");
            }
            status_common(c, p)
        }
        ("config", _) => {
            let mut p = json!({"dataSecretName": s()});
            match c {
                C::B1 => p["ready"] = b(),
                C::B2 => p["initialization"] = init("dataSecretCreated"),
            }
            status_common(c, p)
        }
        ("controlplane", C::B1) => status_common(
            c,
            json!({
                "selector": s(), "replicas": i(), "updatedReplicas": i(), "readyReplicas": i(),
                "unavailableReplicas": i(), "ready": b(), "initialized": b(), "version": s(),
                "externalManagedControlPlane": b()
            }),
        ),
        ("controlplane", C::B2) => status_common(
            c,
            json!({
                "selector": s(), "replicas": i(), "readyReplicas": i(), "availableReplicas": i(),
                "upToDateReplicas": i(), "initialization": init("controlPlaneInitialized"),
                "versions": arr(obj(json!({"version": s(), "replicas": i()}))),
                "externalManagedControlPlane": b()
            }),
        ),
        _ => obj(json!({})),
    }
}

struct KindSpec {
    kind: &'static str,
    group: &'static str,
    role: &'static str,
    template: bool,
}

const GROUP_INFRA: &str = "infrastructure.foo.example.io";
const GROUP_BOOT: &str = "bootstrap.foo.example.io";
const GROUP_CP: &str = "controlplane.foo.example.io";

fn kinds() -> Vec<KindSpec> {
    let mut v = Vec::new();
    for (kind, group, role) in [
        ("FooCluster", GROUP_INFRA, "cluster"),
        ("FooMachine", GROUP_INFRA, "machine"),
        ("FooMachinePool", GROUP_INFRA, "machinepool"),
        ("FooConfig", GROUP_BOOT, "config"),
        ("FooControlPlane", GROUP_CP, "controlplane"),
    ] {
        v.push(KindSpec {
            kind,
            group,
            role,
            template: false,
        });
        v.push(KindSpec {
            kind: Box::leak(format!("{kind}Template").into_boxed_str()),
            group,
            role,
            template: true,
        });
    }
    v
}

fn labels(c: C) -> Value {
    json!({ format!("cluster.x-k8s.io/{}", c.version()): c.version(), "cluster.x-k8s.io/provider": PROVIDER })
}

fn crd(k: &KindSpec, c: C) -> Value {
    let plural = format!("{}s", k.kind.to_lowercase());
    let base_spec = spec_of(k.role, c);
    let mut props = json!({"apiVersion": s(), "kind": s(), "metadata": {"type": "object"}});
    let mut version = json!({"name": c.version(), "served": true, "storage": true});
    if k.template {
        let tmpl = json!({
            "type": "object",
            "required": ["spec"],
            "properties": {
                "metadata": obj(json!({"labels": smap(), "annotations": smap()})),
                "spec": base_spec
            }
        });
        props["spec"] =
            json!({"type": "object", "required": ["template"], "properties": {"template": tmpl}});
    } else {
        props["spec"] = base_spec;
        props["status"] = status_of(k.role, c);
        version["subresources"] = json!({"status": {}});
        if k.role == "controlplane" {
            version["subresources"]["scale"] = json!({
                "specReplicasPath": ".spec.replicas",
                "statusReplicasPath": ".status.replicas",
                "labelSelectorPath": ".status.selector"
            });
        }
    }
    version["schema"] = json!({"openAPIV3Schema": {"type": "object", "properties": props}});
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{}", k.group), "labels": labels(c)},
        "spec": {
            "group": k.group,
            "names": {
                "kind": k.kind, "listKind": format!("{}List", k.kind), "plural": plural,
                "singular": k.kind.to_lowercase(), "categories": ["cluster-api"]
            },
            "scope": "Namespaced",
            "versions": [version]
        }
    })
}

fn ip_pool(c: C) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "fooippools.ipam.foo.example.io", "labels": labels(c)},
        "spec": {
            "group": "ipam.foo.example.io",
            "names": {"kind": "FooIPPool", "listKind": "FooIPPoolList", "plural": "fooippools", "singular": "fooippool"},
            "scope": "Namespaced",
            "versions": [{
                "name": c.version(), "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "apiVersion": s(), "kind": s(), "metadata": {"type": "object"},
                    "spec": obj(json!({"addresses": arr(s()), "prefix": i(), "gateway": s()})),
                    "status": obj(json!({"conditions": conditions(c)}))
                }}}
            }]
        }
    })
}

fn cluster_template(c: C) -> Vec<Value> {
    vec![
        json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2",
            "kind": "Cluster",
            "metadata": {"name": "${CLUSTER_NAME}", "namespace": "${NAMESPACE}"},
            "spec": {
                "infrastructureRef": {"apiGroup": GROUP_INFRA, "kind": "FooCluster", "name": "${CLUSTER_NAME}"},
                "controlPlaneRef": {"apiGroup": GROUP_CP, "kind": "FooControlPlane", "name": "${CLUSTER_NAME}-cp"}
            }
        }),
        json!({
            "apiVersion": format!("{GROUP_INFRA}/{}", c.version()),
            "kind": "FooCluster",
            "metadata": {"name": "${CLUSTER_NAME}", "namespace": "${NAMESPACE}"},
            "spec": {}
        }),
        json!({
            "apiVersion": format!("{GROUP_CP}/{}", c.version()),
            "kind": "FooControlPlane",
            "metadata": {"name": "${CLUSTER_NAME}-cp", "namespace": "${NAMESPACE}"},
            "spec": {"replicas": "${CONTROL_PLANE_MACHINE_COUNT}", "version": "${KUBERNETES_VERSION}"}
        }),
    ]
}

fn cluster_class(c: C) -> Value {
    json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "ClusterClass",
        "metadata": {"name": "foo"},
        "spec": {
            "infrastructure": {"templateRef": {"apiVersion": format!("{GROUP_INFRA}/{}", c.version()), "kind": "FooClusterTemplate", "name": "foo"}},
            "controlPlane": {"templateRef": {"apiVersion": format!("{GROUP_CP}/{}", c.version()), "kind": "FooControlPlaneTemplate", "name": "foo"}}
        }
    })
}

fn meta(name: &str, namespaced: bool) -> Value {
    let mut m = json!({"name": name, "labels": {"cluster.x-k8s.io/provider": PROVIDER}});
    if namespaced {
        m["namespace"] = json!(NAMESPACE);
    }
    m
}

fn others() -> Vec<Value> {
    let verbs = json!([
        "create", "delete", "get", "list", "patch", "update", "watch"
    ]);
    let all: Vec<String> = kinds()
        .iter()
        .map(|k| format!("{}s", k.kind.to_lowercase()))
        .collect();
    let by_group = |g: &str| -> Vec<String> {
        kinds()
            .iter()
            .filter(|k| k.group == g)
            .map(|k| format!("{}s", k.kind.to_lowercase()))
            .collect()
    };
    let mut aggregated_meta = meta("foo-aggregated-role", false);
    aggregated_meta["labels"]["cluster.x-k8s.io/aggregate-to-manager"] = json!("true");
    let mut own_rules: Vec<Value> = [GROUP_INFRA, GROUP_BOOT, GROUP_CP]
        .iter()
        .map(|g| {
            let mut res: Vec<String> = by_group(g);
            res.extend(by_group(g).iter().map(|r| format!("{r}/status")));
            res.extend(by_group(g).iter().map(|r| format!("{r}/finalizers")));
            json!({"apiGroups": [g], "resources": res, "verbs": verbs})
        })
        .collect();
    own_rules.push(json!({"apiGroups": [""], "resources": ["secrets", "events"], "verbs": verbs}));
    own_rules.push(json!({"apiGroups": ["cluster.x-k8s.io"], "resources": ["clusters", "machines", "machinepools"], "verbs": ["get", "list", "watch"]}));
    let _ = all;
    let aggregated_rules: Vec<Value> = [GROUP_INFRA, GROUP_BOOT, GROUP_CP]
        .iter()
        .map(|g| json!({"apiGroups": [g], "resources": by_group(g), "verbs": verbs}))
        .collect();
    vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": meta(NAMESPACE, false)}),
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta("foo-manager", true)}),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": aggregated_meta,
            "rules": aggregated_rules
        }),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": meta("foo-manager-role", false),
            "rules": own_rules
        }),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": meta("foo-manager-rolebinding", false),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "foo-manager-role"},
            "subjects": [{"kind": "ServiceAccount", "name": "foo-manager", "namespace": NAMESPACE}]
        }),
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": meta("foo-controller-manager", true),
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"control-plane": "foo-controller-manager"}},
                "template": {
                    "metadata": {"labels": {"control-plane": "foo-controller-manager"}},
                    "spec": {
                        "serviceAccountName": "foo-manager",
                        "containers": [{
                            "name": "manager",
                            "image": "registry.example.io/foo/foo-controller:v0.3.0",
                            "args": [
                                "--leader-elect",
                                "--namespace=${FOO_WATCH_NAMESPACE:=\"\"}",
                                "--watch-filter=${FOO_WATCH_FILTER:=\"\"}",
                                "--v=${FOO_LOGLEVEL:=0}"
                            ]
                        }]
                    }
                }
            }
        }),
    ]
}

fn metadata(c: C) -> Value {
    json!({
        "apiVersion": "clusterctl.cluster.x-k8s.io/v1alpha3",
        "kind": "Metadata",
        "releaseSeries": [
            {"major": 0, "minor": 3, "contract": c.version()},
            {"major": 0, "minor": 2, "contract": "v1beta1"}
        ]
    })
}

fn yaml(v: &Value) -> String {
    serde_saphyr::to_string(v).expect("serialize fixture")
}

/// `(relative path, content)` of every fixture file for contract `c`.
pub fn files(c: C) -> Vec<(String, String)> {
    let mut docs: Vec<String> = kinds().iter().map(|k| yaml(&crd(k, c))).collect();
    docs.push(yaml(&ip_pool(c)));
    docs.extend(others().iter().map(yaml));
    let header = format!(
        "# Generated by tests/lint/generate.rs: a conformant contract-{} provider (do not edit by hand).\n",
        c.version()
    );
    vec![
        (
            format!("{}/infrastructure-components.yaml", c.dir()),
            format!("{header}{}", docs.join("---\n")),
        ),
        (
            format!("{}/metadata.yaml", c.dir()),
            format!("{header}{}", yaml(&metadata(c))),
        ),
        (
            format!("{}/cluster-template.yaml", c.dir()),
            format!(
                "{header}{}",
                cluster_template(c)
                    .iter()
                    .map(yaml)
                    .collect::<Vec<_>>()
                    .join("---\n")
            ),
        ),
        (
            format!("{}/clusterclass-foo.yaml", c.dir()),
            format!("{header}{}", yaml(&cluster_class(c))),
        ),
    ]
}

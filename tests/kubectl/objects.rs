//! Objects kubectl generates itself (`kubectl create role|…|deployment`), and impersonation.

use crate::support::*;

/// `kubectl create role|clusterrole|rolebinding|clusterrolebinding` (protobuf bodies from 1.32
/// on) and impersonation (`--as`, `--as-group`): the created RBAC is what `auth can-i` answers
/// for the impersonated user, and a ServiceAccount without the `impersonate` verb is refused.
#[test]
fn create_rbac_objects_and_impersonate() {
    each_kubectl(|_, k| {
        let s = Serve::start();
        s.ok(
            k,
            &["create", "secret", "generic", "s1", "--from-literal=a=b"],
        );
        s.ok(
            k,
            &[
                "create",
                "role",
                "r1",
                "--verb=get",
                "--resource=secrets",
                "--resource-name=s1",
            ],
        );
        s.ok(
            k,
            &["create", "rolebinding", "rb1", "--role=r1", "--user=bob"],
        );
        s.ok(
            k,
            &[
                "create",
                "clusterrole",
                "cm-reader",
                "--verb=get,list",
                "--resource=configmaps",
            ],
        );
        s.ok(
            k,
            &[
                "create",
                "clusterrolebinding",
                "crb1",
                "--clusterrole=cm-reader",
                "--group=devs",
            ],
        );
        s.ok(
            k,
            &["create", "clusterrole", "agg", "--aggregation-rule=team=a"],
        );
        let role = s.ok(k, &["get", "role", "r1", "-o", "jsonpath={.rules}"]);
        let role: serde_json::Value = serde_json::from_str(&role).unwrap();
        assert_eq!(
            role,
            serde_json::json!([{"apiGroups": [""], "resources": ["secrets"],
                                "resourceNames": ["s1"], "verbs": ["get"]}])
        );
        assert_eq!(
            s.ok(
                k,
                &[
                    "get",
                    "rolebinding",
                    "rb1",
                    "-o",
                    "jsonpath={.subjects[0].name}/{.roleRef.kind}/{.roleRef.name}"
                ]
            ),
            "bob/Role/r1"
        );
        assert_eq!(
            s.ok(
                k,
                &[
                    "get",
                    "clusterrole",
                    "agg",
                    "-o",
                    "jsonpath={.aggregationRule.clusterRoleSelectors[0].matchLabels.team}"
                ]
            ),
            "a"
        );
        let can = |args: &[&str]| {
            let out = s.run(k, &[&["auth", "can-i"], args].concat());
            String::from_utf8_lossy(&out.stdout).trim().to_string()
        };
        assert_eq!(can(&["get", "secrets/s1", "--as=bob"]), "yes");
        assert_eq!(can(&["get", "secrets/s2", "--as=bob"]), "no");
        assert_eq!(can(&["list", "configmaps", "--as=alice"]), "no");
        assert_eq!(
            can(&["list", "configmaps", "--as=alice", "--as-group=devs"]),
            "yes"
        );
        let who = s.ok(
            k,
            &[
                "auth",
                "whoami",
                "--as=alice",
                "--as-group=devs",
                "-o",
                "jsonpath={.status.userInfo.groups}",
            ],
        );
        assert_eq!(who, r#"["devs","system:authenticated"]"#);
        let out = s.run(k, &["get", "secrets", "--as=bob"]);
        assert!(!out.status.success());
        assert!(
            String::from_utf8_lossy(&out.stderr)
                .contains(r#"User "bob" cannot list resource "secrets" in API group "" in the namespace "default""#),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        s.ok(k, &["create", "serviceaccount", "robot"]);
        let token = s.ok(k, &["create", "token", "robot"]);
        let out = s.run(
            k,
            &["get", "configmaps", "--as=bob", "--token", token.trim()],
        );
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(
                r#"users "bob" is forbidden: User "system:serviceaccount:default:robot" cannot impersonate resource "users""#
            ),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    });
}

/// `kubectl create deployment` (a protobuf body from 1.32 on, JSON before): the stored object is
/// the same whichever encoding the kubectl version uses.
#[test]
fn create_deployment_stores_what_kubectl_generated() {
    each_kubectl(|_, k| {
        let s = Serve::start();
        s.ok(
            k,
            &[
                "create",
                "deployment",
                "web",
                "--image=nginx:1.25",
                "--port=80",
                "--replicas=2",
                "--",
                "sleep",
                "10",
            ],
        );
        s.ok(
            k,
            &[
                "create",
                "deployment",
                "two",
                "--image=a",
                "--image=b",
                "--replicas=0",
            ],
        );
        let spec = |name: &str| -> serde_json::Value {
            serde_json::from_str(&s.ok(k, &["get", "deployment", name, "-o", "jsonpath={.spec}"]))
                .unwrap()
        };
        // What kubectl sent, with kube-apiserver's apps/v1 and core/v1 defaults (and without
        // the `creationTimestamp: null` kubectl ≤ 1.33 writes, which kube ≥ 1.35 leaves out).
        assert_eq!(
            spec("web"),
            serde_json::json!({"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                "progressDeadlineSeconds": 600, "revisionHistoryLimit": 10,
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": {
                    "containers": [
                    {"name": "nginx", "image": "nginx:1.25", "command": ["sleep", "10"],
                     "ports": [{"containerPort": 80, "protocol": "TCP"}], "resources": {},
                     "imagePullPolicy": "IfNotPresent", "terminationMessagePath": "/dev/termination-log",
                     "terminationMessagePolicy": "File"}],
                    "dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "schedulerName": "default-scheduler",
                    "securityContext": {}, "terminationGracePeriodSeconds": 30}}})
        );
        let two = spec("two");
        assert_eq!(two["replicas"], 0);
        assert_eq!(
            two["template"]["spec"]["containers"][1],
            serde_json::json!({"name": "b", "image": "b", "resources": {}, "imagePullPolicy": "Always",
                "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"})
        );
    });
}

/// `kubectl create service clusterip|nodeport|externalname` (a protobuf body from 1.32 on, JSON
/// before, so the protobuf body must be decoded, not refused with 415): stored, and the stored object is the same whichever encoding
/// the kubectl version uses.
#[test]
fn create_service_stores_what_kubectl_generated() {
    let stored: std::sync::Mutex<Vec<(String, serde_json::Value)>> = Default::default();
    each_kubectl(|v, k| {
        let s = Serve::start();
        s.ok(
            k,
            &["create", "service", "clusterip", "foo", "--tcp=80:8080"],
        );
        s.ok(
            k,
            &[
                "create",
                "service",
                "clusterip",
                "headless",
                "--clusterip=None",
                "--tcp=5678",
            ],
        );
        s.ok(
            k,
            &[
                "create",
                "service",
                "nodeport",
                "np",
                "--tcp=443:https",
                "--node-port=30443",
            ],
        );
        s.ok(
            k,
            &[
                "create",
                "service",
                "externalname",
                "ext",
                "--external-name=example.com",
            ],
        );
        let spec = |name: &str| -> serde_json::Value {
            serde_json::from_str(&s.ok(k, &["get", "service", name, "-o", "jsonpath={.spec}"]))
                .unwrap()
        };
        let foo = spec("foo");
        assert_eq!(
            foo["ports"],
            serde_json::json!([{"name": "80-8080", "port": 80, "protocol": "TCP", "targetPort": 8080}]),
            "kubectl {v}"
        );
        assert_eq!(foo["selector"], serde_json::json!({"app": "foo"}));
        assert_eq!(foo["type"], "ClusterIP");
        assert!(foo["clusterIP"].as_str().unwrap().starts_with("10.96."));
        assert_eq!(
            s.ok(
                k,
                &[
                    "get",
                    "service",
                    "foo",
                    "-o",
                    "jsonpath={.metadata.labels.app}"
                ]
            ),
            "foo"
        );
        let headless = spec("headless");
        assert_eq!(headless["clusterIP"], "None");
        assert_eq!(headless["ports"][0]["targetPort"], 5678);
        let np = spec("np");
        assert_eq!(np["type"], "NodePort");
        assert_eq!(
            np["ports"],
            serde_json::json!([{"name": "443-https", "nodePort": 30443, "port": 443, "protocol": "TCP", "targetPort": "https"}])
        );
        let ext = spec("ext");
        assert_eq!(ext["type"], "ExternalName");
        assert_eq!(ext["externalName"], "example.com");
        let all = serde_json::json!({"foo": foo, "headless": headless, "np": np, "ext": ext});
        stored.lock().unwrap().push((v.to_string(), all));
    });
    let stored = stored.into_inner().unwrap();
    for (v, specs) in &stored {
        assert_eq!(
            specs, &stored[0].1,
            "kubectl {v} stored other Services than kubectl {}",
            stored[0].0
        );
    }
}

/// A built-in kind's body is decoded as kube-apiserver decodes it into the Go struct: a value of
/// the wrong type is refused with encoding/json's message, an unknown field is refused under
/// kubectl's default strict field validation, warned about with `--validate=warn`, and dropped
/// from what is stored (built-in schemas used for validation).
#[test]
fn built_in_bodies_are_decoded_as_their_go_structs() {
    const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata: {name: NAME, namespace: default}
spec:
  replicas: REPLICAS
  selector: {matchLabels: {a: b}}
  template:
    metadata: {labels: {a: b}}
    spec:
      containers: [{name: c, image: nginx, EXTRA}]
";
    let manifest = |name: &str, replicas: &str, extra: &str| {
        DEPLOYMENT
            .replace("NAME", name)
            .replace("REPLICAS", replicas)
            .replace("EXTRA", extra)
    };
    each_kubectl(|_, k| {
        let s = Serve::start();
        let wrong = s.write("wrong.yaml", &manifest("d1", "\"three\"", "ports: []"));
        let out = s.run(k, &["create", "-f", wrong.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert!(
            err.contains("Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"),
            "{err}"
        );
        let unknown = s.write("unknown.yaml", &manifest("d2", "2", "bogus: 1"));
        let out = s.run(k, &["create", "-f", unknown.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert!(
            err.contains(
                "strict decoding error: unknown field \"spec.template.spec.containers[0].bogus\""
            ),
            "{err}"
        );
        let out = s.run(
            k,
            &["create", "--validate=warn", "-f", unknown.to_str().unwrap()],
        );
        assert!(out.status.success(), "{out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr)
                .contains("unknown field \"spec.template.spec.containers[0].bogus\""),
            "{out:?}"
        );
        let stored = s.ok(
            k,
            &[
                "get",
                "deployment",
                "d2",
                "-o",
                "jsonpath={.spec.template.spec.containers[0]}",
            ],
        );
        assert!(
            !stored.contains("bogus") && stored.contains("nginx"),
            "{stored}"
        );
    });
}

/// `apps/v1 DaemonSet`, served as kube-apiserver serves it (a kubeadm cluster's kube-proxy is
/// one; KCP reads and updates it in the workload cluster and got "no matches for kind
/// \"DaemonSet\"" before): stored with `SetDefaults_DaemonSet`'s defaults, its selector checked
/// against the template, listed with kube's printer columns, explained from its schema.
#[test]
fn daemon_sets_are_served_with_kubes_defaults_validation_and_columns() {
    const DS: &str = "apiVersion: apps/v1
kind: DaemonSet
metadata: {name: NAME, namespace: kube-system}
spec:
  selector: {matchLabels: {k8s-app: kube-proxy}}
  template:
    metadata: {labels: {k8s-app: LABEL}}
    spec:
      nodeSelector: {kubernetes.io/os: linux}
      containers: [{name: kube-proxy, image: registry.k8s.io/kube-proxy:v1.33.0}]
";
    each_kubectl(|_, k| {
        let s = Serve::start();
        let good = s.write(
            "ds.yaml",
            &DS.replace("NAME", "kube-proxy")
                .replace("LABEL", "kube-proxy"),
        );
        s.ok(k, &["apply", "-f", good.to_str().unwrap()]);
        let spec: serde_json::Value = serde_json::from_str(&s.ok(
            k,
            &[
                "get",
                "daemonset",
                "-n",
                "kube-system",
                "kube-proxy",
                "-o",
                "jsonpath={.spec}",
            ],
        ))
        .unwrap();
        assert_eq!(spec["revisionHistoryLimit"], 10);
        assert_eq!(
            spec["updateStrategy"],
            serde_json::json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}})
        );
        assert_eq!(
            spec["template"]["spec"]["containers"][0]["imagePullPolicy"],
            "IfNotPresent"
        );
        let table = s.ok(k, &["get", "ds", "-n", "kube-system"]);
        let header: Vec<&str> = table
            .lines()
            .next()
            .unwrap_or_default()
            .split_whitespace()
            .collect();
        assert_eq!(
            header,
            [
                "NAME",
                "DESIRED",
                "CURRENT",
                "READY",
                "UP-TO-DATE",
                "AVAILABLE",
                "NODE",
                "SELECTOR",
                "AGE"
            ],
            "{table}"
        );
        assert!(table.contains("kubernetes.io/os=linux"), "{table}");
        let bad = s.write(
            "bad.yaml",
            &DS.replace("NAME", "other").replace("LABEL", "other"),
        );
        let out = s.run(k, &["apply", "-f", bad.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert!(
            err.contains("`selector` does not match template `labels`"),
            "{err}"
        );
        let explained = s.ok(k, &["explain", "daemonset.spec.updateStrategy"]);
        assert!(explained.contains("rollingUpdate"), "{explained}");
    });
}

/// `kubectl apply --server-side` of one Deployment by two field managers, each with its own
/// container: kube keys `containers` by `name`, so both are kept and neither conflicts (issue
/// 23: built-in lists typed for server-side apply as kube publishes them; before, every
/// built-in list was atomic and the second apply was refused as a conflict).
#[test]
fn server_side_apply_merges_built_in_containers_by_name() {
    const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: NAME, image: IMAGE, ports: [{containerPort: 53, protocol: UDP}, {containerPort: 53, protocol: TCP}]}]
";
    each_kubectl(|_, k| {
        let s = Serve::start();
        let a = s.write(
            "a.yaml",
            &DEPLOYMENT
                .replace("NAME", "app")
                .replace("IMAGE", "nginx:1.25"),
        );
        let b = s.write(
            "b.yaml",
            &DEPLOYMENT
                .replace("NAME", "sidecar")
                .replace("IMAGE", "busybox:1.36"),
        );
        s.ok(
            k,
            &[
                "apply",
                "--server-side",
                "--field-manager=a",
                "-f",
                a.to_str().unwrap(),
            ],
        );
        s.ok(
            k,
            &[
                "apply",
                "--server-side",
                "--field-manager=b",
                "-f",
                b.to_str().unwrap(),
            ],
        );
        let names = s.ok(
            k,
            &[
                "get",
                "deployment",
                "web",
                "-o",
                "jsonpath={.spec.template.spec.containers[*].name}",
            ],
        );
        assert_eq!(names.trim(), "app sidecar");
        // One port number with two protocols is two items (keys containerPort and protocol).
        let ports = s.ok(
            k,
            &[
                "get",
                "deployment",
                "web",
                "-o",
                "jsonpath={.spec.template.spec.containers[0].ports[*].protocol}",
            ],
        );
        assert_eq!(ports.trim(), "UDP TCP");
    });
}

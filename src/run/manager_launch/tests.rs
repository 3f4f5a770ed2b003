use super::*;
use serde_json::json;

/// A provider's components of our own: a manager Deployment in the shape CAPI's
/// `config/manager` gives one, a Secret and a ConfigMap it reads, a Service.
fn components(args: Value) -> Vec<Value> {
    vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "p-system"}}),
        json!({"apiVersion": "v1", "kind": "Secret",
               "metadata": {"name": "p-creds", "namespace": "p-system"},
               "data": {"credentials": "a2V5PXZhbHVl"}}),
        json!({"apiVersion": "v1", "kind": "Service",
               "metadata": {"name": "p-webhook-service", "namespace": "p-system"}}),
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "p-controller-manager", "namespace": "p-system"},
               "spec": {"template": {
                   "metadata": {"labels": {"control-plane": "controller-manager"}},
                   "spec": {
                       "serviceAccountName": "p-manager",
                       "containers": [
                           {"name": "kube-rbac-proxy", "args": ["--secure-listen-address=0.0.0.0:8443"]},
                           {"name": "manager",
                            "command": ["/manager"],
                            "args": args,
                            "env": [
                                {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
                                {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                                {"name": "POD_UID", "valueFrom": {"fieldRef": {"fieldPath": "metadata.uid"}}},
                                {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                                {"name": "P_CREDENTIALS", "valueFrom": {"secretKeyRef": {"name": "p-creds", "key": "credentials"}}},
                                {"name": "P_MODE", "value": "fast"}],
                            "volumeMounts": [{"name": "cert", "mountPath": "/tmp/k8s-webhook-server/serving-certs"}]}]}}}}),
    ]
}

fn capi_args() -> Value {
    json!([
        "--leader-elect",
        "--diagnostics-address=:8443",
        "--insecure-diagnostics=false",
        "--feature-gates=MachinePool=true,ClusterTopology=true",
        "--bind-ip=$(POD_IP)",
    ])
}

fn request(command: &str) -> LaunchRequest {
    LaunchRequest {
        command: command.into(),
        args: true,
        env: true,
    }
}

const COMMAND: &str = "./manager --kubeconfig {kubeconfig} --webhook-cert-dir {webhook-cert-dir} --webhook-port {webhook-port} --health-addr {health-addr}";

#[test]
fn a_capi_style_deployment_gives_args_env_and_one_note() {
    let l = ManagerLaunch::from_components(&components(capi_args()), &request(COMMAND))
        .unwrap()
        .unwrap();
    assert_eq!(l.deployment, "p-system/p-controller-manager");
    assert_eq!(l.container, "manager");
    let words: Vec<String> = l.words.iter().map(Word::shown).collect();
    assert_eq!(
        words,
        [
            "--leader-elect=false",
            "--diagnostics-address={metrics-addr}",
            "--insecure-diagnostics=false",
            "--feature-gates=MachinePool=true,ClusterTopology=true",
            "--bind-ip=127.0.0.1",
        ]
    );
    assert!(l.uses("{metrics-addr}") && !l.uses("{health-addr}") && !l.uses_webhooks());
    let env: Vec<(&str, &str)> = l
        .env
        .iter()
        .map(|v| (v.name.as_str(), v.value.as_str()))
        .collect();
    assert_eq!(env[0], ("POD_NAMESPACE", "p-system"));
    assert!(env[1].1.starts_with("p-controller-manager-"), "{env:?}");
    assert_eq!(env[2].1.len(), 36, "a UUID: {env:?}");
    assert_eq!(env[3], ("POD_IP", "127.0.0.1"));
    assert_eq!(env[4], ("P_CREDENTIALS", "key=value"));
    assert_eq!(env[5], ("P_MODE", "fast"));
    let note = &l.note;
    for part in [
        "Deployment p-system/p-controller-manager runs its container manager",
        "args appended: --leader-elect=false --diagnostics-address={metrics-addr} --insecure-diagnostics=false",
        "--leader-elect became --leader-elect=false (one manager runs, outside a cluster",
        "--diagnostics-address=:8443 became --diagnostics-address={metrics-addr}",
        "POD_IP=127.0.0.1 (fieldRef status.podIP)",
        "P_CREDENTIALS from Secret p-system/p-creds key credentials",
        "P_MODE=fast (value)",
        "--no-deployment-args / --no-deployment-env",
    ] {
        assert!(note.contains(part), "{part:?} not in {note}");
    }
    assert!(
        !note.contains("key=value"),
        "a Secret value in the note: {note}"
    );
    assert!(!format!("{l:?}").contains("key=value"));
}

#[test]
fn the_command_line_renders_the_runs_values_quoted() {
    let args = json!([
        "--leader-elect",
        "--diagnostics-address=:8443",
        "--name=a b",
        "--webhook-port",
        "9443"
    ]);
    let l = ManagerLaunch::from_components(
        &components(args),
        &request("./m --kubeconfig {kubeconfig}"),
    )
    .unwrap()
    .unwrap();
    let p = crate::serving::Placeholders {
        metrics_addr: Some("127.0.0.1:1234".parse().unwrap()),
        webhook_port: Some(4321),
        ..Default::default()
    };
    assert_eq!(
        l.command_line("./m --kubeconfig /k", &p),
        "./m --kubeconfig /k --leader-elect=false --diagnostics-address=127.0.0.1:1234 '--name=a b' --webhook-port 4321"
    );
    assert!(l.uses_webhooks());
    let words = shell::parse(&l.command_line("./m", &p)).words;
    assert_eq!(words[3], "--name=a b");
}

#[test]
fn what_the_command_sets_itself_wins() {
    let l = ManagerLaunch::from_components(
        &components(capi_args()),
        &request("P_CREDENTIALS=mine POD_IP=10.0.0.1 ./manager --diagnostics-address {metrics-addr} --leader-elect=true"),
    )
    .unwrap()
    .unwrap();
    let words: Vec<String> = l.words.iter().map(Word::shown).collect();
    // `$(POD_IP)` is not expanded from the Deployment: the command assigns POD_IP itself (sh
    // gives the manager the command's value).
    assert_eq!(
        words,
        [
            "--insecure-diagnostics=false",
            "--feature-gates=MachinePool=true,ClusterTopology=true",
            "--bind-ip=$(POD_IP)",
        ]
    );
    assert!(
        !l.env
            .iter()
            .any(|v| v.name == "P_CREDENTIALS" || v.name == "POD_IP")
    );
    assert!(
        l.note
            .contains("the command's own --leader-elect, --diagnostics-address kept"),
        "{}",
        l.note
    );
    assert!(
        l.note
            .contains("env the command assigns itself (kept): P_CREDENTIALS, POD_IP"),
        "{}",
        l.note
    );
}

#[test]
fn opting_out_and_compound_commands() {
    let docs = components(capi_args());
    let off = LaunchRequest {
        command: COMMAND.into(),
        args: false,
        env: false,
    };
    assert_eq!(ManagerLaunch::from_components(&docs, &off).unwrap(), None);
    let env_only = LaunchRequest {
        args: false,
        ..request(COMMAND)
    };
    let l = ManagerLaunch::from_components(&docs, &env_only)
        .unwrap()
        .unwrap();
    assert!(l.words.is_empty() && !l.env.is_empty());
    assert!(!l.note.contains("args appended"), "{}", l.note);
    assert!(
        l.note.contains("args not appended (--no-deployment-args)"),
        "{}",
        l.note
    );
    let args_only = LaunchRequest {
        env: false,
        ..request(COMMAND)
    };
    let l = ManagerLaunch::from_components(&docs, &args_only)
        .unwrap()
        .unwrap();
    assert!(!l.words.is_empty() && l.env.is_empty());
    // `$(POD_IP)` without the environment stays as written, as the kubelet leaves it.
    assert!(
        l.words
            .contains(&Word::Literal("--bind-ip=$(POD_IP)".into()))
    );

    let piped = ManagerLaunch::from_components(&docs, &request("./manager 2>&1 | tee log"))
        .unwrap()
        .unwrap();
    assert!(piped.words.is_empty());
    assert!(
        piped
            .note
            .contains("args not appended: the command is not one simple command"),
        "{}",
        piped.note
    );
}

#[test]
fn which_deployment() {
    // None: nothing to do.
    assert_eq!(
        ManagerLaunch::from_components(&[], &request(COMMAND)).unwrap(),
        None
    );
    // Two, one with a `manager` container: that one.
    let mut docs = components(capi_args());
    docs.push(json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "helper", "namespace": "p-system"},
        "spec": {"template": {"spec": {"containers": [{"name": "helper", "args": ["--x"]}]}}}}));
    let l = ManagerLaunch::from_components(&docs, &request(COMMAND))
        .unwrap()
        .unwrap();
    assert_eq!(l.deployment, "p-system/p-controller-manager");
    // Two with `manager` containers: neither, and the note says so.
    docs.push(json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "second", "namespace": "q-system"},
        "spec": {"template": {"spec": {"containers": [{"name": "manager", "args": ["--x"]}]}}}}));
    let l = ManagerLaunch::from_components(&docs, &request(COMMAND))
        .unwrap()
        .unwrap();
    assert!(l.words.is_empty() && l.env.is_empty());
    assert!(
        l.note.contains(
            "several Deployments (p-system/p-controller-manager, p-system/helper, q-system/second)"
        ),
        "{}",
        l.note
    );
    // A Deployment without a `manager` container: its first.
    let only = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "one", "namespace": "n"},
        "spec": {"template": {"spec": {"containers": [{"name": "ctrl", "args": ["--v=2"]}, {"name": "side"}]}}}});
    let l = ManagerLaunch::from_components(&[only], &request("./m"))
        .unwrap()
        .unwrap();
    assert_eq!((l.container.as_str(), l.words.len()), ("ctrl", 1));
}

#[test]
fn a_missing_secret_is_one_clear_error() {
    let mut docs = components(capi_args());
    docs.retain(|d| d["kind"] != "Secret");
    let err = ManagerLaunch::from_components(&docs, &request(COMMAND)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Deployment p-system/p-controller-manager container manager: env P_CREDENTIALS: Secret p-system/p-creds is not among the components; a Pod of it would not start (CreateContainerConfigError): add the object to --crds, set the variable in --provider-cmd (NAME=VALUE before the program), or pass --no-deployment-env"
    );
    // Assigned by the command: no error.
    assert!(
        ManagerLaunch::from_components(&docs, &request(&format!("P_CREDENTIALS=x {COMMAND}")))
            .is_ok()
    );
}

#[test]
fn a_script_run_by_an_interpreter_whose_command_sets_every_flag() {
    // The shape of a Python operator's Deployment: `command: [python, /provider.py]`.
    let d = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "py-controller-manager", "namespace": "py-system"},
        "spec": {"template": {"spec": {"containers": [{"name": "manager",
            "command": ["python", "/provider.py"],
            "args": ["--namespace=", "--watch-filter=", "--webhook-cert-dir=/tmp/k8s-webhook-server/serving-certs", "--webhook-port=9443"],
            "volumeMounts": [{"name": "cert", "mountPath": "/tmp/k8s-webhook-server/serving-certs"}]}]}}}});
    let cmd = "python provider.py --kubeconfig {kubeconfig} --namespace {namespace} --watch-filter {watch_filter} --webhook-cert-dir {webhook-cert-dir} --webhook-port {webhook-port}";
    let l = ManagerLaunch::from_components(std::slice::from_ref(&d), &request(cmd))
        .unwrap()
        .unwrap();
    assert!(l.words.is_empty(), "{:?}", l.words);
    assert!(
        l.note
            .contains("/provider.py not appended: a positional argument"),
        "{}",
        l.note
    );
    assert!(
        l.note.contains(
            "the command's own --namespace, --watch-filter, --webhook-cert-dir, --webhook-port kept"
        ),
        "{}",
        l.note
    );
    // Without those flags in the command: the run's directory and port, never the Pod's path.
    let l = ManagerLaunch::from_components(&[d], &request("python provider.py"))
        .unwrap()
        .unwrap();
    let words: Vec<String> = l.words.iter().map(Word::shown).collect();
    assert_eq!(
        words,
        [
            "--namespace=",
            "--watch-filter=",
            "--webhook-cert-dir={webhook-cert-dir}",
            "--webhook-port={webhook-port}"
        ]
    );
    assert!(l.uses_webhooks());
}

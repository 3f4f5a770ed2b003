//! `manifests job`: a Namespace, a ServiceAccount, the least-privilege ClusterRoles `rbac` prints
//! bound to it, and a Job running `check` with the in-cluster configuration. The report table
//! goes to the pod's log (`kubectl logs`), the report files to the volume at [`REPORTS_DIR`]
//! (an `emptyDir`, or the PersistentVolumeClaim `--reports-claim` names).

use super::{IMAGE_BINARY, IMAGE_USER, ManifestsError, check_args, image, labels, yaml};
use crate::cli::JobManifestsArgs;
use crate::tool_rbac::{self as rbac, CHECK_ROLE, STATIC_ROLE};
use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::{
    Capabilities, Container, EmptyDirVolumeSource, Namespace, PersistentVolumeClaimVolumeSource,
    PodSecurityContext, PodSpec, PodTemplateSpec, ResourceRequirements, SeccompProfile,
    SecurityContext, ServiceAccount, Volume, VolumeMount,
};
use k8s_openapi::api::rbac::v1::{ClusterRoleBinding, RoleRef, Subject};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use std::collections::BTreeMap;

/// Name of the ServiceAccount and the Job.
pub const NAME: &str = "capi-conformance";
pub use crate::cli::DEFAULT_JOB_NAMESPACE as DEFAULT_NAMESPACE;
/// Where the report volume is mounted in the container.
pub const REPORTS_DIR: &str = "/reports";
/// The container's name.
pub const CONTAINER: &str = "check";

/// The `check` flags of the Job: progress lines in the log, every report file on the volume.
pub fn fixed_check_args(static_only: bool) -> Vec<String> {
    let mut args: Vec<String> = ["--progress", "always"].map(String::from).to_vec();
    if static_only {
        args.push("--static-only".into());
    }
    for (flag, file) in [
        ("--junit", "junit.xml"),
        ("--json", "report.json"),
        ("--markdown", "summary.md"),
        ("--html", "report.html"),
    ] {
        args.push(flag.into());
        args.push(format!("{REPORTS_DIR}/{file}"));
    }
    if !static_only {
        args.push("--report-dir".into());
        args.push(format!("{REPORTS_DIR}/scenarios"));
    }
    args
}

/// The printed multi-document YAML.
pub fn render(args: &JobManifestsArgs) -> Result<String, ManifestsError> {
    let ns = args.namespace.trim();
    if let Some(err) = embedded_apiserver::schema::names::dns1123_label(ns)
        .into_iter()
        .next()
    {
        return Err(ManifestsError::InvalidNamespace(ns.to_string(), err));
    }
    let image = image(&args.image)?;
    let command = check_args(&fixed_check_args(args.static_only), &args.check_args)?;
    let roles = rbac::cluster_roles(args.static_only, &args.groups, &args.cluster_scoped)?;

    let mut docs = vec![yaml(&namespace(ns))?, yaml(&service_account(ns))?];
    for role in &roles {
        docs.push(yaml(role)?);
    }
    let bound: &[&str] = if args.static_only {
        &[STATIC_ROLE]
    } else {
        &[STATIC_ROLE, CHECK_ROLE]
    };
    for role in bound {
        docs.push(yaml(&binding(role, ns))?);
    }
    docs.push(yaml(&job(
        ns,
        &image,
        command,
        args.reports_claim.as_deref(),
    ))?);

    let mut out = format!(
        "# capi-conformance as an in-cluster Job (`capi-conformance manifests job --help`).\n\
         # kubectl apply -f <this file>; kubectl -n {ns} logs -f job/{NAME}   (progress, then the report table)\n\
         # The Job ends Complete (exit 0) or Failed (exit 1: a gating rule failed; 2: error; 3: inconclusive).\n\
         # Report files: {REPORTS_DIR} in the pod. To run again: kubectl -n {ns} delete job {NAME}, then apply.\n"
    );
    for doc in docs {
        out.push_str("---\n");
        out.push_str(&doc);
    }
    Ok(out)
}

fn meta(name: &str, namespace: Option<&str>) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_string()),
        namespace: namespace.map(str::to_string),
        labels: Some(labels()),
        ..ObjectMeta::default()
    }
}

/// The namespace, enforcing the `restricted` Pod Security Standard the Job's pod meets.
fn namespace(ns: &str) -> Namespace {
    let mut metadata = meta(ns, None);
    if let Some(labels) = metadata.labels.as_mut() {
        labels.insert(
            "pod-security.kubernetes.io/enforce".into(),
            "restricted".into(),
        );
    }
    Namespace {
        metadata,
        ..Namespace::default()
    }
}

fn service_account(ns: &str) -> ServiceAccount {
    ServiceAccount {
        metadata: meta(NAME, Some(ns)),
        ..ServiceAccount::default()
    }
}

/// The ClusterRoleBinding of `role` to the Job's ServiceAccount (named after both, so two
/// namespaces can each run the Job).
pub fn binding_name(role: &str, ns: &str) -> String {
    format!("{role}-{ns}")
}

fn binding(role: &str, ns: &str) -> ClusterRoleBinding {
    ClusterRoleBinding {
        metadata: meta(&binding_name(role, ns), None),
        role_ref: RoleRef {
            api_group: "rbac.authorization.k8s.io".into(),
            kind: "ClusterRole".into(),
            name: role.to_string(),
        },
        subjects: Some(vec![Subject {
            kind: "ServiceAccount".into(),
            name: NAME.into(),
            namespace: Some(ns.to_string()),
            ..Subject::default()
        }]),
    }
}

fn job(ns: &str, image: &str, args: Vec<String>, claim: Option<&str>) -> Job {
    let volume = match claim {
        Some(claim) => Volume {
            name: "reports".into(),
            persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                claim_name: claim.to_string(),
                read_only: None,
            }),
            ..Volume::default()
        },
        None => Volume {
            name: "reports".into(),
            empty_dir: Some(EmptyDirVolumeSource::default()),
            ..Volume::default()
        },
    };
    let container = Container {
        name: CONTAINER.into(),
        image: Some(image.to_string()),
        image_pull_policy: Some("IfNotPresent".into()),
        command: Some(vec![IMAGE_BINARY.into()]),
        args: Some(args),
        volume_mounts: Some(vec![VolumeMount {
            name: "reports".into(),
            mount_path: REPORTS_DIR.into(),
            ..VolumeMount::default()
        }]),
        resources: Some(ResourceRequirements {
            requests: Some(BTreeMap::from([
                ("cpu".to_string(), Quantity("100m".into())),
                ("memory".to_string(), Quantity("128Mi".into())),
            ])),
            limits: Some(BTreeMap::from([(
                "memory".to_string(),
                Quantity("1Gi".into()),
            )])),
            ..ResourceRequirements::default()
        }),
        security_context: Some(SecurityContext {
            allow_privilege_escalation: Some(false),
            read_only_root_filesystem: Some(true),
            capabilities: Some(Capabilities {
                drop: Some(vec!["ALL".into()]),
                add: None,
            }),
            ..SecurityContext::default()
        }),
        ..Container::default()
    };
    let mut template_meta = meta(NAME, None);
    template_meta.name = None;
    Job {
        metadata: meta(NAME, Some(ns)),
        spec: Some(JobSpec {
            // One run, one report: a failed check is the answer, not something to retry.
            backoff_limit: Some(0),
            template: PodTemplateSpec {
                metadata: Some(template_meta),
                spec: Some(PodSpec {
                    service_account_name: Some(NAME.into()),
                    restart_policy: Some("Never".into()),
                    security_context: Some(PodSecurityContext {
                        run_as_non_root: Some(true),
                        run_as_user: Some(IMAGE_USER),
                        run_as_group: Some(IMAGE_USER),
                        seccomp_profile: Some(SeccompProfile {
                            type_: "RuntimeDefault".into(),
                            localhost_profile: None,
                        }),
                        ..PodSecurityContext::default()
                    }),
                    containers: vec![container],
                    volumes: Some(vec![volume]),
                    ..PodSpec::default()
                }),
            },
            ..JobSpec::default()
        }),
        ..Job::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn args(static_only: bool) -> JobManifestsArgs {
        JobManifestsArgs {
            static_only,
            groups: Vec::new(),
            cluster_scoped: Vec::new(),
            namespace: DEFAULT_NAMESPACE.into(),
            image: super::super::DEFAULT_IMAGE.into(),
            reports_claim: None,
            check_args: Vec::new(),
        }
    }

    fn docs(yaml: &str) -> Vec<Value> {
        serde_saphyr::from_multiple(yaml).unwrap()
    }

    fn kinds(docs: &[Value]) -> Vec<String> {
        docs.iter()
            .map(|d| {
                format!(
                    "{}/{}",
                    d["kind"].as_str().unwrap(),
                    d["metadata"]["name"].as_str().unwrap()
                )
            })
            .collect()
    }

    #[test]
    fn full_job_binds_static_and_check_roles_and_prints_the_run_role() {
        let docs = docs(&render(&args(false)).unwrap());
        assert_eq!(
            kinds(&docs),
            [
                "Namespace/capi-conformance",
                "ServiceAccount/capi-conformance",
                "ClusterRole/capi-conformance-static",
                "ClusterRole/capi-conformance-check",
                "ClusterRole/capi-conformance-run",
                "ClusterRoleBinding/capi-conformance-static-capi-conformance",
                "ClusterRoleBinding/capi-conformance-check-capi-conformance",
                "Job/capi-conformance",
            ]
        );
        let job = &docs[7];
        let c = &job["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(c["command"][0], IMAGE_BINARY);
        let args: Vec<&str> = c["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        assert_eq!(args[0], "check");
        assert!(!args.contains(&"--static-only"));
        assert!(args.contains(&"/reports/junit.xml") && args.contains(&"/reports/scenarios"));
    }

    #[test]
    fn static_only_job_binds_only_the_static_role() {
        let docs = docs(&render(&args(true)).unwrap());
        let names = kinds(&docs);
        assert!(names.contains(&"ClusterRole/capi-conformance-static".to_string()));
        assert!(!names.iter().any(|n| n.contains("capi-conformance-check")));
        assert!(!names.iter().any(|n| n.contains("capi-conformance-run")));
        let job = docs.last().unwrap();
        let args = &job["spec"]["template"]["spec"]["containers"][0]["args"];
        assert!(
            args.as_array()
                .unwrap()
                .iter()
                .any(|a| a == "--static-only")
        );
    }

    /// The pod meets the `restricted` Pod Security Standard its namespace enforces (the checks
    /// of that profile that apply to this pod spec).
    #[test]
    fn pod_meets_the_restricted_pod_security_standard() {
        let docs = docs(&render(&args(false)).unwrap());
        assert_eq!(
            docs[0]["metadata"]["labels"]["pod-security.kubernetes.io/enforce"],
            "restricted"
        );
        let pod = &docs[7]["spec"]["template"]["spec"];
        assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
        assert_ne!(pod["securityContext"]["runAsUser"], 0);
        assert_eq!(
            pod["securityContext"]["seccompProfile"]["type"],
            "RuntimeDefault"
        );
        assert!(pod.get("hostNetwork").is_none() && pod.get("hostPID").is_none());
        for v in pod["volumes"].as_array().unwrap() {
            let kinds: Vec<&String> = v
                .as_object()
                .unwrap()
                .keys()
                .filter(|k| *k != "name")
                .collect();
            assert!(
                kinds
                    .iter()
                    .all(|k| ["emptyDir", "persistentVolumeClaim"].contains(&k.as_str())),
                "{v}"
            );
        }
        for c in pod["containers"].as_array().unwrap() {
            let sc = &c["securityContext"];
            assert_eq!(sc["allowPrivilegeEscalation"], false);
            assert_eq!(sc["capabilities"]["drop"][0], "ALL");
            assert!(sc["capabilities"].get("add").is_none());
            assert!(sc.get("privileged").is_none());
        }
    }

    #[test]
    fn namespace_image_claim_and_extra_check_args_are_used_and_checked() {
        let mut a = args(false);
        a.namespace = "conf-ns".into();
        a.image = "registry.example/cc:dev".into();
        a.reports_claim = Some("reports".into());
        a.check_args = vec!["--fail-on".into(), "should".into()];
        let docs = docs(&render(&a).unwrap());
        let job = docs.last().unwrap();
        assert_eq!(job["metadata"]["namespace"], "conf-ns");
        let pod = &job["spec"]["template"]["spec"];
        assert_eq!(pod["containers"][0]["image"], "registry.example/cc:dev");
        assert_eq!(
            pod["volumes"][0]["persistentVolumeClaim"]["claimName"],
            "reports"
        );
        let args = pod["containers"][0]["args"].as_array().unwrap();
        assert_eq!(args[args.len() - 2], "--fail-on");
        let crb = docs
            .iter()
            .find(|d| d["kind"] == "ClusterRoleBinding")
            .unwrap();
        assert_eq!(crb["subjects"][0]["namespace"], "conf-ns");

        a.namespace = "Bad_NS".into();
        assert!(matches!(
            render(&a),
            Err(ManifestsError::InvalidNamespace(..))
        ));
        a.namespace = "ok".into();
        a.groups = vec!["*".into()];
        assert!(matches!(render(&a), Err(ManifestsError::Rbac(_))));
    }
}

//! The differences between the embedded server and kube-apiserver v1.36 that are known and
//! explained: the same list, with the same ids, as docs/embedded-apiserver.md "Differences from
//! kube-apiserver v1.36 (measured)". A difference matching none of them fails the test; an
//! entry no difference matches (in a trace that ran) fails it too, so the list stays true.

use regex::Regex;

/// One known difference: the comparisons (`trace: id`) and places it covers, as globs (`*`
/// any text, `{a,b}` one of); `timed`: seen only when the real cluster's controllers were
/// quick enough (not required to be seen).
pub struct Known {
    pub id: &'static str,
    pub unit: &'static str,
    pub at: &'static str,
    pub timed: bool,
}

const fn k(id: &'static str, unit: &'static str, at: &'static str) -> Known {
    Known {
        id,
        unit,
        at,
        timed: false,
    }
}

/// The API groups kube-apiserver v1.36 serves and this server does not.
macro_rules! unserved_groups {
    () => {
        "{apiregistration.k8s.io,autoscaling,certificates.k8s.io,discovery.k8s.io,flowcontrol.apiserver.k8s.io,networking.k8s.io,node.k8s.io,policy,resource.k8s.io,scheduling.k8s.io,storage.k8s.io}"
    };
}

/// The resources of served groups this server does not serve.
macro_rules! unserved_resources {
    () => {
        "{bindings,componentstatuses,endpoints,limitranges,namespaces/finalize,nodes/proxy,persistentvolumeclaims,persistentvolumeclaims/status,persistentvolumes,persistentvolumes/status,pods/*,podtemplates,replicationcontrollers,replicationcontrollers/*,resourcequotas,resourcequotas/status,services/proxy,controllerrevisions,replicasets,replicasets/*,statefulsets,statefulsets/*,cronjobs,cronjobs/status,mutatingadmissionpolicies,mutatingadmissionpolicybindings,validatingadmissionpolicies,validatingadmissionpolicies/status,validatingadmissionpolicybindings,tokenreviews,localsubjectaccessreviews}"
    };
}

/// The aggregated discovery paths of those resources (subresources nest there).
macro_rules! unserved_aggregated {
    () => {
        "*resources[{bindings,componentstatuses,endpoints,limitranges,persistentvolumeclaims,persistentvolumes,podtemplates,replicationcontrollers,resourcequotas,controllerrevisions,replicasets,statefulsets,cronjobs,mutatingadmissionpolicies,mutatingadmissionpolicybindings,validatingadmissionpolicies,validatingadmissionpolicybindings,tokenreviews,localsubjectaccessreviews}]*"
    };
}

pub const KNOWN: &[Known] = &[
    k("D1", "discovery: GET /version", "body/*"),
    k(
        "D2",
        "discovery: GET /apis",
        concat!("body/groups[", unserved_groups!(), "]"),
    ),
    k(
        "D2",
        "discovery: GET /apis (aggregated)",
        concat!("body/items[", unserved_groups!(), "]"),
    ),
    k(
        "D2",
        concat!("discovery: GET /apis/", unserved_groups!(), "*"),
        "*",
    ),
    k(
        "D2",
        "discovery: GET /openapi/v3",
        concat!("body/paths/apis/", unserved_groups!(), "*"),
    ),
    k(
        "D2",
        "kubectl: kubectl api-{resources,versions}",
        "/stdout:*",
    ),
    k(
        "D3",
        "discovery: GET /api*/v1",
        concat!("body/resources[", unserved_resources!(), "]"),
    ),
    k(
        "D3",
        "discovery: GET /api (aggregated)",
        unserved_aggregated!(),
    ),
    k(
        "D3",
        "discovery: GET /api (aggregated)",
        "*resources[{namespaces,nodes,pods,services}]/subresources[{finalize,proxy,attach,binding,ephemeralcontainers,eviction,exec,log,portforward,resize}]",
    ),
    k(
        "D3",
        "discovery: GET /apis (aggregated)",
        unserved_aggregated!(),
    ),
    k(
        "D4",
        "discovery: GET /openapi/v3",
        "body/paths/{api,apis,version,.well-known/openid-configuration,openid/v1/jwks,apis/admissionregistration.k8s.io,apis/apiextensions.k8s.io,apis/apps,apis/authentication.k8s.io,apis/authorization.k8s.io,apis/batch,apis/coordination.k8s.io,apis/events.k8s.io,apis/rbac.authorization.k8s.io}",
    ),
    k("D5", "kube-rs: GET /openapi/*", "body/paths/*"),
    k(
        "D6",
        "kube-rs: GET /openapi/v3/*: kube's shared schemas",
        "body/*",
    ),
    k("D7", "*", "*/managedFields[*]/fieldsV1/*/."),
    k(
        "D8",
        "kube-rs: {merge patch at v1 with a v1alpha1 field,merge patch at v1alpha1,get at v1 after the patches,watch at v1alpha1}",
        "*/metadata/managedFields",
    ),
    k("D9", "kube-rs: get with Accept: application/yaml", "*"),
    k("D10", "kube-rs: apply with broken YAML", "body/message"),
    k(
        "D11",
        "kube-rs: create with a duplicate field (Strict)",
        "header warning",
    ),
    k("D12", "kube-rs: read that Event as v1", "*"),
    k(
        "D13",
        "kube-rs: the namespace's default ServiceAccount",
        "*",
    ),
    Known {
        id: "D14",
        unit: "{python,kube-rs}: *{deployment,Deployment}*",
        at: "{/ok,body}/{metadata/annotations,metadata/managedFields[kube-controller-manager,Update,status]*,status*}",
        timed: true,
    },
];

/// A glob as an anchored regex (a comma between `[` and `]` inside `{…}` is text, as in a
/// managedFields entry's key).
pub fn glob(pattern: &str) -> Regex {
    let mut re = String::from("^");
    let (mut in_alt, mut in_key) = (false, false);
    for c in pattern.chars() {
        match c {
            '*' => re.push_str(".*"),
            '{' => {
                in_alt = true;
                re.push_str("(?:");
            }
            '}' if in_alt => {
                in_alt = false;
                re.push(')');
            }
            ',' if in_alt && !in_key => re.push('|'),
            c => {
                if c == '[' && in_alt {
                    in_key = true;
                } else if c == ']' {
                    in_key = false;
                }
                re.push_str(&regex::escape(&c.to_string()));
            }
        }
    }
    re.push('$');
    Regex::new(&re).unwrap()
}

/// The ids of docs/embedded-apiserver.md "Differences from kube-apiserver v1.36 (measured)": one
/// line each, `- **D<n>** …`.
fn documented_ids() -> Vec<String> {
    let doc = include_str!("../../docs/embedded-apiserver.md");
    let section = doc
        .split("\n## Differences from kube-apiserver v1.36 (measured)\n")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .unwrap_or_default();
    section
        .lines()
        .filter_map(|l| l.strip_prefix("- **D"))
        .filter_map(|l| l.split_once("**"))
        .map(|(n, _)| format!("D{n}"))
        .collect()
}

#[test]
fn the_known_list_is_the_documents() {
    let documented = documented_ids();
    let mut listed: Vec<String> = KNOWN.iter().map(|k| k.id.to_string()).collect();
    listed.dedup();
    assert_eq!(
        listed, documented,
        "differential/known.rs and docs/embedded-apiserver.md list different differences"
    );
}

#[test]
fn globs_match_as_documented() {
    assert!(glob("discovery: GET /apis").is_match("discovery: GET /apis"));
    assert!(!glob("discovery: GET /apis").is_match("discovery: GET /apis/x"));
    assert!(glob("body/groups[{apps,batch}]").is_match("body/groups[batch]"));
    assert!(!glob("body/groups[{apps,batch}]").is_match("body/groups[policy]"));
    assert!(glob("*: GET /api/v1/*").is_match("kube-rs: GET /api/v1/namespaces"));
    assert!(glob("x/{a,f[m,U,s]*}").is_match("x/f[m,U,s]/y"));
    assert!(!glob("x/{a,f[m,U,s]*}").is_match("x/U"));
}

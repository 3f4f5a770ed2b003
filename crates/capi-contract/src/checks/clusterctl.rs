//! clusterctl provider contract (§18): metadata.yaml and components YAML rules. All of them
//! need a clusterctl `metadata.yaml` among the inputs; without one they are `skip`.

use super::{CheckCtx, Finding, doc_ev};
use crate::inventory::{Document, Inventory};
use crate::model::Evidence;
use crate::suite::Rule;
use regex::Regex;
use serde_json::Value;
use std::sync::OnceLock;

const NO_METADATA: &str =
    "no clusterctl metadata.yaml among the inputs (the clusterctl rules need one)";
const COMPONENT_FILES: [&str; 7] = [
    "core-components.yaml",
    "infrastructure-components.yaml",
    "bootstrap-components.yaml",
    "control-plane-components.yaml",
    "ipam-components.yaml",
    "runtime-extension-components.yaml",
    "addon-components.yaml",
];
const PROVIDER_PREFIXES: [&str; 6] = [
    "bootstrap-",
    "control-plane-",
    "infrastructure-",
    "ipam-",
    "runtime-extension-",
    "addon-",
];
/// Kinds clusterctl treats as cluster-scoped when it sets the target namespace.
const CLUSTER_SCOPED: [&str; 9] = [
    "Namespace",
    "ClusterRole",
    "ClusterRoleBinding",
    "CustomResourceDefinition",
    "ValidatingWebhookConfiguration",
    "MutatingWebhookConfiguration",
    "StorageClass",
    "PriorityClass",
    "APIService",
];

fn metadata<'a>(ctx: &CheckCtx<'a>) -> Result<&'a Value, Finding> {
    ctx.inv
        .metadata
        .as_ref()
        .map(|d| &d.value)
        .ok_or_else(|| Finding::skip(NO_METADATA))
}

macro_rules! md_or_return {
    ($ctx:expr) => {
        match metadata($ctx) {
            Ok(m) => m,
            Err(f) => return f,
        }
    };
}

fn md_ev(inv: &Inventory, message: impl Into<String>) -> Evidence {
    match &inv.metadata {
        Some(d) => doc_ev(d, message),
        None => Evidence::msg(message),
    }
}

fn meta_str<'a>(doc: &'a Document, key: &str) -> Option<&'a str> {
    doc.value
        .get("metadata")
        .and_then(|m| m.get(key))
        .and_then(Value::as_str)
}

fn label<'a>(doc: &'a Document, key: &str) -> Option<&'a str> {
    doc.value
        .get("metadata")
        .and_then(|m| m.get("labels"))
        .and_then(|l| l.get(key))
        .and_then(Value::as_str)
}

/// The kustomize root components were rendered from, if any (their `origin.file` is then the
/// root directory, not a release file).
fn rendered_root(inv: &Inventory) -> Option<&str> {
    inv.providers
        .iter()
        .flat_map(|p| p.crds.iter().map(|c| &c.crd.origin))
        .chain(inv.deployments.iter().map(|d| &d.origin))
        .find(|o| o.rendered.is_some())
        .map(|o| o.file.as_str())
}

/// Files holding components (CRDs or Deployments).
fn component_files(inv: &Inventory) -> Vec<String> {
    let mut files: Vec<String> = inv
        .providers
        .iter()
        .flat_map(|p| p.crds.iter().map(|c| c.crd.origin.file.clone()))
        .chain(inv.deployments.iter().map(|d| d.origin.file.clone()))
        .collect();
    files.sort();
    files.dedup();
    files
}

pub fn components_name(_: &Rule, ctx: &CheckCtx) -> Finding {
    let _ = md_or_return!(ctx);
    let files = component_files(ctx.inv);
    if files.iter().any(|f| f == "-") {
        return Finding::skip("components read from stdin: no file name to check");
    }
    if let Some(root) = rendered_root(ctx.inv) {
        return Finding::skip(format!(
            "components rendered from the kustomize root {root}: the release file name is chosen when the release is built"
        ));
    }
    let bad: Vec<&String> = files
        .iter()
        .filter(|f| {
            let base = std::path::Path::new(f)
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("");
            !COMPONENT_FILES.contains(&base)
        })
        .collect();
    if bad.is_empty() {
        Finding::pass_msg(format!("components file(s): {}", files.join(", ")))
    } else {
        // Each badly named file, located at the file itself (its name is the finding).
        let evidence = bad
            .iter()
            .map(|f| Evidence {
                location: Some(f.as_str().into()),
                ..Evidence::msg(format!("components file {f}"))
            })
            .collect();
        Finding::fail(
            format!(
                "components file name(s) {} are not one of {}",
                bad.iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                COMPONENT_FILES.join(", ")
            ),
            evidence,
        )
    }
}

pub fn one_namespace(_: &Rule, ctx: &CheckCtx) -> Finding {
    let _ = md_or_return!(ctx);
    match ctx.inv.namespaces.len() {
        0 => Finding::pass_msg(
            "no Namespace object (allowed, but then --target-namespace is mandatory)",
        ),
        1 => Finding::pass(vec![doc_ev(
            &ctx.inv.namespaces[0],
            "exactly one Namespace",
        )]),
        n => Finding::fail(
            format!("{n} Namespace objects; clusterctl accepts at most one"),
            ctx.inv
                .namespaces
                .iter()
                .map(|d| doc_ev(d, "Namespace"))
                .collect(),
        ),
    }
}

pub fn target_namespace(_: &Rule, ctx: &CheckCtx) -> Finding {
    let _ = md_or_return!(ctx);
    let Some(ns) = ctx.inv.namespaces.first().and_then(|d| meta_str(d, "name")) else {
        return Finding::skip(
            "no Namespace object: clusterctl sets the namespace from --target-namespace",
        );
    };
    let mut bad = Vec::new();
    for doc in &ctx.inv.objects {
        let kind = doc.value.get("kind").and_then(Value::as_str).unwrap_or("");
        if !CLUSTER_SCOPED.contains(&kind)
            && let Some(got) = meta_str(doc, "namespace")
            && got != ns
        {
            bad.push(doc_ev(doc, format!("in namespace {got}, not {ns}")));
        }
        if let Some(v) = doc
            .value
            .get("metadata")
            .and_then(|m| m.get("annotations"))
            .and_then(|a| a.get("cert-manager.io/inject-ca-from"))
            .and_then(Value::as_str)
            && v.split('/').count() != 2
        {
            bad.push(doc_ev(
                doc,
                format!("cert-manager.io/inject-ca-from `{v}` is not <namespace>/<name>"),
            ));
        }
    }
    for c in ctx.inv.providers.iter().flat_map(|p| &p.crds) {
        if let Some(v) = c.crd.annotations.get("cert-manager.io/inject-ca-from")
            && v.split('/').count() != 2
        {
            bad.push(Evidence::msg(format!(
                "{}: cert-manager.io/inject-ca-from `{v}` is not <namespace>/<name>",
                c.crd.name
            )));
        }
    }
    if bad.is_empty() {
        Finding::pass_msg(format!("every namespaced object is in {ns}"))
    } else {
        Finding::fail(
            format!(
                "{} object(s) outside the target namespace {ns} or with a bad inject-ca-from",
                bad.len()
            ),
            bad,
        )
    }
}

fn containers(doc: &Document) -> Vec<&Value> {
    doc.value
        .pointer("/spec/template/spec/containers")
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default()
}

pub fn images(_: &Rule, ctx: &CheckCtx) -> Finding {
    let _ = md_or_return!(ctx);
    let mut bad = Vec::new();
    let mut seen = 0;
    for d in &ctx.inv.deployments {
        for c in containers(d) {
            let Some(image) = c.get("image").and_then(Value::as_str) else {
                continue;
            };
            seen += 1;
            let last = image.rsplit('/').next().unwrap_or(image);
            let has_registry = image
                .split('/')
                .next()
                .is_some_and(|h| h.contains('.') || h.contains(':'))
                && image.contains('/');
            if !(last.contains(':') || last.contains('@')) || !has_registry {
                bad.push(doc_ev(
                    d,
                    format!("image `{image}` is not <registry>/<name>:<tag>"),
                ));
            }
        }
    }
    if seen == 0 {
        return Finding::skip("no container images among the inputs");
    }
    if bad.is_empty() {
        Finding::pass_msg("every image is <registry>/<name>:<tag>")
    } else {
        Finding::fail("image names are not canonical", bad)
    }
}

fn walk_strings<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
    match v {
        Value::String(s) => out.push(s),
        Value::Array(a) => a.iter().for_each(|x| walk_strings(x, out)),
        Value::Object(m) => m.iter().for_each(|(k, x)| {
            out.push(k);
            walk_strings(x, out)
        }),
        _ => {}
    }
}

/// `None` when every `${…}` in `s` is clusterctl-compatible (a variable name, optionally
/// followed by one of drone/envsubst's operators: `:=`, `=`, `:-`, `-`, `#`, `%`, `/`, `^`,
/// `,`, `:offset`, …, with no nested `$`); else the first bad reference (e.g. `${VAR$FOO}`).
pub fn bad_variable(s: &str) -> Option<String> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    let re = RE
        .get_or_init(|| {
            // `}` closes the reference; a scalar may also end inside it when YAML split the
            // line (e.g. `${ROLE/#arn/x: y}` parses as key `${ROLE/#arn/x` and value `y}`).
            Regex::new(r"^\$\{\s*#?[A-Za-z_][A-Za-z0-9_]*\s*(?:[^A-Za-z0-9_\s}$][^}$]*)?(?:\}|$)")
                .ok()
        })
        .as_ref()?;
    let mut rest = s;
    while let Some(i) = rest.find("${") {
        let tail = &rest[i..];
        match re.find(tail) {
            Some(m) if m.end() > 0 => rest = &tail[m.end()..],
            _ => return Some(tail.chars().take(40).collect()),
        }
    }
    None
}

pub fn variables(_: &Rule, ctx: &CheckCtx) -> Finding {
    let _ = md_or_return!(ctx);
    let mut bad = Vec::new();
    for d in &ctx.inv.objects {
        let mut strings = Vec::new();
        walk_strings(&d.value, &mut strings);
        if let Some(b) = strings.into_iter().find_map(bad_variable) {
            bad.push(doc_ev(d, format!("unsupported variable syntax `{b}`")));
        }
    }
    if bad.is_empty() {
        Finding::pass_msg("every variable is ${VAR} or ${VAR:=default}")
    } else {
        Finding::fail("variables clusterctl cannot substitute", bad)
    }
}

fn provider_value_ok(v: &str) -> bool {
    v == "cluster-api"
        || PROVIDER_PREFIXES
            .iter()
            .any(|p| v.strip_prefix(p).is_some_and(|n| !n.is_empty()))
}

pub fn provider_label(_: &Rule, ctx: &CheckCtx) -> Finding {
    let _ = md_or_return!(ctx);
    let mut bad = Vec::new();
    for d in &ctx.inv.objects {
        match label(d, crate::inventory::PROVIDER_LABEL) {
            Some(v) if provider_value_ok(v) => {}
            Some(v) => bad.push(doc_ev(
                d,
                format!("cluster.x-k8s.io/provider={v} lacks a type prefix"),
            )),
            None => bad.push(doc_ev(d, "no cluster.x-k8s.io/provider label")),
        }
    }
    for c in ctx.inv.providers.iter().flat_map(|p| &p.crds) {
        match c.crd.labels.get(crate::inventory::PROVIDER_LABEL) {
            Some(v) if provider_value_ok(v) => {}
            _ => bad.push(Evidence::msg(format!(
                "{}: missing or malformed cluster.x-k8s.io/provider label",
                c.crd.name
            ))),
        }
    }
    if bad.is_empty() {
        Finding::pass_msg("every object carries cluster.x-k8s.io/provider=<type>-<name>")
    } else {
        Finding::fail(
            format!(
                "{} object(s) without a proper cluster.x-k8s.io/provider label",
                bad.len()
            ),
            bad,
        )
    }
}

pub fn provider_name(_: &Rule, ctx: &CheckCtx) -> Finding {
    let _ = md_or_return!(ctx);
    let Some(value) = ctx
        .provider
        .crds
        .iter()
        .find_map(|c| c.crd.labels.get(crate::inventory::PROVIDER_LABEL))
    else {
        return Finding::skip("no cluster.x-k8s.io/provider label to take the provider name from");
    };
    let name = PROVIDER_PREFIXES
        .iter()
        .find_map(|p| value.strip_prefix(p))
        .unwrap_or(value);
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    let Some(re) = RE
        .get_or_init(|| {
            Regex::new(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$").ok()
        })
        .as_ref()
    else {
        return Finding::skip("internal: name pattern unavailable");
    };
    if re.is_match(name) && name.len() <= 253 {
        let mut f = Finding::pass_msg(format!("provider name `{name}` is a DNS-1123 subdomain"));
        if name.len() > 63 {
            f.evidence.push(Evidence::msg(
                "longer than 63 characters (the book says it SHOULD not be)",
            ));
        }
        f
    } else {
        Finding::fail_msg(format!(
            "provider name `{name}` is not a lower-case DNS-1123 subdomain"
        ))
    }
}

mod manager;
mod metadata;
mod templates;

pub use manager::{manager_container, manager_containers, multi_instance_flags, namespace_flag};
pub use metadata::{
    metadata_apiversion, metadata_contract, metadata_covers_release, metadata_kind,
    metadata_series, repo_assets,
};
pub use templates::{clusterclass_files, template_names, template_namespace, template_vars};

#[cfg(test)]
mod tests {
    use super::bad_variable;
    use super::manager::help_lists_flag;

    #[test]
    fn help_output_flags_are_whole_words() {
        let help = "Usage:\n  --namespace string   ns\n  -watch-filter=LABEL\n  --metrics-bind-addr string\n";
        assert!(help_lists_flag(help, "--namespace"));
        assert!(help_lists_flag(help, "--watch-filter"));
        assert!(!help_lists_flag(help, "--metrics"));
        assert!(!help_lists_flag("--namespace-prefix string", "--namespace"));
        assert!(!help_lists_flag("the namespace to watch", "--namespace"));
    }

    #[test]
    fn envsubst_grammar() {
        for ok in [
            "${VAR}",
            "${ VAR }",
            "x-${VAR:=default}-y",
            "${VAR=d}",
            "${VAR:-d}",
            "${VAR/#arn/eks}",
            "${VAR,,}",
            "${ROLE/#arn/eks.amazonaws.com/role-arn",
            "no variables",
        ] {
            assert_eq!(bad_variable(ok), None, "{ok}");
        }
        for bad in ["${VAR$FOO}", "${1VAR}", "${}", "${VAR:=$(x)}"] {
            assert!(bad_variable(bad).is_some(), "{bad}");
        }
    }
}

//! The cluster templates' and ClusterClass files' rules (`cluster-template*.yaml`,
//! `clusterclass-*.yaml`).

use super::*;

const NO_TEMPLATES: &str = "no cluster-template*.yaml or clusterclass-*.yaml among the inputs";

fn base_name(file: &str) -> &str {
    std::path::Path::new(file)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(file)
}

/// Template documents grouped by file.
fn template_files(inv: &Inventory) -> std::collections::BTreeMap<&str, Vec<&Document>> {
    let mut m: std::collections::BTreeMap<&str, Vec<&Document>> = std::collections::BTreeMap::new();
    for d in &inv.templates {
        m.entry(d.origin.file.as_str()).or_default().push(d);
    }
    m
}

fn kind_of(d: &Document) -> &str {
    d.value.get("kind").and_then(Value::as_str).unwrap_or("")
}

/// `clusterctl/template-names`: files holding a `Cluster` are `cluster-template.yaml` or
/// `cluster-template-<flavor>.yaml`.
pub fn template_names(_: &Rule, ctx: &CheckCtx) -> Finding {
    let files = template_files(ctx.inv);
    let with_cluster: Vec<&str> = files
        .iter()
        .filter(|(_, docs)| docs.iter().any(|d| kind_of(d) == "Cluster"))
        .map(|(f, _)| *f)
        .collect();
    if with_cluster.is_empty() {
        return Finding::skip(NO_TEMPLATES);
    }
    let bad: Vec<&str> = with_cluster
        .iter()
        .copied()
        .filter(|f| {
            let b = base_name(f);
            !(b == "cluster-template.yaml"
                || (b.starts_with("cluster-template-")
                    && b.ends_with(".yaml")
                    && b.len() > "cluster-template-.yaml".len()))
        })
        .collect();
    if bad.is_empty() {
        Finding::pass_msg(format!("cluster templates: {}", with_cluster.join(", ")))
    } else {
        Finding::fail_msg(format!(
            "cluster template file(s) {} are not named cluster-template.yaml or cluster-template-<flavor>.yaml",
            bad.join(", ")
        ))
    }
}

/// `clusterctl/template-namespace`: all objects of one template file share one namespace.
pub fn template_namespace(_: &Rule, ctx: &CheckCtx) -> Finding {
    let files = template_files(ctx.inv);
    if files.is_empty() {
        return Finding::skip(NO_TEMPLATES);
    }
    let mut bad = Vec::new();
    for (file, docs) in &files {
        let mut namespaces: Vec<&str> = docs
            .iter()
            .filter_map(|d| meta_str(d, "namespace"))
            .collect();
        namespaces.sort_unstable();
        namespaces.dedup();
        if namespaces.len() > 1 {
            bad.push(Evidence::msg(format!(
                "{file}: objects in namespaces {}",
                namespaces.join(", ")
            )));
        }
    }
    if bad.is_empty() {
        Finding::pass_msg("every template file keeps its objects in one namespace")
    } else {
        Finding::fail("template objects spread over several namespaces", bad)
    }
}

/// `clusterctl/template-vars`: cluster templates use `${CLUSTER_NAME}`.
pub fn template_vars(_: &Rule, ctx: &CheckCtx) -> Finding {
    let files = template_files(ctx.inv);
    let clusters: Vec<(&str, &Vec<&Document>)> = files
        .iter()
        .filter(|(_, docs)| docs.iter().any(|d| kind_of(d) == "Cluster"))
        .map(|(f, d)| (*f, d))
        .collect();
    if clusters.is_empty() {
        return Finding::skip(NO_TEMPLATES);
    }
    let bad: Vec<&str> = clusters
        .iter()
        .filter(|(_, docs)| {
            !docs.iter().any(|d| {
                let mut strings = Vec::new();
                walk_strings(&d.value, &mut strings);
                strings.iter().any(|s| s.contains("${CLUSTER_NAME}"))
            })
        })
        .map(|(f, _)| *f)
        .collect();
    if bad.is_empty() {
        Finding::pass_msg("cluster templates use ${CLUSTER_NAME}")
    } else {
        Finding::fail_msg(format!(
            "template(s) {} do not use ${{CLUSTER_NAME}}",
            bad.join(", ")
        ))
    }
}

/// `clusterctl/clusterclass-files`: ClusterClasses live in `clusterclass-<name>.yaml` and set
/// no namespace.
pub fn clusterclass_files(_: &Rule, ctx: &CheckCtx) -> Finding {
    let classes: Vec<&Document> = ctx
        .inv
        .templates
        .iter()
        .filter(|d| kind_of(d) == "ClusterClass")
        .collect();
    if classes.is_empty() {
        return Finding::skip("no ClusterClass among the inputs");
    }
    let mut bad = Vec::new();
    for d in classes {
        let b = base_name(&d.origin.file);
        if !(b.starts_with("clusterclass-") && b.ends_with(".yaml")) {
            bad.push(doc_ev(
                d,
                format!("in file {b}, not clusterclass-<name>.yaml"),
            ));
        }
        if meta_str(d, "namespace").is_some() {
            bad.push(doc_ev(
                d,
                "sets metadata.namespace (ClusterClass files SHOULD NOT)",
            ));
        }
    }
    if bad.is_empty() {
        Finding::pass_msg("ClusterClass files are clusterclass-<name>.yaml without namespaces")
    } else {
        Finding::fail("ClusterClass file layout", bad)
    }
}

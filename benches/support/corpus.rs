//! The generated lint corpus: the conformant v1beta2 components file copied with its kinds
//! renamed per provider copy until it holds exactly [`CRDS`] CRDs (plus each copy's RBAC,
//! Deployment and Namespace objects, as in a real components file). Shared by
//! `benches/lint.rs` (criterion) and `benches/bench_driver.rs` (`scripts/bench.sh`).

#[path = "../../tests/lint/generate.rs"]
#[allow(dead_code)]
mod generate;

/// CRDs in the corpus.
pub const CRDS: usize = 1000;

const SEPARATOR: &str = "\n---\n";

/// The corpus as one multi-document YAML string per provider copy (each ~33 KB).
pub fn copies() -> Vec<String> {
    let Some((_, base)) = generate::files(generate::C::B2)
        .into_iter()
        .find(|(p, _)| p.ends_with("infrastructure-components.yaml"))
    else {
        return Vec::new();
    };
    let docs: Vec<&str> = base.split(SEPARATOR).collect();
    let mut copies = Vec::new();
    let mut crds = 0;
    let mut copy = 0;
    while crds < CRDS {
        let mut out = Vec::new();
        for doc in &docs {
            let is_crd = is_crd(doc);
            if is_crd && crds == CRDS {
                continue;
            }
            crds += usize::from(is_crd);
            out.push(
                doc.replace("foo", &format!("p{copy}x"))
                    .replace("Foo", &format!("P{copy}x")),
            );
        }
        copies.push(out.join(SEPARATOR));
        copy += 1;
    }
    copies
}

/// The whole corpus as one multi-document YAML stream.
#[allow(dead_code)]
pub fn text() -> String {
    copies().join(SEPARATOR)
}

/// Only the CRD documents of `text` (what `kubectl apply --dry-run=server` is given).
#[allow(dead_code)]
pub fn crds_only(text: &str) -> String {
    text.split(SEPARATOR)
        .filter(|doc| is_crd(doc))
        .collect::<Vec<_>>()
        .join(SEPARATOR)
}

fn is_crd(doc: &str) -> bool {
    doc.contains("kind: CustomResourceDefinition")
}

//! Lint throughput: a generated corpus of 1,000 CRDs (the conformant fixture's kinds renamed
//! per provider), parsed from YAML text and evaluated against the embedded catalog.
//! Reports bytes/s (criterion `Throughput::Bytes`); CRDs/s = 1,000 / time per iteration.

use capi_conformance::checks::{LintOptions, evaluate};
use capi_conformance::inventory::parse_text;
use capi_conformance::suite::Catalog;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

#[path = "../tests/lint/generate.rs"]
#[allow(dead_code)]
mod generate;

const CRDS: usize = 1000;

/// One multi-document YAML stream with exactly [`CRDS`] CRDs (plus each copy's RBAC,
/// Deployment and Namespace objects, as in a components file).
fn corpus() -> String {
    let (_, base) = generate::files(generate::C::B2)
        .into_iter()
        .find(|(p, _)| p.ends_with("infrastructure-components.yaml"))
        .expect("components fixture");
    let docs: Vec<&str> = base.split("\n---\n").collect();
    let mut out = Vec::new();
    let mut crds = 0;
    let mut copy = 0;
    while crds < CRDS {
        for doc in &docs {
            let is_crd = doc.contains("kind: CustomResourceDefinition");
            if is_crd && crds == CRDS {
                continue;
            }
            crds += usize::from(is_crd);
            out.push(
                doc.replace("foo", &format!("p{copy}x"))
                    .replace("Foo", &format!("P{copy}x")),
            );
        }
        copy += 1;
    }
    out.join("\n---\n")
}

fn bench(c: &mut Criterion) {
    let text = corpus();
    let catalog = Catalog::embedded().expect("catalog");
    let opts = LintOptions::default();
    let mut group = c.benchmark_group("lint");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("parse+evaluate 1000 CRDs", |b| {
        b.iter(|| {
            let docs: Vec<_> = parse_text("bench.yaml", black_box(&text))
                .into_iter()
                .filter_map(Result::ok)
                .collect();
            let m = evaluate(docs, &opts, &catalog).expect("evaluate");
            black_box(m.results.len())
        })
    });
    group.bench_function("parse only", |b| {
        b.iter(|| parse_text("bench.yaml", black_box(&text)).len())
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

//! Lint throughput: a generated corpus of 1,000 CRDs (the conformant fixture's kinds renamed
//! per provider), parsed from YAML text and evaluated against the embedded catalog.
//! Reports bytes/s of YAML (criterion `Throughput::Bytes`); CRDs/s = 1,000 / time per iteration.
//!
//! Bench ids (group `lint`):
//! - `lint 1000 CRDs end to end (parse + evaluate + JSON report)`: what `lint -o json` does
//!   after reading the file: parse, evaluate every rule, write the JSON report (≈ 15.7 MB for
//!   this corpus) into a sink. The figure the README's lint line reports.
//! - `lint 1000 CRDs (parse + evaluate)`: the same without the report.
//! - `parse, all cores` / `parse, one core`: YAML → documents only (the corpus as one stream,
//!   parsed in parallel above 512 KiB; or copy by copy, each below that threshold).
//! - `evaluate only`: rule evaluation of already parsed documents (includes cloning them).
//!
//! Run with `cargo bench --bench lint` (one core: `taskset -c 0 cargo bench --bench lint`). The
//! figures, and the machine they were measured on, are in
//! docs/performance.md "Per component (criterion benches)".

/// The allocator the shipped binary uses (`src/main.rs`), so the figures are the binary's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use capi_conformance::checks::{LintOptions, evaluate};
use capi_conformance::cli::OutputFormat;
use capi_conformance::inventory::{SchemaForm, parse_text_as};
use capi_conformance::report::{RenderOptions, render_to};
use capi_conformance::suite::Catalog;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

#[path = "support/corpus.rs"]
mod corpus;

fn bench(c: &mut Criterion) {
    let copies = corpus::copies();
    assert!(!copies.is_empty(), "the components fixture is missing");
    let text = copies.join("\n---\n");
    let catalog = Catalog::embedded().expect("catalog");
    let opts = LintOptions::default();
    let mut group = c.benchmark_group("lint");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(text.len() as u64));
    let render_opts = RenderOptions::default();
    // Parse + evaluate, as `lint` does.
    let lint_once = |text: &str| {
        let docs: Vec<_> = parse_text_as("bench.yaml", black_box(text), SchemaForm::Compact)
            .into_iter()
            .filter_map(Result::ok)
            .collect();
        evaluate(docs, &opts, &catalog).expect("evaluate")
    };
    group.bench_function(
        "lint 1000 CRDs end to end (parse + evaluate + JSON report)",
        |b| {
            b.iter(|| {
                let m = lint_once(&text);
                let mut sink = std::io::sink();
                render_to(&m, OutputFormat::Json, &render_opts, &mut sink).expect("report");
                black_box(m.results.len())
            })
        },
    );
    group.bench_function("lint 1000 CRDs (parse + evaluate)", |b| {
        b.iter(|| {
            let m = lint_once(&text);
            black_box(m.results.len())
        })
    });
    group.bench_function("parse, all cores", |b| {
        b.iter(|| parse_text_as("bench.yaml", black_box(&text), SchemaForm::Compact).len())
    });
    // Each copy (~33 KB) is below the parallel threshold: one core.
    group.bench_function("parse, one core", |b| {
        b.iter(|| {
            copies
                .iter()
                .map(|c| parse_text_as("bench.yaml", black_box(c), SchemaForm::Compact).len())
                .sum::<usize>()
        })
    });
    let docs: Vec<_> = parse_text_as("bench.yaml", &text, SchemaForm::Compact)
        .into_iter()
        .filter_map(Result::ok)
        .collect();
    group.bench_function("evaluate only", |b| {
        b.iter(|| {
            let m = evaluate(black_box(docs.clone()), &opts, &catalog).expect("evaluate");
            black_box(m.results.len())
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

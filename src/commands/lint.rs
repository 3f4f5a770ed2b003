//! `lint PATH...`: the files source → a static [`Plan`] per rendered unit → the run's static
//! cells → the report writers; exit with the verdict's code (input errors: exit 2 via `main`).

use crate::cli::LintArgs;
use crate::plan::Plan;
use crate::report::{self, Matrix, Note};
use crate::source::{Kustomize, LoadOptions, RenderedRoot, load_paths_with};
use capi_contract::checks::LintOptions;
use capi_contract::inventory::{self, Document, InputError, SchemaForm};
use capi_contract::suite::{Catalog, Rule};
use std::io::IsTerminal;

/// One unit's documents planned (static cells only, as for every `check` mode) and judged.
fn judge(docs: Vec<Document>, opts: &LintOptions, rules: &[Rule]) -> Result<Matrix, InputError> {
    let plan = Plan::build(docs, opts.clone(), rules, None, None)?;
    Ok(crate::run::static_matrix(&plan))
}

/// Builds the options from the command line (config file, role overrides).
pub fn options(args: &LintArgs) -> anyhow::Result<LintOptions> {
    let source = args
        .paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(" ");
    let mut opts = args.report.lint_options("lint", source)?;
    opts.keep_going = args.keep_going;
    Ok(opts)
}

/// Loads and evaluates; input errors come back as errors (one line each).
///
/// Each rendered kustomize root is evaluated on its own, as its own provider(s): exactly what
/// `kustomize build <root> | lint -` gives for it (provider-wide rules see only that root's
/// RBAC and Deployments). The plain inputs together are one more such unit. Provider names two
/// units share are told apart by the unit (`name (root)`), and a note says which root each
/// provider was rendered from.
pub fn lint_matrix(args: &LintArgs, rules: &[Rule]) -> anyhow::Result<Matrix> {
    lint_matrix_timed(args, rules).map(|(m, _)| m)
}

/// Where a `lint` run's wall time went (`CAPI_CONFORMANCE_TIMINGS=1` prints it on stderr; the
/// bench script `scripts/bench-lint-config.sh` reads it).
#[derive(Debug, Default)]
struct Timings {
    /// Each rendered root: (root, command, time in kustomize). Roots render in parallel.
    kustomize: Vec<(String, String, std::time::Duration)>,
    /// Reading, rendering and parsing the inputs.
    load: std::time::Duration,
    /// Evaluating the rules (and locating the findings).
    evaluate: std::time::Duration,
}

fn lint_matrix_timed(args: &LintArgs, rules: &[Rule]) -> anyhow::Result<(Matrix, Timings)> {
    let mut timings = Timings::default();
    let started = std::time::Instant::now();
    let mut opts = options(args)?;
    let load = LoadOptions {
        keep_going: args.keep_going,
        form: SchemaForm::Compact,
        kustomize: Kustomize::from_flag(args.kustomize.as_deref()),
    };
    let loaded = load_paths_with(&args.paths, &load)?;
    timings.load = started.elapsed();
    timings.kustomize = loaded
        .roots
        .iter()
        .map(|r| (r.root.clone(), r.tool.clone(), r.elapsed))
        .collect();
    opts.load_problems = loaded.problems;
    let notes: Vec<Note> = loaded
        .notes
        .iter()
        .map(|n| Note {
            source: n.source.clone(),
            message: n.message.clone(),
        })
        .collect();
    let patches = loaded
        .notes
        .iter()
        .filter(|n| n.message.contains(PATCH_MARK))
        .count();
    let units = units(loaded.documents, &loaded.roots);
    let mut matrices = Vec::with_capacity(units.len());
    let several = units.len() > 1;
    let mut no_crd = Vec::new();
    let unit_opts = LintOptions {
        load_problems: Vec::new(),
        ..opts.clone()
    };
    // Provider names taken by earlier units, and each root's providers.
    let mut taken = std::collections::BTreeSet::new();
    let mut providers_of: Vec<(String, Vec<String>)> = Vec::new();
    for (root, docs) in units {
        match judge(docs, &unit_opts, rules) {
            Ok(mut m) => {
                let names: std::collections::BTreeSet<String> =
                    m.columns.iter().map(|c| c.provider.to_string()).collect();
                let mut shown = Vec::new();
                for name in names {
                    let name = if taken.contains(&name) {
                        let renamed =
                            format!("{name} ({})", root.as_deref().unwrap_or("plain inputs"));
                        rename_provider(&mut m, &name, &renamed);
                        renamed
                    } else {
                        name
                    };
                    taken.insert(name.clone());
                    shown.push(name);
                }
                if let Some(r) = &root {
                    providers_of.push((r.clone(), shown));
                }
                matrices.push(m);
            }
            // Among several units, one without CRDs is not a provider: said, not fatal.
            Err(InputError::NoCrd { .. }) if several => no_crd.push(root),
            Err(e @ InputError::NoCrd { .. }) => return Err(no_crd_error(e, patches)),
            Err(e) => return Err(e.into()),
        }
    }
    if matrices.is_empty() {
        let e = InputError::NoCrd {
            sources: opts.source.clone(),
        };
        if !args.keep_going {
            return Err(no_crd_error(e, patches));
        }
        // With --keep-going an empty evaluation reports the problem in the matrix.
        matrices.push(judge(Vec::new(), &unit_opts, rules)?);
    }
    let mut m = merge(matrices, &opts, rules);
    m.notes.extend(notes);
    for root in no_crd {
        m.notes.push(Note {
            source: root.unwrap_or_else(|| "plain inputs".into()),
            message: "no CustomResourceDefinition: not a provider, nothing to check".into(),
        });
    }
    for r in &loaded.roots {
        let providers = providers_of
            .iter()
            .find(|(root, _)| *root == r.root)
            .map(|(_, p)| p.clone())
            .unwrap_or_default();
        m.notes.push(Note {
            source: r.root.clone(),
            message: format!(
                "kustomize root, rendered with `{}` ({} document(s){}){}",
                r.tool,
                r.documents,
                if r.with_origins {
                    ", findings at their source files"
                } else {
                    ""
                },
                if providers.is_empty() {
                    String::new()
                } else {
                    format!(": provider(s) {}", providers.join(", "))
                }
            ),
        });
    }
    m.sort();
    timings.evaluate = started.elapsed().saturating_sub(timings.load);
    Ok((m, timings))
}

/// What loading's note on a lone kustomize patch says (see [`InputError::KustomizePatch`]).
const PATCH_MARK: &str = inventory::error::KUSTOMIZE_PATCH;

/// `NoCrd`, saying when lone kustomize patches were all there was.
fn no_crd_error(e: InputError, patches: usize) -> anyhow::Error {
    if patches == 0 {
        return e.into();
    }
    anyhow::anyhow!(
        "{e} ({patches} kustomize patch(es) skipped: lint the kustomization that uses them, e.g. the repository's `config/`)"
    )
}

/// The documents split into evaluation units: one per rendered root (in `roots` order), then
/// the plain inputs together (`None`). With one root, the plain inputs belong to it (`lint
/// config/ metadata.yaml`: the clusterctl metadata of that provider).
fn units(docs: Vec<Document>, roots: &[RenderedRoot]) -> Vec<(Option<String>, Vec<Document>)> {
    match roots {
        [] => return vec![(None, docs)],
        [only] => return vec![(Some(only.root.clone()), docs)],
        _ => {}
    }
    let mut per_root: Vec<Vec<Document>> = roots.iter().map(|_| Vec::new()).collect();
    let mut plain = Vec::new();
    for d in docs {
        let slot = d
            .origin
            .rendered
            .as_ref()
            .and_then(|_| roots.iter().position(|r| r.root == d.origin.file));
        match slot {
            Some(i) => per_root[i].push(d),
            None => plain.push(d),
        }
    }
    let mut out: Vec<(Option<String>, Vec<Document>)> = roots
        .iter()
        .map(|r| Some(r.root.clone()))
        .zip(per_root)
        .collect();
    if !plain.is_empty() {
        out.push((None, plain));
    }
    out
}

/// One matrix of the units' matrices (their provider names already told apart), with the
/// loading problems.
fn merge(matrices: Vec<Matrix>, opts: &LintOptions, rules: &[Rule]) -> Matrix {
    let mut iter = matrices.into_iter();
    let Some(mut out) = iter.next() else {
        return crate::report::Matrix {
            context: opts.run_context(),
            rules: Vec::new(),
            columns: Vec::new(),
            results: Vec::new(),
            problems: Vec::new(),
            notes: Vec::new(),
            scenarios: Vec::new(),
        };
    };
    for m in iter {
        out.columns.extend(m.columns);
        out.results.extend(m.results);
        out.problems.extend(m.problems);
        out.notes.extend(m.notes);
        out.scenarios.extend(m.scenarios);
    }
    let used: std::collections::HashSet<&str> =
        out.results.iter().map(|r| r.rule_id.as_str()).collect();
    out.rules = rules
        .iter()
        .filter(|r| used.contains(r.id.as_str()))
        .cloned()
        .collect();
    out.problems
        .extend(opts.load_problems.iter().map(|p| crate::report::Problem {
            source: p.source_label(),
            message: p.to_string(),
        }));
    out.sort();
    out
}

fn rename_provider(m: &mut Matrix, from: &str, to: &str) {
    let to = crate::report::SharedStr::from(to);
    for c in m
        .columns
        .iter_mut()
        .chain(m.results.iter_mut().map(|r| &mut r.column))
        .chain(m.scenarios.iter_mut().map(|s| &mut s.column))
    {
        if c.provider == from {
            c.provider = to.clone();
        }
    }
}

/// Runs `lint` with the embedded catalog and the report writers.
pub fn run(args: LintArgs) -> anyhow::Result<i32> {
    let started = std::time::Instant::now();
    let catalog = Catalog::shared()?;
    let (matrix, timings) = lint_matrix_timed(&args, catalog.rules())?;
    let tty = std::io::stdout().is_terminal();
    report::write_outputs(&matrix, &args.report.outputs(), tty)?;
    if std::env::var("CAPI_CONFORMANCE_TIMINGS").as_deref() == Ok("1") {
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
        for (root, tool, d) in &timings.kustomize {
            eprintln!("timings: kustomize {root} ({tool}): {:.1} ms", ms(*d));
        }
        eprintln!(
            "timings: load {:.1} ms (kustomize, slowest root: {:.1} ms), evaluate {:.1} ms, total {:.1} ms",
            ms(timings.load),
            timings
                .kustomize
                .iter()
                .map(|k| ms(k.2))
                .fold(0.0, f64::max),
            ms(timings.evaluate),
            ms(started.elapsed())
        );
    }
    Ok(matrix.verdict().exit_code())
}

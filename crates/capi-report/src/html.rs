//! The self-contained HTML report (`--html`): inline CSS and JS, no external assets. The
//! matrix (`#matrix`, cells `cell-<outcome>`), filters by level, outcome and role, each failure
//! expandable to its evidence and remediation, and per scenario (`#timeline-<scenario>`) the
//! steps' timings and, for every scenario record, passing or not, an SVG timeline
//! ([`super::timeline`]): the provider's lane above the baseline's. The URL can preset a view:
//! `#failure-N` expands that failure; `?outcome=fail&role=…&level=…` presets the filters,
//! `&open=failure-1` expands failures, `&only=matrix,failures,timeline-SC-…` shows just those
//! sections (used by `scripts/screenshot.sh`).

use super::RenderOptions;
use super::layout::{self, NoGate};
use super::migration::Migration;
use super::model::{Column, Matrix, Outcome};
use super::text;
use super::timeline::{self, xml_escape as esc};
use capi_contract::contract::{Level, Role};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

mod assets;
use assets::{LEGEND, SCRIPT, STYLE};

/// `SC-inframachine` → usable in an id (letters, digits, `-`, `_`; anything else → `-`).
pub(crate) fn id_part(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

fn verdict_class(m: &Matrix) -> &'static str {
    match m.verdict() {
        super::Verdict::Pass => "verdict-pass",
        super::Verdict::Fail => "verdict-fail",
        super::Verdict::InputError => "verdict-input-error",
        super::Verdict::Inconclusive => "verdict-inconclusive",
    }
}

pub(crate) fn render(m: &Matrix, opts: &RenderOptions) -> String {
    let mut out = String::new();
    let v = m.verdict();
    let _ = write!(
        out,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n<title>capi-conformance: {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        text::verdict_label(v)
    );
    let _ = writeln!(
        out,
        "<header>\n<h1 id=\"verdict\" class=\"{}\" data-exit-code=\"{}\">capi-conformance: {} (exit {})</h1>\n<p id=\"summary\">{}</p>\n<p class=\"context\">{}</p>\n</header>",
        verdict_class(m),
        v.exit_code(),
        text::verdict_label(v),
        v.exit_code(),
        esc(&text::summary_line(m)),
        esc(&text::context_line(m))
    );
    if let Some(why) = text::unjudged_reason(m) {
        let _ = writeln!(
            out,
            "<p id=\"verdict-reason\" class=\"verdict-inconclusive\">{}</p>",
            esc(&why)
        );
    }
    let failure_ids = failure_ids(m);
    filters(m, &mut out);
    matrix(m, &failure_ids, &mut out);
    failures(m, &failure_ids, &mut out);
    lifecycle(m, &mut out);
    if let Some(to) = opts.migration {
        migration(&super::migration::migration(m, to), &mut out);
    }
    problems(m, &mut out);
    notes(m, &mut out);
    reasons(m, &mut out);
    scenarios(m, &mut out);
    let _ = write!(out, "<script>{SCRIPT}</script>\n</body>\n</html>\n");
    out
}

/// Anchor id of every failed result, keyed by (rule id, column): `failure-<n>` in result order.
fn failure_ids(m: &Matrix) -> BTreeMap<(&str, &Column), String> {
    let mut ids = BTreeMap::new();
    for (n, r) in m
        .results
        .iter()
        .filter(|r| r.outcome == Outcome::Fail)
        .enumerate()
    {
        ids.entry((r.rule_id.as_str(), &r.column))
            .or_insert_with(|| format!("failure-{}", n + 1));
    }
    ids
}

fn filters(m: &Matrix, out: &mut String) {
    let roles: BTreeSet<Role> = m.columns.iter().map(|c| c.role).collect();
    out.push_str("<section id=\"filters\">\n<label>Level <select id=\"filter-level\"><option value=\"\">all</option>");
    for l in [Level::Must, Level::Should, Level::May] {
        let _ = write!(out, "<option value=\"{0}\">{0}</option>", l.as_str());
    }
    out.push_str("</select></label>\n<label>Outcome <select id=\"filter-outcome\"><option value=\"\">all</option>");
    for o in [
        Outcome::Pass,
        Outcome::Fail,
        Outcome::Skip,
        Outcome::Inconclusive,
        Outcome::Waived,
    ] {
        let _ = write!(out, "<option value=\"{0}\">{0}</option>", o.as_str());
    }
    out.push_str(
        "</select></label>\n<label>Role <select id=\"filter-role\"><option value=\"\">all</option>",
    );
    for r in roles {
        let _ = write!(
            out,
            "<option value=\"{}\">{}</option>",
            r.as_str(),
            r.display_name()
        );
    }
    out.push_str("</select></label>\n</section>\n");
}

/// Plain levels (`MUST`, `SHOULD`, `MAY`) a rule has across the columns it applies to.
fn row_levels(m: &Matrix, rule_id: &str, cols: &[&Column], cells: &[Option<Outcome>]) -> String {
    let levels: BTreeSet<Level> = cols
        .iter()
        .zip(cells)
        .filter(|(_, o)| o.is_some())
        .map(|(c, _)| {
            m.rule(rule_id).map_or_else(
                || {
                    m.results
                        .iter()
                        .find(|r| r.rule_id == rule_id)
                        .map_or(Level::May, |r| r.level)
                },
                |r| r.level_for(c.contract),
            )
        })
        .collect();
    levels
        .into_iter()
        .map(Level::as_str)
        .collect::<Vec<_>>()
        .join(" ")
}

fn matrix(m: &Matrix, failure_ids: &BTreeMap<(&str, &Column), String>, out: &mut String) {
    out.push_str("<section id=\"matrix\">\n<h2>Rule matrix</h2>\n");
    let idx = layout::cell_index(m);
    for p in layout::provider_tables(m, &idx, usize::MAX, None) {
        let _ = writeln!(
            out,
            "<h3>{}{}</h3>",
            esc(p.provider),
            if p.baseline { " (baseline)" } else { "" }
        );
        for chunk in &p.chunks {
            let _ = write!(
                out,
                "<div class=\"table-wrap\"><table class=\"matrix-table\" data-provider=\"{}\">\n<thead><tr><th>Rule</th><th>Level</th><th>Title</th>",
                esc(p.provider)
            );
            for c in &chunk.columns {
                let (kind, tag) = layout::column_header(c);
                let _ = write!(
                    out,
                    "<th class=\"col{}\" data-role=\"{}\" title=\"{}\">{}<br/>{}</th>",
                    if c.baseline { " baseline" } else { "" },
                    c.role.as_str(),
                    esc(&c.id()),
                    esc(&kind),
                    esc(&tag)
                );
            }
            out.push_str("</tr></thead>\n<tbody>\n");
            for row in &chunk.rows {
                let outcomes: BTreeSet<&str> =
                    row.cells.iter().flatten().map(|o| o.as_str()).collect();
                let roles: BTreeSet<&str> = chunk
                    .columns
                    .iter()
                    .zip(&row.cells)
                    .filter(|(_, o)| o.is_some())
                    .map(|(c, _)| c.role.as_str())
                    .collect();
                let _ = write!(
                    out,
                    "<tr class=\"rule-row\" data-rule=\"{}\" data-levels=\"{}\" data-outcomes=\"{}\" data-roles=\"{}\"><td><code>{}</code></td><td>{}</td><td>{}</td>",
                    esc(row.rule_id),
                    row_levels(m, row.rule_id, &chunk.columns, &row.cells),
                    outcomes.into_iter().collect::<Vec<_>>().join(" "),
                    roles.into_iter().collect::<Vec<_>>().join(" "),
                    esc(row.rule_id),
                    esc(&row.level),
                    esc(row.title)
                );
                for (c, cell) in chunk.columns.iter().zip(&row.cells) {
                    let base = if c.baseline { " baseline" } else { "" };
                    match cell {
                        None => {
                            let _ = write!(
                                out,
                                "<td class=\"cell cell-none{base}\" data-role=\"{}\"></td>",
                                c.role.as_str()
                            );
                        }
                        Some(o) => {
                            let label = text::cell_label(*o);
                            let content = match failure_ids.get(&(row.rule_id, *c)) {
                                Some(id) if *o == Outcome::Fail => {
                                    format!("<a href=\"#{id}\">{label}</a>")
                                }
                                _ => label.to_string(),
                            };
                            let _ = write!(
                                out,
                                "<td class=\"cell cell-{0}{base}\" data-outcome=\"{0}\" data-role=\"{1}\" title=\"{2}\">{content}</td>",
                                o.as_str(),
                                c.role.as_str(),
                                esc(&format!("{}: {}", c.id(), o.as_str()))
                            );
                        }
                    }
                }
                out.push_str("</tr>\n");
            }
            out.push_str("</tbody></table></div>\n");
        }
    }
    out.push_str("</section>\n");
}

fn failures(m: &Matrix, failure_ids: &BTreeMap<(&str, &Column), String>, out: &mut String) {
    let fails = layout::failures(m);
    if fails.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "<section id=\"failures\">\n<h2>Failures ({})</h2>",
        fails.len()
    );
    let mut seen = BTreeSet::new();
    for (n, r) in fails.iter().enumerate() {
        let key = (r.rule_id.as_str(), &r.column);
        // The first result of a (rule, column) owns the anchor the matrix links to.
        let id = match failure_ids.get(&key) {
            Some(id) if seen.insert(key) => id.clone(),
            _ => format!("failure-{}", n + 1),
        };
        let rule = m.rule(&r.rule_id);
        let note = match layout::no_gate(m, r) {
            Some(NoGate::Baseline) => " <span class=\"note\">(baseline; does not gate)</span>",
            Some(NoGate::BelowFailOn) => {
                " <span class=\"note\">(below fail-on; does not gate)</span>"
            }
            None => "",
        };
        let _ = write!(
            out,
            "<details class=\"failure\" id=\"{id}\" data-rule=\"{}\" data-column=\"{}\"><summary><code>{}</code> [{}] {} — <code>{}</code> ({}){note}</summary><dl>",
            esc(&r.rule_id),
            esc(&r.column.id()),
            esc(&r.rule_id),
            esc(&layout::result_level_label(m, r)),
            esc(rule.map_or("", |r| r.title.as_str())),
            esc(&r.column.id()),
            r.phase.as_str()
        );
        if let Some(reason) = &r.reason {
            let _ = write!(out, "<dt>Why</dt><dd>{}</dd>", esc(reason));
        }
        if !r.evidence.is_empty() {
            out.push_str("<dt>Evidence</dt><dd><ul class=\"evidence\">");
            for e in &r.evidence {
                let _ = write!(out, "<li>{}</li>", esc(&text::evidence_line(e)));
            }
            out.push_str("</ul></dd>");
        }
        if let Some(rule) = rule {
            let _ = write!(
                out,
                "<dt>Fix</dt><dd class=\"remediation\">{}</dd><dt>Contract</dt><dd><a href=\"{}\">{}</a></dd>",
                esc(rule.remediation.trim()),
                esc(&rule.doc),
                esc(&rule.doc)
            );
        }
        out.push_str("</dl></details>\n");
    }
    out.push_str("</section>\n");
}

fn migration(mig: &Migration, out: &mut String) {
    let _ = writeln!(
        out,
        "<section id=\"migration\" data-to=\"{0}\">\n<h2>Migration to {0} ({1} change(s) in {2} kind(s))</h2>",
        mig.to,
        mig.changes(),
        mig.kinds.len()
    );
    if mig.kinds.is_empty() {
        out.push_str("<p>No kind is on an older contract.</p>\n");
    }
    for k in &mig.kinds {
        let id = format!("{}/{}", k.provider, k.kind);
        let status = if !k.checked {
            format!("not checked under {} (run with --contract all)", mig.to)
        } else if k.items.is_empty() {
            "nothing to change".to_string()
        } else {
            format!("{} change(s)", k.items.len())
        };
        let _ = write!(
            out,
            "<details class=\"migration-kind\" data-kind=\"{0}\"><summary><code>{0}</code> (from {1}): {2}</summary>",
            esc(&id),
            esc(&k.from_list()),
            esc(&status)
        );
        if !k.items.is_empty() {
            out.push_str("<ul>");
            for i in &k.items {
                let before = i.from_outcome.map_or("not checked", |o| o.as_str());
                let _ = write!(
                    out,
                    "<li><span class=\"cell-{0}\">{0}</span> <code>{1}</code> [{2}] {3} — before: {4}",
                    i.to_outcome.as_str(),
                    esc(&i.rule_id),
                    esc(&i.level),
                    esc(&i.title),
                    before
                );
                if let Some(r) = &i.reason {
                    let _ = write!(out, "<br/>Now: {}", esc(r));
                }
                if !i.remediation.is_empty() {
                    let _ = write!(out, "<br/>Fix: {}", esc(&i.remediation));
                }
                if !i.doc.is_empty() {
                    let _ = write!(out, " (<a href=\"{0}\">contract</a>)", esc(&i.doc));
                }
                out.push_str("</li>");
            }
            out.push_str("</ul>");
        }
        out.push_str("</details>\n");
    }
    out.push_str("</section>\n");
}

fn problems(m: &Matrix, out: &mut String) {
    if m.problems.is_empty() {
        return;
    }
    let _ = write!(
        out,
        "<section id=\"problems\">\n<h2>Input problems ({})</h2>\n<ul>",
        m.problems.len()
    );
    for p in &m.problems {
        let _ = write!(
            out,
            "<li><code>{}</code>: {}</li>",
            esc(&p.source),
            esc(&p.message)
        );
    }
    out.push_str("</ul>\n</section>\n");
}

fn notes(m: &Matrix, out: &mut String) {
    if m.notes.is_empty() {
        return;
    }
    let _ = write!(
        out,
        "<section id=\"notes\">\n<h2>Input notes ({})</h2>\n<ul>",
        m.notes.len()
    );
    for n in &m.notes {
        let _ = write!(
            out,
            "<li><code>{}</code>: {}</li>",
            esc(&n.source),
            esc(&n.message)
        );
    }
    out.push_str("</ul>\n</section>\n");
}

/// Per target provider: lifecycle cells judged vs skipped, the most frequent skip reasons and
/// the kinds without a sample object.
fn lifecycle(m: &Matrix, out: &mut String) {
    let coverage = m.lifecycle_coverage();
    if coverage.is_empty() {
        return;
    }
    out.push_str("<section id=\"lifecycle\">\n<h2>Lifecycle coverage</h2>\n<table class=\"lifecycle-table\">\n<thead><tr><th>Provider</th><th>judged</th><th>pass</th><th>fail</th><th>inconclusive</th><th>waived</th><th>skip</th><th>top skip reasons</th><th>no sample object</th></tr></thead>\n<tbody>\n");
    for c in &coverage {
        let reasons: Vec<String> = c
            .skip_reasons
            .iter()
            .map(|r| format!("<li>{} × {}</li>", r.count, esc(&r.reason)))
            .collect();
        let kinds: Vec<String> = c
            .kinds_without_sample
            .iter()
            .map(|k| format!("<code>{}</code>", esc(k)))
            .collect();
        let _ = writeln!(
            out,
            "<tr data-provider=\"{}\" data-judged=\"{}\" data-skip=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><ul>{}</ul></td><td>{}</td></tr>",
            esc(&c.provider),
            c.judged(),
            c.skip,
            esc(&c.provider),
            c.judged(),
            c.pass,
            c.fail,
            c.inconclusive,
            c.waived,
            c.skip,
            reasons.concat(),
            kinds.join(", ")
        );
    }
    out.push_str("</tbody>\n</table>\n</section>\n");
}

fn reasons(m: &Matrix, out: &mut String) {
    let groups = text::reason_groups(m);
    if groups.is_empty() {
        return;
    }
    out.push_str("<section id=\"reasons\">\n<h2>Inconclusive, waived and skipped</h2>\n");
    for g in &groups {
        let _ = write!(
            out,
            "<details class=\"reason reason-{}\"><summary><span class=\"cell-{}\">{}</span> × {}: {}</summary><ul>",
            g.outcome.as_str(),
            g.outcome.as_str(),
            g.outcome.as_str(),
            g.results.len(),
            esc(&g.reason)
        );
        for r in &g.results {
            let _ = write!(out, "<li>{}</li>", esc(&text::cell_ref(r)));
        }
        out.push_str("</ul></details>\n");
    }
    out.push_str("</section>\n");
}

fn scenarios(m: &Matrix, out: &mut String) {
    let pairs = text::scenario_pairs(m);
    if pairs.is_empty() {
        return;
    }
    out.push_str("<section id=\"scenarios\">\n<h2>Scenarios</h2>\n");
    out.push_str(LEGEND);
    let mut by_scenario: BTreeMap<&str, Vec<&text::ScenarioPair<'_>>> = BTreeMap::new();
    for p in &pairs {
        by_scenario
            .entry(p.target.scenario.as_str())
            .or_default()
            .push(p);
    }
    for (scenario, pairs) in by_scenario {
        let _ = writeln!(
            out,
            "<section class=\"scenario\" id=\"timeline-{}\" data-scenario=\"{}\">\n<h3>{}</h3>",
            id_part(scenario),
            esc(scenario),
            esc(scenario)
        );
        for p in pairs {
            let base_id = p.baseline.map(|b| b.column.id());
            let _ = writeln!(
                out,
                "<h4><code>{}</code>{}</h4>",
                esc(&p.target.column.id()),
                base_id
                    .as_deref()
                    .map_or_else(String::new, |b| format!(" vs <code>{}</code>", esc(b)))
            );
            out.push_str("<table class=\"steps\"><thead><tr><th>Step</th><th>Outcome</th><th>Provider</th><th>Baseline</th></tr></thead><tbody>");
            for step in &p.target.steps {
                let base = p
                    .baseline
                    .and_then(|b| b.steps.iter().find(|s| s.name == step.name));
                let _ = write!(
                    out,
                    "<tr><td>{}</td><td class=\"cell cell-{1}\">{1}</td><td>{2}</td><td>{3}</td></tr>",
                    esc(&step.name),
                    step.outcome.as_str(),
                    text::ms(step.duration_ms),
                    base.map_or_else(|| "-".to_string(), |b| text::ms(b.duration_ms))
                );
            }
            out.push_str("</tbody></table>\n");
            let mut lanes = vec![p.target];
            lanes.extend(p.baseline);
            if lanes
                .iter()
                .all(|r| r.timeline.is_empty() && r.steps.is_empty())
            {
                out.push_str("<p class=\"note\">No timeline: the scenario did not run.</p>\n");
            } else {
                let attr = format!(
                    "data-scenario=\"{}\" data-column=\"{}\"",
                    esc(scenario),
                    esc(&p.target.column.id())
                );
                out.push_str(&timeline::svg(&attr, &lanes));
                out.push('\n');
            }
        }
        out.push_str("</section>\n");
    }
    out.push_str("</section>\n");
}

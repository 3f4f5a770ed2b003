//! The terminal table (`-o table`, the default): one matrix table per provider chunk, then
//! failures with evidence and remediation, grouped non-verdict reasons, input problems,
//! scenario step timings (provider vs baseline) and the summary line.

use super::RenderOptions;
use super::layout::{self, Chunk, NoGate};
use super::migration::Migration;
use super::model::{Column, Matrix, Outcome};
use super::text;
use comfy_table::{
    Attribute, Cell, CellAlignment, Color, ColumnConstraint, ContentArrangement, Table, Width,
    presets,
};
use std::fmt::Write;

/// A reason group with more cells than this is counted instead of listed.
const LIST_LIMIT: usize = 5;
/// Titles longer than this wrap inside their cell.
const TITLE_MAX: u16 = 36;
/// Width the matrix tables keep to when no terminal width is known.
const DEFAULT_WIDTH: usize = 160;
/// Level labels are at most this wide (`b1 COND-SHOULD / b2 MAY` wraps).
const LEVEL_MAX: u16 = 14;

pub(crate) fn render(m: &Matrix, opts: &RenderOptions) -> String {
    let mut out = String::new();
    out.push_str(&text::context_line(m));
    out.push('\n');
    let idx = layout::cell_index(m);
    let total = opts.width.map_or(DEFAULT_WIDTH, usize::from);
    let budget = |cols: &[&Column]| total.saturating_sub(fixed_width(m, &idx, cols));
    for p in layout::provider_tables(m, &idx, opts.max_columns, Some(&budget)) {
        let n = p.chunks.len();
        for (i, chunk) in p.chunks.iter().enumerate() {
            let _ = write!(
                out,
                "\nProvider {}{} — {} column(s)",
                p.provider,
                if p.baseline { " (baseline)" } else { "" },
                p.target_columns
            );
            if n > 1 {
                let _ = write!(out, ", table {} of {n}", i + 1);
            }
            out.push('\n');
            let (table, folded) = matrix_table(chunk, opts);
            out.push_str(&table.to_string());
            out.push('\n');
            if !folded.is_empty() {
                out.push_str(&text::wrap(
                    &format!("Skipped in every column above ({}): ", folded.len()),
                    "  ",
                    &folded.join(", "),
                    total,
                ));
            }
        }
    }
    failures(m, total, &mut out);
    reasons(m, &mut out);
    problems(m, &mut out);
    notes(m, &mut out);
    scenarios(m, opts, &mut out);
    if let Some(to) = opts.migration {
        migration(&super::migration::migration(m, to), total, &mut out);
    }
    lifecycle(m, total, &mut out);
    let _ = writeln!(out, "\nSummary: {}", text::summary_line(m));
    if let Some(why) = text::unjudged_reason(m) {
        out.push_str(&text::wrap(
            &format!("Why {}: ", text::verdict_label(m.verdict())),
            "  ",
            &why,
            total,
        ));
    }
    out
}

/// Per target provider: the lifecycle cells a scenario judged, the skipped ones with their
/// most frequent reasons, and the kinds that had no sample object.
fn lifecycle(m: &Matrix, width: usize, out: &mut String) {
    let coverage = m.lifecycle_coverage();
    if coverage.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nLifecycle coverage (target cells a scenario judged)");
    for c in &coverage {
        let _ = writeln!(out, "  {}: {}", c.provider, text::coverage_counts(c));
        for r in &c.skip_reasons {
            out.push_str(&text::wrap(
                &format!("      {} × ", r.count),
                "        ",
                &r.reason,
                width,
            ));
        }
        if !c.kinds_without_sample.is_empty() {
            let kinds: Vec<&str> = c.kinds_without_sample.iter().map(|k| k.as_str()).collect();
            out.push_str(&text::wrap(
                "      no sample object for: ",
                "        ",
                &kinds.join(", "),
                width,
            ));
        }
    }
}

fn new_table(opts: &RenderOptions) -> Table {
    let mut t = Table::new();
    t.load_style(presets::UTF8_FULL_CONDENSED);
    if opts.color {
        t.enforce_styling();
    } else {
        t.force_no_tty();
    }
    match opts.width {
        Some(w) => {
            t.set_width(w);
            t.set_content_arrangement(ContentArrangement::Dynamic);
        }
        None => {
            t.set_content_arrangement(ContentArrangement::Disabled);
        }
    }
    t
}

/// Width of the Rule, Level and Title columns (with borders) for a provider's columns.
fn fixed_width(m: &Matrix, idx: &layout::CellIndex<'_>, cols: &[&Column]) -> usize {
    let ids: Vec<&str> = layout::rule_ids(m)
        .into_iter()
        .filter(|id| cols.iter().any(|c| idx.contains_key(&(*id, *c))))
        .collect();
    let id_w = ids
        .iter()
        .map(|i| i.chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    let title_w = ids
        .iter()
        .filter_map(|i| m.rule(i))
        .map(|r| r.title.chars().count())
        .max()
        .unwrap_or(5)
        .clamp(5, usize::from(TITLE_MAX));
    // Three columns of content + padding (2 each) + borders (4).
    id_w + usize::from(LEVEL_MAX) + title_w + 6 + 4
}

/// The matrix table of a chunk, and the ids of the rules folded out of it because every cell
/// they have is `skip` (only when some other row remains; their reasons are listed below the
/// tables).
fn matrix_table<'a>(chunk: &Chunk<'a>, opts: &RenderOptions) -> (Table, Vec<&'a str>) {
    let all_skip = |cells: &[Option<Outcome>]| cells.iter().flatten().all(|o| *o == Outcome::Skip);
    let fold = chunk.rows.iter().any(|r| !all_skip(&r.cells));
    let mut folded = Vec::new();
    let mut t = new_table(opts);
    let mut header = vec![Cell::new("Rule"), Cell::new("Level"), Cell::new("Title")];
    header.extend(chunk.columns.iter().map(|c| {
        let (kind, tag) = layout::column_header(c);
        Cell::new(format!("{kind}\n{tag}")).set_alignment(CellAlignment::Center)
    }));
    t.set_header(header);
    if let Some(col) = t.column_mut(1) {
        col.set_constraint(ColumnConstraint::UpperBoundary(Width::Fixed(LEVEL_MAX)));
    }
    if let Some(col) = t.column_mut(2) {
        col.set_constraint(ColumnConstraint::UpperBoundary(Width::Fixed(TITLE_MAX)));
    }
    for row in &chunk.rows {
        if fold && all_skip(&row.cells) {
            folded.push(row.rule_id);
            continue;
        }
        let mut cells = vec![
            Cell::new(row.rule_id),
            Cell::new(&row.level),
            Cell::new(row.title),
        ];
        cells.extend(row.cells.iter().map(|o| outcome_cell(*o, opts.color)));
        t.add_row(cells);
    }
    (t, folded)
}

fn outcome_cell(o: Option<Outcome>, color: bool) -> Cell {
    let Some(o) = o else {
        return Cell::new("");
    };
    let cell = Cell::new(text::cell_label(o)).set_alignment(CellAlignment::Center);
    if !color {
        return cell;
    }
    match o {
        Outcome::Pass => cell.fg(Color::Green),
        Outcome::Fail => cell.fg(Color::Red).add_attribute(Attribute::Bold),
        Outcome::Skip => cell.fg(Color::DarkGrey),
        Outcome::Inconclusive => cell.fg(Color::Yellow),
        Outcome::Waived => cell.fg(Color::Cyan),
    }
}

fn failures(m: &Matrix, width: usize, out: &mut String) {
    let fails = layout::failures(m);
    if fails.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nFailures ({})", fails.len());
    for r in fails {
        let rule = m.rule(&r.rule_id);
        let gating = match layout::no_gate(m, r) {
            Some(NoGate::Baseline) => " — baseline, does not gate",
            Some(NoGate::BelowFailOn) => " — below --fail-on, does not gate",
            None => "",
        };
        let _ = writeln!(
            out,
            "\n  FAIL {} [{}] {}{gating}",
            r.rule_id,
            layout::result_level_label(m, r),
            rule.map_or("", |r| r.title.as_str())
        );
        let _ = writeln!(out, "       on {} ({})", r.column.id(), r.phase.as_str());
        const INDENT: &str = "         ";
        if let Some(reason) = &r.reason {
            out.push_str(&text::wrap("       why: ", INDENT, reason, width));
        }
        for e in &r.evidence {
            out.push_str(&text::wrap(
                "       evidence: ",
                INDENT,
                &text::evidence_line(e),
                width,
            ));
        }
        if let Some(rule) = rule {
            out.push_str(&text::wrap(
                "       fix: ",
                INDENT,
                rule.remediation.trim(),
                width,
            ));
            let _ = writeln!(out, "       doc: {}", rule.doc);
        }
    }
}

fn reasons(m: &Matrix, out: &mut String) {
    let groups = text::reason_groups(m);
    if groups.is_empty() {
        return;
    }
    let total: usize = groups.iter().map(|g| g.results.len()).sum();
    let _ = writeln!(out, "\nInconclusive, waived and skipped ({total})");
    for g in groups {
        let _ = writeln!(
            out,
            "  {} × {}: {}",
            g.results.len(),
            g.outcome.as_str(),
            g.reason
        );
        if g.results.len() <= LIST_LIMIT {
            for r in &g.results {
                let _ = writeln!(out, "      - {}", text::cell_ref(r));
            }
        }
    }
}

fn problems(m: &Matrix, out: &mut String) {
    if m.problems.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nInput problems ({})", m.problems.len());
    for p in &m.problems {
        let _ = writeln!(out, "  - {}: {}", p.source, p.message);
    }
}

fn notes(m: &Matrix, out: &mut String) {
    if m.notes.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nInput notes ({})", m.notes.len());
    for n in &m.notes {
        let _ = writeln!(out, "  - {}: {}", n.source, n.message);
    }
}

fn scenarios(m: &Matrix, opts: &RenderOptions, out: &mut String) {
    let pairs = text::scenario_pairs(m);
    // No step to show (every target scenario stopped before its first: no sample object).
    if pairs.iter().all(|p| p.target.steps.is_empty()) {
        return;
    }
    let _ = writeln!(out, "\nScenario steps (provider vs baseline)");
    let mut t = new_table(opts);
    t.set_header(vec![
        "Scenario", "Column", "Step", "Outcome", "Provider", "Baseline",
    ]);
    for p in pairs {
        for step in &p.target.steps {
            let base = p
                .baseline
                .and_then(|b| b.steps.iter().find(|s| s.name == step.name));
            t.add_row(vec![
                Cell::new(&p.target.scenario),
                Cell::new(p.target.column.id()),
                Cell::new(&step.name),
                outcome_cell(Some(step.outcome), opts.color),
                Cell::new(text::ms(step.duration_ms)).set_alignment(CellAlignment::Right),
                Cell::new(base.map_or_else(|| "-".to_string(), |b| text::ms(b.duration_ms)))
                    .set_alignment(CellAlignment::Right),
            ]);
        }
    }
    out.push_str(&t.to_string());
    out.push('\n');
}

fn migration(mig: &Migration, width: usize, out: &mut String) {
    let _ = writeln!(
        out,
        "\nMigration to {} ({} change(s) in {} kind(s))",
        mig.to,
        mig.changes(),
        mig.kinds.len()
    );
    if mig.kinds.is_empty() {
        let _ = writeln!(out, "  no kind is on an older contract");
    }
    for k in &mig.kinds {
        let head = format!("  {}/{} (from {})", k.provider, k.kind, k.from_list());
        if !k.checked {
            let _ = writeln!(
                out,
                "{head}: not checked under {} (run with --contract all)",
                mig.to
            );
            continue;
        }
        if k.items.is_empty() {
            let _ = writeln!(out, "{head}: nothing to change");
            continue;
        }
        let _ = writeln!(out, "{head}: {} change(s)", k.items.len());
        for i in &k.items {
            let before = i
                .from_outcome
                .map_or_else(|| "not checked".to_string(), |o| o.as_str().to_string());
            let _ = writeln!(
                out,
                "    {} {} [{}] {} (before: {before})",
                text::cell_label(i.to_outcome),
                i.rule_id,
                i.level,
                i.title
            );
            const INDENT: &str = "           ";
            if let Some(reason) = &i.reason {
                out.push_str(&text::wrap("         why: ", INDENT, reason, width));
            }
            if !i.remediation.is_empty() {
                out.push_str(&text::wrap("         fix: ", INDENT, &i.remediation, width));
            }
        }
    }
}

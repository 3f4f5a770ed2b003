//! Markdown for a GitHub PR comment or CI job summary: verdict line with counts, a compact
//! matrix per provider, the failures with evidence, remediation and doc link, and the
//! skipped / inconclusive / waived results collapsed in `<details>`.
//!
//! GitHub caps a comment at 65,536 characters: when the full rendering is longer, the matrices
//! keep only rows with something other than `pass`; if that is still too long, each provider's
//! matrix becomes one line of counts; then each failed rule lists only its first few columns,
//! without evidence; as a last resort the text is cut at a line boundary with a
//! note.

use super::RenderOptions;
use super::layout::{self, NoGate};
use super::migration::Migration;
use super::model::{Matrix, Outcome, Verdict};
use super::text;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Largest output we produce (GitHub's comment limit is 65,536).
pub(crate) const MAX_CHARS: usize = 60_000;

/// How much is shown, from everything to the least that still names every failed rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Detail {
    /// Every row.
    Full,
    /// Rows with at least one non-pass cell.
    NonPassRows,
    /// One line of counts per provider.
    Counts,
    /// Counts, and at most a few columns per failed rule, without evidence.
    Brief,
}

pub(crate) fn render(m: &Matrix, opts: &RenderOptions) -> String {
    let mut last = String::new();
    for detail in [
        Detail::Full,
        Detail::NonPassRows,
        Detail::Counts,
        Detail::Brief,
    ] {
        last = render_with(m, opts, detail);
        if last.len() <= MAX_CHARS {
            return last;
        }
    }
    truncate(&last)
}

fn truncate(s: &str) -> String {
    const NOTE: &str =
        "\n\n_Report truncated to fit a comment; the JSON/HTML report has every result._\n";
    let mut cut = MAX_CHARS - NOTE.len();
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    let cut = s[..cut].rfind('\n').unwrap_or(cut);
    format!("{}{NOTE}", &s[..cut])
}

/// Escapes text so it renders literally in Markdown (and never as HTML).
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\n' | '\r' => out.push(' '),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '#' => {
                out.push('\\');
                out.push(ch);
            }
            _ => out.push(ch),
        }
    }
    out
}

/// Inline code; fenced with enough backticks for the content.
fn code(s: &str) -> String {
    let s = s.replace(['\n', '\r'], " ");
    if s.contains('`') {
        format!("`` {s} ``")
    } else {
        format!("`{s}`")
    }
}

fn symbol(o: Outcome) -> &'static str {
    match o {
        Outcome::Pass => "✅",
        Outcome::Fail => "❌",
        Outcome::Skip => "skip",
        Outcome::Inconclusive => "⚠️ inconcl.",
        Outcome::Waived => "waived",
    }
}

fn verdict_symbol(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "✅",
        Verdict::Fail => "❌",
        Verdict::InputError => "⛔",
        Verdict::Inconclusive => "⚠️",
    }
}

fn render_with(m: &Matrix, opts: &RenderOptions, detail: Detail) -> String {
    let mut out = String::new();
    let v = m.verdict();
    let s = m.summary();
    let _ = writeln!(
        out,
        "### {} capi-conformance: {} (exit {})\n",
        verdict_symbol(v),
        text::verdict_label(v),
        v.exit_code()
    );
    let mut counts = format!(
        "**{} pass · {} fail ({} gating) · {} skip · {} inconclusive · {} waived",
        s.pass, s.fail, s.gating_failures, s.skip, s.inconclusive, s.waived
    );
    if !m.problems.is_empty() {
        let _ = write!(counts, " · {} input problem(s)", m.problems.len());
    }
    let _ = writeln!(
        out,
        "{counts}** — fail-on {}\n",
        code(m.context.fail_on.as_str())
    );
    if let Some(why) = text::unjudged_reason(m) {
        let _ = writeln!(out, "> ⚠️ {}\n", esc(&why));
    }
    let c = &m.context;
    let mut ctx = format!(
        "{} of {} · capi-conformance {}",
        code(&c.command),
        code(&c.source),
        esc(&c.tool_version)
    );
    if let Some(sv) = &c.server_version {
        let _ = write!(ctx, " · server {}", esc(sv));
    }
    let _ = write!(ctx, " · started {}", c.started_at);
    let _ = writeln!(out, "{ctx}");

    if matches!(detail, Detail::Counts | Detail::Brief) {
        counts_per_provider(m, &mut out);
    } else {
        matrices(m, opts, detail == Detail::NonPassRows, &mut out);
    }
    lifecycle(m, &mut out);
    failures(m, detail == Detail::Brief, &mut out);
    if let Some(to) = opts.migration {
        migration(
            &super::migration::migration(m, to),
            detail == Detail::Brief,
            &mut out,
        );
    }
    problems(m, &mut out);
    notes(m, &mut out);
    reasons(m, &mut out);
    scenarios(m, &mut out);
    out
}

fn matrices(m: &Matrix, opts: &RenderOptions, compact: bool, out: &mut String) {
    let idx = layout::cell_index(m);
    let tables = layout::provider_tables(m, &idx, opts.max_columns, None);
    for p in &tables {
        let _ = writeln!(
            out,
            "\n#### {}{}\n",
            esc(p.provider),
            if p.baseline { " (baseline)" } else { "" }
        );
        for chunk in &p.chunks {
            let mut header = String::from("| Rule | Level |");
            let mut align = String::from("| --- | --- |");
            for col in &chunk.columns {
                let (kind, tag) = layout::column_header(col);
                let _ = write!(header, " {}<br>{} |", esc(&kind), esc(&tag));
                align.push_str(" :-: |");
            }
            let mut hidden = 0;
            let mut rows = String::new();
            for row in &chunk.rows {
                if compact && row.cells.iter().flatten().all(|o| *o == Outcome::Pass) {
                    hidden += 1;
                    continue;
                }
                let _ = write!(rows, "| {} | {} |", code(row.rule_id), esc(&row.level));
                for cell in &row.cells {
                    let _ = write!(rows, " {} |", cell.map_or("", symbol));
                }
                rows.push('\n');
            }
            if !rows.is_empty() {
                let _ = write!(out, "{header}\n{align}\n{rows}");
            }
            if hidden > 0 {
                let _ = writeln!(out, "\n_{hidden} rule(s) passing everywhere not shown._");
            }
            out.push('\n');
        }
    }
    if !tables.is_empty() {
        let _ = writeln!(
            out,
            "✅ pass · ❌ fail · ⚠️ inconclusive · blank: the rule does not apply · `base`: the mock provider baseline"
        );
    }
}

/// One row of outcome counts per provider (target providers; the baseline apart).
fn counts_per_provider(m: &Matrix, out: &mut String) {
    let mut counts: BTreeMap<(bool, &str), [usize; 5]> = BTreeMap::new();
    for r in &m.results {
        let c = counts
            .entry((r.column.baseline, r.column.provider.as_str()))
            .or_default();
        let i = match r.outcome {
            Outcome::Pass => 0,
            Outcome::Fail => 1,
            Outcome::Skip => 2,
            Outcome::Inconclusive => 3,
            Outcome::Waived => 4,
        };
        c[i] += 1;
    }
    if counts.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\n_The rule matrix is too large for a comment; counts per provider below, every cell in the JSON/HTML report._\n"
    );
    let _ = writeln!(
        out,
        "| Provider | ✅ pass | ❌ fail | skip | ⚠️ inconcl. | waived |\n| --- | --: | --: | --: | --: | --: |"
    );
    for ((baseline, provider), c) in counts {
        let _ = writeln!(
            out,
            "| {}{} | {} | {} | {} | {} | {} |",
            code(provider),
            if baseline { " (baseline)" } else { "" },
            c[0],
            c[1],
            c[2],
            c[3],
            c[4]
        );
    }
}

/// An evidence line; the source line a finding is fixed at as code (`file:line`, unescaped, so
/// it can be copied).
fn evidence(e: &crate::Evidence) -> String {
    match &e.source {
        Some(src) => {
            let mut bare = e.clone();
            bare.source = None;
            bare.location = None;
            format!(
                "{} — at {}",
                esc(&text::evidence_line(&bare)),
                code(&format!("{}:{}", src.file, src.line))
            )
        }
        None => esc(&text::evidence_line(e)),
    }
}

/// Columns listed per failed rule in brief mode.
const BRIEF_COLUMNS: usize = 5;

/// Failures grouped by rule: the failing columns with their reason (and evidence unless
/// `brief`), then the rule's fix and contract link once.
fn failures(m: &Matrix, brief: bool, out: &mut String) {
    let fails = layout::failures(m);
    if fails.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n#### Failures ({})\n", fails.len());
    // Results are sorted by rule, so each rule's failures are adjacent.
    for group in fails.chunk_by(|a, b| a.rule_id == b.rule_id) {
        let Some(first) = group.first() else { continue };
        let rule = m.rule(&first.rule_id);
        let contracts: Vec<_> = group.iter().map(|r| r.column.contract).collect();
        let _ = writeln!(
            out,
            "- ❌ **{}** ({}) {} — {} column(s)",
            code(&first.rule_id),
            esc(&layout::level_label(m, &first.rule_id, &contracts)),
            esc(rule.map_or("", |r| r.title.as_str())),
            group.len()
        );
        let shown = if brief {
            BRIEF_COLUMNS.min(group.len())
        } else {
            group.len()
        };
        for r in &group[..shown] {
            let note = match layout::no_gate(m, r) {
                Some(NoGate::Baseline) => " _(baseline; does not gate)_",
                Some(NoGate::BelowFailOn) => " _(below fail-on; does not gate)_",
                None => "",
            };
            let _ = writeln!(
                out,
                "  - {} ({}){note}: {}",
                code(&r.column.id()),
                r.phase.as_str(),
                esc(&text::reason_of(r))
            );
            if !brief {
                for e in &r.evidence {
                    let _ = writeln!(out, "    - Evidence: {}", evidence(e));
                }
            }
        }
        if shown < group.len() {
            let _ = writeln!(out, "  - … and {} more", group.len() - shown);
        }
        if let Some(rule) = rule {
            let _ = writeln!(out, "  - Fix: {}", esc(rule.remediation.trim()));
            let _ = writeln!(
                out,
                "  - Contract: <{}>",
                rule.doc.replace(['<', '>', ' '], "")
            );
        }
    }
}

/// Per target provider: lifecycle cells judged vs skipped, the most frequent skip reasons and
/// the kinds without a sample object.
fn lifecycle(m: &Matrix, out: &mut String) {
    let coverage = m.lifecycle_coverage();
    if coverage.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\n#### Lifecycle coverage\n\n| Provider | judged | ✅ pass | ❌ fail | ⚠️ inconcl. | waived | skip | top skip reasons | no sample object |\n| --- | --: | --: | --: | --: | --: | --: | --- | --- |"
    );
    for c in &coverage {
        let reasons: Vec<String> = c
            .skip_reasons
            .iter()
            .map(|r| format!("{} × {}", r.count, esc(&r.reason)))
            .collect();
        let kinds: Vec<String> = c.kinds_without_sample.iter().map(|k| code(k)).collect();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            code(&c.provider),
            c.judged(),
            c.pass,
            c.fail,
            c.inconclusive,
            c.waived,
            c.skip,
            reasons.join("<br>"),
            kinds.join(", ")
        );
    }
}

fn migration(mig: &Migration, brief: bool, out: &mut String) {
    let _ = writeln!(
        out,
        "\n#### Migration to {} ({} change(s) in {} kind(s))\n",
        code(mig.to.as_str()),
        mig.changes(),
        mig.kinds.len()
    );
    if mig.kinds.is_empty() {
        let _ = writeln!(out, "No kind is on an older contract.");
    }
    for k in &mig.kinds {
        let head = format!(
            "- **{}** (from {})",
            code(&format!("{}/{}", k.provider, k.kind)),
            esc(&k.from_list())
        );
        if !k.checked {
            let _ = writeln!(
                out,
                "{head}: not checked under {} (run with `--contract all`)",
                code(mig.to.as_str())
            );
            continue;
        }
        if k.items.is_empty() {
            let _ = writeln!(out, "{head}: nothing to change");
            continue;
        }
        let _ = writeln!(out, "{head}: {} change(s)", k.items.len());
        for i in &k.items {
            let before = i.from_outcome.map_or("not checked", |o| o.as_str());
            let _ = writeln!(
                out,
                "  - {} {} ({}) {} — before: {before}{}",
                symbol(i.to_outcome),
                code(&i.rule_id),
                esc(&i.level),
                esc(&i.title),
                i.reason
                    .as_deref()
                    .map_or_else(String::new, |r| format!("; now: {}", esc(r)))
            );
            if !brief && !i.remediation.is_empty() {
                let _ = writeln!(out, "    - Fix: {}", esc(&i.remediation));
            }
        }
    }
}

fn problems(m: &Matrix, out: &mut String) {
    if m.problems.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n#### Input problems ({})\n", m.problems.len());
    for p in &m.problems {
        let _ = writeln!(out, "- {}: {}", code(&p.source), esc(&p.message));
    }
}

fn notes(m: &Matrix, out: &mut String) {
    if m.notes.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n#### Input notes ({})\n", m.notes.len());
    for n in &m.notes {
        let _ = writeln!(out, "- {}: {}", code(&n.source), esc(&n.message));
    }
}

fn reasons(m: &Matrix, out: &mut String) {
    let groups = text::reason_groups(m);
    if groups.is_empty() {
        return;
    }
    let count = |o: Outcome| -> usize {
        groups
            .iter()
            .filter(|g| g.outcome == o)
            .map(|g| g.results.len())
            .sum()
    };
    let _ = writeln!(
        out,
        "\n<details><summary>Inconclusive ({}), waived ({}), skipped ({})</summary>\n",
        count(Outcome::Inconclusive),
        count(Outcome::Waived),
        count(Outcome::Skip)
    );
    for g in &groups {
        let _ = writeln!(
            out,
            "- **{}** × {}: {}",
            g.outcome.as_str(),
            g.results.len(),
            esc(&g.reason)
        );
        if g.results.len() <= 5 {
            for r in &g.results {
                let _ = writeln!(out, "  - {} on {}", code(&r.rule_id), code(&r.column.id()));
            }
        }
    }
    let _ = writeln!(out, "\n</details>");
}

fn scenarios(m: &Matrix, out: &mut String) {
    let pairs = text::scenario_pairs(m);
    // No step to show (every target scenario stopped before its first: no sample object).
    if pairs.iter().all(|p| p.target.steps.is_empty()) {
        return;
    }
    let _ = writeln!(
        out,
        "\n<details><summary>Scenario steps (provider vs baseline)</summary>\n"
    );
    let _ = writeln!(
        out,
        "| Scenario | Column | Step | Outcome | Provider | Baseline |\n| --- | --- | --- | :-: | --: | --: |"
    );
    for p in pairs {
        for step in &p.target.steps {
            let base = p
                .baseline
                .and_then(|b| b.steps.iter().find(|s| s.name == step.name));
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                code(&p.target.scenario),
                code(&p.target.column.id()),
                esc(&step.name),
                symbol(step.outcome),
                text::ms(step.duration_ms),
                base.map_or_else(|| "-".to_string(), |b| text::ms(b.duration_ms))
            );
        }
    }
    let _ = writeln!(out, "\n</details>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markdown_and_html() {
        assert_eq!(esc("a|b <script> *x*"), "a\\|b &lt;script&gt; \\*x\\*");
        assert_eq!(code("a`b"), "`` a`b ``");
    }

    #[test]
    fn truncation_stays_under_the_limit_at_a_line_boundary() {
        let long = "line of text\n".repeat(10_000);
        let t = truncate(&long);
        assert!(t.len() <= MAX_CHARS);
        assert!(t.ends_with("every result._\n"));
        assert!(t.contains("line of text\n\n_Report truncated"));
    }
}

//! Markdown for a GitHub PR comment or CI job summary: verdict line with counts, a compact
//! matrix per provider, the failures with evidence, remediation and doc link, and the
//! skipped / inconclusive / waived results collapsed in `<details>`.
//!
//! GitHub caps a comment at 65,536 characters: when the full rendering is longer, the matrices
//! keep only rows with something other than `pass`, and as a last resort the text is cut at a
//! line boundary with a note.

use super::RenderOptions;
use super::layout;
use super::model::{Matrix, Outcome, Verdict};
use super::text;
use std::fmt::Write;

/// Largest output we produce (GitHub's comment limit is 65,536).
pub(crate) const MAX_CHARS: usize = 60_000;

pub(crate) fn render(m: &Matrix, opts: &RenderOptions) -> String {
    let full = render_with(m, opts, false);
    if full.len() <= MAX_CHARS {
        return full;
    }
    let compact = render_with(m, opts, true);
    if compact.len() <= MAX_CHARS {
        return compact;
    }
    truncate(&compact)
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

fn render_with(m: &Matrix, opts: &RenderOptions, compact: bool) -> String {
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

    matrices(m, opts, compact, &mut out);
    failures(m, &mut out);
    problems(m, &mut out);
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

fn failures(m: &Matrix, out: &mut String) {
    let fails: Vec<_> = m
        .results
        .iter()
        .filter(|r| r.outcome == Outcome::Fail)
        .collect();
    if fails.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n#### Failures ({})\n", fails.len());
    for r in fails {
        let rule = m.rule(&r.rule_id);
        let note = if r.column.baseline {
            " _(baseline; does not gate)_"
        } else if r.level.gates(m.context.fail_on) {
            ""
        } else {
            " _(below fail-on; does not gate)_"
        };
        let _ = writeln!(
            out,
            "- ❌ **{}** ({}) {} — {} ({}){note}",
            code(&r.rule_id),
            esc(&layout::result_level_label(m, r)),
            esc(rule.map_or("", |r| r.title.as_str())),
            code(&r.column.id()),
            r.phase.as_str()
        );
        if let Some(reason) = &r.reason {
            let _ = writeln!(out, "  - Why: {}", esc(reason));
        }
        for e in &r.evidence {
            let _ = writeln!(out, "  - Evidence: {}", esc(&text::evidence_line(e)));
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

fn problems(m: &Matrix, out: &mut String) {
    if m.problems.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n#### Input problems ({})\n", m.problems.len());
    for p in &m.problems {
        let _ = writeln!(out, "- {}: {}", code(&p.source), esc(&p.message));
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
    if pairs.is_empty() {
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

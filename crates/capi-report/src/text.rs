//! Wording shared by the human-readable writers: cell labels, evidence lines, grouped reasons,
//! the summary line and the pairing of provider and baseline scenario records.

use super::model::{
    Evidence, LifecycleCoverage, Matrix, Outcome, RuleResult, ScenarioRecord, Verdict,
};
use std::collections::BTreeMap;

/// Cell text in the table and Markdown matrices.
pub(crate) fn cell_label(o: Outcome) -> &'static str {
    match o {
        Outcome::Pass => "pass",
        Outcome::Fail => "FAIL",
        Outcome::Skip => "skip",
        Outcome::Inconclusive => "inconcl.",
        Outcome::Waived => "waived",
    }
}

pub(crate) fn verdict_label(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "PASS",
        Verdict::Fail => "FAIL",
        Verdict::InputError => "INPUT ERROR",
        Verdict::Inconclusive => "INCONCLUSIVE",
    }
}

/// `message (object X, path Y, resourceVersion Z, at file.yaml#2)`; `at file.yaml:412` when the
/// evidence names the source line ([`Evidence::source`]).
pub(crate) fn evidence_line(e: &Evidence) -> String {
    let mut parts = Vec::new();
    if let Some(o) = &e.object {
        parts.push(format!("object {o}"));
    }
    if let Some(p) = &e.path {
        parts.push(format!("path {p}"));
    }
    if let Some(rv) = &e.resource_version {
        parts.push(format!("resourceVersion {rv}"));
    }
    if let Some(src) = &e.source {
        parts.push(format!("at {}:{}", src.file, src.line));
    } else if let Some(l) = &e.location {
        parts.push(format!("at {l}"));
    }
    if parts.is_empty() {
        e.message.clone()
    } else {
        format!("{} ({})", e.message, parts.join(", "))
    }
}

/// The one-line reason of a result: its reason, else its first evidence message, else `-`.
pub(crate) fn reason_of(r: &RuleResult) -> String {
    r.reason
        .clone()
        .or_else(|| r.evidence.first().map(|e| e.message.clone()))
        .unwrap_or_else(|| "-".to_string())
}

/// Results of one outcome that share a reason.
pub(crate) struct ReasonGroup<'a> {
    pub outcome: Outcome,
    pub reason: String,
    pub results: Vec<&'a RuleResult>,
}

/// Skip, inconclusive and waived results grouped by (outcome, reason), in that outcome order,
/// reasons sorted.
pub(crate) fn reason_groups(m: &Matrix) -> Vec<ReasonGroup<'_>> {
    let mut groups: BTreeMap<(u8, String), Vec<&RuleResult>> = BTreeMap::new();
    for r in &m.results {
        let rank = match r.outcome {
            Outcome::Inconclusive => 0,
            Outcome::Waived => 1,
            Outcome::Skip => 2,
            Outcome::Pass | Outcome::Fail => continue,
        };
        groups.entry((rank, reason_of(r))).or_default().push(r);
    }
    groups
        .into_iter()
        .filter_map(|((_, reason), results)| {
            let outcome = results.first()?.outcome;
            Some(ReasonGroup {
                outcome,
                reason,
                results,
            })
        })
        .collect()
}

/// `rule-id on aws/AWSMachine@v1beta2`.
pub(crate) fn cell_ref(r: &RuleResult) -> String {
    format!("{} on {}", r.rule_id, r.column.id())
}

/// Counts, verdict and exit code in one line.
pub(crate) fn summary_line(m: &Matrix) -> String {
    let s = m.summary();
    let v = m.verdict();
    let mut line = format!(
        "{} pass, {} fail ({} gating), {} skip, {} inconclusive ({} gating), {} waived",
        s.pass, s.fail, s.gating_failures, s.skip, s.inconclusive, s.gating_inconclusive, s.waived
    );
    if s.gating_unjudged > 0 {
        line.push_str(&format!(
            ", {} lifecycle skip(s) for lack of a sample (gating)",
            s.gating_unjudged
        ));
    }
    if !m.problems.is_empty() {
        line.push_str(&format!(", {} input problem(s)", m.problems.len()));
    }
    line.push_str(&format!(
        "; fail-on {}; verdict {} (exit {})",
        m.context.fail_on.as_str(),
        verdict_label(v),
        v.exit_code()
    ));
    line
}

/// Why a run without failures is not a PASS although nothing it judged was inconclusive: the
/// target kinds whose gating lifecycle rules had no sample object, and how to give one.
/// `None` when every kind had its sample (or its rules do not gate).
pub(crate) fn unjudged_reason(m: &Matrix) -> Option<String> {
    unjudged_reason_of(m, None)
}

/// [`unjudged_reason`] for the kinds of one `provider` only (`None`: every provider).
pub(crate) fn unjudged_reason_of(m: &Matrix, provider: Option<&str>) -> Option<String> {
    let kinds: Vec<String> = m
        .gating_kinds_without_sample()
        .into_iter()
        .filter(|(p, _)| provider.is_none_or(|want| p.as_str() == want))
        .map(|(p, k)| format!("{p}/{k}"))
        .collect();
    if kinds.is_empty() {
        return None;
    }
    Some(format!(
        "lifecycle rules not judged: no sample object for {}; pass --sample FILE holding an object of each kind or its Template (a template kind: the template itself)",
        kinds.join(", ")
    ))
}

/// `4 judged (1 pass, 1 fail, 1 inconclusive, 1 waived), 5 skipped`.
pub(crate) fn coverage_counts(c: &LifecycleCoverage) -> String {
    format!(
        "{} judged ({} pass, {} fail, {} inconclusive, {} waived), {} skipped",
        c.judged(),
        c.pass,
        c.fail,
        c.inconclusive,
        c.waived,
        c.skip
    )
}

/// `capi-conformance 0.1.0 · lint · source … · server … · started …`.
pub(crate) fn context_line(m: &Matrix) -> String {
    let c = &m.context;
    let mut s = format!(
        "capi-conformance {} · {} · source {}",
        c.tool_version, c.command, c.source
    );
    if let Some(v) = &c.server_version {
        s.push_str(&format!(" · server {v}"));
    }
    if let Some(id) = &c.run_id {
        s.push_str(&format!(" · run {id}"));
    }
    s.push_str(&format!(" · started {}", c.started_at));
    s
}

/// A provider scenario record and the baseline's record of the same scenario and role.
pub(crate) struct ScenarioPair<'a> {
    pub target: &'a ScenarioRecord,
    pub baseline: Option<&'a ScenarioRecord>,
}

/// Pairs every target scenario record with the baseline record of the same scenario and role
/// (same contract preferred). Baseline records without a target are returned on their own.
pub(crate) fn scenario_pairs(m: &Matrix) -> Vec<ScenarioPair<'_>> {
    let baselines: Vec<&ScenarioRecord> =
        m.scenarios.iter().filter(|s| s.column.baseline).collect();
    let targets: Vec<&ScenarioRecord> = m.scenarios.iter().filter(|s| !s.column.baseline).collect();
    if targets.is_empty() {
        return baselines
            .into_iter()
            .map(|b| ScenarioPair {
                target: b,
                baseline: None,
            })
            .collect();
    }
    targets
        .into_iter()
        .map(|t| {
            let same =
                |b: &&&ScenarioRecord| b.scenario == t.scenario && b.column.role == t.column.role;
            let baseline = baselines
                .iter()
                .filter(same)
                .find(|b| b.column.contract == t.column.contract)
                .or_else(|| baselines.iter().find(same))
                .copied();
            ScenarioPair {
                target: t,
                baseline,
            }
        })
        .collect()
}

/// `12 ms`, or `-` when not measured.
pub(crate) fn ms(d: Option<u64>) -> String {
    d.map_or_else(|| "-".to_string(), |d| format!("{d} ms"))
}

/// Word-wraps `text` to `width` characters: the first line starts with `first`, the others
/// with `rest`. Words longer than a line are kept whole. Ends with a newline.
pub(crate) fn wrap(first: &str, rest: &str, text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = first.to_string();
    let mut line_len = first.chars().count();
    let mut empty = true;
    for word in text.split_whitespace() {
        let wl = word.chars().count();
        if !empty && line_len + 1 + wl > width {
            out.push_str(&line);
            out.push('\n');
            line = rest.to_string();
            line_len = rest.chars().count();
            empty = true;
        }
        if !empty {
            line.push(' ');
            line_len += 1;
        }
        line.push_str(word);
        line_len += wl;
        empty = false;
    }
    out.push_str(&line);
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_breaks_at_words_with_a_hanging_indent() {
        assert_eq!(
            wrap("why: ", "     ", "aaa bbb ccc ddd", 12),
            "why: aaa bbb\n     ccc ddd\n"
        );
        assert_eq!(
            wrap("- ", "  ", "averyveryverylongword x", 8),
            "- averyveryverylongword\n  x\n"
        );
        assert_eq!(wrap("x: ", "   ", "", 10), "x: \n");
    }
}

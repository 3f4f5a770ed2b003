//! Inline SVG timeline of one scenario: a lane per record (the provider's, then the baseline's)
//! on a shared millisecond axis. In each lane the tool's writes (diamonds, top row), the watch
//! events of the scenario's objects (circles on the lane line: ADDED, MODIFIED, DELETED) and the
//! steps (bands below, stacked when script parts overlap; a dashed line where each starts).
//! Markers closer than a few pixels share one marker whose hover title lists every entry, so
//! nothing is hidden under another. Integer coordinates only: the output is byte-identical.

use super::model::{Outcome, ScenarioRecord, StepRecord, TimelineEntry};
use std::fmt::Write;

const WIDTH: u64 = 960;
/// The lane labels' column.
const LABEL: u64 = 250;
const RIGHT: u64 = 24;
const SPAN: u64 = WIDTH - LABEL - RIGHT;
/// Longest lane label line (characters) before it is shortened with `…`.
const LABEL_CHARS: usize = 36;
/// Entries of one row closer than this (pixels) to the first of a group join that group.
const GROUP_PX: u64 = 5;
const TOP: u64 = 6;
/// Rows of a lane, from its top: tool actions, the lane line with watch events, step tracks.
const TOOL_Y: u64 = 9;
const EVENT_Y: u64 = 27;
const STEPS_Y: u64 = 40;
const TRACK: u64 = 14;
const STEP_H: u64 = 12;
const LANE_GAP: u64 = 10;
const AXIS: u64 = 34;
/// Approximate width of one character of the step labels (10px monospace), in pixels.
const CHAR_PX: u64 = 6;

/// Escapes text for XML/HTML content and attribute values.
pub(crate) fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(ch),
        }
    }
    out
}

/// CSS class of a group of watch events: `ev-added`, `ev-modified`, `ev-deleted`, `ev-mixed`
/// (several kinds) or `ev-other`.
fn event_class(events: &[&TimelineEntry]) -> &'static str {
    let class = |e: &TimelineEntry| match e.event.as_str() {
        "ADDED" => "ev-added",
        "MODIFIED" => "ev-modified",
        "DELETED" => "ev-deleted",
        _ => "ev-other",
    };
    match events.split_first() {
        Some((first, rest)) => {
            let c = class(first);
            if rest.iter().all(|e| class(e) == c) {
                c
            } else {
                "ev-mixed"
            }
        }
        None => "ev-other",
    }
}

/// `850 ms`, `1.5 s`, `12 s`.
pub(crate) fn fmt_ms(ms: u64) -> String {
    if ms < 1000 {
        return format!("{ms} ms");
    }
    let (s, frac) = (ms / 1000, ms % 1000);
    if frac == 0 {
        return format!("{s} s");
    }
    let digits = format!("{frac:03}");
    format!("{s}.{} s", digits.trim_end_matches('0'))
}

/// The tick interval for an axis up to `max_ms`: 1, 2 or 5 × a power of ten, at most ten ticks.
fn tick_ms(max_ms: u64) -> u64 {
    let mut unit = 1u64;
    loop {
        for m in [1, 2, 5] {
            let t = unit.saturating_mul(m);
            if max_ms / t <= 10 {
                return t;
            }
        }
        unit = unit.saturating_mul(10);
    }
}

/// Where a step starts and ends: its recorded start, or (a record without start times) right
/// after the step before it.
fn step_spans(steps: &[StepRecord]) -> Vec<(u64, u64)> {
    let mut next = 0u64;
    steps
        .iter()
        .map(|s| {
            let start = s.at_ms.unwrap_or(next);
            let end = start.saturating_add(s.duration_ms.unwrap_or(0));
            next = end;
            (start, end)
        })
        .collect()
}

/// Track (row) of each step: the first whose last step has ended when it starts.
fn step_tracks(spans: &[(u64, u64)]) -> (Vec<u64>, u64) {
    let mut order: Vec<usize> = (0..spans.len()).collect();
    order.sort_by_key(|&i| (spans[i].0, i));
    let mut ends: Vec<u64> = Vec::new();
    let mut track = vec![0u64; spans.len()];
    for i in order {
        let (start, end) = spans[i];
        let t = match ends.iter().position(|e| *e <= start) {
            Some(t) => t,
            None => {
                ends.push(0);
                ends.len() - 1
            }
        };
        ends[t] = end.max(start.saturating_add(1));
        track[i] = t as u64;
    }
    (track, ends.len().max(1) as u64)
}

/// Entries of one row grouped by position: each group starts at its first entry's x.
fn groups<'a>(
    entries: impl Iterator<Item = &'a TimelineEntry>,
    x_of: impl Fn(u64) -> u64,
) -> Vec<(u64, Vec<&'a TimelineEntry>)> {
    let mut out: Vec<(u64, Vec<&TimelineEntry>)> = Vec::new();
    for e in entries {
        let x = x_of(e.at_ms);
        match out.last_mut() {
            Some((gx, g)) if x < *gx + GROUP_PX => g.push(e),
            _ => out.push((x, vec![e])),
        }
    }
    out
}

/// One hover line per entry: `+35 ms MODIFIED MockMachine/m rv 12: status.ready`. An ADDED
/// event names how many paths its first version holds (the JSON report lists them).
fn entry_line(e: &TimelineEntry) -> String {
    let mut line = format!("+{} {} {}", fmt_ms(e.at_ms), e.event, e.object);
    if !e.resource_version.is_empty() {
        let _ = write!(line, " rv {}", e.resource_version);
    }
    if e.event == "ADDED" {
        if !e.changed.is_empty() {
            let _ = write!(line, " ({} fields)", e.changed.len());
        }
    } else if !e.changed.is_empty() {
        let _ = write!(line, ": {}", e.changed.join(", "));
    }
    line
}

fn title(entries: &[&TimelineEntry]) -> String {
    let lines: Vec<String> = entries.iter().map(|e| entry_line(e)).collect();
    xml_escape(&lines.join("\n"))
}

fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let head: String = s.chars().take(max.saturating_sub(1)).collect();
        format!("{head}…")
    }
}

/// The SVG for one scenario: a lane per record (provider first, then the baseline), on a time
/// axis from 0 to the latest entry or step end of any lane.
pub(crate) fn svg(attrs: &str, lanes: &[&ScenarioRecord]) -> String {
    let spans: Vec<Vec<(u64, u64)>> = lanes.iter().map(|r| step_spans(&r.steps)).collect();
    let max_ms = lanes
        .iter()
        .flat_map(|r| r.timeline.iter().map(|e| e.at_ms))
        .chain(spans.iter().flatten().map(|s| s.1))
        .max()
        .unwrap_or(0)
        .max(1);
    let x_of = |ms: u64| LABEL + ms.min(max_ms) * SPAN / max_ms;
    let tracks: Vec<(Vec<u64>, u64)> = spans.iter().map(|s| step_tracks(s)).collect();
    let lane_h = |n: u64| STEPS_Y + n * TRACK + LANE_GAP;
    let body: u64 = tracks.iter().map(|(_, n)| lane_h(*n)).sum();
    let height = TOP + body + AXIS;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="timeline" {attrs} xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" role="img">"#
    );
    let mut y0 = TOP;
    for ((record, spans), (track, n_tracks)) in lanes.iter().zip(&spans).zip(&tracks) {
        let side = if record.column.baseline {
            "baseline"
        } else {
            "provider"
        };
        let h = lane_h(*n_tracks);
        let _ = write!(
            s,
            r#"<g class="lane lane-{side}" data-lane="{side}" data-column="{}"><title>{}</title>"#,
            xml_escape(&record.column.id()),
            xml_escape(&format!("{side}: {}", record.column.id()))
        );
        let _ = write!(
            s,
            r#"<rect class="lane-bg" x="0" y="{y0}" width="{WIDTH}" height="{}"/><text class="lane-side" x="4" y="{}">{side}</text><text class="lane-label" x="4" y="{}">{}</text><text class="lane-kind" x="4" y="{}">{}</text>"#,
            h - LANE_GAP / 2,
            y0 + 13,
            y0 + 27,
            xml_escape(&shorten(&record.column.provider, LABEL_CHARS)),
            y0 + 41,
            xml_escape(&shorten(
                &format!(
                    "{}{}",
                    record.column.kind,
                    record
                        .column
                        .contract
                        .map_or_else(String::new, |c| format!("@{}", c.as_str()))
                ),
                LABEL_CHARS
            ))
        );
        // Step bands and the dashed line where each step starts.
        let steps_top = y0 + STEPS_Y;
        for ((step, (start, end)), t) in record.steps.iter().zip(spans).zip(track) {
            let (x1, x2) = (x_of(*start), x_of(*end));
            let w = (x2 - x1).max(2);
            let y = steps_top + t * TRACK;
            let outcome = step.outcome.as_str();
            let tip = format!(
                "{}: {outcome}, {} (+{} to +{})",
                step.name,
                step.duration_ms.map_or_else(|| "-".to_string(), fmt_ms),
                fmt_ms(*start),
                fmt_ms(*end)
            );
            let _ = write!(
                s,
                r#"<line class="step-start" x1="{x1}" y1="{}" x2="{x1}" y2="{y}"/><g class="step step-{outcome}" data-step="{}"><rect x="{x1}" y="{y}" width="{w}" height="{STEP_H}"/>"#,
                y0 + 2,
                xml_escape(&step.name),
            );
            let fit = (w.saturating_sub(4) / CHAR_PX) as usize;
            if fit >= 4 {
                let _ = write!(
                    s,
                    r#"<text class="step-label" x="{}" y="{}">{}</text>"#,
                    x1 + 2,
                    y + STEP_H - 3,
                    xml_escape(&shorten(&step.name, fit))
                );
            }
            let _ = write!(s, "<title>{}</title></g>", xml_escape(&tip));
            if step.outcome == Outcome::Fail {
                // The failing step's end, where the provider ran out of time or went wrong.
                let _ = write!(
                    s,
                    r#"<line class="step-fail-end" x1="{x2}" y1="{}" x2="{x2}" y2="{}"/>"#,
                    y0 + 2,
                    y + STEP_H
                );
            }
        }
        // The lane line, then the tool's writes above it and the watch events on it.
        let _ = write!(
            s,
            r#"<line class="lane-line" x1="{LABEL}" y1="{ey}" x2="{}" y2="{ey}"/>"#,
            LABEL + SPAN,
            ey = y0 + EVENT_Y
        );
        let ty = y0 + TOOL_Y;
        for (x, g) in groups(record.timeline.iter().filter(|e| e.is_tool()), x_of) {
            let r = if g.len() > 1 { 6 } else { 5 };
            let _ = write!(
                s,
                r#"<g class="event ev-tool" data-at-ms="{}" data-count="{}"><polygon points="{x},{} {},{ty} {x},{} {},{ty}"/><title>{}</title></g>"#,
                g[0].at_ms,
                g.len(),
                ty - r,
                x + r,
                ty + r,
                x - r,
                title(&g)
            );
        }
        let ey = y0 + EVENT_Y;
        for (x, g) in groups(record.timeline.iter().filter(|e| !e.is_tool()), x_of) {
            let r = if g.len() > 1 { 6 } else { 4 };
            let _ = write!(
                s,
                r#"<g class="event {}" data-at-ms="{}" data-count="{}"><circle cx="{x}" cy="{ey}" r="{r}"/><title>{}</title></g>"#,
                event_class(&g),
                g[0].at_ms,
                g.len(),
                title(&g)
            );
        }
        s.push_str("</g>");
        y0 += h;
    }
    // The axis: a tick every 1, 2 or 5 × 10ⁿ ms, the last one labelled with the end.
    let ay = y0 + 8;
    let _ = write!(
        s,
        r#"<g class="axis"><line x1="{LABEL}" y1="{ay}" x2="{}" y2="{ay}"/>"#,
        LABEL + SPAN
    );
    let step = tick_ms(max_ms);
    let mut t = 0;
    while t <= max_ms {
        let x = x_of(t);
        let _ = write!(s, r#"<line x1="{x}" y1="{ay}" x2="{x}" y2="{}"/>"#, ay + 4);
        // The last tick's label would collide with the end label.
        if x + 60 <= LABEL + SPAN || t == 0 {
            let _ = write!(
                s,
                r#"<text x="{x}" y="{}" text-anchor="middle">{}</text>"#,
                ay + 16,
                fmt_ms(t)
            );
        }
        t += step;
    }
    let _ = write!(
        s,
        r#"<text class="axis-end" x="{}" y="{}" text-anchor="end">{}</text></g></svg>"#,
        LABEL + SPAN,
        ay + 16,
        fmt_ms(max_ms)
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Column;
    use capi_contract::contract::{Contract, Role};

    fn entry(at_ms: u64, event: &str) -> TimelineEntry {
        TimelineEntry {
            at_ms,
            object: "M/<m-1>".into(),
            resource_version: "1".into(),
            event: event.into(),
            changed: vec!["status.ready".into()],
        }
    }

    fn record(
        baseline: bool,
        timeline: Vec<TimelineEntry>,
        steps: Vec<StepRecord>,
    ) -> ScenarioRecord {
        ScenarioRecord {
            scenario: "SC-inframachine".into(),
            column: Column {
                provider: if baseline { "mock" } else { "p" }.into(),
                kind: "PMachine".into(),
                role: Role::InfraMachine,
                contract: Some(Contract::V1Beta2),
                baseline,
            },
            steps,
            timeline,
        }
    }

    fn step(name: &str, at_ms: u64, duration_ms: u64, outcome: Outcome) -> StepRecord {
        StepRecord {
            name: name.into(),
            outcome,
            at_ms: Some(at_ms),
            duration_ms: Some(duration_ms),
        }
    }

    #[test]
    fn places_events_on_a_shared_axis_and_escapes_text() {
        let a = record(
            false,
            vec![entry(0, "ADDED"), entry(100, "MODIFIED")],
            vec![],
        );
        let b = record(true, vec![entry(50, "DELETED")], vec![]);
        let out = svg(r#"id="t""#, &[&a, &b]);
        assert!(out.starts_with("<svg class=\"timeline\" id=\"t\""));
        assert_eq!(out.matches("<circle").count(), 3);
        // 0 ms at the label edge, 100 ms at the far end, 50 ms half way.
        assert!(out.contains(&format!(r#"cx="{LABEL}""#)));
        assert!(out.contains(&format!(r#"cx="{}""#, LABEL + SPAN)));
        assert!(out.contains(&format!(r#"cx="{}""#, LABEL + SPAN / 2)));
        assert!(out.contains("M/&lt;m-1&gt;"));
        assert!(out.contains("ev-deleted"));
        assert!(out.contains(r#"data-lane="provider""#) && out.contains(r#"data-lane="baseline""#));
    }

    #[test]
    fn close_events_share_a_marker_that_lists_them_all() {
        let a = record(
            false,
            vec![
                entry(0, "ADDED"),
                entry(1, "MODIFIED"),
                entry(2, "tool: set owner"),
                entry(1000, "DELETED"),
            ],
            vec![],
        );
        let out = svg("", &[&a]);
        assert_eq!(out.matches("<circle").count(), 2);
        assert_eq!(out.matches("<polygon").count(), 1);
        assert!(out.contains(r#"class="event ev-mixed" data-at-ms="0" data-count="2""#));
        assert!(out.contains("+0 ms ADDED M/&lt;m-1&gt; rv 1 (1 fields)\n+1 ms MODIFIED"));
    }

    #[test]
    fn overlapping_steps_get_their_own_track_and_a_failed_step_its_end_line() {
        let steps = vec![
            step("create", 0, 10, Outcome::Pass),
            step("gates", 10, 300, Outcome::Pass),
            step("lookup", 10, 100, Outcome::Fail),
            step("delete", 320, 5, Outcome::Pass),
        ];
        let spans = step_spans(&steps);
        assert_eq!(step_tracks(&spans), (vec![0, 0, 1, 0], 2));
        let out = svg("", &[&record(false, vec![], steps)]);
        assert_eq!(out.matches("<g class=\"step ").count(), 4);
        assert_eq!(out.matches("class=\"step-start\"").count(), 4);
        assert_eq!(out.matches("class=\"step-fail-end\"").count(), 1);
        assert!(out.contains("lookup: fail, 100 ms (+10 ms to +110 ms)"));
    }

    #[test]
    fn steps_without_start_times_follow_each_other() {
        let steps = vec![
            StepRecord {
                name: "a".into(),
                outcome: Outcome::Pass,
                at_ms: None,
                duration_ms: Some(5),
            },
            StepRecord {
                name: "b".into(),
                outcome: Outcome::Pass,
                at_ms: None,
                duration_ms: Some(7),
            },
        ];
        assert_eq!(step_spans(&steps), [(0, 5), (5, 12)]);
    }

    #[test]
    fn axis_ticks_and_times_read_well() {
        assert_eq!(tick_ms(1), 1);
        assert_eq!(tick_ms(95), 10);
        assert_eq!(tick_ms(1_400), 200);
        assert_eq!(tick_ms(12_454), 2_000);
        assert_eq!(fmt_ms(850), "850 ms");
        assert_eq!(fmt_ms(1_500), "1.5 s");
        assert_eq!(fmt_ms(1_050), "1.05 s");
        assert_eq!(fmt_ms(12_000), "12 s");
    }
}

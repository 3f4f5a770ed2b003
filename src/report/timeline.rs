//! Inline SVG timeline of scenario transitions ([`TimelineEntry`]): one lane per record (the
//! provider's, then the baseline's) on a shared millisecond axis. Integer coordinates only, so
//! the output is byte-identical.

use super::model::TimelineEntry;
use std::fmt::Write;

const WIDTH: u64 = 900;
const LABEL: u64 = 290;
/// Longest lane label (characters) before it is shortened with `…`.
const LABEL_CHARS: usize = 44;
/// Closest two event labels on one text row may be (pixels); closer ones keep only the marker
/// and its tooltip.
const LABEL_GAP: u64 = 34;
const LANE: u64 = 44;
const TOP: u64 = 10;
const AXIS: u64 = 30;

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

/// CSS class of an event marker: `ev-added`, `ev-modified`, `ev-deleted`, `ev-tool`, `ev-other`.
fn event_class(event: &str) -> &'static str {
    match event {
        "ADDED" => "ev-added",
        "MODIFIED" => "ev-modified",
        "DELETED" => "ev-deleted",
        e if e.starts_with("tool") => "ev-tool",
        _ => "ev-other",
    }
}

/// One lane: its label and entries.
pub(crate) struct Lane<'a> {
    pub label: String,
    pub entries: &'a [TimelineEntry],
}

/// The SVG for `lanes` (shared time axis from 0 to the latest entry).
pub(crate) fn svg(id_attr: &str, lanes: &[Lane<'_>]) -> String {
    let max_ms = lanes
        .iter()
        .flat_map(|l| l.entries.iter().map(|e| e.at_ms))
        .max()
        .unwrap_or(0)
        .max(1);
    let span = WIDTH - LABEL - 20;
    let x_of = |ms: u64| LABEL + ms.min(max_ms) * span / max_ms;
    let height = TOP + LANE * lanes.len() as u64 + AXIS;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="timeline" {id_attr} xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" role="img">"#
    );
    for (i, lane) in lanes.iter().enumerate() {
        let y = TOP + LANE * i as u64 + LANE / 2;
        let _ = write!(
            s,
            r#"<g class="lane" data-lane="{i}"><text class="lane-label" x="4" y="{}">{}</text><line class="lane-line" x1="{LABEL}" y1="{y}" x2="{}" y2="{y}"/>"#,
            y + 4,
            xml_escape(&short_label(&lane.label)),
            LABEL + span
        );
        // Last label x on the row above and below the lane.
        let mut last: [Option<u64>; 2] = [None, None];
        for (n, e) in lane.entries.iter().enumerate() {
            let x = x_of(e.at_ms);
            // Alternate label rows so close events do not overprint; skip a label that would.
            let row = n % 2;
            let ty = if row == 0 { y - 9 } else { y + 17 };
            let show = last[row].is_none_or(|lx| x >= lx + LABEL_GAP);
            if show {
                last[row] = Some(x);
            }
            let mut tip = format!(
                "+{} ms {} {} rv {}",
                e.at_ms, e.event, e.object, e.resource_version
            );
            if !e.changed.is_empty() {
                tip.push_str(": ");
                tip.push_str(&e.changed.join(", "));
            }
            let label = if show {
                format!(
                    r#"<text class="event-label" x="{x}" y="{ty}">{}</text>"#,
                    xml_escape(&short_event(&e.event))
                )
            } else {
                String::new()
            };
            let _ = write!(
                s,
                r#"<g class="event {}" data-at-ms="{}"><circle cx="{x}" cy="{y}" r="5"/>{label}<title>{}</title></g>"#,
                event_class(&e.event),
                e.at_ms,
                xml_escape(&tip)
            );
        }
        s.push_str("</g>");
    }
    let ay = TOP + LANE * lanes.len() as u64 + 12;
    let _ = write!(
        s,
        r#"<g class="axis"><line x1="{LABEL}" y1="{ay}" x2="{}" y2="{ay}"/><text x="{LABEL}" y="{}">0 ms</text><text x="{}" y="{}" text-anchor="end">{max_ms} ms</text></g></svg>"#,
        LABEL + span,
        ay + 14,
        LABEL + span,
        ay + 14
    );
    s
}

fn short_label(label: &str) -> String {
    if label.chars().count() <= LABEL_CHARS {
        label.to_string()
    } else {
        let head: String = label.chars().take(LABEL_CHARS - 1).collect();
        format!("{head}…")
    }
}

/// Marker label: `ADD`, `MOD`, `DEL`, or the tool action without its `tool: ` prefix.
fn short_event(event: &str) -> String {
    match event {
        "ADDED" => "ADD".to_string(),
        "MODIFIED" => "MOD".to_string(),
        "DELETED" => "DEL".to_string(),
        e => e.strip_prefix("tool: ").unwrap_or(e).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(at_ms: u64, event: &str) -> TimelineEntry {
        TimelineEntry {
            at_ms,
            object: "M <m-1>".into(),
            resource_version: "1".into(),
            event: event.into(),
            changed: vec!["status.ready".into()],
        }
    }

    #[test]
    fn places_events_on_a_shared_axis_and_escapes_text() {
        let a = [entry(0, "ADDED"), entry(100, "MODIFIED")];
        let b = [entry(50, "DELETED")];
        let out = svg(
            r#"id="t""#,
            &[
                Lane {
                    label: "provider".into(),
                    entries: &a,
                },
                Lane {
                    label: "baseline".into(),
                    entries: &b,
                },
            ],
        );
        assert!(out.starts_with("<svg class=\"timeline\" id=\"t\""));
        assert_eq!(out.matches("<circle").count(), 3);
        // 0 ms at the label edge, 100 ms at the far end, 50 ms half way.
        assert!(out.contains(&format!(r#"cx="{LABEL}""#)));
        assert!(out.contains(&format!(r#"cx="{}""#, WIDTH - 20)));
        assert!(out.contains(&format!(r#"cx="{}""#, LABEL + (WIDTH - LABEL - 20) / 2)));
        assert!(out.contains("M &lt;m-1&gt;"));
        assert!(out.contains("ev-deleted"));
    }

    #[test]
    fn events_too_close_keep_their_marker_but_not_their_label() {
        let a = [
            entry(0, "ADDED"),
            entry(1, "MODIFIED"),
            entry(2, "MODIFIED"),
            entry(1000, "DELETED"),
        ];
        let out = svg(
            "",
            &[Lane {
                label: "x".repeat(60),
                entries: &a,
            }],
        );
        assert_eq!(out.matches("<circle").count(), 4);
        // ADD (row 0) and MOD (row 1) fit; the second MOD (row 0, 0 px from ADD) does not.
        assert_eq!(out.matches("class=\"event-label\"").count(), 3);
        assert!(out.contains(&format!("{}…", "x".repeat(43))));
    }
}

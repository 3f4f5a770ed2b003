//! SARIF 2.1.0 (`--sarif FILE`, `-o sarif`) through the `serde-sarif` crate, whose types are
//! generated from the OASIS schema: one run; `tool.driver` lists every rule of the catalog.
//!
//! What each outcome becomes (GitHub code scanning, the main consumer, ignores `result.kind`
//! and `suppressions`: every result it receives becomes an alert, so only findings are results):
//! - `fail` → a result, `kind: fail`, `level` from the cell's level (MUST → `error`, SHOULD →
//!   `warning`, MAY → `note`);
//! - `waived` of a cell that would fail → the same result with a `suppressions` entry
//!   (`inSource` for a waiver annotation on the CRD, `external` for `--config`; `status:
//!   accepted`; the waiver reason as justification); a waived pass is no result;
//! - `inconclusive` (the environment, not the provider) → a `toolExecutionNotifications` entry
//!   (level `warning`) naming the rule, never a result;
//! - `pass`, `skip` → no result; the counts are in `run.properties.summary`;
//! - baseline (built-in mock) columns never yield results: a failing or inconclusive baseline
//!   cell is a notification, since it says the environment is broken;
//! - `--keep-going` input problems → `error` notifications, and `executionSuccessful: false`.
//!
//! Every result of file input has a physical location (GitHub rejects a whole file if one
//! result lacks it): the first evidence's [`source`](super::Evidence::source) line; else its
//! input location (`file#index` at the document's start line, `file:line`); else the first
//! file location of the same column kind (a scenario failure at its kind's CRD document); else
//! the first input file of the same provider at line 1 (provider-wide findings such as a
//! missing RBAC grant). Results with no file at all (stdin, objects read from a cluster) carry
//! a logical location alone: the object, else the column.
//! URIs are relative to the source root ([`SarifBase`]) with `uriBaseId: %SRCROOT%`.
//! `partialFingerprints` hash the rule, the column and the artifact (not the line), so an
//! alert stays the same alert when lines move.

mod driver;
mod location;

pub use location::{SRCROOT, SarifBase};

use super::RenderOptions;
use super::model::{Column, Evidence, Matrix, Outcome, RuleResult};
use super::text;
use anyhow::Context as _;
use capi_contract::checks::waivers::{OUTCOME_WITHOUT_WAIVER, WAIVED_BY_ANNOTATION};
use capi_contract::suite::{Catalog, Rule};
pub(crate) use driver::level_of;
use driver::{descriptor, driver_rules, is_semver, plain};
use location::{Place, place_of};
use serde_json::{Value, json};
use serde_sarif::sarif::{
    ArtifactLocation, Invocation, Location, LogicalLocation, Notification, PhysicalLocation,
    PropertyBag, Region, ReportingDescriptorReference, Result as SarifResult, ResultKind, Run,
    Sarif, Suppression, Tool, ToolComponent,
};
use std::collections::{BTreeMap, HashMap};

/// `$schema` of the log: the OASIS 2.1.0 schema (errata 01), what GitHub's docs reference.
pub const SCHEMA_URI: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";
/// `tool.driver.informationUri`.
pub const INFORMATION_URI: &str = "https://github.com/capi-conformance/capi-conformance";
/// The `partialFingerprints` key (versioned: a change of what is hashed gets a new key).
pub const FINGERPRINT_KEY: &str = "capiConformanceFinding/v1";
/// Evidence lines quoted in one result message; the rest are counted.
const MAX_EVIDENCE_LINES: usize = 10;

/// The SARIF log of `m` (already [prepared](super::prepare::prepared)), pretty-printed.
pub(crate) fn render(m: &Matrix, opts: &RenderOptions) -> anyhow::Result<String> {
    let catalog = Catalog::shared().context("loading the rule catalog for the SARIF rules")?;
    render_with(m, opts, catalog.rules())
}

/// [`render`] with `catalog` as the tool's rules.
pub(crate) fn render_with(
    m: &Matrix,
    opts: &RenderOptions,
    catalog: &[Rule],
) -> anyhow::Result<String> {
    let log = log(m, catalog, &opts.sarif);
    let mut s = serde_json::to_string_pretty(&log).context("writing the SARIF log")?;
    s.push('\n');
    Ok(s)
}

/// The log: one run of `catalog` (plus any rule of `m` the catalog lacks) over `m`.
pub(crate) fn log(m: &Matrix, catalog: &[Rule], base: &SarifBase) -> Sarif {
    let rules = driver_rules(m, catalog);
    let index: HashMap<&str, usize> = rules
        .iter()
        .enumerate()
        .map(|(i, r)| (r.id.as_str(), i))
        .collect();
    let anchors = anchors(m, base);
    let mut results = Vec::new();
    let mut notifications = Vec::new();
    for r in &m.results {
        // Passing, skipped and waived-pass cells are no result: nothing to place.
        let reported = match r.outcome {
            Outcome::Fail | Outcome::Inconclusive => true,
            Outcome::Waived => !r.column.baseline && waived_outcome(r) == Some(Outcome::Fail),
            Outcome::Pass | Outcome::Skip => false,
        };
        if !reported {
            continue;
        }
        let rule = index.get(r.rule_id.as_str()).map(|i| (*i, rules[*i]));
        let at = primary_place(r, &anchors, base);
        if r.column.baseline {
            // A failing or inconclusive baseline cell (never waived here).
            notifications.push(notification(
                r,
                rule,
                at.as_ref(),
                base,
                &format!(
                    "the built-in mock baseline is {} (an environment problem, not the provider's)",
                    r.outcome
                ),
            ));
            continue;
        }
        match r.outcome {
            Outcome::Fail => results.push(result(m, r, rule, at, base, None)),
            Outcome::Waived => results.push(result(m, r, rule, at, base, Some(suppression(r)))),
            Outcome::Inconclusive => {
                notifications.push(notification(r, rule, at.as_ref(), base, "inconclusive"));
            }
            Outcome::Pass | Outcome::Skip => {}
        }
    }
    for p in &m.problems {
        let place = location::parse_location(&p.source, base);
        let mut n = Notification::builder()
            .message(plain(format!("input problem: {}: {}", p.source, p.message)))
            .level(json!("error"))
            .build();
        n.locations = Some(vec![location_of(&place, None, base)]);
        notifications.push(n);
    }

    let verdict = m.verdict();
    let mut invocation = Invocation::builder()
        .execution_successful(m.problems.is_empty())
        .exit_code(i64::from(verdict.exit_code()))
        .exit_code_description(text::verdict_label(verdict))
        .start_time_utc(m.context.started_at.to_string())
        .build();
    if !notifications.is_empty() {
        invocation.tool_execution_notifications = Some(notifications);
    }

    let mut driver = ToolComponent::builder()
        .name("capi-conformance")
        .full_name(format!("capi-conformance {}", m.context.tool_version))
        .version(m.context.tool_version.clone())
        .information_uri(INFORMATION_URI)
        .rules(rules.iter().map(|r| descriptor(r)).collect::<Vec<_>>())
        .build();
    if is_semver(&m.context.tool_version) {
        driver.semantic_version = Some(m.context.tool_version.clone());
    }

    let mut run = Run::builder()
        .tool(Tool::builder().driver(driver).build())
        .invocations(vec![invocation])
        .results(results)
        .properties(run_properties(m))
        .build();
    if let Some(uri) = base.root_uri() {
        run.original_uri_base_ids = Some(BTreeMap::from([(
            SRCROOT.to_string(),
            ArtifactLocation::builder().uri(uri).build(),
        )]));
    }
    Sarif::builder()
        .schema(SCHEMA_URI)
        .version(json!("2.1.0"))
        .runs(vec![run])
        .build()
}

/// The outcome a waived cell would have had without its waiver (from the evidence the waiver
/// code puts first).
fn waived_outcome(r: &RuleResult) -> Option<Outcome> {
    let first = r
        .evidence
        .first()?
        .message
        .strip_prefix(OUTCOME_WITHOUT_WAIVER)?;
    let word: String = first
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect();
    match word.as_str() {
        "fail" => Some(Outcome::Fail),
        "pass" => Some(Outcome::Pass),
        _ => None,
    }
}

fn suppression(r: &RuleResult) -> Suppression {
    let reason = r.reason.clone().unwrap_or_else(|| "waived".to_string());
    let kind = if reason.starts_with(WAIVED_BY_ANNOTATION) {
        "inSource"
    } else {
        "external"
    };
    Suppression::builder()
        .kind(json!(kind))
        .status(json!("accepted"))
        .justification(reason)
        .build()
}

/// Where findings that name no place of their own are reported: the first file location of
/// the same column kind (its CRD document), else the provider's first input file at line 1.
#[derive(Debug, Default)]
struct Anchors {
    by_kind: BTreeMap<(bool, String, String), Place>,
    by_provider: BTreeMap<(bool, String), String>,
}

fn anchors(m: &Matrix, base: &SarifBase) -> Anchors {
    let mut a = Anchors::default();
    for r in &m.results {
        let Some(place) = r.evidence.iter().find_map(|e| match place_of(e, base) {
            Some(p @ Place::File { .. }) => Some(p),
            _ => None,
        }) else {
            continue;
        };
        let c = &r.column;
        if let Place::File { path, .. } = &place {
            a.by_provider
                .entry((c.baseline, c.provider.to_string()))
                .or_insert_with(|| path.clone());
        }
        if c.kind != "*" {
            a.by_kind
                .entry((c.baseline, c.provider.to_string(), c.kind.to_string()))
                .or_insert(place);
        }
    }
    a
}

/// Where a result is reported.
#[derive(Debug, Clone)]
struct Primary {
    place: Place,
    /// The evidence the place came from (`None` for an anchor).
    evidence: Option<usize>,
}

fn primary_place(r: &RuleResult, anchors: &Anchors, base: &SarifBase) -> Option<Primary> {
    let with_source = r.evidence.iter().position(|e| e.source.is_some());
    let with_file = || {
        r.evidence
            .iter()
            .position(|e| matches!(place_of(e, base), Some(Place::File { .. })))
    };
    if let Some(i) = with_source.or_else(with_file) {
        return Some(Primary {
            place: place_of(&r.evidence[i], base)?,
            evidence: Some(i),
        });
    }
    let c = &r.column;
    let kind_key = (c.baseline, c.provider.to_string(), c.kind.to_string());
    if let Some(place) = anchors.by_kind.get(&kind_key) {
        return Some(Primary {
            place: place.clone(),
            evidence: None,
        });
    }
    if let Some(path) = anchors
        .by_provider
        .get(&(c.baseline, c.provider.to_string()))
    {
        return Some(Primary {
            place: Place::File {
                path: path.clone(),
                line: Some(1),
            },
            evidence: None,
        });
    }
    let i = r.evidence.iter().position(|e| e.location.is_some())?;
    Some(Primary {
        place: place_of(&r.evidence[i], base)?,
        evidence: Some(i),
    })
}

/// A location for `place`: physical for files (line 1 when the line is unknown; GitHub needs a
/// start line), logical otherwise; `object` adds the Kubernetes object as a logical location.
fn location_of(place: &Place, object: Option<(&str, Option<&str>)>, base: &SarifBase) -> Location {
    let mut loc = Location::builder().build();
    let mut logical = Vec::new();
    match place {
        Place::File { path, line } => {
            let (uri, base_id) = base.artifact_uri(path);
            let mut artifact = ArtifactLocation::builder().uri(uri).build();
            artifact.uri_base_id = base_id.map(str::to_string);
            loc.physical_location = Some(
                PhysicalLocation::builder()
                    .artifact_location(artifact)
                    .region(
                        Region::builder()
                            .start_line(i64::from(line.unwrap_or(1)))
                            .build(),
                    )
                    .build(),
            );
        }
        Place::Elsewhere(name) => logical.push(
            LogicalLocation::builder()
                .name(name.clone())
                .kind("resource")
                .build(),
        ),
    }
    if let Some((object, path)) = object {
        let mut l = LogicalLocation::builder()
            .name(object.to_string())
            .kind("resource")
            .build();
        l.fully_qualified_name = Some(match path {
            Some(p) => format!("{object}#{p}"),
            None => object.to_string(),
        });
        logical.push(l);
    }
    if !logical.is_empty() {
        loc.logical_locations = Some(logical);
    }
    loc
}

fn object_of(e: &Evidence) -> Option<(&str, Option<&str>)> {
    e.object.as_deref().map(|o| (o, e.path.as_deref()))
}

fn rule_ref(rule: Option<(usize, &Rule)>, id: &str) -> ReportingDescriptorReference {
    let mut reference = ReportingDescriptorReference::builder()
        .id(id.to_string())
        .build();
    reference.index = rule.map(|(i, _)| i as i64);
    reference
}

fn result(
    m: &Matrix,
    r: &RuleResult,
    rule: Option<(usize, &Rule)>,
    at: Option<Primary>,
    base: &SarifBase,
    suppression: Option<Suppression>,
) -> SarifResult {
    let mut locations = Vec::new();
    let mut related = Vec::new();
    // What identifies the finding across runs: the artifact (or the non-file place) and the
    // field path (or object) of the evidence it is reported at; never the line.
    let mut artifact_key = String::new();
    let mut path_key = String::new();
    if let Some(at) = &at {
        let ev = at.evidence.map(|i| &r.evidence[i]);
        locations.push(location_of(&at.place, ev.and_then(object_of), base));
        artifact_key = match &at.place {
            Place::File { path, .. } => base.artifact_uri(path).0,
            Place::Elsewhere(name) => name.clone(),
        };
        if let Some(e) = ev {
            path_key = e
                .path
                .as_deref()
                .or(e.object.as_deref())
                .unwrap_or_default()
                .to_string();
        }
        // Other evidence at other places (e.g. each missing field at its own line).
        let mut seen = vec![at.place.clone()];
        for (i, e) in r.evidence.iter().enumerate() {
            if Some(i) == at.evidence {
                continue;
            }
            let Some(place @ Place::File { .. }) = place_of(e, base) else {
                continue;
            };
            if seen.contains(&place) {
                continue;
            }
            seen.push(place.clone());
            let mut loc = location_of(&place, object_of(e), base);
            loc.id = Some(related.len() as i64 + 1);
            loc.message = Some(plain(e.message.clone()));
            related.push(loc);
        }
    }
    if at.is_none() {
        // Nothing names a place (e.g. a provider-wide finding on a cluster): the column is
        // the location, logically.
        let mut logical = LogicalLocation::builder()
            .name(r.column.id())
            .kind("resource")
            .build();
        logical.fully_qualified_name = Some(format!("{}/{}", r.column.id(), r.rule_id));
        let mut loc = Location::builder().build();
        loc.logical_locations = Some(vec![logical]);
        locations.push(loc);
        artifact_key = r.column.id();
    }
    let message = result_message(m, r, suppression.is_some());
    let mut fingerprints = BTreeMap::new();
    fingerprints.insert(
        FINGERPRINT_KEY.to_string(),
        fingerprint(&[
            &r.rule_id,
            &r.column.provider,
            &r.column.kind,
            r.column.contract.map(|c| c.as_str()).unwrap_or("-"),
            &artifact_key,
            &path_key,
        ]),
    );
    let mut out = SarifResult::builder()
        .rule_id(r.rule_id.to_string())
        .kind(ResultKind::Fail)
        .level(level_of(r.level))
        .message(plain(message))
        .partial_fingerprints(fingerprints)
        .properties(result_properties(m, r))
        .build();
    out.rule_index = rule.map(|(i, _)| i as i64);
    if !locations.is_empty() {
        out.locations = Some(locations);
    }
    if !related.is_empty() {
        out.related_locations = Some(related);
    }
    if let Some(s) = suppression {
        out.suppressions = Some(vec![s]);
    }
    out
}

/// `<reason>` then the column, level and evidence, one per line.
fn result_message(m: &Matrix, r: &RuleResult, waived: bool) -> String {
    let reason = text::reason_of(r);
    let mut s = if waived {
        format!(
            "Waived ({}): {reason}",
            super::layout::result_level_label(m, r)
        )
    } else {
        reason
    };
    if !s.ends_with('.') {
        s.push('.');
    }
    s.push_str(&format!(
        "\n{} of {} ({}), {} rule `{}`.",
        super::layout::result_level_label(m, r),
        r.column.id(),
        r.column.role.as_str(),
        r.phase.as_str(),
        r.rule_id
    ));
    let lines: Vec<String> = r.evidence.iter().map(text::evidence_line).collect();
    for line in lines.iter().take(MAX_EVIDENCE_LINES) {
        s.push_str(&format!("\n- {line}"));
    }
    if lines.len() > MAX_EVIDENCE_LINES {
        s.push_str(&format!(
            "\n- … and {} more evidence item(s) in the JSON report.",
            lines.len() - MAX_EVIDENCE_LINES
        ));
    }
    s
}

fn result_properties(m: &Matrix, r: &RuleResult) -> PropertyBag {
    let c: &Column = &r.column;
    let mut props = BTreeMap::new();
    props.insert("column".to_string(), json!(c.id()));
    props.insert("provider".to_string(), json!(c.provider.as_str()));
    props.insert("kind".to_string(), json!(c.kind.as_str()));
    props.insert("role".to_string(), json!(c.role.as_str()));
    if let Some(contract) = c.contract {
        props.insert("contract".to_string(), json!(contract.as_str()));
    }
    props.insert("phase".to_string(), json!(r.phase.as_str()));
    props.insert("outcome".to_string(), json!(r.outcome.as_str()));
    props.insert(
        "capiLevel".to_string(),
        json!(super::layout::result_level_label(m, r)),
    );
    props.insert(
        "gating".to_string(),
        json!(r.outcome == Outcome::Fail && r.level.gates(m.context.fail_on)),
    );
    PropertyBag::builder().additional_properties(props).build()
}

fn notification(
    r: &RuleResult,
    rule: Option<(usize, &Rule)>,
    at: Option<&Primary>,
    base: &SarifBase,
    what: &str,
) -> Notification {
    let mut n = Notification::builder()
        .message(plain(format!(
            "{} on {}: {what}: {}",
            r.rule_id,
            r.column.id(),
            text::reason_of(r)
        )))
        .level(json!("warning"))
        .build();
    n.associated_rule = Some(rule_ref(rule, &r.rule_id));
    if let Some(at) = at {
        let ev = at.evidence.map(|i| &r.evidence[i]);
        n.locations = Some(vec![location_of(&at.place, ev.and_then(object_of), base)]);
    }
    n
}

fn run_properties(m: &Matrix) -> PropertyBag {
    let s = m.summary();
    let c = &m.context;
    let mut props: BTreeMap<String, Value> = BTreeMap::new();
    props.insert("command".to_string(), json!(c.command));
    props.insert("source".to_string(), json!(c.source));
    props.insert("failOn".to_string(), json!(c.fail_on.as_str()));
    if let Some(v) = &c.server_version {
        props.insert("serverVersion".to_string(), json!(v));
    }
    if let Some(id) = &c.run_id {
        props.insert("runId".to_string(), json!(id));
    }
    props.insert(
        "verdict".to_string(),
        json!(text::verdict_label(m.verdict())),
    );
    props.insert(
        "summary".to_string(),
        json!({
            "pass": s.pass,
            "fail": s.fail,
            "skip": s.skip,
            "inconclusive": s.inconclusive,
            "waived": s.waived,
            "gatingFailures": s.gating_failures,
            "gatingInconclusive": s.gating_inconclusive,
        }),
    );
    PropertyBag::builder().additional_properties(props).build()
}

/// SHA-256 (hex) of the parts, NUL-separated.
fn fingerprint(parts: &[&str]) -> String {
    let joined = parts.join("\0");
    let digest = ring::digest::digest(&ring::digest::SHA256, joined.as_bytes());
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::driver::pascal_name;
    use super::*;
    use capi_contract::contract::Level;
    use serde_sarif::sarif::ResultLevel;

    #[test]
    fn names_and_versions() {
        assert_eq!(
            pascal_name("infra-machine/provider-id"),
            "InfraMachineProviderId"
        );
        assert_eq!(pascal_name("all/crd"), "AllCrd");
        assert!(is_semver("0.1.0"));
        assert!(is_semver("1.2.3-rc.1+abc"));
        assert!(!is_semver("0.1"));
        assert!(!is_semver("dev"));
        assert_eq!(level_of(Level::Must), ResultLevel::Error);
        assert_eq!(level_of(Level::Should), ResultLevel::Warning);
        assert_eq!(level_of(Level::May), ResultLevel::Note);
    }

    #[test]
    fn fingerprints_are_stable_and_separate_parts() {
        let a = fingerprint(&["r", "p", "K"]);
        assert_eq!(a.len(), 64);
        assert_eq!(a, fingerprint(&["r", "p", "K"]));
        assert_ne!(a, fingerprint(&["r", "pK", ""]));
    }
}

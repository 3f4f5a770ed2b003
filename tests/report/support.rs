//! Helpers shared by the report tests: rendering every format, shuffling a matrix, parsing
//! JUnit, `report` arguments that write every file.

use capi_conformance::cli::{ContractSelection, OutputFormat, ReportArgs};
use capi_conformance::report::{self, Matrix, RenderOptions};

pub(crate) const FORMATS: [OutputFormat; 6] = [
    OutputFormat::Table,
    OutputFormat::Json,
    OutputFormat::Yaml,
    OutputFormat::Junit,
    OutputFormat::Markdown,
    OutputFormat::Sarif,
];

pub(crate) fn render(m: &Matrix, f: OutputFormat) -> String {
    report::render(m, f, &RenderOptions::default()).unwrap()
}

pub(crate) fn html(m: &Matrix) -> String {
    report::render_html(m, &RenderOptions::default())
}

/// The same matrix with every list reversed: writers must not depend on input order.
pub(crate) fn shuffled(m: &Matrix) -> Matrix {
    let mut m = m.clone();
    m.columns.reverse();
    m.results.reverse();
    m.problems.reverse();
    m.scenarios.reverse();
    m
}

pub(crate) fn every_output(m: &Matrix) -> Vec<String> {
    let mut outs: Vec<String> = FORMATS.iter().map(|f| render(m, *f)).collect();
    outs.push(html(m));
    outs
}

#[derive(Debug, Default)]
pub(crate) struct Suite {
    pub(crate) attrs: std::collections::BTreeMap<String, String>,
    pub(crate) cases: Vec<Case>,
    pub(crate) system_out: String,
}

#[derive(Debug, Default)]
pub(crate) struct Case {
    pub(crate) attrs: std::collections::BTreeMap<String, String>,
    pub(crate) child: Option<(String, std::collections::BTreeMap<String, String>, String)>,
}

pub(crate) fn attrs(
    e: &quick_xml::events::BytesStart<'_>,
) -> std::collections::BTreeMap<String, String> {
    e.attributes()
        .map(|a| {
            let a = a.unwrap();
            (
                String::from_utf8(a.key.as_ref().to_vec()).unwrap(),
                a.unescape_value().unwrap().into_owned(),
            )
        })
        .collect()
}

pub(crate) fn parse_junit(xml: &str) -> Vec<Suite> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut suites: Vec<Suite> = Vec::new();
    let mut stack: Vec<String> = Vec::new();
    let mut saw_root = false;
    loop {
        let ev = reader.read_event().unwrap();
        match ev {
            Event::Eof => break,
            Event::Start(ref e) | Event::Empty(ref e) => {
                let name = String::from_utf8(e.name().as_ref().to_vec()).unwrap();
                let a = attrs(e);
                match name.as_str() {
                    "testsuites" => saw_root = true,
                    "testsuite" => suites.push(Suite {
                        attrs: a,
                        ..Suite::default()
                    }),
                    "testcase" => suites.last_mut().unwrap().cases.push(Case {
                        attrs: a,
                        child: None,
                    }),
                    "failure" | "error" | "skipped" => {
                        let case = suites.last_mut().unwrap().cases.last_mut().unwrap();
                        case.child = Some((name.clone(), a, String::new()));
                    }
                    "system-out" => {}
                    other => panic!("unexpected element {other}"),
                }
                if matches!(ev, Event::Start(_)) {
                    stack.push(name);
                }
            }
            Event::End(_) => {
                stack.pop();
            }
            Event::CData(t) => {
                let text = String::from_utf8(t.into_inner().to_vec()).unwrap();
                match stack.last().map(String::as_str) {
                    Some("system-out") => suites.last_mut().unwrap().system_out.push_str(&text),
                    Some("failure" | "error" | "skipped") => {
                        let case = suites.last_mut().unwrap().cases.last_mut().unwrap();
                        if let Some(c) = case.child.as_mut() {
                            c.2.push_str(&text);
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    assert!(saw_root, "no <testsuites> root");
    suites
}

pub(crate) fn args(dir: &std::path::Path) -> ReportArgs {
    ReportArgs {
        output: OutputFormat::Markdown,
        junit: Some(dir.join("nested/a/junit.xml")),
        json: Some(dir.join("report.json")),
        markdown: Some(dir.join("b/summary.md")),
        html: Some(dir.join("c/report.html")),
        sarif: Some(dir.join("d/report.sarif")),
        contract: ContractSelection::Declared,
        fail_on: "must".into(),
        roles: Vec::new(),
        config: None,
        no_waivers: false,
        manager_help: None,
        migration: None,
        color: "auto".into(),
    }
}

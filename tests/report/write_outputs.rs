//! `write_outputs`: every file in one call, errors naming the file, colour.

use crate::fixtures;
use crate::support::{args, html, render};
use capi_conformance::cli::OutputFormat;
use capi_conformance::report::{self, RenderOptions};

#[test]
fn write_outputs_writes_every_file_in_one_call() {
    let dir = tempfile::tempdir().unwrap();
    let m = fixtures::synthetic();
    let a = args(dir.path());
    let mut stdout = Vec::new();
    report::write_outputs_to(&m, &a.outputs(), true, &mut stdout).unwrap();
    assert_eq!(
        String::from_utf8(stdout).unwrap(),
        render(&m, OutputFormat::Markdown)
    );
    let read =
        |p: &Option<std::path::PathBuf>| std::fs::read_to_string(p.as_ref().unwrap()).unwrap();
    assert_eq!(read(&a.junit), render(&m, OutputFormat::Junit));
    assert_eq!(read(&a.json), render(&m, OutputFormat::Json));
    assert_eq!(read(&a.markdown), render(&m, OutputFormat::Markdown));
    assert_eq!(read(&a.html), html(&m));
    // SARIF files are relative to the git work tree of the current directory.
    let opts = RenderOptions {
        sarif: report::SarifBase::discover(&m),
        ..RenderOptions::default()
    };
    assert!(opts.sarif.root.is_some());
    assert_eq!(
        read(&a.sarif),
        report::render(&m, OutputFormat::Sarif, &opts).unwrap()
    );
}

#[test]
fn write_outputs_error_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("blocker");
    std::fs::write(&blocker, "a file, not a directory").unwrap();
    let mut a = args(dir.path());
    a.json = Some(blocker.join("report.json"));
    let err = report::write_outputs_to(&fixtures::all_pass(), &a.outputs(), false, &mut Vec::new())
        .unwrap_err();
    assert!(format!("{err:#}").contains("report.json"), "{err:#}");
}

#[test]
fn colour_follows_the_flag_and_the_terminal() {
    assert!(report::color_enabled("always", false));
    assert!(!report::color_enabled("never", true));
    assert!(!report::color_enabled("auto", false));
}

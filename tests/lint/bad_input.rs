//! Bad input: one-line messages naming file and document, exit 2, `--keep-going`.

use crate::support::*;

const GOOD_CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: foomachines.infrastructure.foo.io
  labels: {cluster.x-k8s.io/v1beta2: v1beta2}
spec:
  group: infrastructure.foo.io
  names: {kind: FooMachine, listKind: FooMachineList, plural: foomachines}
  scope: Namespaced
  versions:
  - name: v1beta2
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object}
";

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let p = dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

fn expect_error(args: &[&str], needle: &str) {
    let (code, stdout, stderr) = run_bin(args, None);
    assert_eq!(code, 2, "stderr: {stderr}");
    assert!(stdout.is_empty(), "no half report on stdout: {stdout}");
    let line = stderr.trim_end();
    assert_eq!(line.lines().count(), 1, "one line: {stderr}");
    assert!(line.contains(needle), "`{needle}` not in: {line}");
    assert!(!line.contains("panicked"));
}

#[test]
fn unreadable_file() {
    expect_error(
        &["lint", "/nonexistent/nope.yaml"],
        "/nonexistent/nope.yaml: cannot read",
    );
}

#[test]
fn invalid_yaml_names_file_document_and_line() {
    let d = tempfile::tempdir().unwrap();
    let f = write(&d, "a.yaml", &format!("{GOOD_CRD}---\nkind: [unclosed\n"));
    expect_error(
        &["lint", &f],
        &format!("{f}: document 1 (line 20): invalid YAML at line 20, column 7: unclosed bracket"),
    );
}

#[test]
fn non_mapping_document() {
    let d = tempfile::tempdir().unwrap();
    let f = write(&d, "a.yaml", "- just\n- a list\n");
    expect_error(
        &["lint", &f],
        &format!("{f}: document 0 (line 1): not a mapping (found array)"),
    );
}

#[test]
fn crd_without_names_or_versions() {
    let d = tempfile::tempdir().unwrap();
    let no_names = GOOD_CRD.replace(
        "  names: {kind: FooMachine, listKind: FooMachineList, plural: foomachines}\n",
        "",
    );
    let f = write(&d, "a.yaml", &no_names);
    expect_error(
        &["lint", &f],
        "CustomResourceDefinition foomachines.infrastructure.foo.io: no spec.names",
    );
    let no_versions: String = GOOD_CRD.split("  versions:").next().unwrap().to_string();
    let f = write(&d, "b.yaml", &no_versions);
    expect_error(
        &["lint", &f],
        "document 0 (line 1): CustomResourceDefinition foomachines.infrastructure.foo.io: no spec.versions",
    );
}

#[test]
fn non_structural_schema() {
    let d = tempfile::tempdir().unwrap();
    let f = write(
        &d,
        "a.yaml",
        &GOOD_CRD.replace("spec: {type: object}", "spec: {description: untyped}"),
    );
    expect_error(
        &["lint", &f],
        "schema of version v1beta2 is not structural: openAPIV3Schema.properties.spec has no type",
    );
}

#[test]
fn too_large_file() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("huge.yaml");
    let f = std::fs::File::create(&p).unwrap();
    f.set_len(65 * 1024 * 1024).unwrap();
    expect_error(&["lint", p.to_str().unwrap()], "huge.yaml: too large");
}

#[test]
fn empty_directory() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    expect_error(&["lint", dir], &format!("{dir}: empty directory"));
}

#[test]
fn no_crd_at_all() {
    let d = tempfile::tempdir().unwrap();
    let f = write(
        &d,
        "a.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n",
    );
    expect_error(&["lint", &f], "no CustomResourceDefinition found");
}

#[test]
fn stdin_input() {
    let (code, stdout, stderr) = run_bin(&["lint", "-", "-o", "json"], Some(GOOD_CRD));
    assert!(code == 0 || code == 1, "{stderr}");
    assert!(stdout.contains("infra-machine"), "{stdout}");
}

#[test]
fn keep_going_reports_the_rest_and_marks_the_broken_document() {
    let d = tempfile::tempdir().unwrap();
    let f = write(&d, "a.yaml", &format!("{GOOD_CRD}---\n- not a mapping\n"));
    expect_error(&["lint", &f], "document 1 (line 20): not a mapping");
    let (code, stdout, stderr) = run_bin(&["lint", &f, "--keep-going", "-o", "json"], None);
    // The minimal CRD fails MUST rules (exit 1); without failures the problem alone gives exit 2.
    assert!(code == 1 || code == 2, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let problems = v["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0]["source"], format!("{f}#1"));
    assert!(stdout.contains("FooMachine"));
}

#[test]
fn missing_manager_help_file_is_named() {
    expect_error(
        &[
            "lint",
            "fixtures/conformant-v1beta2",
            "--manager-help",
            "/nonexistent/manager-help.txt",
        ],
        "--manager-help /nonexistent/manager-help.txt: cannot read the file",
    );
}

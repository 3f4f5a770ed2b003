//! The GitHub Action (`action.yml`, composite): its inputs and steps, every command in it parses
//! with our CLI, its lint step run here the way GitHub runs it (bash -e, `GITHUB_OUTPUT`,
//! `GITHUB_STEP_SUMMARY`), and the official GitHub schemas accept it and the example using it.
//!
//! Not testable here: the install step (a cargo build of the action's source on the runner, or
//! a release download from GitHub) and the upload to code scanning (GitHub's API); the tests
//! check their shape only.

use crate::examples::{ToolCommand, shell_words, tool_commands};
use crate::support::{repo_root, tool_bin};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

pub(crate) fn load_action() -> Value {
    let text = std::fs::read_to_string(repo_root().join("action.yml")).unwrap();
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("action.yml is not valid YAML: {e}"))
}

/// Whether a `uses:` names this repository's action (`./` here, the repository slug elsewhere).
pub(crate) fn is_this_action(uses: &str) -> bool {
    uses == "./" || uses.starts_with("capi-conformance/capi-conformance@")
}

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// The action's input values for a `with:` map: given values, else the defaults.
fn input_values(with: Option<&Value>) -> BTreeMap<String, String> {
    let action = load_action();
    let mut values = BTreeMap::new();
    for (name, input) in action["inputs"].as_object().unwrap() {
        let given = with.and_then(|w| w.get(name));
        let value = match given {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Bool(b)) => b.to_string(),
            Some(other) => other.to_string(),
            None => str_of(input, "default").unwrap_or("").to_string(),
        };
        values.insert(name.clone(), value);
    }
    if let Some(w) = with.and_then(Value::as_object) {
        for name in w.keys() {
            assert!(
                values.contains_key(name),
                "`with: {name}` is not an input of the action"
            );
        }
    }
    values
}

/// `${{ inputs.NAME }}` and `${{ github.action_path }}` replaced; other expressions kept.
fn expand_expressions(text: &str, inputs: &BTreeMap<String, String>) -> String {
    let mut out = text.to_string();
    for (name, value) in inputs {
        out = out.replace(&format!("${{{{ inputs.{name} }}}}"), value);
    }
    out.replace(
        "${{ github.action_path }}",
        &repo_root().display().to_string(),
    )
}

/// `$NAME` and `${NAME}` of `env` replaced in a script (the rest of the shell is left alone).
fn expand_env(script: &str, env: &BTreeMap<String, String>) -> String {
    let mut out = script.to_string();
    // Longest names first, so `$REPORTS_DIR` is not cut by `$REPORTS`.
    let mut names: Vec<&String> = env.keys().collect();
    names.sort_by_key(|n| std::cmp::Reverse(n.len()));
    for name in names {
        out = out.replace(&format!("${{{name}}}"), &env[name]);
        out = out.replace(&format!("${name}"), &env[name]);
    }
    out
}

fn step_env(step: &Value) -> BTreeMap<String, String> {
    step.get("env")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        v.as_str().map_or_else(|| v.to_string(), str::to_string),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The action's steps as a job using it with `with:` runs them: inputs bound, and each `run:`
/// script with its step's environment spelled out (what the recipe checks read).
pub(crate) fn inline(with: Option<&Value>) -> Vec<Value> {
    let inputs = input_values(with);
    let action = load_action();
    let text = serde_json::to_string(&action["runs"]["steps"]).unwrap();
    let steps: Vec<Value> = serde_json::from_str(&expand_expressions(&text, &inputs)).unwrap();
    steps
        .into_iter()
        .map(|mut step| {
            let env = step_env(&step);
            if let Some(script) = str_of(&step, "run") {
                step["run"] = Value::from(expand_env(script, &env));
            }
            step
        })
        .collect()
}

fn step_named<'a>(steps: &'a [Value], id_or_name: &str) -> &'a Value {
    steps
        .iter()
        .find(|s| str_of(s, "id") == Some(id_or_name) || str_of(s, "name") == Some(id_or_name))
        .unwrap_or_else(|| panic!("no step {id_or_name}"))
}

#[test]
fn action_is_a_composite_with_inputs_outputs_and_ordered_steps() {
    let action = load_action();
    assert_eq!(action["runs"]["using"], "composite");
    assert!(str_of(&action, "description").is_some_and(|d| !d.is_empty()));
    let inputs = action["inputs"].as_object().unwrap();
    for name in [
        "path",
        "version",
        "fail-on",
        "args",
        "working-directory",
        "reports-dir",
        "upload-sarif",
        "category",
        "upload-waived",
    ] {
        let input = inputs
            .get(name)
            .unwrap_or_else(|| panic!("no input {name}"));
        assert!(
            str_of(input, "description").is_some(),
            "input {name}: no description"
        );
        assert!(input.get("default").is_some(), "input {name}: no default");
    }
    assert_eq!(inputs["fail-on"]["default"], "must");
    for name in ["exit-code", "sarif", "junit", "markdown"] {
        let value = str_of(&action["outputs"][name], "value").unwrap();
        assert!(
            value.contains("steps.lint.outputs."),
            "output {name}: {value}"
        );
    }
    let steps = action["runs"]["steps"].as_array().unwrap();
    for step in steps {
        assert!(
            step.get("uses").is_some() != step.get("run").is_some(),
            "a step has exactly one of uses/run: {step}"
        );
        if step.get("run").is_some() {
            assert_eq!(
                str_of(step, "shell"),
                Some("bash"),
                "composite run steps name a shell"
            );
        }
        if let Some(uses) = str_of(step, "uses") {
            let version = uses.rsplit_once('@').map(|(_, v)| v).unwrap_or("");
            assert!(
                version.starts_with('v') && version[1..].chars().all(|c| c.is_ascii_digit()),
                "{uses} is not pinned to a major version"
            );
        }
        assert!(
            step.get("continue-on-error").is_none(),
            "the action hides failures"
        );
    }
    let names: Vec<&str> = steps.iter().filter_map(|s| str_of(s, "name")).collect();
    assert_eq!(
        names,
        [
            "Install capi-conformance",
            "capi-conformance lint",
            "Job summary",
            "Upload SARIF to code scanning"
        ]
    );
    // The gate runs unconditionally; the summary and the upload run after it even when it fails.
    let lint = step_named(steps, "lint");
    assert!(lint.get("if").is_none());
    for name in ["Job summary", "Upload SARIF to code scanning"] {
        let cond = str_of(step_named(steps, name), "if").unwrap();
        assert!(
            cond.contains("!cancelled()"),
            "{name} is skipped when lint fails: {cond}"
        );
    }
    let upload = step_named(steps, "Upload SARIF to code scanning");
    assert!(
        str_of(upload, "uses")
            .unwrap()
            .starts_with("github/codeql-action/upload-sarif@")
    );
    assert!(
        str_of(upload, "if")
            .unwrap()
            .contains("inputs.upload-sarif == 'true'")
    );
    let with = &upload["with"];
    assert_eq!(with["sarif_file"], "${{ steps.lint.outputs.sarif-upload }}");
    assert_eq!(with["category"], "${{ inputs.category }}");
    assert_eq!(with["checkout_path"], "${{ steps.lint.outputs.root }}");
}

/// The lint command of the inlined action.
fn lint_command(steps: &[Value]) -> ToolCommand {
    let script = str_of(step_named(steps, "lint"), "run").unwrap();
    let commands = tool_commands(script);
    assert_eq!(commands.len(), 1, "{script}");
    commands.into_iter().next().unwrap()
}

#[test]
fn every_command_in_the_action_parses_and_lint_writes_what_is_uploaded() {
    let steps = inline(None);
    let mut all = Vec::new();
    for step in &steps {
        if let Some(script) = str_of(step, "run") {
            all.extend(tool_commands(script));
        }
    }
    assert_eq!(
        all.iter().map(|c| c.subcommand()).collect::<Vec<_>>(),
        ["--version", "lint"],
        "the install step prints the version, then the gate runs lint"
    );
    for command in &all {
        if let Err(e) = command.matches() {
            panic!("`{}` is not a valid command:\n{e}", command.argv.join(" "));
        }
    }
    let lint = lint_command(&steps);
    let matches = lint.matches().unwrap();
    let path = |id: &str| {
        matches
            .get_one::<std::path::PathBuf>(id)
            .unwrap_or_else(|| panic!("lint writes no --{id}"))
            .display()
            .to_string()
    };
    assert_eq!(
        path("sarif"),
        "capi-conformance-reports/capi-conformance.sarif"
    );
    assert_eq!(path("junit"), "capi-conformance-reports/junit.xml");
    assert_eq!(path("markdown"), "capi-conformance-reports/summary.md");
    assert_eq!(matches.get_one::<String>("fail_on").unwrap(), "must");
    // The `sarif` output is the file lint writes; the upload reads the copy made from it.
    let script = str_of(step_named(&steps, "lint"), "run").unwrap();
    assert!(
        script.contains("echo \"sarif=$PWD/capi-conformance-reports/capi-conformance.sarif\""),
        "{script}"
    );
    assert!(
        script.contains(
            "echo \"sarif-upload=$PWD/capi-conformance-reports/capi-conformance.upload.sarif\""
        ),
        "{script}"
    );
    let summary = str_of(step_named(&steps, "Job summary"), "run").unwrap();
    assert!(
        shell_words(summary).contains(&"capi-conformance-reports/summary.md".to_string()),
        "{summary}"
    );

    // Inputs reach the command.
    let with: Value = serde_json::json!({"path": "deploy/components.yaml metadata.yaml", "fail-on": "should", "args": "--contract all"});
    let lint = lint_command(&inline(Some(&with)));
    let matches = lint.matches().unwrap();
    let paths: Vec<String> = matches
        .get_many::<std::path::PathBuf>("paths")
        .unwrap()
        .map(|p| p.display().to_string())
        .collect();
    assert_eq!(paths, ["deploy/components.yaml", "metadata.yaml"]);
    assert_eq!(matches.get_one::<String>("fail_on").unwrap(), "should");
    assert!(
        lint.argv
            .ends_with(&["--contract".to_string(), "all".to_string()])
    );
}

/// A provider repository (a git work tree) with `config/` = the conformant v1beta2 fixture;
/// `broken`: FooCluster made cluster-scoped (a MUST failure), and FooMachine too but waived by
/// an annotation.
fn provider_repo(broken: bool) -> tempfile::TempDir {
    let repo = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(repo.path().join(".git")).unwrap();
    std::fs::create_dir_all(repo.path().join("config")).unwrap();
    for entry in std::fs::read_dir(repo_root().join("fixtures/conformant-v1beta2"))
        .unwrap()
        .flatten()
    {
        let mut text = std::fs::read_to_string(entry.path()).unwrap();
        if broken && text.contains("name: foomachines.infrastructure.foo.example.io") {
            let mut docs: Vec<String> = text.split("\n---\n").map(str::to_string).collect();
            for doc in &mut docs {
                if doc.contains("  name: fooclusters.infrastructure.foo.example.io\n") {
                    *doc = doc.replacen("scope: Namespaced", "scope: Cluster", 1);
                }
                if doc.contains("  name: foomachines.infrastructure.foo.example.io\n") {
                    *doc = doc
                        .replacen("scope: Namespaced", "scope: Cluster", 1)
                        .replacen(
                            "metadata:\n  labels:",
                            "metadata:\n  annotations:\n    capi-conformance.io/waive: all/namespaced\n  labels:",
                            1,
                        );
                }
            }
            text = docs.join("\n---\n");
            assert!(text.contains("capi-conformance.io/waive"));
        }
        std::fs::write(repo.path().join("config").join(entry.file_name()), text).unwrap();
    }
    repo
}

fn sarif_results(path: &str) -> Vec<Value> {
    let log: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    log["runs"][0]["results"].as_array().unwrap().clone()
}

/// Runs one inlined `run:` step as GitHub's `shell: bash` does (`bash --noprofile --norc -eo
/// pipefail`), with its `env:`, `capi-conformance` on PATH and the runner's files.
fn run_step(step: &Value, cwd: &Path, runner: &Path) -> (i32, String) {
    let bin = runner.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let link = bin.join("capi-conformance");
    if !link.exists() {
        std::os::unix::fs::symlink(tool_bin(), &link).unwrap();
    }
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let script = runner.join("step.sh");
    std::fs::write(&script, str_of(step, "run").unwrap()).unwrap();
    let mut cmd = Command::new("bash");
    cmd.args(["--noprofile", "--norc", "-eo", "pipefail"])
        .arg(&script)
        .current_dir(cwd)
        .env("PATH", path)
        .env("GITHUB_OUTPUT", runner.join("output"))
        .env("GITHUB_STEP_SUMMARY", runner.join("summary"))
        .env("RUNNER_TEMP", runner.join("temp"));
    for (k, v) in step_env(step) {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// The action's steps with inputs bound but each script as written (for running it).
fn runnable_steps(with: Option<&Value>) -> Vec<Value> {
    let inputs = input_values(with);
    let action = load_action();
    let text = serde_json::to_string(&action["runs"]["steps"]).unwrap();
    serde_json::from_str(&expand_expressions(&text, &inputs)).unwrap()
}

fn outputs(runner: &Path) -> BTreeMap<String, String> {
    std::fs::read_to_string(runner.join("output"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn the_lint_step_gates_and_writes_the_reports_the_next_steps_use() {
    let steps = runnable_steps(None);
    let lint = step_named(&steps, "lint");
    let summary = step_named(&steps, "Job summary");
    assert_eq!(str_of(lint, "working-directory"), Some("."));

    // Conformant: exit 0, every report written, no SARIF result.
    let good = provider_repo(false);
    let runner = tempfile::tempdir().unwrap();
    let (code, log) = run_step(lint, good.path(), runner.path());
    assert_eq!(code, 0, "{log}");
    let out = outputs(runner.path());
    assert_eq!(out["exit-code"], "0");
    assert_eq!(out["sarif-written"], "true");
    assert_eq!(out["markdown-written"], "true");
    assert!(sarif_results(&out["sarif"]).is_empty());
    assert!(sarif_results(&out["sarif-upload"]).is_empty());
    assert!(Path::new(&out["junit"]).is_file());

    // One MUST broken: the step fails with lint's code after writing its outputs; the SARIF
    // holds the failure at the file, relative to the work tree the upload is told about.
    let bad = provider_repo(true);
    let runner = tempfile::tempdir().unwrap();
    let (code, log) = run_step(lint, bad.path(), runner.path());
    assert_eq!(code, 1, "{log}");
    let out = outputs(runner.path());
    assert_eq!(out["exit-code"], "1");
    assert_eq!(out["sarif-written"], "true");
    assert_eq!(
        std::fs::canonicalize(&out["root"]).unwrap(),
        std::fs::canonicalize(bad.path()).unwrap()
    );
    let results = sarif_results(&out["sarif"]);
    let namespaced: Vec<&Value> = results
        .iter()
        .filter(|r| r["ruleId"] == "all/namespaced")
        .collect();
    assert_eq!(namespaced.len(), 2, "{results:#?}");
    for r in &namespaced {
        assert_eq!(r["level"], "error");
        assert_eq!(
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "config/infrastructure-components.yaml"
        );
    }
    // The waived failure stays in the log (suppressed) but not in what is uploaded.
    let upload = sarif_results(&out["sarif-upload"]);
    assert_eq!(upload.len(), results.len() - 1);
    assert!(results.iter().any(|r| r["suppressions"].is_array()));
    assert!(upload.iter().all(|r| r["suppressions"].is_null()));
    assert!(upload.iter().any(|r| {
        r["ruleId"] == "all/namespaced"
            && r["properties"]["column"]
                .as_str()
                .unwrap()
                .contains("FooCluster@")
    }));
    // The summary step (run after the failure) appends the Markdown summary.
    let (code, log) = run_step(summary, bad.path(), runner.path());
    assert_eq!(code, 0, "{log}");
    let job_summary = std::fs::read_to_string(runner.path().join("summary")).unwrap();
    assert!(job_summary.contains("FAIL"), "{job_summary}");

    // An input error: exit 2, no report, so nothing to upload or summarise.
    let with = serde_json::json!({"path": "no-such-dir/"});
    let steps = runnable_steps(Some(&with));
    let runner = tempfile::tempdir().unwrap();
    let (code, log) = run_step(step_named(&steps, "lint"), bad.path(), runner.path());
    assert_eq!(code, 2, "{log}");
    let out = outputs(runner.path());
    assert_eq!(out["exit-code"], "2");
    assert!(!out.contains_key("sarif-written"));
    assert!(!out.contains_key("markdown-written"));

    // `upload-waived: true` uploads the log as written.
    let with = serde_json::json!({"upload-waived": "true"});
    let steps = runnable_steps(Some(&with));
    let runner = tempfile::tempdir().unwrap();
    let (code, log) = run_step(step_named(&steps, "lint"), bad.path(), runner.path());
    assert_eq!(code, 1, "{log}");
    let out = outputs(runner.path());
    assert_eq!(
        std::fs::read(&out["sarif-upload"]).unwrap(),
        std::fs::read(&out["sarif"]).unwrap()
    );

    // `fail-on` reaches the gate.
    let with = serde_json::json!({"fail-on": "never"});
    let steps = runnable_steps(Some(&with));
    let runner = tempfile::tempdir().unwrap();
    let (code, log) = run_step(step_named(&steps, "lint"), bad.path(), runner.path());
    assert_eq!(code, 0, "fail-on never: {log}");

    // `args` are split into words and never globbed: `config/*` reaches lint as written (a
    // path that does not exist: exit 2), not as the files a shell glob would list (exit 1).
    let with = serde_json::json!({"args": "--contract all config/*"});
    let steps = runnable_steps(Some(&with));
    let runner = tempfile::tempdir().unwrap();
    let (code, log) = run_step(step_named(&steps, "lint"), bad.path(), runner.path());
    assert_eq!(code, 2, "{log}");
    assert!(log.contains("config/*"), "{log}");
}

#[test]
fn github_schemas_accept_the_action_and_the_example() {
    let test = "github_schemas_accept_the_action_and_the_example";
    let python = std::env::var_os("CAPI_CONFORMANCE_PYTHON")
        .filter(|v| !v.is_empty())
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/ci-venv/bin/python"));
    let usable = python.is_file()
        && Command::new(&python)
            .args(["-c", "import check_jsonschema"])
            .output()
            .is_ok_and(|o| o.status.success());
    if !usable {
        if std::env::var("CAPI_CONFORMANCE_REQUIRE_SARIF_CONSUMER").as_deref() == Ok("1") {
            panic!(
                "{test}: no check-jsonschema in {} (.ci/run installs it)",
                python.display()
            );
        }
        eprintln!(
            "skipped: {test}: check-jsonschema not installed in {} (.ci/run installs it)",
            python.display()
        );
        return;
    }
    // SchemaStore's schemas, vendored in check-jsonschema (no network).
    for (schema, file) in [
        ("vendor.github-actions", "action.yml"),
        ("vendor.github-workflows", "examples/github-actions.yml"),
    ] {
        let out = Command::new(&python)
            .args(["-m", "check_jsonschema", "--builtin-schema", schema])
            .arg(repo_root().join(file))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{file} against {schema}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

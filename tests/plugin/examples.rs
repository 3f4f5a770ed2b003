//! The CI recipes in `examples/`: valid YAML of the CI's shape, every `capi-conformance …`
//! command they run parses with our clap definition, the JUnit they write is the JUnit they
//! publish, the Markdown summary reaches the job summary, and nothing hides a failing exit code.

use crate::support::repo_root;
use capi_conformance::cli::Cli;
use clap::CommandFactory;
use serde_json::Value;

/// One shell command line of a recipe whose program is `capi-conformance`, as argv.
#[derive(Debug, Clone)]
pub(crate) struct ToolCommand {
    pub(crate) argv: Vec<String>,
}

impl ToolCommand {
    pub(crate) fn subcommand(&self) -> &str {
        self.argv.get(1).map(String::as_str).unwrap_or("")
    }

    /// Parsed by our CLI; the subcommand's matches (none for `--version` / `--help`).
    pub(crate) fn matches(&self) -> Result<clap::ArgMatches, clap::Error> {
        let matches = match Cli::command().try_get_matches_from(&self.argv) {
            Ok(m) => m,
            Err(e)
                if matches!(
                    e.kind(),
                    clap::error::ErrorKind::DisplayVersion | clap::error::ErrorKind::DisplayHelp
                ) =>
            {
                return Ok(clap::ArgMatches::default());
            }
            Err(e) => return Err(e),
        };
        Ok(matches
            .subcommand()
            .map(|(_, sub)| sub.clone())
            .unwrap_or_default())
    }

    fn path_arg(&self, id: &str) -> Option<String> {
        let matches = self.matches().ok()?;
        matches
            .try_get_one::<std::path::PathBuf>(id)
            .ok()
            .flatten()
            .map(|p| p.to_string_lossy().into_owned())
    }

    /// A run of the tool (`lint` or `check`), not `--version` or `rules`.
    fn is_run(&self) -> bool {
        matches!(self.subcommand(), "lint" | "check")
    }
}

/// Splits a shell line into words and control operators (`|`, `||`, `&&`, `;`), honouring
/// single quotes, double quotes and backslash escapes. Enough for CI recipes, not a full shell.
pub(crate) fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '"' => {
                in_word = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => word.extend(chars.next()),
                        _ => word.push(q),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.extend(chars.next());
            }
            '|' | '&' | ';' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
                let mut op = c.to_string();
                if (c == '|' || c == '&') && chars.peek() == Some(&c) {
                    op.push(c);
                    chars.next();
                }
                words.push(op);
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// Every `capi-conformance …` command in a script (a `run:` block or a `script:` item).
pub(crate) fn tool_commands(script: &str) -> Vec<ToolCommand> {
    let joined = script.replace("\\\n", " ");
    let mut commands = Vec::new();
    for line in joined.lines() {
        let line = line.trim();
        if line.starts_with('#') {
            continue;
        }
        let words = shell_words(line);
        for segment in words.split(|w| matches!(w.as_str(), "|" | "||" | "&&" | ";" | "&")) {
            // `NAME=value` words before a command are assignments, not the command.
            let segment: Vec<&String> = segment.iter().skip_while(|w| is_assignment(w)).collect();
            let Some(first) = segment.first() else {
                continue;
            };
            if *first == "capi-conformance" || first.ends_with("/capi-conformance") {
                let mut argv = vec!["capi-conformance".to_string()];
                argv.extend(segment[1..].iter().map(|w| w.to_string()));
                commands.push(ToolCommand { argv });
            }
        }
    }
    commands
}

/// `NAME=value` (a shell variable assignment).
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

fn load(name: &str) -> Value {
    let text = std::fs::read_to_string(repo_root().join("examples").join(name)).unwrap();
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{name} is not valid YAML: {e}"))
}

fn str_of<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

/// Every command exists in our CLI (subcommand, flags, values).
fn assert_parse(recipe: &str, commands: &[ToolCommand]) {
    for command in commands {
        if let Err(e) = command.matches() {
            panic!(
                "{recipe}: `{}` is not a valid command:\n{e}",
                command.argv.join(" ")
            );
        }
    }
}

/// Every command must parse, and the recipe must run both `lint` and `check --embedded`.
fn assert_commands_exist(recipe: &str, commands: &[ToolCommand]) {
    assert_parse(recipe, commands);
    assert!(
        commands.iter().any(|c| c.subcommand() == "lint"),
        "{recipe} runs no lint"
    );
    let check = commands
        .iter()
        .find(|c| c.subcommand() == "check")
        .unwrap_or_else(|| panic!("{recipe} runs no check"));
    let matches = check.matches().unwrap();
    assert!(
        matches.get_flag("embedded"),
        "{recipe}: nightly check must be --embedded"
    );
    assert!(matches.get_many::<std::path::PathBuf>("crds").is_some());
    let provider_cmd = matches.get_one::<String>("provider_cmd").unwrap();
    assert!(provider_cmd.contains("{kubeconfig}"), "{provider_cmd}");
    for command in commands.iter().filter(|c| c.is_run()) {
        assert!(
            command.path_arg("junit").is_some(),
            "{:?} writes no JUnit",
            command.argv
        );
        assert!(
            command.path_arg("markdown").is_some(),
            "{:?} writes no Markdown",
            command.argv
        );
    }
}

/// The steps of a GitHub job, in order, with a step using this repository's action
/// (`action.yml`) replaced by the action's own steps, inputs bound (how a composite runs).
fn github_steps(job: &Value) -> Vec<Value> {
    let mut steps = Vec::new();
    for step in job.get("steps").and_then(Value::as_array).unwrap() {
        match str_of(step, "uses") {
            Some(uses) if crate::action::is_this_action(uses) => {
                steps.extend(crate::action::inline(step.get("with")));
            }
            _ => steps.push(step.clone()),
        }
    }
    steps
}

fn runs_when_failed(step: &Value) -> bool {
    str_of(step, "if")
        .is_some_and(|cond| cond.contains("!cancelled()") || cond.contains("always()"))
}

#[test]
fn github_actions_recipe_runs_real_commands_and_publishes_reports() {
    let recipe = load("github-actions.yml");
    let triggers = recipe.get("on").expect("on: triggers");
    assert!(triggers.get("pull_request").is_some());
    assert!(triggers.get("schedule").is_some());
    let jobs = recipe.get("jobs").and_then(Value::as_object).unwrap();
    assert!(!jobs.is_empty());

    let mut all = Vec::new();
    let mut sarif_jobs = 0;
    for (name, job) in jobs {
        assert!(
            str_of(job, "runs-on").is_some(),
            "job {name} has no runs-on"
        );
        assert!(
            job.get("continue-on-error").is_none(),
            "job {name} hides failures"
        );
        let mut junit_published = Vec::new();
        let mut summarised = Vec::new();
        let mut written = Vec::new();
        let mut sarif_written = false;
        let mut sarif_uploaded = false;
        for step in &github_steps(job) {
            assert!(
                step.get("uses").is_some() != step.get("run").is_some(),
                "job {name}: a step has exactly one of uses/run: {step}"
            );
            assert!(
                step.get("continue-on-error").is_none(),
                "job {name} hides failures"
            );
            if let Some(script) = str_of(step, "run") {
                let commands = tool_commands(script);
                assert_parse("github-actions.yml", &commands);
                for command in commands.iter().filter(|c| c.is_run()) {
                    written.push((command.path_arg("junit"), command.path_arg("markdown")));
                    sarif_written |= command.path_arg("sarif").is_some();
                }
                if !commands.is_empty() {
                    assert!(
                        step.get("if").is_none(),
                        "job {name}: the gate step must always run"
                    );
                }
                if script.contains("$GITHUB_STEP_SUMMARY") {
                    assert!(
                        runs_when_failed(step),
                        "job {name}: summary skipped on failure"
                    );
                    summarised.extend(
                        shell_words(script)
                            .into_iter()
                            .filter(|w| w.ends_with(".md")),
                    );
                }
                all.extend(commands);
            }
            if str_of(step, "uses").is_some_and(|u| u.starts_with("mikepenz/action-junit-report@"))
            {
                assert!(
                    runs_when_failed(step),
                    "job {name}: JUnit skipped on failure"
                );
                let with = step.get("with").unwrap();
                junit_published.push(str_of(with, "report_paths").unwrap().to_string());
            }
            if str_of(step, "uses")
                .is_some_and(|u| u.starts_with("github/codeql-action/upload-sarif@"))
            {
                assert!(
                    runs_when_failed(step),
                    "job {name}: SARIF upload skipped on failure"
                );
                sarif_uploaded = true;
            }
        }
        if sarif_written {
            assert!(
                sarif_uploaded,
                "job {name} writes SARIF but never uploads it"
            );
            let permissions = job.get("permissions").unwrap_or(&recipe["permissions"]);
            assert_eq!(
                str_of(permissions, "security-events"),
                Some("write"),
                "job {name}: the SARIF upload needs security-events: write"
            );
            sarif_jobs += 1;
        }
        for (junit, markdown) in written {
            let junit = junit.unwrap();
            assert!(
                junit_published.contains(&junit),
                "job {name}: {junit} never published"
            );
            let markdown = markdown.unwrap();
            assert!(
                summarised.contains(&markdown),
                "job {name}: {markdown} not in the summary"
            );
        }
    }
    assert!(
        sarif_jobs > 0,
        "the pull-request lint sends SARIF to code scanning"
    );
    assert_commands_exist("github-actions.yml", &all);
}

/// A GitLab job with its `extends` template merged in (one level, as the recipe uses).
fn gitlab_job(recipe: &Value, job: &Value) -> serde_json::Map<String, Value> {
    let mut merged = serde_json::Map::new();
    if let Some(base) = str_of(job, "extends") {
        let base = recipe.get(base).and_then(Value::as_object).unwrap();
        merged.extend(base.clone());
    }
    merged.extend(job.as_object().unwrap().clone());
    merged
}

fn script_lines(job: &serde_json::Map<String, Value>, key: &str) -> Vec<String> {
    job.get(key)
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn gitlab_ci_recipe_runs_real_commands_and_publishes_reports() {
    let recipe = load("gitlab-ci.yml");
    let object = recipe.as_object().unwrap();
    let reserved = ["stages", "variables", "default", "include", "workflow"];
    let mut all = Vec::new();
    let mut sources = Vec::new();
    for (name, job) in object {
        if reserved.contains(&name.as_str()) || name.starts_with('.') {
            continue;
        }
        let job = gitlab_job(&recipe, job);
        let script = script_lines(&job, "script");
        assert!(!script.is_empty(), "job {name} has no script");
        assert!(
            job.get("allow_failure")
                .is_none_or(|v| v == &Value::Bool(false)),
            "job {name} hides failures"
        );
        let artifacts = job.get("artifacts").unwrap();
        assert_eq!(str_of(artifacts, "when"), Some("always"), "job {name}");
        let junit = artifacts
            .get("reports")
            .and_then(|r| str_of(r, "junit"))
            .unwrap_or_else(|| panic!("job {name} publishes no artifacts:reports:junit"));
        let rules = job.get("rules").and_then(Value::as_array).unwrap();
        sources.extend(
            rules
                .iter()
                .filter_map(|r| str_of(r, "if"))
                .map(str::to_string),
        );

        let commands: Vec<_> = script.iter().flat_map(|s| tool_commands(s)).collect();
        assert_parse("gitlab-ci.yml", &commands);
        assert!(!commands.is_empty(), "job {name} runs no capi-conformance");
        for command in &commands {
            assert_eq!(
                command.path_arg("junit").as_deref(),
                Some(junit),
                "job {name}"
            );
            let markdown = command.path_arg("markdown").unwrap();
            let shown = script_lines(&job, "after_script")
                .iter()
                .any(|line| line.contains(&format!("cat {markdown}")));
            assert!(shown, "job {name}: {markdown} not printed");
        }
        for key in ["before_script", "after_script"] {
            for line in script_lines(&job, key) {
                all.extend(tool_commands(&line));
            }
        }
        all.extend(commands);
    }
    assert!(sources.iter().any(|s| s.contains("merge_request_event")));
    assert!(sources.iter().any(|s| s.contains("schedule")));
    assert_commands_exist("gitlab-ci.yml", &all);
}

#[test]
fn command_extraction_finds_commands_and_rejects_unknown_flags() {
    let script = "mkdir -p reports\n\
                  capi-conformance lint config/ \\\n  --junit 'reports/j u.xml' && echo ok\n\
                  # capi-conformance not-a-command\n\
                  curl x | tar -xz capi-conformance\n\
                  ./bin/capi-conformance check --embedded --provider-cmd \"./m --kubeconfig {kubeconfig}\"\n\
                  prefix=\"$RUNNER_TEMP/capi-conformance\"\n\
                  RUST_LOG=debug capi-conformance rules";
    let commands = tool_commands(script);
    let argvs: Vec<_> = commands.iter().map(|c| c.argv.join("|")).collect();
    assert_eq!(
        argvs,
        [
            "capi-conformance|lint|config/|--junit|reports/j u.xml",
            "capi-conformance|check|--embedded|--provider-cmd|./m --kubeconfig {kubeconfig}",
            "capi-conformance|rules",
        ]
    );
    assert!(commands.iter().all(|c| c.matches().is_ok()));

    for bad in [
        "capi-conformance lint config/ --no-such-flag",
        "capi-conformance lint",
        "capi-conformance frobnicate",
        "capi-conformance check --embeded",
    ] {
        let commands = tool_commands(bad);
        assert_eq!(commands.len(), 1, "{bad}");
        assert!(commands[0].matches().is_err(), "{bad} must not parse");
    }
}

/// A provider repository for the recipes' `lint config/`: the conformant fixture as `config/`
/// (optionally broken by `edit`), with `reports/` made as the recipes' `mkdir -p reports` does.
fn provider_repo(edit: impl Fn(&str) -> String) -> Option<tempfile::TempDir> {
    let fixture = repo_root().join("fixtures/conformant-v1beta2");
    let entries = std::fs::read_dir(&fixture).ok()?;
    let repo = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(repo.path().join("config")).unwrap();
    std::fs::create_dir_all(repo.path().join("reports")).unwrap();
    for entry in entries.flatten() {
        let text = std::fs::read_to_string(entry.path()).unwrap();
        let target = repo.path().join("config").join(entry.file_name());
        std::fs::write(target, edit(&text)).unwrap();
    }
    Some(repo)
}

/// Every `lint` command of both recipes, as argv.
fn recipe_lint_commands() -> Vec<ToolCommand> {
    let mut commands = Vec::new();
    let github = load("github-actions.yml");
    for job in github["jobs"].as_object().unwrap().values() {
        for step in &github_steps(job) {
            commands.extend(str_of(step, "run").map(tool_commands).unwrap_or_default());
        }
    }
    let gitlab = load("gitlab-ci.yml");
    for job in gitlab.as_object().unwrap().values() {
        if let Some(lines) = job.get("script").and_then(Value::as_array) {
            commands.extend(
                lines
                    .iter()
                    .filter_map(Value::as_str)
                    .flat_map(tool_commands),
            );
        }
    }
    commands.retain(|c| c.subcommand() == "lint");
    assert_eq!(commands.len(), 2, "one lint per recipe");
    commands
}

fn run_in(repo: &std::path::Path, command: &ToolCommand) -> std::process::Output {
    std::process::Command::new(crate::support::tool_bin())
        .args(&command.argv[1..])
        .current_dir(repo)
        .output()
        .unwrap()
}

#[test]
fn recipe_lint_gates_a_provider_repository() {
    let test = "recipe_lint_gates_a_provider_repository";
    for command in recipe_lint_commands() {
        let Some(good) = provider_repo(str::to_string) else {
            eprintln!("skip {test}: no fixtures/conformant-v1beta2 yet");
            return;
        };
        let output = run_in(good.path(), &command);
        if crate::support::not_built(&output) {
            eprintln!("skip {test}: `lint` is not on main yet");
            return;
        }
        assert_eq!(
            output.status.code(),
            Some(0),
            "{:?}: {}",
            command.argv,
            crate::support::stderr(&output)
        );
        let junit = good.path().join(command.path_arg("junit").unwrap());
        let junit = std::fs::read_to_string(junit).unwrap();
        assert!(junit.contains("<testsuite"), "{junit}");
        assert!(!junit.contains("<failure"));
        let summary = good.path().join(command.path_arg("markdown").unwrap());
        assert!(std::fs::read_to_string(summary).unwrap().contains("PASS"));

        // One MUST broken (a namespaced kind made cluster-scoped): the job must fail.
        let bad =
            provider_repo(|text| text.replacen("scope: Namespaced", "scope: Cluster", 1)).unwrap();
        let output = run_in(bad.path(), &command);
        assert_eq!(
            output.status.code(),
            Some(1),
            "{:?} must fail the job",
            command.argv
        );
        let junit = bad.path().join(command.path_arg("junit").unwrap());
        assert!(std::fs::read_to_string(junit).unwrap().contains("<failure"));
        let summary = bad.path().join(command.path_arg("markdown").unwrap());
        assert!(std::fs::read_to_string(summary).unwrap().contains("FAIL"));
    }
}

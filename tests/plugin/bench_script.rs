//! `scripts/bench.sh` and `scripts/screenshot.sh`: valid bash, and every `capi-conformance …`
//! command line they run (also behind wrappers such as `measure LABEL` or `/usr/bin/time`)
//! parses with our clap definition, so a renamed flag breaks the test, not the next benchmark.

use crate::examples::{ToolCommand, shell_words};
use crate::support::repo_root;

const SCRIPTS: [&str; 2] = ["scripts/bench.sh", "scripts/screenshot.sh"];

fn script(name: &str) -> String {
    std::fs::read_to_string(repo_root().join(name)).unwrap()
}

/// Drops shell redirections (`>file`, `2>"$f"`, `> file`) from a command's words.
fn without_redirections(words: &[String]) -> Vec<String> {
    let mut kept = Vec::new();
    let mut skip_next = false;
    for word in words {
        if std::mem::take(&mut skip_next) {
            continue;
        }
        let op = word.trim_start_matches(|c: char| c.is_ascii_digit());
        if op.starts_with('>') || op.starts_with('<') {
            // `>` alone takes the next word as its target.
            skip_next = op.trim_start_matches(['>', '<']).is_empty();
            continue;
        }
        kept.push(word.clone());
    }
    kept
}

/// Every command of a script in which the word `capi-conformance` (or a path ending in it)
/// is run, wherever it stands in its pipeline segment; the argv starts there.
fn script_tool_commands(script: &str) -> Vec<ToolCommand> {
    let joined = script.replace("\\\n", " ");
    let mut commands = Vec::new();
    for line in joined.lines() {
        let line = line.trim();
        if line.starts_with('#') {
            continue;
        }
        let words = shell_words(line);
        for segment in words.split(|w| matches!(w.as_str(), "|" | "||" | "&&" | ";" | "&")) {
            let Some(at) = segment
                .iter()
                .position(|w| w == "capi-conformance" || w.ends_with("/capi-conformance"))
            else {
                continue;
            };
            let mut argv = vec!["capi-conformance".to_string()];
            argv.extend(without_redirections(&segment[at + 1..]));
            commands.push(ToolCommand { argv });
        }
    }
    commands
}

#[test]
fn bench_and_screenshot_scripts_are_valid_bash() {
    for name in SCRIPTS {
        let output = std::process::Command::new("bash")
            .arg("-n")
            .arg(repo_root().join(name))
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

#[test]
fn every_command_the_scripts_run_parses_with_our_cli() {
    for name in SCRIPTS {
        let commands = script_tool_commands(&script(name));
        assert!(!commands.is_empty(), "{name} runs no capi-conformance");
        for command in &commands {
            if let Err(e) = command.matches() {
                panic!("{name}: `{}` does not parse:\n{e}", command.argv.join(" "));
            }
        }
    }
}

#[test]
fn the_scripts_run_what_their_tables_and_pictures_show() {
    let bench = script_tool_commands(&script("scripts/bench.sh"));
    let runs = |sub: &str, flag: &str| {
        bench
            .iter()
            .any(|c| c.subcommand() == sub && c.argv.iter().any(|a| a == flag))
    };
    assert!(runs("check", "--embedded"), "bench.sh: no check --embedded");
    assert!(bench.iter().any(|c| c.subcommand() == "lint"));
    assert!(bench.iter().any(|c| c.subcommand() == "serve"));

    let shots = script_tool_commands(&script("scripts/screenshot.sh"));
    let html: Vec<_> = shots
        .iter()
        .filter(|c| c.subcommand() == "check" && c.argv.iter().any(|a| a == "--html"))
        .collect();
    assert!(
        html.len() >= 2,
        "screenshot.sh: a passing and a failing HTML report"
    );
}

#[test]
fn command_extraction_sees_through_wrappers_and_redirections() {
    let script = "measure lint capi-conformance lint \"$tmp/c.yaml\" -o json >\"$tmp/out\"\n\
                  /usr/bin/time -f '%M' -o t ./target/release/capi-conformance rules 2>err\n\
                  # capi-conformance not-a-command\n\
                  capi-conformance serve --write-kubeconfig k > serve.out 2>serve.err &\n\
                  echo capi-conformance is a word here, not a command";
    let commands = script_tool_commands(script);
    let argvs: Vec<_> = commands.iter().map(|c| c.argv.join("|")).collect();
    assert_eq!(
        argvs,
        [
            "capi-conformance|lint|$tmp/c.yaml|-o|json",
            "capi-conformance|rules",
            "capi-conformance|serve|--write-kubeconfig|k",
            "capi-conformance|is|a|word|here,|not|a|command",
        ]
    );
    assert!(commands[..3].iter().all(|c| c.matches().is_ok()));
    // A word that is not a command still fails to parse: the test cannot pass vacuously.
    assert!(commands[3].matches().is_err());
    let bad = script_tool_commands("measure x capi-conformance lint c.yaml --no-such-flag");
    assert!(bad[0].matches().is_err());
}

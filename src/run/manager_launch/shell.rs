//! Just enough of `sh` to read a `--provider-cmd`: its words (quotes and backslashes undone),
//! the `NAME=VALUE` assignments in front of the program (and after `env`), whether it is more
//! than one simple command (a pipeline or list, where words appended at the end would not reach
//! the manager), and quoting for words appended to it.

/// A command line as `sh` splits it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellCommand {
    /// Every word, quotes removed, across the whole line.
    pub words: Vec<String>,
    /// `NAME` of every `NAME=VALUE` before the program (and after a leading `env`).
    pub assignments: Vec<String>,
    /// An unquoted control operator (`|`, `||`, `&&`, `;`, `&`, a newline, `(`, `)`) or a
    /// comment: words appended to the line would not (all) reach the program.
    pub compound: bool,
}

/// Splits `line` as `sh` would (no expansions: `$X` stays as written).
pub fn parse(line: &str) -> ShellCommand {
    let mut out = ShellCommand::default();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    let mut prev: Option<char> = None;
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
                        '\\' => match chars.peek() {
                            Some(&n @ ('"' | '\\' | '$' | '`')) => {
                                word.push(n);
                                chars.next();
                            }
                            Some('\n') => {
                                chars.next();
                            }
                            _ => word.push('\\'),
                        },
                        _ => word.push(q),
                    }
                }
            }
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(n) => {
                    in_word = true;
                    word.push(n);
                }
                None => {}
            },
            ' ' | '\t' => finish(&mut out.words, &mut word, &mut in_word),
            // A comment runs to the end of the line (sh: `#` starting a word).
            '#' if !in_word => {
                out.compound = true;
                for n in chars.by_ref() {
                    if n == '\n' {
                        break;
                    }
                }
            }
            '\n' | ';' | '|' | '(' | ')' => {
                finish(&mut out.words, &mut word, &mut in_word);
                out.compound = true;
            }
            '&' => {
                // `>&`, `<&` and `&>` are redirections, not the background operator.
                if matches!(prev, Some('>' | '<')) || chars.peek() == Some(&'>') {
                    in_word = true;
                    word.push(c);
                } else {
                    finish(&mut out.words, &mut word, &mut in_word);
                    out.compound = true;
                }
            }
            _ => {
                in_word = true;
                word.push(c);
            }
        }
        prev = Some(c);
    }
    finish(&mut out.words, &mut word, &mut in_word);
    out.assignments = leading_assignments(&out.words);
    out
}

fn finish(words: &mut Vec<String>, word: &mut String, in_word: &mut bool) {
    if *in_word {
        words.push(std::mem::take(word));
    }
    *in_word = false;
}

/// Whether `name` is a shell variable name.
pub fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The names assigned before the program: `A=1 B=2 prog`, `env A=1 prog`, `A=1 env B=2 prog`.
fn leading_assignments(words: &[String]) -> Vec<String> {
    let mut names = Vec::new();
    for (i, w) in words.iter().enumerate() {
        match w.split_once('=') {
            Some((name, _)) if is_name(name) => names.push(name.to_string()),
            _ if w == "env" && i + 1 < words.len() => {}
            _ => break,
        }
    }
    names
}

/// `word` quoted for `sh` (as it is when it needs no quoting).
pub fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(c, '-' | '_' | '=' | '.' | ',' | ':' | '/' | '@' | '%' | '+')
        });
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_quotes_and_escapes() {
        let c = parse(r#"./m --a 'x y' --b="p q" --c=a\ b "\$HOME" ''"#);
        assert_eq!(
            c.words,
            ["./m", "--a", "x y", "--b=p q", "--c=a b", "$HOME", ""]
        );
        assert!(!c.compound);
        assert!(c.assignments.is_empty());
    }

    #[test]
    fn operators_make_a_compound_command_but_redirections_do_not() {
        assert!(!parse("./m --x 2>&1 >log &>all").compound);
        for line in [
            "./m | tee log",
            "cd d && ./m",
            "./m; echo",
            "./m &",
            "(./m)",
            "./m\n./n",
        ] {
            assert!(parse(line).compound, "{line}");
        }
        assert!(!parse("./m '--x=a|b;c&d' a#b").compound);
        assert!(parse("./m --x # note").compound);
        assert_eq!(parse("./m --x # note").words, ["./m", "--x"]);
    }

    #[test]
    fn assignments_before_the_program() {
        assert_eq!(parse("A=1 B_2=x ./m C=3").assignments, ["A", "B_2"]);
        assert_eq!(parse("env A=1 ./m").assignments, ["A"]);
        assert_eq!(parse("A=1 env B=2 ./m").assignments, ["A", "B"]);
        assert!(parse("./m A=1").assignments.is_empty());
        assert!(parse("1A=x ./m").assignments.is_empty());
    }

    #[test]
    fn quoting_round_trips() {
        for w in [
            "plain",
            "--x=a,b:c/d",
            "",
            "a b",
            "it's",
            "$(x)",
            "{p}",
            "a\"b",
        ] {
            let q = quote(w);
            assert_eq!(parse(&q).words, [w], "{q}");
        }
        assert_eq!(quote("--x=1"), "--x=1");
        assert_eq!(quote("a b"), "'a b'");
    }
}

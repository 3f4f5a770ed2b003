//! The `${…}` grammar clusterctl substitutes with (drone/envsubst, which clusterctl's
//! `yamlprocessor.SimpleProcessor` uses): parse a text into text and variable nodes, then
//! evaluate them against a lookup.
//!
//! No Rust crate implements this grammar with its quirks, and clusterctl's behaviour is what a
//! provider's users get, so it is reproduced here (our own code, written from reading the
//! grammar):
//! - `${NAME}` (NAME: letters, digits, `_` and `-`, so `${A-b}` is the variable `A-b`);
//! - `${NAME=d}`, `${NAME:=d}`, `${NAME:-d}`, `${NAME:?d}`, `${NAME:+d}`: all mean "the value,
//!   or `d` when the value is empty"; the default may hold further `${…}`;
//! - `${NAME:off}`, `${NAME:off:len}` (substring), `${#NAME}` (length), `${NAME^}`, `${NAME^^}`,
//!   `${NAME,}`, `${NAME,,}` (case), `${NAME#p}`, `${NAME##p}`, `${NAME%p}`, `${NAME%%p}`
//!   (trim a glob), `${NAME/p/r}`, `${NAME//p/r}`, `${NAME/#p/r}`, `${NAME/%p/r}` (replace);
//! - escapes (drone/envsubst v2, what clusterctl uses: only `$$` outside references, so
//!   backslashes in manifests stay as they are): `$$` is `$` (so `$${X}` is the text `${X}`);
//!   inside a replace operator's arguments `\/` is `/` and `\\` is `\`; `$X` without braces
//!   is text;
//! - a malformed reference (`${`, `${}`, `${A.b}`, an unclosed default) is a "bad
//!   substitution": clusterctl refuses the whole file.

mod ops;
mod scan;

use std::fmt;

/// The error drone/envsubst reports for any malformed reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadSubstitution {
    /// 1-based line of the `${` (or of the input's end) where parsing gave up.
    pub line: usize,
}

impl fmt::Display for BadSubstitution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad substitution (line {})", self.line)
    }
}

impl std::error::Error for BadSubstitution {}

/// One node of a parsed text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    Text(String),
    Var(Var),
}

/// A `${…}` reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Var {
    /// The variable's name.
    pub param: String,
    /// The operator (`""` for a plain `${NAME}`, `":="`, `"/#"`, `"#"`, …).
    pub op: String,
    /// The operator's arguments, each one node (a default is the concatenation of all).
    pub args: Vec<Node>,
}

/// Parses a whole text. Top-level references come out in document order.
pub fn parse(text: &str) -> Result<Vec<Node>, BadSubstitution> {
    scan::Parser::new(text).parse_all()
}

/// Evaluates parsed nodes; `lookup` gives a variable's value (`""` when unset).
pub fn eval(nodes: &[Node], lookup: &dyn Fn(&str) -> String) -> String {
    let mut out = String::new();
    for n in nodes {
        eval_node(n, lookup, &mut out);
    }
    out
}

fn eval_node(n: &Node, lookup: &dyn Fn(&str) -> String, out: &mut String) {
    match n {
        Node::Text(t) => out.push_str(t),
        Node::Var(v) => {
            let args: Vec<String> = v
                .args
                .iter()
                .map(|a| {
                    let mut s = String::new();
                    eval_node(a, lookup, &mut s);
                    s
                })
                .collect();
            out.push_str(&ops::apply(&v.op, &lookup(&v.param), &args));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn run(params: &[(&str, &str)], input: &str) -> String {
        let map: HashMap<String, String> = params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let nodes = parse(input).map_err(|e| format!("{input:?}: {e}")).unwrap();
        eval(&nodes, &|n| map.get(n).cloned().unwrap_or_default())
    }

    /// The expansion table drone/envsubst is specified by (bash parameter expansion cases).
    #[test]
    fn expansions() {
        let v = "abcdEFGH28ij";
        type Case<'a> = (&'a [(&'a str, &'a str)], &'a str, &'a str);
        let cases: &[Case] = &[
            (&[], "abcdEFGH28ij", "abcdEFGH28ij"),
            (&[("v", v)], "${#v}", "12"),
            (&[("v", v)], "${v^}", "AbcdEFGH28ij"),
            (&[("v", v)], "${v^^}", "ABCDEFGH28IJ"),
            (&[("v", "ABCD")], "${v,}", "aBCD"),
            (&[("v", "ABCD")], "${v,,}", "abcd"),
            (&[("p", "/home/bozo/ideas/x.y")], "${p:11}", "ideas/x.y"),
            (&[("p", "/home/bozo/ideas/x.y")], "${p:11:5}", "ideas"),
            (&[("p", "abc")], "${p:-2}", "abc"),
            (&[("p", "abc")], "${p:x}", "abc"),
            (&[("v", "abc")], "${v=xyz}", "abc"),
            (&[], "${v=xyz}", "xyz"),
            (&[], "${v:=xyz}", "xyz"),
            (&[], "${v:-xyz}", "xyz"),
            (&[("v", "")], "${v:=xyz}", "xyz"),
            (&[("d", "foo")], "something ${v=${d}}", "something foo"),
            (
                &[("d", "foo1")],
                "foo: ${v=${d}-suffix}",
                "foo: foo1-suffix",
            ),
            (
                &[("d", "foo1")],
                "foo: ${v=prefix${d}-suffix}",
                "foo: prefixfoo1-suffix",
            ),
            (
                &[("z", "abcABC123ABCabc")],
                "${z/%abc/XYZ}",
                "abcABC123ABCXYZ",
            ),
            (
                &[("z", "abcABC123ABCabc")],
                "${z/#abc/XYZ}",
                "XYZABC123ABCabc",
            ),
            (
                &[("z", "abcABC123ABCabc")],
                "${z//abc/xyz}",
                "xyzABC123ABCxyz",
            ),
            (
                &[("z", "abcABC123ABCabc")],
                "${z/abc/xyz}",
                "xyzABC123ABCabc",
            ),
            (&[("f", "bash.string.txt")], "${f#*.}", "string.txt"),
            (&[("f", "path/to/file")], "${f#*/}", "to/file"),
            (&[("f", "bash.string.txt")], "${f##*.}", "txt"),
            (&[("f", "/path/to/file")], "${f##*/}", "file"),
            (&[("f", "bash.string.txt")], "${f%.*}", "bash.string"),
            (&[("f", "bash.string.txt")], "${f%%.*}", "bash"),
            (&[("v", v)], "${x=${v^^}}", "ABCDEFGH28IJ"),
            (&[("z", "foo/bar")], r"${z/\//-}", "foo-bar"),
            (&[("z", "foo/bar/baz")], r"${z//\//-}", "foo-bar-baz"),
            (&[("z", "foo.bar")], "${z/./}", "foobar"),
            (&[("A-b", "dash")], "${A-b}", "dash"),
        ];
        for (params, input, want) in cases {
            assert_eq!(&run(params, input), want, "{input}");
        }
    }

    #[test]
    fn escapes() {
        let p = [("v", "abc")];
        assert_eq!(run(&p, "$${v}"), "${v}");
        assert_eq!(run(&p, "$$v and $v"), "$v and $v");
        assert_eq!(
            run(&p, "some text ${v}$${v$${v}$v${v}"),
            "some text abc${v${v}$vabc"
        );
        assert_eq!(run(&[("d", "foo")], "x $${v=${d}}"), "x ${v=foo}");
        // Backslashes outside references stay (envsubst v2: Windows named pipes, regexes).
        assert_eq!(
            run(&p, r"\\.\pipe\x a\\b \/c \d"),
            r"\\.\pipe\x a\\b \/c \d"
        );
        assert_eq!(run(&p, r"${v/\//-} ${v//b/\/}"), "abc a/c");
        assert_eq!(run(&p, "cost: 5$"), "cost: 5$");
    }

    #[test]
    fn tree_shapes() {
        let n = parse("a ${X:=d} ${#Y} ${Z}").unwrap();
        let vars: Vec<(&str, &str, usize)> = n
            .iter()
            .filter_map(|n| match n {
                Node::Var(v) => Some((v.param.as_str(), v.op.as_str(), v.args.len())),
                Node::Text(_) => None,
            })
            .collect();
        assert_eq!(vars, [("X", ":=", 1), ("Y", "#", 0), ("Z", "", 0)]);
        // An empty default has no argument (clusterctl then counts the variable as required).
        let Node::Var(v) = &parse("${X:=}").unwrap()[0] else {
            unreachable!("an empty default parses to a variable")
        };
        assert!(v.args.is_empty());
    }

    #[test]
    fn bad_substitutions() {
        for bad in ["${", "x ${}", "${A.b}", "${A:=x", "a\nb ${A B}", "${A/x}"] {
            assert!(parse(bad).is_err(), "{bad:?} should be a bad substitution");
        }
        assert_eq!(parse("a\nb\n${A.b}").unwrap_err().line, 3);
    }
}

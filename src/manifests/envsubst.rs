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
    let mut p = Parser::new(text);
    p.parse_all()
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
            out.push_str(&apply(&v.op, &lookup(&v.param), &args));
        }
    }
}

/// The operator's function on the value (drone/envsubst's `lookupFunc`).
fn apply(op: &str, value: &str, args: &[String]) -> String {
    match op {
        "," => first_char(value, char::to_lowercase),
        ",," => value.to_lowercase(),
        "^" => first_char(value, char::to_uppercase),
        "^^" => value.to_uppercase(),
        "#" if args.is_empty() => value.len().to_string(),
        "#" => trim_shortest_prefix(value, &args[0]),
        "##" => args
            .first()
            .map_or_else(|| value.to_string(), |p| trim_longest_prefix(value, p)),
        "%" => args.first().map_or_else(
            || value.to_string(),
            |p| reverse(&trim_shortest_prefix(&reverse(value), &reverse(p))),
        ),
        "%%" => args.first().map_or_else(
            || value.to_string(),
            |p| reverse(&trim_longest_prefix(&reverse(value), &reverse(p))),
        ),
        ":" => substring(value, args),
        "/#" => match args {
            [p, r] if value.starts_with(p.as_str()) => value.replacen(p.as_str(), r, 1),
            _ => value.to_string(),
        },
        "/%" => match args {
            [p, r] => match value.strip_suffix(p.as_str()) {
                Some(head) => format!("{head}{r}"),
                None => value.to_string(),
            },
            _ => value.to_string(),
        },
        "/" => match args {
            [] => value.to_string(),
            [p] => value.replacen(p.as_str(), "", 1),
            [p, r, ..] => value.replacen(p.as_str(), r, 1),
        },
        "//" => match args {
            [] => value.to_string(),
            // Go's strings.Replace with an empty pattern inserts between every rune.
            [p] => go_replace_all(value, p, ""),
            [p, r, ..] => go_replace_all(value, p, r),
        },
        // `=`, `:=`, `:-`, `:?`, `:+`, and a plain reference: the value, else the defaults.
        _ if value.is_empty() && !args.is_empty() => args.concat(),
        _ => value.to_string(),
    }
}

fn first_char<I: Iterator<Item = char>>(s: &str, f: fn(char) -> I) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => f(c).chain(chars).collect(),
        None => String::new(),
    }
}

fn reverse(s: &str) -> String {
    s.chars().rev().collect()
}

/// Go's `strings.Replace(s, old, new, -1)`.
fn go_replace_all(s: &str, old: &str, new: &str) -> String {
    if !old.is_empty() {
        return s.replace(old, new);
    }
    let mut out = String::from(new);
    for c in s.chars() {
        out.push(c);
        out.push_str(new);
    }
    out
}

/// `${v:pos}` / `${v:pos:len}` on bytes, as Go slices strings (an unparsable number leaves the
/// value as it is).
fn substring(s: &str, args: &[String]) -> String {
    let Some(pos) = args.first().and_then(|a| a.parse::<i64>().ok()) else {
        return s.to_string();
    };
    let bytes = s.as_bytes();
    let n = bytes.len() as i64;
    let start = if pos < 0 { (n + pos).max(0) } else { pos };
    let slice =
        |a: i64, b: i64| String::from_utf8_lossy(&bytes[a as usize..b as usize]).into_owned();
    match args.get(1) {
        None if start < n => slice(start, n),
        None => String::new(),
        Some(len) => match len.parse::<i64>() {
            Err(_) => s.to_string(),
            Ok(len) if start + len >= n => {
                if start >= n {
                    String::new()
                } else {
                    slice(start, n)
                }
            }
            Ok(len) if len < 0 => s.to_string(),
            Ok(len) => slice(start, start + len),
        },
    }
}

/// Removes the shortest prefix of `s` matching the glob `pattern` (not the empty prefix).
fn trim_shortest_prefix(s: &str, pattern: &str) -> String {
    let ends: Vec<usize> = prefix_ends(s);
    for &end in &ends {
        match glob_match(pattern, &s[..end]) {
            Ok(true) => return s[end..].to_string(),
            Ok(false) => {}
            Err(()) => return s.to_string(),
        }
    }
    s.to_string()
}

/// Removes the longest prefix of `s` matching the glob `pattern`.
fn trim_longest_prefix(s: &str, pattern: &str) -> String {
    for &end in prefix_ends(s).iter().rev() {
        match glob_match(pattern, &s[..end]) {
            Ok(true) => return s[end..].to_string(),
            Ok(false) => {}
            Err(()) => return s.to_string(),
        }
    }
    s.to_string()
}

/// Byte offsets ending each non-empty prefix of `s`, shortest first.
fn prefix_ends(s: &str) -> Vec<usize> {
    s.char_indices().map(|(i, c)| i + c.len_utf8()).collect()
}

/// Shell glob as drone/envsubst matches it: `*` any run of characters (`/` included), `?` one
/// character, `[…]` a class (`^` negates, `a-z` ranges), `\` escapes. `Err` for a malformed
/// pattern.
fn glob_match(pattern: &str, name: &str) -> Result<bool, ()> {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    glob_at(&p, &n)
}

fn glob_at(p: &[char], n: &[char]) -> Result<bool, ()> {
    let Some((&first, rest)) = p.split_first() else {
        return Ok(n.is_empty());
    };
    match first {
        '*' => {
            for skip in 0..=n.len() {
                if glob_at(rest, &n[skip..])? {
                    return Ok(true);
                }
            }
            Ok(false)
        }
        '?' => match n.split_first() {
            Some((_, tail)) => glob_at(rest, tail),
            None => Ok(false),
        },
        '[' => {
            let (matched, after) = class(rest, n.first().copied())?;
            match n.split_first() {
                Some((_, tail)) if matched => glob_at(after, tail),
                _ => Ok(false),
            }
        }
        '\\' => {
            let (&lit, after) = rest.split_first().ok_or(())?;
            match n.split_first() {
                Some((&c, tail)) if c == lit => glob_at(after, tail),
                _ => Ok(false),
            }
        }
        lit => match n.split_first() {
            Some((&c, tail)) if c == lit => glob_at(rest, tail),
            _ => Ok(false),
        },
    }
}

/// A `[…]` class after its `[`: whether `c` is in it, and the pattern after its `]`.
fn class(p: &[char], c: Option<char>) -> Result<(bool, &[char]), ()> {
    let mut i = usize::from(p.first() == Some(&'^'));
    let negated = i == 1;
    let mut matched = false;
    let mut ranges = 0;
    loop {
        if p.get(i) == Some(&']') && ranges > 0 {
            break;
        }
        let lo = class_char(p, &mut i)?;
        let hi = if p.get(i) == Some(&'-') {
            i += 1;
            class_char(p, &mut i)?
        } else {
            lo
        };
        ranges += 1;
        if c.is_some_and(|c| lo <= c && c <= hi) {
            matched = true;
        }
    }
    Ok((matched != negated && c.is_some(), &p[i + 1..]))
}

/// One (possibly escaped) character of a class; `-` and `]` must be escaped there.
fn class_char(p: &[char], i: &mut usize) -> Result<char, ()> {
    match p.get(*i) {
        None | Some('-' | ']') => Err(()),
        Some('\\') => {
            let c = *p.get(*i + 1).ok_or(())?;
            *i += 2;
            Ok(c)
        }
        Some(&c) => {
            *i += 1;
            Ok(c)
        }
    }
}

// --- the scanner: a port of the grammar's tokenizer (modes and accept functions) ---

const IDENT: u8 = 1;
const LBRACK: u8 = 2;
const RBRACK: u8 = 4;
/// `$$` and the backslash escapes (a replace operator's arguments).
const ESCAPE: u8 = 8;
/// Only `$$` (the text outside references).
const ESCAPE_DOLLAR: u8 = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    Illegal,
    Eof,
    Ident,
    Lbrack,
    Rbrack,
}

/// Which characters a token may continue with (`i`: characters read so far, counting `r`).
type Accept = fn(char, usize) -> bool;

fn accept_rune(_: char, _: usize) -> bool {
    true
}
fn accept_ident(r: char, _: usize) -> bool {
    r.is_alphanumeric() || r == '_' || r == '-'
}
fn accept_colon(r: char, _: usize) -> bool {
    r == ':'
}
fn accept_one_hash(r: char, i: usize) -> bool {
    r == '#' && i == 1
}
fn accept_not_closing(r: char, _: usize) -> bool {
    r != '}'
}
fn accept_hash_func(r: char, i: usize) -> bool {
    r == '#' && i < 3
}
fn accept_percent_func(r: char, i: usize) -> bool {
    r == '%' && i < 3
}
fn accept_default_func(r: char, i: usize) -> bool {
    (i == 1 && r == ':') || (i == 2 && matches!(r, '=' | '-' | '?' | '+'))
}
fn accept_replace_func(r: char, i: usize) -> bool {
    (i == 1 && r == '/') || (i == 2 && matches!(r, '/' | '#' | '%'))
}
fn accept_one_equal(r: char, i: usize) -> bool {
    i == 1 && r == '='
}
fn accept_one_colon(r: char, i: usize) -> bool {
    i == 1 && r == ':'
}
fn reject_colon_close(r: char, _: usize) -> bool {
    r != ':' && r != '}'
}
fn accept_slash(r: char, _: usize) -> bool {
    r == '/'
}
fn accept_not_slash(r: char, _: usize) -> bool {
    r != '/'
}
fn accept_casing_func(r: char, i: usize) -> bool {
    (r == ',' || r == '^') && i < 3
}

struct Parser {
    buf: Vec<char>,
    pos: usize,
    start: usize,
    /// Characters the last read advanced (0 at the end).
    width: usize,
    mode: u8,
    accept: Accept,
}

impl Parser {
    fn new(text: &str) -> Parser {
        Parser {
            buf: text.chars().collect(),
            pos: 0,
            start: 0,
            width: 0,
            mode: 0,
            accept: accept_rune,
        }
    }

    fn error(&self) -> BadSubstitution {
        let at = self.start.min(self.buf.len());
        BadSubstitution {
            line: 1 + self.buf[..at].iter().filter(|c| **c == '\n').count(),
        }
    }

    fn read(&mut self) -> Option<char> {
        match self.buf.get(self.pos) {
            Some(&c) => {
                self.width = 1;
                self.pos += 1;
                Some(c)
            }
            None => {
                self.width = 0;
                None
            }
        }
    }

    fn unread(&mut self) {
        self.pos -= self.width;
    }

    fn peek(&mut self) -> Option<char> {
        let r = self.read();
        self.unread();
        r
    }

    /// Drops the escape character just read.
    fn skip(&mut self) {
        self.buf.remove(self.pos - 1);
    }

    fn token(&self) -> String {
        self.buf[self.start..self.pos].iter().collect()
    }

    fn scan(&mut self) -> Token {
        self.start = self.pos;
        let Some(r) = self.read() else {
            return Token::Eof;
        };
        if self.scan_lbrack(r) {
            Token::Lbrack
        } else if self.mode & RBRACK != 0 && r == '}' {
            Token::Rbrack
        } else if self.scan_ident(r) {
            Token::Ident
        } else {
            Token::Illegal
        }
    }

    fn scan_lbrack(&mut self, r: char) -> bool {
        if self.mode & LBRACK == 0 || r != '$' {
            return false;
        }
        if self.read() == Some('{') {
            return true;
        }
        self.unread();
        false
    }

    fn scan_escaped(&mut self, r: char) -> bool {
        match r {
            '$' if self.mode & (ESCAPE | ESCAPE_DOLLAR) != 0 => self.peek() == Some('$'),
            '\\' if self.mode & ESCAPE != 0 => matches!(self.peek(), Some('/' | '\\')),
            _ => false,
        }
    }

    fn scan_ident(&mut self, r: char) -> bool {
        if self.mode & IDENT == 0 {
            return false;
        }
        if self.scan_escaped(r) {
            self.skip();
        } else if !(self.accept)(r, self.pos - self.start) {
            return false;
        }
        loop {
            let Some(r) = self.read() else {
                self.unread();
                break;
            };
            if self.scan_lbrack(r) {
                self.unread();
                self.unread();
                break;
            }
            if self.scan_escaped(r) {
                self.skip();
                continue;
            }
            if !(self.accept)(r, self.pos - self.start) {
                self.unread();
                break;
            }
        }
        true
    }

    fn parse_all(&mut self) -> Result<Vec<Node>, BadSubstitution> {
        let mut nodes = Vec::new();
        loop {
            self.accept = accept_rune;
            self.mode = IDENT | LBRACK | ESCAPE_DOLLAR;
            match self.scan() {
                Token::Ident => nodes.push(Node::Text(self.token())),
                Token::Eof => return Ok(nodes),
                Token::Lbrack => nodes.push(self.parse_func()?),
                _ => return Err(self.error()),
            }
        }
    }

    fn expect_ident(&mut self, accept: Accept, mode: u8) -> Result<String, BadSubstitution> {
        self.accept = accept;
        self.mode = mode;
        match self.scan() {
            Token::Ident => Ok(self.token()),
            _ => Err(self.error()),
        }
    }

    fn parse_func(&mut self) -> Result<Node, BadSubstitution> {
        if self.peek() == Some('#') {
            return self.parse_len_func();
        }
        let name = self.expect_ident(accept_ident, IDENT)?;
        match self.peek() {
            Some(':') => return self.parse_default_or_substr(name),
            Some('=') => return self.parse_default_func(name),
            Some(',' | '^') => return self.parse_casing_func(name),
            Some('/') => return self.parse_replace_func(name),
            Some('#') => return self.parse_remove_func(name, accept_hash_func),
            Some('%') => return self.parse_remove_func(name, accept_percent_func),
            _ => {}
        }
        self.accept = accept_ident;
        self.mode = RBRACK;
        match self.scan() {
            Token::Rbrack => Ok(var(name, "", Vec::new())),
            _ => Err(self.error()),
        }
    }

    fn parse_param(&mut self, accept: Accept, mode: u8) -> Result<Node, BadSubstitution> {
        self.accept = accept;
        self.mode = mode | LBRACK;
        match self.scan() {
            Token::Lbrack => self.parse_func(),
            Token::Ident | Token::Rbrack => Ok(Node::Text(self.token())),
            _ => Err(self.error()),
        }
    }

    fn parse_default_or_substr(&mut self, name: String) -> Result<Node, BadSubstitution> {
        self.read();
        let r = self.peek();
        self.unread();
        if matches!(r, Some('=' | '-' | '?' | '+')) {
            self.parse_default_func(name)
        } else {
            self.parse_substr_func(name)
        }
    }

    fn parse_substr_func(&mut self, name: String) -> Result<Node, BadSubstitution> {
        let op = self.expect_ident(accept_one_colon, IDENT)?;
        let mut args = vec![self.parse_param(reject_colon_close, IDENT)?];
        self.accept = accept_colon;
        self.mode = IDENT | RBRACK;
        match self.scan() {
            Token::Rbrack => return Ok(var(name, &op, args)),
            Token::Ident => {}
            _ => return Err(self.error()),
        }
        args.push(self.parse_param(accept_not_closing, IDENT)?);
        self.consume_rbrack()?;
        Ok(var(name, &op, args))
    }

    fn parse_remove_func(&mut self, name: String, accept: Accept) -> Result<Node, BadSubstitution> {
        let op = self.expect_ident(accept, IDENT)?;
        let args = vec![self.parse_param(accept_not_closing, IDENT)?];
        self.consume_rbrack()?;
        Ok(var(name, &op, args))
    }

    fn parse_replace_func(&mut self, name: String) -> Result<Node, BadSubstitution> {
        let op = self.expect_ident(accept_replace_func, IDENT)?;
        let mut args = vec![self.parse_param(accept_not_slash, IDENT | ESCAPE)?];
        self.expect_ident(accept_slash, IDENT)?;
        if self.peek() == Some('}') {
            self.consume_rbrack()?;
            return Ok(var(name, &op, args));
        }
        args.push(self.parse_param(accept_not_closing, IDENT | ESCAPE)?);
        self.consume_rbrack()?;
        Ok(var(name, &op, args))
    }

    fn parse_default_func(&mut self, name: String) -> Result<Node, BadSubstitution> {
        let accept: Accept = if self.peek() == Some('=') {
            accept_one_equal
        } else {
            accept_default_func
        };
        let op = self.expect_ident(accept, IDENT)?;
        let mut args = Vec::new();
        loop {
            if self.peek() == Some('}') {
                self.consume_rbrack()?;
                return Ok(var(name, &op, args));
            }
            args.push(self.parse_param(accept_not_closing, IDENT)?);
        }
    }

    fn parse_casing_func(&mut self, name: String) -> Result<Node, BadSubstitution> {
        let op = self.expect_ident(accept_casing_func, IDENT)?;
        self.consume_rbrack()?;
        Ok(var(name, &op, Vec::new()))
    }

    fn parse_len_func(&mut self) -> Result<Node, BadSubstitution> {
        let op = self.expect_ident(accept_one_hash, IDENT)?;
        let name = self.expect_ident(accept_ident, IDENT)?;
        self.consume_rbrack()?;
        Ok(var(name, &op, Vec::new()))
    }

    fn consume_rbrack(&mut self) -> Result<(), BadSubstitution> {
        self.mode = RBRACK;
        match self.scan() {
            Token::Rbrack => Ok(()),
            _ => Err(self.error()),
        }
    }
}

fn var(param: String, op: &str, args: Vec<Node>) -> Node {
    Node::Var(Var {
        param,
        op: op.to_string(),
        args,
    })
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
        let nodes = parse(input).unwrap_or_else(|e| panic!("{input:?}: {e}"));
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
            panic!()
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

    #[test]
    fn globs() {
        assert_eq!(glob_match("a[b-d]?", "acz"), Ok(true));
        assert_eq!(glob_match("a[^b-d]", "ab"), Ok(false));
        assert_eq!(glob_match(r"\*", "*"), Ok(true));
        assert_eq!(glob_match("[a", "a"), Err(()));
        assert_eq!(trim_shortest_prefix("x.y", "[z"), "x.y");
    }
}

//! CEL syntax: tokens, the expression tree, the parser (with its depth and size limits), and
//! what an expression mentions.

use serde_json::Value;

/// Why a rule could not be evaluated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CelError {
    #[error("syntax error: {0}")]
    Syntax(String),
    #[error("unsupported: {0}")]
    Unsupported(String),
    #[error("{0}")]
    Eval(String),
}

pub(super) type R<T> = Result<T, CelError>;

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    Int(i64),
    Double(f64),
    Str(String),
    Ident(String),
    Punct(&'static str),
}

pub(super) const PUNCTS: [&str; 23] = [
    "==", "!=", "<=", ">=", "&&", "||", "(", ")", "[", "]", "{", "}", ".", ",", "?", ":", "!", "-",
    "+", "*", "/", "%", "<",
];

pub(super) fn lex(src: &str) -> R<Vec<Tok>> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c == '>' {
            if chars.get(i + 1) == Some(&'=') {
                out.push(Tok::Punct(">="));
                i += 2;
            } else {
                out.push(Tok::Punct(">"));
                i += 1;
            }
            continue;
        }
        let raw = (c == 'r' || c == 'R') && matches!(chars.get(i + 1), Some('\'' | '"'));
        if c == '\'' || c == '"' || raw {
            if raw {
                i += 1;
            }
            let q = chars[i];
            let triple = chars.get(i + 1) == Some(&q) && chars.get(i + 2) == Some(&q);
            i += if triple { 3 } else { 1 };
            let mut s = String::new();
            loop {
                let Some(&ch) = chars.get(i) else {
                    return Err(CelError::Syntax("unterminated string".into()));
                };
                if ch == q
                    && (!triple || (chars.get(i + 1) == Some(&q) && chars.get(i + 2) == Some(&q)))
                {
                    i += if triple { 3 } else { 1 };
                    break;
                }
                if ch == '\\' && !raw {
                    let Some(&e) = chars.get(i + 1) else {
                        return Err(CelError::Syntax("bad escape".into()));
                    };
                    s.push(match e {
                        'n' => '\n',
                        't' => '\t',
                        'r' => '\r',
                        other => other,
                    });
                    i += 2;
                    continue;
                }
                s.push(ch);
                i += 1;
            }
            out.push(Tok::Str(s));
            continue;
        }
        if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                if chars[i] == '.' && !chars.get(i + 1).is_some_and(char::is_ascii_digit) {
                    break;
                }
                i += 1;
            }
            let text: String = chars[start..i].iter().collect();
            let text = text.trim_end_matches(['u', 'U']);
            if let Ok(n) = text.parse::<i64>() {
                out.push(Tok::Int(n));
            } else if let Some(hex) = text.strip_prefix("0x") {
                let n = i64::from_str_radix(hex, 16)
                    .map_err(|_| CelError::Syntax(format!("bad number {text}")))?;
                out.push(Tok::Int(n));
            } else {
                let f = text
                    .parse::<f64>()
                    .map_err(|_| CelError::Syntax(format!("bad number {text}")))?;
                out.push(Tok::Double(f));
            }
            continue;
        }
        if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Tok::Ident(chars[start..i].iter().collect()));
            continue;
        }
        let two: String = chars[i..chars.len().min(i + 2)].iter().collect();
        if let Some(p) = PUNCTS.iter().find(|p| p.len() == 2 && **p == two) {
            out.push(Tok::Punct(p));
            i += 2;
            continue;
        }
        let one = c.to_string();
        if let Some(p) = PUNCTS.iter().find(|p| p.len() == 1 && **p == one) {
            out.push(Tok::Punct(p));
            i += 1;
            continue;
        }
        return Err(CelError::Syntax(format!("unexpected character {c:?}")));
    }
    Ok(out)
}

/// A parsed rule.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Lit(Value),
    Ident(String),
    Select(Box<Expr>, String),
    Index(Box<Expr>, Box<Expr>),
    Call(Option<Box<Expr>>, String, Vec<Expr>),
    Unary(&'static str, Box<Expr>),
    Binary(&'static str, Box<Expr>, Box<Expr>),
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    List(Vec<Expr>),
    Map(Vec<(Expr, Expr)>),
}

pub(super) struct Parser {
    toks: Vec<Tok>,
    pos: usize,
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn is(&self, p: &str) -> bool {
        matches!(self.peek(), Some(Tok::Punct(q)) if *q == p)
    }

    fn eat(&mut self, p: &str) -> bool {
        if self.is(p) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, p: &str) -> R<()> {
        if self.eat(p) {
            Ok(())
        } else {
            Err(CelError::Syntax(format!("expected {p:?}")))
        }
    }

    fn expr(&mut self) -> R<Expr> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(CelError::Syntax("expression too deep".into()));
        }
        let cond = self.or()?;
        let out = if self.eat("?") {
            let a = self.expr()?;
            self.expect(":")?;
            let b = self.expr()?;
            Expr::Cond(Box::new(cond), Box::new(a), Box::new(b))
        } else {
            cond
        };
        self.depth -= 1;
        Ok(out)
    }

    fn or(&mut self) -> R<Expr> {
        let mut l = self.and()?;
        while self.eat("||") {
            l = Expr::Binary("||", Box::new(l), Box::new(self.and()?));
        }
        Ok(l)
    }

    fn and(&mut self) -> R<Expr> {
        let mut l = self.rel()?;
        while self.eat("&&") {
            l = Expr::Binary("&&", Box::new(l), Box::new(self.rel()?));
        }
        Ok(l)
    }

    fn rel(&mut self) -> R<Expr> {
        let mut l = self.add()?;
        loop {
            let op = match self.peek() {
                Some(Tok::Punct(p)) if ["==", "!=", "<", "<=", ">", ">="].contains(p) => *p,
                Some(Tok::Ident(w)) if w == "in" => "in",
                _ => return Ok(l),
            };
            self.pos += 1;
            l = Expr::Binary(op, Box::new(l), Box::new(self.add()?));
        }
    }

    fn add(&mut self) -> R<Expr> {
        let mut l = self.mul()?;
        loop {
            let op = if self.eat("+") {
                "+"
            } else if self.eat("-") {
                "-"
            } else {
                return Ok(l);
            };
            l = Expr::Binary(op, Box::new(l), Box::new(self.mul()?));
        }
    }

    fn mul(&mut self) -> R<Expr> {
        let mut l = self.unary()?;
        loop {
            let op = if self.eat("*") {
                "*"
            } else if self.eat("/") {
                "/"
            } else if self.eat("%") {
                "%"
            } else {
                return Ok(l);
            };
            l = Expr::Binary(op, Box::new(l), Box::new(self.unary()?));
        }
    }

    fn unary(&mut self) -> R<Expr> {
        for op in ["!", "-"] {
            if self.eat(op) {
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    return Err(CelError::Syntax("expression too deep".into()));
                }
                let inner = self.unary()?;
                self.depth -= 1;
                return Ok(Expr::Unary(
                    if op == "!" { "!" } else { "-" },
                    Box::new(inner),
                ));
            }
        }
        self.postfix()
    }

    fn args(&mut self, close: &str) -> R<Vec<Expr>> {
        let mut args = Vec::new();
        if self.eat(close) {
            return Ok(args);
        }
        loop {
            args.push(self.expr()?);
            if self.eat(close) {
                return Ok(args);
            }
            self.expect(",")?;
            if self.eat(close) {
                return Ok(args);
            }
        }
    }

    fn postfix(&mut self) -> R<Expr> {
        let mut e = self.primary()?;
        loop {
            if self.eat(".") {
                let Some(Tok::Ident(name)) = self.peek().cloned() else {
                    return Err(CelError::Syntax("expected field name".into()));
                };
                self.pos += 1;
                if self.eat("(") {
                    let args = self.args(")")?;
                    e = Expr::Call(Some(Box::new(e)), name, args);
                } else {
                    e = Expr::Select(Box::new(e), name);
                }
            } else if self.eat("[") {
                let idx = self.expr()?;
                self.expect("]")?;
                e = Expr::Index(Box::new(e), Box::new(idx));
            } else {
                return Ok(e);
            }
        }
    }

    fn primary(&mut self) -> R<Expr> {
        let Some(t) = self.peek().cloned() else {
            return Err(CelError::Syntax("unexpected end".into()));
        };
        self.pos += 1;
        match t {
            Tok::Int(n) => Ok(Expr::Lit(Value::from(n))),
            Tok::Double(f) => Ok(Expr::Lit(
                serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number),
            )),
            Tok::Str(s) => Ok(Expr::Lit(Value::String(s))),
            Tok::Ident(w) => match w.as_str() {
                "true" => Ok(Expr::Lit(Value::Bool(true))),
                "false" => Ok(Expr::Lit(Value::Bool(false))),
                "null" => Ok(Expr::Lit(Value::Null)),
                _ if self.eat("(") => {
                    let args = self.args(")")?;
                    Ok(Expr::Call(None, w, args))
                }
                _ => Ok(Expr::Ident(w)),
            },
            Tok::Punct("(") => {
                let e = self.expr()?;
                self.expect(")")?;
                Ok(e)
            }
            Tok::Punct("[") => Ok(Expr::List(self.args("]")?)),
            Tok::Punct("{") => {
                let mut entries = Vec::new();
                if !self.eat("}") {
                    loop {
                        let k = self.expr()?;
                        self.expect(":")?;
                        let v = self.expr()?;
                        entries.push((k, v));
                        if self.eat("}") {
                            break;
                        }
                        self.expect(",")?;
                    }
                }
                Ok(Expr::Map(entries))
            }
            Tok::Punct(p) => Err(CelError::Syntax(format!("unexpected {p:?}"))),
        }
    }
}

/// Nesting limit for parsing (kube bounds rules by cost; this bounds recursion).
pub(super) const MAX_DEPTH: usize = 64;
/// Token limit per rule.
pub(super) const MAX_TOKENS: usize = 2048;

/// Parses a rule.
pub fn parse(src: &str) -> R<Expr> {
    let toks = lex(src)?;
    if toks.len() > MAX_TOKENS {
        return Err(CelError::Syntax("rule too long".into()));
    }
    let mut p = Parser {
        toks,
        pos: 0,
        depth: 0,
    };
    let e = p.expr()?;
    if p.pos != p.toks.len() {
        return Err(CelError::Syntax("trailing tokens".into()));
    }
    Ok(e)
}

/// Whether the rule mentions `oldSelf` (a transition rule).
pub fn uses_old_self(e: &Expr) -> bool {
    match e {
        Expr::Ident(n) => n == "oldSelf",
        Expr::Lit(_) => false,
        Expr::Select(t, _) | Expr::Unary(_, t) => uses_old_self(t),
        Expr::Index(a, b) | Expr::Binary(_, a, b) => uses_old_self(a) || uses_old_self(b),
        Expr::Cond(a, b, c) => uses_old_self(a) || uses_old_self(b) || uses_old_self(c),
        Expr::List(items) => items.iter().any(uses_old_self),
        Expr::Map(entries) => entries
            .iter()
            .any(|(k, v)| uses_old_self(k) || uses_old_self(v)),
        Expr::Call(t, _, args) => {
            t.as_deref().is_some_and(uses_old_self) || args.iter().any(uses_old_self)
        }
    }
}

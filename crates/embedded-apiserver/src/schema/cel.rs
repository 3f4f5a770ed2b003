//! A small CEL interpreter for CRD `x-kubernetes-validations` rules: the subset real provider
//! CRDs use (field selection, `has()`, comparisons, `&&`/`||`/`!`/`?:`, `in`, arithmetic,
//! list/map literals, `size`, string functions, `matches`, `isIP`/`isCIDR`, and the
//! `all`/`exists`/`exists_one`/`filter`/`map` macros). Anything outside the subset is reported
//! as [`CelError::Unsupported`] so the caller can skip the rule instead of guessing.

use serde_json::{Map, Value};
use std::collections::BTreeMap;

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

type R<T> = Result<T, CelError>;

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Int(i64),
    Double(f64),
    Str(String),
    Ident(String),
    Punct(&'static str),
}

const PUNCTS: [&str; 23] = [
    "==", "!=", "<=", ">=", "&&", "||", "(", ")", "[", "]", "{", "}", ".", ",", "?", ":", "!", "-",
    "+", "*", "/", "%", "<",
];

fn lex(src: &str) -> R<Vec<Tok>> {
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

struct Parser {
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
const MAX_DEPTH: usize = 64;
/// Token limit per rule.
const MAX_TOKENS: usize = 2048;

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

/// Variable bindings (`self`, `oldSelf`, macro variables).
pub type Env = BTreeMap<String, Value>;

fn eval_err(msg: impl Into<String>) -> CelError {
    CelError::Eval(msg.into())
}

fn truthy(v: &Value) -> R<bool> {
    v.as_bool()
        .ok_or_else(|| eval_err(format!("no such overload: expected bool, got {v}")))
}

fn num(v: &Value) -> Option<f64> {
    v.as_f64()
}

/// Evaluates `e` in `env`.
pub fn eval(e: &Expr, env: &Env) -> R<Value> {
    match e {
        Expr::Lit(v) => Ok(v.clone()),
        Expr::Ident(name) => env
            .get(name)
            .cloned()
            .ok_or_else(|| CelError::Unsupported(format!("undeclared reference to {name:?}"))),
        Expr::Select(target, field) => {
            let t = eval(target, env)?;
            match &t {
                Value::Object(m) => m
                    .get(field)
                    .cloned()
                    .ok_or_else(|| eval_err(format!("no such key: {field}"))),
                _ => Err(eval_err(format!("no such key: {field}"))),
            }
        }
        Expr::Index(target, idx) => {
            let t = eval(target, env)?;
            let i = eval(idx, env)?;
            match (&t, &i) {
                (Value::Array(a), Value::Number(n)) => n
                    .as_i64()
                    .and_then(|n| usize::try_from(n).ok())
                    .and_then(|n| a.get(n))
                    .cloned()
                    .ok_or_else(|| eval_err("index out of range")),
                (Value::Object(m), Value::String(k)) => m
                    .get(k)
                    .cloned()
                    .ok_or_else(|| eval_err(format!("no such key: {k}"))),
                _ => Err(eval_err("no such overload for index")),
            }
        }
        Expr::Unary(op, inner) => {
            let v = eval(inner, env)?;
            match *op {
                "!" => Ok(Value::Bool(!truthy(&v)?)),
                _ => match &v {
                    Value::Number(n) if n.is_i64() => n
                        .as_i64()
                        .and_then(i64::checked_neg)
                        .map(Value::from)
                        .ok_or_else(|| eval_err("integer overflow in -")),
                    Value::Number(n) => Ok(n
                        .as_f64()
                        .and_then(|f| serde_json::Number::from_f64(-f))
                        .map_or(Value::Null, Value::Number)),
                    _ => Err(eval_err("no such overload for -")),
                },
            }
        }
        Expr::Binary("&&", l, r) => logic(l, r, env, false),
        Expr::Binary("||", l, r) => logic(l, r, env, true),
        Expr::Binary(op, l, r) => {
            let a = eval(l, env)?;
            let b = eval(r, env)?;
            binary(op, &a, &b)
        }
        Expr::Cond(c, a, b) => {
            if truthy(&eval(c, env)?)? {
                eval(a, env)
            } else {
                eval(b, env)
            }
        }
        Expr::List(items) => Ok(Value::Array(
            items.iter().map(|i| eval(i, env)).collect::<R<_>>()?,
        )),
        Expr::Map(entries) => {
            let mut m = Map::new();
            for (k, v) in entries {
                let key = match eval(k, env)? {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                m.insert(key, eval(v, env)?);
            }
            Ok(Value::Object(m))
        }
        Expr::Call(target, name, args) => call(target.as_deref(), name, args, env),
    }
}

/// CEL's commutative `&&` / `||`: an error on one side is absorbed if the other side decides.
fn logic(l: &Expr, r: &Expr, env: &Env, is_or: bool) -> R<Value> {
    let a = eval(l, env).and_then(|v| truthy(&v));
    if a == Ok(is_or) {
        return Ok(Value::Bool(is_or));
    }
    let b = eval(r, env).and_then(|v| truthy(&v));
    match (a, b) {
        (_, Ok(x)) if x == is_or => Ok(Value::Bool(is_or)),
        (Ok(_), Ok(_)) => Ok(Value::Bool(!is_or)),
        (Err(e), _) | (_, Err(e)) => Err(e),
    }
}

fn binary(op: &str, a: &Value, b: &Value) -> R<Value> {
    use super::validate::json_eq;
    match op {
        "==" => Ok(Value::Bool(json_eq(a, b))),
        "!=" => Ok(Value::Bool(!json_eq(a, b))),
        "in" => match b {
            Value::Array(items) => Ok(Value::Bool(items.iter().any(|i| json_eq(i, a)))),
            Value::Object(m) => Ok(Value::Bool(a.as_str().is_some_and(|k| m.contains_key(k)))),
            _ => Err(eval_err("no such overload for in")),
        },
        "<" | "<=" | ">" | ">=" => {
            let ord = match (a, b) {
                (Value::String(x), Value::String(y)) => x.cmp(y),
                (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
                _ => {
                    let (Some(x), Some(y)) = (num(a), num(b)) else {
                        return Err(eval_err(format!("no such overload for {op}")));
                    };
                    x.partial_cmp(&y)
                        .ok_or_else(|| eval_err("NaN comparison"))?
                }
            };
            use std::cmp::Ordering::*;
            Ok(Value::Bool(match op {
                "<" => ord == Less,
                "<=" => ord != Greater,
                ">" => ord == Greater,
                _ => ord != Less,
            }))
        }
        "+" => match (a, b) {
            (Value::String(x), Value::String(y)) => Ok(Value::String(format!("{x}{y}"))),
            (Value::Array(x), Value::Array(y)) => {
                Ok(Value::Array(x.iter().chain(y).cloned().collect()))
            }
            _ => arith(op, a, b),
        },
        _ => arith(op, a, b),
    }
}

fn arith(op: &str, a: &Value, b: &Value) -> R<Value> {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        let r = match op {
            "+" => x.checked_add(y),
            "-" => x.checked_sub(y),
            "*" => x.checked_mul(y),
            "/" => x.checked_div(y),
            "%" => x.checked_rem(y),
            _ => None,
        };
        return r
            .map(Value::from)
            .ok_or_else(|| eval_err(format!("integer overflow or division by zero in {op}")));
    }
    let (Some(x), Some(y)) = (num(a), num(b)) else {
        return Err(eval_err(format!("no such overload for {op}")));
    };
    let r = match op {
        "+" => x + y,
        "-" => x - y,
        "*" => x * y,
        "/" => x / y,
        _ => return Err(eval_err(format!("no such overload for {op}"))),
    };
    Ok(serde_json::Number::from_f64(r).map_or(Value::Null, Value::Number))
}

fn macro_var(args: &[Expr]) -> R<&str> {
    match args.first() {
        Some(Expr::Ident(v)) => Ok(v),
        _ => Err(CelError::Syntax("macro needs a variable".into())),
    }
}

fn elements(v: &Value) -> R<Vec<Value>> {
    match v {
        Value::Array(a) => Ok(a.clone()),
        Value::Object(m) => Ok(m.keys().map(|k| Value::String(k.clone())).collect()),
        _ => Err(eval_err("no such overload for comprehension")),
    }
}

fn call(target: Option<&Expr>, name: &str, args: &[Expr], env: &Env) -> R<Value> {
    // Macros first: their arguments are not evaluated up front.
    match (target, name) {
        (None, "has") => {
            let Some(Expr::Select(obj, field)) = args.first() else {
                return Err(CelError::Syntax("has() needs a field selection".into()));
            };
            return match eval(obj, env)? {
                Value::Object(m) => Ok(Value::Bool(m.contains_key(field))),
                _ => Err(eval_err("has() on a non-object")),
            };
        }
        (Some(t), "all" | "exists" | "exists_one" | "filter" | "map") => {
            let var = macro_var(args)?;
            let items = elements(&eval(t, env)?)?;
            let body = args
                .get(1)
                .ok_or_else(|| CelError::Syntax("macro body".into()))?;
            let mut scope = env.clone();
            let mut results = Vec::with_capacity(items.len());
            for item in &items {
                scope.insert(var.to_string(), item.clone());
                results.push(eval(body, &scope));
            }
            return match name {
                "all" => {
                    if results.iter().any(|r| r == &Ok(Value::Bool(false))) {
                        Ok(Value::Bool(false))
                    } else {
                        results
                            .into_iter()
                            .try_fold(true, |acc, r| Ok(acc && truthy(&r?)?))
                            .map(Value::Bool)
                    }
                }
                "exists" => {
                    if results.iter().any(|r| r == &Ok(Value::Bool(true))) {
                        Ok(Value::Bool(true))
                    } else {
                        results
                            .into_iter()
                            .try_fold(false, |acc, r| Ok(acc || truthy(&r?)?))
                            .map(Value::Bool)
                    }
                }
                "exists_one" => {
                    let mut n = 0;
                    for r in results {
                        if truthy(&r?)? {
                            n += 1;
                        }
                    }
                    Ok(Value::Bool(n == 1))
                }
                "filter" => {
                    let mut out = Vec::new();
                    for (item, r) in items.into_iter().zip(results) {
                        if truthy(&r?)? {
                            out.push(item);
                        }
                    }
                    Ok(Value::Array(out))
                }
                _ => Ok(Value::Array(results.into_iter().collect::<R<_>>()?)),
            };
        }
        _ => {}
    }
    let recv = target.map(|t| eval(t, env)).transpose()?;
    let vals: Vec<Value> = args.iter().map(|a| eval(a, env)).collect::<R<_>>()?;
    let str_arg = |i: usize| -> R<&str> {
        vals.get(i)
            .and_then(Value::as_str)
            .ok_or_else(|| eval_err(format!("no such overload for {name}")))
    };
    match (recv.as_ref(), name) {
        (_, "size") => {
            let subject = match recv.as_ref() {
                Some(r) => r,
                None => vals
                    .first()
                    .ok_or_else(|| eval_err("size() needs an argument"))?,
            };
            match subject {
                Value::String(s) => Ok(Value::from(s.chars().count() as i64)),
                Value::Array(a) => Ok(Value::from(a.len() as i64)),
                Value::Object(m) => Ok(Value::from(m.len() as i64)),
                _ => Err(eval_err("no such overload for size")),
            }
        }
        (Some(Value::String(s)), "startsWith") => Ok(Value::Bool(s.starts_with(str_arg(0)?))),
        (Some(Value::String(s)), "endsWith") => Ok(Value::Bool(s.ends_with(str_arg(0)?))),
        (Some(Value::String(s)), "contains") => Ok(Value::Bool(s.contains(str_arg(0)?))),
        (Some(Value::String(s)), "lowerAscii") => Ok(Value::String(s.to_ascii_lowercase())),
        (Some(Value::String(s)), "upperAscii") => Ok(Value::String(s.to_ascii_uppercase())),
        (Some(Value::String(s)), "trim") => Ok(Value::String(s.trim().to_string())),
        (_, "matches") => {
            let (subject, pattern) = match recv.as_ref() {
                Some(Value::String(subject)) => (subject.as_str(), str_arg(0)?),
                Some(_) => return Err(eval_err("no such overload for matches")),
                None => (str_arg(0)?, str_arg(1)?),
            };
            let re = super::goregex::cached(pattern)
                .ok_or_else(|| eval_err(format!("invalid regex: {pattern}")))?;
            Ok(Value::Bool(re.is_match(subject)))
        }
        (None, "isIP") => Ok(Value::Bool(str_arg(0)?.parse::<std::net::IpAddr>().is_ok())),
        (None, "isCIDR") => Ok(Value::Bool(is_cidr(str_arg(0)?))),
        (None, "int") => match vals.first() {
            Some(Value::String(s)) => s
                .parse::<i64>()
                .map(Value::from)
                .map_err(|_| eval_err("cannot convert to int")),
            Some(v @ Value::Number(n)) if n.is_i64() => Ok(v.clone()),
            Some(Value::Number(n)) => Ok(Value::from(n.as_f64().unwrap_or(0.0).trunc() as i64)),
            _ => Err(eval_err("no such overload for int")),
        },
        (None, "string") => match vals.first() {
            Some(Value::String(s)) => Ok(Value::String(s.clone())),
            Some(v) => Ok(Value::String(v.to_string())),
            None => Err(eval_err("string() needs an argument")),
        },
        (None, "double") => vals
            .first()
            .and_then(|v| {
                v.as_f64()
                    .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
            })
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| eval_err("no such overload for double")),
        _ => Err(CelError::Unsupported(format!("function {name}"))),
    }
}

fn is_cidr(s: &str) -> bool {
    let Some((ip, bits)) = s.split_once('/') else {
        return false;
    };
    let Ok(bits) = bits.parse::<u8>() else {
        return false;
    };
    match ip.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(_)) => bits <= 32,
        Ok(std::net::IpAddr::V6(_)) => bits <= 128,
        Err(_) => false,
    }
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

#[cfg(test)]
mod tests;

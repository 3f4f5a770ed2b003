//! CEL evaluation over JSON values: operators, macros and the functions of the subset.

use serde_json::{Map, Value};
use std::collections::BTreeMap;

use super::syntax::*;

/// Variable bindings (`self`, `oldSelf`, macro variables).
pub type Env = BTreeMap<String, Value>;

pub(super) fn eval_err(msg: impl Into<String>) -> CelError {
    CelError::Eval(msg.into())
}

pub(super) fn truthy(v: &Value) -> R<bool> {
    v.as_bool()
        .ok_or_else(|| eval_err(format!("no such overload: expected bool, got {v}")))
}

pub(super) fn num(v: &Value) -> Option<f64> {
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
pub(super) fn logic(l: &Expr, r: &Expr, env: &Env, is_or: bool) -> R<Value> {
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

pub(super) fn binary(op: &str, a: &Value, b: &Value) -> R<Value> {
    use crate::schema::validate::json_eq;
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

pub(super) fn arith(op: &str, a: &Value, b: &Value) -> R<Value> {
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

pub(super) fn macro_var(args: &[Expr]) -> R<&str> {
    match args.first() {
        Some(Expr::Ident(v)) => Ok(v),
        _ => Err(CelError::Syntax("macro needs a variable".into())),
    }
}

pub(super) fn elements(v: &Value) -> R<Vec<Value>> {
    match v {
        Value::Array(a) => Ok(a.clone()),
        Value::Object(m) => Ok(m.keys().map(|k| Value::String(k.clone())).collect()),
        _ => Err(eval_err("no such overload for comprehension")),
    }
}

pub(super) fn call(target: Option<&Expr>, name: &str, args: &[Expr], env: &Env) -> R<Value> {
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
            let re = crate::schema::goregex::cached(pattern)
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

pub(super) fn is_cidr(s: &str) -> bool {
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

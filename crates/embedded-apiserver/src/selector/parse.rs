//! The label selector parser (apimachinery `labels.Parse`): lexer and parser with kube's error wording.

use super::labels::*;
use crate::schema::names;
use std::collections::BTreeSet;
use std::str::FromStr;

impl FromStr for LabelSelector {
    type Err = SelectorError;

    /// `labels.Parse`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let tokens = lex(s)?;
        let mut parser = Parser { tokens, pos: 0 };
        let mut requirements = parser.parse()?;
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(LabelSelector {
            requirements,
            nothing: false,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tok {
    Identifier,
    DoesNotExist,
    Equals,
    DoubleEquals,
    NotEquals,
    In,
    NotIn,
    GreaterThan,
    LessThan,
    OpenPar,
    ClosedPar,
    Comma,
    End,
}

pub(super) fn is_special(c: char) -> bool {
    matches!(c, '=' | '!' | '(' | ')' | ',' | '>' | '<')
}

pub(super) fn is_whitespace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

pub(super) fn lex(s: &str) -> Result<Vec<(Tok, String)>, SelectorError> {
    let chars: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if is_whitespace(c) {
            i += 1;
            continue;
        }
        if is_special(c) {
            let mut j = i;
            while j < chars.len() && is_special(chars[j]) {
                j += 1;
            }
            // Longest run of special characters that is a known token, as kube's scanner does.
            let run: String = chars[i..j].iter().collect();
            let mut taken = None;
            for len in (1..=run.chars().count()).rev() {
                let cand: String = run.chars().take(len).collect();
                let tok = match cand.as_str() {
                    ")" => Some(Tok::ClosedPar),
                    "(" => Some(Tok::OpenPar),
                    "," => Some(Tok::Comma),
                    "!" => Some(Tok::DoesNotExist),
                    "==" => Some(Tok::DoubleEquals),
                    "=" => Some(Tok::Equals),
                    ">" => Some(Tok::GreaterThan),
                    "<" => Some(Tok::LessThan),
                    "!=" => Some(Tok::NotEquals),
                    _ => None,
                };
                if let Some(t) = tok {
                    taken = Some((t, cand, len));
                    break;
                }
            }
            match taken {
                Some((t, lit, len)) => {
                    out.push((t, lit));
                    i += len;
                }
                None => {
                    return Err(SelectorError(format!(
                        "unable to parse requirement: error: {run} is not a valid token"
                    )));
                }
            }
            continue;
        }
        let mut j = i;
        while j < chars.len() && !is_special(chars[j]) && !is_whitespace(chars[j]) {
            j += 1;
        }
        let word: String = chars[i..j].iter().collect();
        let tok = match word.as_str() {
            "in" => Tok::In,
            "notin" => Tok::NotIn,
            _ => Tok::Identifier,
        };
        out.push((tok, word));
        i = j;
    }
    Ok(out)
}

/// Lexing context: in `Values` context `in`/`notin` are plain identifiers.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Ctx {
    KeyAndOperator,
    Values,
}

pub(super) struct Parser {
    tokens: Vec<(Tok, String)>,
    pos: usize,
}

pub(super) fn err(msg: String) -> SelectorError {
    SelectorError(msg)
}

impl Parser {
    fn lookahead(&self, ctx: Ctx) -> (Tok, String) {
        let (tok, lit) = self
            .tokens
            .get(self.pos)
            .cloned()
            .unwrap_or((Tok::End, String::new()));
        if ctx == Ctx::Values && matches!(tok, Tok::In | Tok::NotIn) {
            (Tok::Identifier, lit)
        } else {
            (tok, lit)
        }
    }

    fn consume(&mut self, ctx: Ctx) -> (Tok, String) {
        let r = self.lookahead(ctx);
        if self.pos < self.tokens.len() {
            self.pos += 1;
        }
        r
    }

    fn parse(&mut self) -> Result<Vec<LabelRequirement>, SelectorError> {
        let mut reqs = Vec::new();
        loop {
            let (tok, lit) = self.lookahead(Ctx::Values);
            match tok {
                Tok::Identifier | Tok::DoesNotExist => {
                    let r = self
                        .parse_requirement()
                        .map_err(|e| err(format!("unable to parse requirement: {e}")))?;
                    reqs.push(r);
                    let (t, l) = self.consume(Ctx::Values);
                    match t {
                        Tok::End => return Ok(reqs),
                        Tok::Comma => {
                            let (t2, l2) = self.lookahead(Ctx::Values);
                            if t2 != Tok::Identifier && t2 != Tok::DoesNotExist {
                                return Err(err(format!(
                                    "found '{l2}', expected: identifier after ','"
                                )));
                            }
                        }
                        _ => {
                            return Err(err(format!(
                                "found '{l}', expected: ',' or 'end of string'"
                            )));
                        }
                    }
                }
                Tok::End => return Ok(reqs),
                _ => {
                    return Err(err(format!(
                        "found '{lit}', expected: !, identifier, or 'end of string'"
                    )));
                }
            }
        }
    }

    fn parse_requirement(&mut self) -> Result<LabelRequirement, SelectorError> {
        let (key, unary) = self.parse_key_and_infer_operator()?;
        if let Some(op) = unary {
            return LabelRequirement::new(&key, op, Vec::new());
        }
        let op = self.parse_operator()?;
        let values = match op {
            LabelOp::In | LabelOp::NotIn => self.parse_values()?,
            _ => self.parse_exact_value()?,
        };
        LabelRequirement::new(&key, op, values)
    }

    fn parse_key_and_infer_operator(&mut self) -> Result<(String, Option<LabelOp>), SelectorError> {
        let mut op = None;
        let (mut tok, mut lit) = self.consume(Ctx::Values);
        if tok == Tok::DoesNotExist {
            op = Some(LabelOp::DoesNotExist);
            (tok, lit) = self.consume(Ctx::Values);
        }
        if tok != Tok::Identifier {
            return Err(err(format!("found '{lit}', expected: identifier")));
        }
        let key_errs = names::qualified_name(&lit);
        if !key_errs.is_empty() {
            return Err(err(format!(
                "key: Invalid value: \"{lit}\": {}",
                key_errs.join("; ")
            )));
        }
        let (next, _) = self.lookahead(Ctx::Values);
        if matches!(next, Tok::End | Tok::Comma) && op.is_none() {
            op = Some(LabelOp::Exists);
        }
        Ok((lit, op))
    }

    fn parse_operator(&mut self) -> Result<LabelOp, SelectorError> {
        let (tok, lit) = self.consume(Ctx::KeyAndOperator);
        Ok(match tok {
            Tok::In => LabelOp::In,
            Tok::Equals => LabelOp::Equals,
            Tok::DoubleEquals => LabelOp::DoubleEquals,
            Tok::GreaterThan => LabelOp::GreaterThan,
            Tok::LessThan => LabelOp::LessThan,
            Tok::NotIn => LabelOp::NotIn,
            Tok::NotEquals => LabelOp::NotEquals,
            _ => {
                return Err(err(format!(
                    "found '{lit}', expected: in, notin, =, ==, !=, gt, lt"
                )));
            }
        })
    }

    fn parse_values(&mut self) -> Result<Vec<String>, SelectorError> {
        let (tok, lit) = self.consume(Ctx::Values);
        if tok != Tok::OpenPar {
            return Err(err(format!("found '{lit}' expected: '('")));
        }
        let (tok, lit) = self.lookahead(Ctx::Values);
        match tok {
            Tok::Identifier | Tok::Comma => {
                let s = self.parse_identifiers_list()?;
                let (t, _) = self.consume(Ctx::Values);
                if t != Tok::ClosedPar {
                    return Err(err(format!("found '{lit}', expected: ')'")));
                }
                Ok(s)
            }
            Tok::ClosedPar => {
                self.consume(Ctx::Values);
                Ok(vec![String::new()])
            }
            _ => Err(err(format!(
                "found '{lit}', expected: ',', ')' or identifier"
            ))),
        }
    }

    fn parse_identifiers_list(&mut self) -> Result<Vec<String>, SelectorError> {
        let mut s = BTreeSet::new();
        loop {
            let (tok, lit) = self.consume(Ctx::Values);
            match tok {
                Tok::Identifier => {
                    s.insert(lit);
                    let (t2, l2) = self.lookahead(Ctx::Values);
                    match t2 {
                        Tok::Comma => continue,
                        Tok::ClosedPar => return Ok(s.into_iter().collect()),
                        _ => return Err(err(format!("found '{l2}', expected: ',' or ')'"))),
                    }
                }
                Tok::Comma => {
                    if s.is_empty() {
                        s.insert(String::new());
                    }
                    let (t2, _) = self.lookahead(Ctx::Values);
                    if t2 == Tok::ClosedPar {
                        s.insert(String::new());
                        return Ok(s.into_iter().collect());
                    }
                    if t2 == Tok::Comma {
                        self.consume(Ctx::Values);
                        s.insert(String::new());
                    }
                }
                _ => return Err(err(format!("found '{lit}', expected: ',', or identifier"))),
            }
        }
    }

    fn parse_exact_value(&mut self) -> Result<Vec<String>, SelectorError> {
        let (tok, _) = self.lookahead(Ctx::Values);
        if matches!(tok, Tok::End | Tok::Comma) {
            return Ok(vec![String::new()]);
        }
        let (tok, lit) = self.consume(Ctx::Values);
        if tok == Tok::Identifier {
            Ok(vec![lit])
        } else {
            Err(err(format!("found '{lit}', expected: identifier")))
        }
    }
}

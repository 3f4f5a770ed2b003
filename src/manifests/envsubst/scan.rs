//! The tokenizer and parser of the `${…}` grammar: scanning modes and accept functions as the
//! grammar defines them, one parse function per operator family.

use super::{BadSubstitution, Node, Var};

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

pub(super) struct Parser {
    buf: Vec<char>,
    pos: usize,
    start: usize,
    /// Characters the last read advanced (0 at the end).
    width: usize,
    mode: u8,
    accept: Accept,
}

impl Parser {
    pub(super) fn new(text: &str) -> Parser {
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

    pub(super) fn parse_all(&mut self) -> Result<Vec<Node>, BadSubstitution> {
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

//! The operators' functions (drone/envsubst's `funcs.go` semantics): case, length, substring,
//! glob trims and replacements.

/// The operator's function on the value (drone/envsubst's `lookupFunc`).
pub(super) fn apply(op: &str, value: &str, args: &[String]) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert_eq!(glob_match("a[b-d]?", "acz"), Ok(true));
        assert_eq!(glob_match("a[^b-d]", "ab"), Ok(false));
        assert_eq!(glob_match(r"\*", "*"), Ok(true));
        assert_eq!(glob_match("[a", "a"), Err(()));
        assert_eq!(trim_shortest_prefix("x.y", "[z"), "x.y");
    }
}

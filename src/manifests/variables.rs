//! clusterctl's variable processing of a components file (`yamlprocessor.SimpleProcessor`):
//! the text is rewritten before it is read as YAML, exactly as `clusterctl init` does it.
//!
//! 1. Legacy spellings `${ VAR}`, `${VAR }`, `${ VAR }` become `${VAR}`.
//! 2. Every top-level `${…}` is inspected; a variable is *required* when its first reference
//!    has no argument (`${VAR}`, `${#VAR}`, `${VAR^^}`, and also `${VAR:=}` with an empty
//!    default); any operator argument counts as a default (`${VAR:=x}`, `${VAR/#a/b}`).
//! 3. A required variable without a value is an error; all of them are named at once.
//! 4. The text is evaluated with the values (`--var` first, then the environment); unset
//!    variables evaluate to `""`, so their defaults apply.
//!
//! Values never appear in messages (they may be credentials): only names do.

use super::envsubst::{self, Node};
use regex::Regex;
use std::collections::BTreeMap;
use std::sync::LazyLock;
use thiserror::Error;

/// Where variable values come from.
#[derive(Debug, Clone, Default)]
pub struct Variables {
    /// `--var NAME=VALUE`, first.
    explicit: BTreeMap<String, String>,
    /// Then the process environment (off in tests that must not see it).
    environment: bool,
}

/// A `--var` that is not `NAME=VALUE`.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("--var {0:?}: expected NAME=VALUE")]
pub struct BadVarFlag(pub String);

impl Variables {
    /// `--var NAME=VALUE` flags over the process environment.
    pub fn from_flags(flags: &[String]) -> Result<Variables, BadVarFlag> {
        let mut explicit = BTreeMap::new();
        for f in flags {
            match f.split_once('=') {
                Some((name, value)) if !name.trim().is_empty() => {
                    explicit.insert(name.trim().to_string(), value.to_string());
                }
                _ => return Err(BadVarFlag(f.clone())),
            }
        }
        Ok(Variables {
            explicit,
            environment: true,
        })
    }

    /// Only the given values (no environment).
    pub fn only(values: &[(&str, &str)]) -> Variables {
        Variables {
            explicit: values
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            environment: false,
        }
    }

    /// A variable's value: `--var`, else the environment.
    pub fn get(&self, name: &str) -> Option<String> {
        if let Some(v) = self.explicit.get(name) {
            return Some(v.clone());
        }
        if self.environment {
            return std::env::var_os(name).map(|v| v.to_string_lossy().into_owned());
        }
        None
    }
}

/// Why a text could not be processed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ProcessError {
    /// A malformed `${…}` (clusterctl refuses the file).
    #[error("{0}")]
    BadSubstitution(envsubst::BadSubstitution),
    /// Required variables without a value, sorted.
    #[error("no value for {}", .0.join(", "))]
    Missing(Vec<String>),
}

/// `${ VAR}`, `${VAR }`, `${ VAR }` (clusterctl's `legacyVariableRegEx`).
static LEGACY: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(\$\{(\s+([A-Za-z0-9_$]+)\s+)\})|(\$\{(\s+([A-Za-z0-9_$]+))\})|(\$\{(([A-Za-z0-9_$]+)\s+)\})",
    )
    .ok()
});

fn convert_legacy(text: &str) -> std::borrow::Cow<'_, str> {
    match LEGACY.as_ref() {
        Some(re) if text.contains("${") => re.replace_all(text, |c: &regex::Captures| {
            c[0].chars()
                .filter(|ch| !ch.is_whitespace())
                .collect::<String>()
        }),
        _ => std::borrow::Cow::Borrowed(text),
    }
}

/// The variables a text references at top level, each with whether it has a default (the
/// first reference decides), in name order.
pub fn inspect(text: &str) -> Result<BTreeMap<String, bool>, envsubst::BadSubstitution> {
    let nodes = envsubst::parse(&convert_legacy(text))?;
    Ok(defaults_of(&nodes))
}

fn defaults_of(nodes: &[Node]) -> BTreeMap<String, bool> {
    let mut out = BTreeMap::new();
    for n in nodes {
        if let Node::Var(v) = n {
            out.entry(v.param.clone()).or_insert(!v.args.is_empty());
        }
    }
    out
}

/// A processed text and the required variables it lacked values for (sorted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Processed {
    /// The text with every variable substituted (missing ones as `""`).
    pub text: String,
    pub missing: Vec<String>,
}

/// Substitutes the variables of a text the way `clusterctl init` does, but reports missing
/// required variables beside the result instead of failing (so every file's can be listed at
/// once). A text without `${` comes back as it is, apart from `$$`, which clusterctl also
/// turns into `$`.
pub fn substitute(text: &str, vars: &Variables) -> Result<Processed, envsubst::BadSubstitution> {
    let converted = convert_legacy(text);
    let nodes = envsubst::parse(&converted)?;
    let missing: Vec<String> = defaults_of(&nodes)
        .into_iter()
        .filter(|(name, has_default)| !has_default && vars.get(name).is_none())
        .map(|(name, _)| name)
        .collect();
    let text = envsubst::eval(&nodes, &|name| vars.get(name).unwrap_or_default());
    Ok(Processed { text, missing })
}

/// [`substitute`] as clusterctl fails: missing required variables are an error.
pub fn process(text: &str, vars: &Variables) -> Result<String, ProcessError> {
    let p = substitute(text, vars).map_err(ProcessError::BadSubstitution)?;
    if p.missing.is_empty() {
        Ok(p.text)
    } else {
        Err(ProcessError::Missing(p.missing))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_values_and_environment_order() {
        let vars = Variables::only(&[("SET", "v"), ("EMPTY", "")]);
        let text = "a: ${SET}\nb: ${UNSET:=d}\nc: ${UNSET2=e}\nd: ${EMPTY:=f}\ne: ${SET:=g}\n";
        assert_eq!(
            process(text, &vars).unwrap(),
            "a: v\nb: d\nc: e\nd: f\ne: v\n"
        );
        // --var wins over the environment.
        // SAFETY-free: PATH is always set; a --var of the same name must shadow it.
        let flags = Variables::from_flags(&["PATH=mine".into()]).unwrap();
        assert_eq!(process("${PATH}", &flags).unwrap(), "mine");
        assert!(Variables::from_flags(&["novalue".into()]).is_err());
        assert!(Variables::from_flags(&["=x".into()]).is_err());
    }

    #[test]
    fn every_missing_variable_is_named_once_sorted() {
        let text = "${B}\n${A}\n${B}\n${C:=ok}\n${#D}\n${E:=}\n";
        let err = process(text, &Variables::only(&[])).unwrap_err();
        assert_eq!(
            err,
            ProcessError::Missing(vec!["A".into(), "B".into(), "D".into(), "E".into()])
        );
        assert_eq!(err.to_string(), "no value for A, B, D, E");
    }

    #[test]
    fn first_reference_decides_and_nested_defaults_are_not_required() {
        // `${X:=a}` first: X has a default, the later bare `${X}` is fine.
        assert_eq!(
            process("${X:=a} ${X}", &Variables::only(&[])).unwrap(),
            "a "
        );
        // The other way round clusterctl requires X.
        assert!(process("${X} ${X:=a}", &Variables::only(&[])).is_err());
        // A variable only referenced inside a default is not inspected: it evaluates to "".
        assert_eq!(process("${X:=${Y}}", &Variables::only(&[])).unwrap(), "");
    }

    /// CAPA's ServiceAccount annotation: an operator argument counts as a default, so an unset
    /// variable removes the whole line's content; a set one produces a mapping entry.
    #[test]
    fn replace_prefix_as_capa_uses_it() {
        let line = "  annotations:\n    ${ROLE/#arn/eks.amazonaws.com/role-arn: arn}\n";
        assert_eq!(
            process(line, &Variables::only(&[])).unwrap(),
            "  annotations:\n    \n"
        );
        assert_eq!(
            process(line, &Variables::only(&[("ROLE", "arn:aws:iam::1:role/x")])).unwrap(),
            "  annotations:\n    eks.amazonaws.com/role-arn: arn:aws:iam::1:role/x\n"
        );
    }

    #[test]
    fn legacy_spaces_and_escapes() {
        let vars = Variables::only(&[("A", "1")]);
        assert_eq!(process("${ A} ${A } ${ A }", &vars).unwrap(), "1 1 1");
        assert_eq!(
            process("$${A} costs $$5 ${A}", &vars).unwrap(),
            "${A} costs $5 1"
        );
        assert_eq!(
            inspect("${ A } ${B:=x}")
                .unwrap()
                .into_iter()
                .collect::<Vec<_>>(),
            [("A".to_string(), false), ("B".to_string(), true)]
        );
    }

    #[test]
    fn bad_substitution_is_an_error() {
        assert!(matches!(
            process("a: ${A.B}", &Variables::only(&[])),
            Err(ProcessError::BadSubstitution(_))
        ));
    }
}

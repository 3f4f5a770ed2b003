//! Kubernetes name and label validation (apimachinery `util/validation`): each function returns the
//! list of problems, worded as kube-apiserver words them, empty when the value is valid.

use regex::Regex;
use std::sync::LazyLock;

const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1035_LABEL_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";

/// Longest DNS-1123 label.
pub const DNS1123_LABEL_MAX: usize = 63;
/// Longest DNS-1123 subdomain.
pub const DNS1123_SUBDOMAIN_MAX: usize = 253;
/// Longest name part of a qualified name, and longest label value.
pub const QUALIFIED_NAME_MAX: usize = 63;

fn anchored(fmt: &str) -> Regex {
    // Only called with this module's constant patterns, never with input.
    Regex::new(&format!("^(?:{fmt})$")).expect("constant validation regex compiles")
}

static DNS1123_LABEL: LazyLock<Regex> = LazyLock::new(|| anchored(DNS1123_LABEL_FMT));
static DNS1035_LABEL: LazyLock<Regex> = LazyLock::new(|| anchored(DNS1035_LABEL_FMT));
static DNS1123_SUBDOMAIN: LazyLock<Regex> = LazyLock::new(|| anchored(DNS1123_SUBDOMAIN_FMT));
static QUALIFIED_NAME: LazyLock<Regex> = LazyLock::new(|| anchored(QUALIFIED_NAME_FMT));
static LABEL_VALUE: LazyLock<Regex> = LazyLock::new(|| anchored(LABEL_VALUE_FMT));

fn max_len_msg(n: usize) -> String {
    format!("must be no more than {n} characters")
}

fn regex_msg(what: &str, fmt: &str, examples: &[&str]) -> String {
    let ex = examples
        .iter()
        .map(|e| format!("'{e}'"))
        .collect::<Vec<_>>()
        .join(",  or ");
    if examples.is_empty() {
        format!("{what} (regex used for validation is '{fmt}')")
    } else {
        format!("{what} (e.g. {ex}, regex used for validation is '{fmt}')")
    }
}

/// `IsDNS1123Label`.
pub fn dns1123_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_LABEL_MAX {
        errs.push(max_len_msg(DNS1123_LABEL_MAX));
    }
    if !DNS1123_LABEL.is_match(value) {
        errs.push(regex_msg(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
            DNS1123_LABEL_FMT,
            &["my-name", "123-abc"],
        ));
    }
    errs
}

/// `IsDNS1035Label` (Service names).
pub fn dns1035_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_LABEL_MAX {
        errs.push(max_len_msg(DNS1123_LABEL_MAX));
    }
    if !DNS1035_LABEL.is_match(value) {
        errs.push(regex_msg(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
            DNS1035_LABEL_FMT,
            &["my-name", "abc-123"],
        ));
    }
    errs
}

/// `IsDNS1123Subdomain`.
pub fn dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX {
        errs.push(max_len_msg(DNS1123_SUBDOMAIN_MAX));
    }
    if !DNS1123_SUBDOMAIN.is_match(value) {
        errs.push(regex_msg(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

/// `IsQualifiedName`: an optional DNS-1123 subdomain prefix and `/`, then a name part.
pub fn qualified_name(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                for msg in dns1123_subdomain(prefix) {
                    errs.push(format!("prefix part {msg}"));
                }
            }
            *name
        }
        _ => {
            errs.push(format!(
                "{} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_msg(
                    "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
                    QUALIFIED_NAME_FMT,
                    &["MyName", "my.name", "123-abc"],
                )
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > QUALIFIED_NAME_MAX {
        errs.push(format!("name part {}", max_len_msg(QUALIFIED_NAME_MAX)));
    }
    if !name.is_empty() && !QUALIFIED_NAME.is_match(name) {
        errs.push(format!(
            "name part {}",
            regex_msg(
                "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
                QUALIFIED_NAME_FMT,
                &["MyName", "my.name", "123-abc"],
            )
        ));
    }
    errs
}

/// `IsValidLabelValue`.
pub fn label_value(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > QUALIFIED_NAME_MAX {
        errs.push(max_len_msg(QUALIFIED_NAME_MAX));
    }
    if !LABEL_VALUE.is_match(value) {
        errs.push(regex_msg(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns_label_accepts_and_rejects() {
        assert!(dns1123_label("kube-system").is_empty());
        assert_eq!(dns1123_label("Kube").len(), 1);
        assert_eq!(dns1123_label(&"a".repeat(64)).len(), 1);
        assert_eq!(dns1123_label("a.b").len(), 1);
    }

    #[test]
    fn dns_subdomain_accepts_dots() {
        assert!(dns1123_subdomain("widgets.example.com").is_empty());
        assert!(!dns1123_subdomain("-bad").is_empty());
        assert!(
            dns1123_subdomain("bad_")[0].starts_with("a lowercase RFC 1123 subdomain must consist")
        );
    }

    #[test]
    fn qualified_names() {
        assert!(qualified_name("app").is_empty());
        assert!(qualified_name("cluster.x-k8s.io/v1beta1").is_empty());
        assert_eq!(
            qualified_name("/app"),
            vec!["prefix part must be non-empty"]
        );
        assert_eq!(qualified_name("x.io/"), vec!["name part must be non-empty"]);
        assert_eq!(qualified_name("a/b/c").len(), 1);
        assert!(qualified_name("Bad_Prefix/x")[0].starts_with("prefix part a lowercase"));
        assert!(qualified_name("-x")[0].starts_with("name part must consist"));
    }

    #[test]
    fn label_values() {
        assert!(label_value("").is_empty());
        assert!(label_value("v1.2_3-x").is_empty());
        assert_eq!(label_value("bad value").len(), 1);
        assert_eq!(label_value(&"v".repeat(64)), vec![max_len_msg(63)]);
    }
}

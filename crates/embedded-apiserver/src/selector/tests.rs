//! Unit tests of `selector`.

use super::*;
use serde_json::Value;
use serde_json::json;
use std::collections::BTreeMap;

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn parse(s: &str) -> LabelSelector {
    s.parse().unwrap()
}

#[test]
fn check_49_set_semantics() {
    let sel = parse("env in (a,b),!legacy");
    assert!(sel.matches(&labels(&[("env", "a")])));
    assert!(sel.matches(&labels(&[("env", "b"), ("x", "y")])));
    assert!(!sel.matches(&labels(&[("env", "c")])));
    assert!(!sel.matches(&labels(&[("env", "a"), ("legacy", "")])));
    assert!(!sel.matches(&labels(&[])));
    assert_eq!(sel.to_string(), "env in (a,b),!legacy");
}

#[test]
fn check_49_in_without_parentheses_is_an_error() {
    let e = "env in a".parse::<LabelSelector>().unwrap_err();
    assert_eq!(
        e.to_string(),
        "unable to parse requirement: found 'a' expected: '('"
    );
}

#[test]
fn all_operators() {
    let l = labels(&[("app", "demo"), ("tier", "web"), ("n", "5")]);
    for (s, want) in [
        ("app", true),
        ("!app", false),
        ("missing", false),
        ("!missing", true),
        ("app=demo", true),
        ("app==demo", true),
        ("app!=demo", false),
        ("missing!=demo", true),
        ("tier notin (web,db)", false),
        ("missing notin (web)", true),
        ("n>4", true),
        ("n>5", false),
        ("n<6", true),
        ("app>1", false),
        ("app=demo,tier=web", true),
        ("app=demo, tier=db", false),
        ("", true),
        ("app=", false),
        ("in in (in,notin)", false),
    ] {
        assert_eq!(parse(s).matches(&l), want, "{s}");
    }
}

#[test]
fn empty_value_forms() {
    let sel = parse("a=,b in (,x)");
    assert_eq!(sel.requirements[0].values, vec![""]);
    assert_eq!(sel.requirements[1].values, vec!["", "x"]);
    assert!(sel.matches(&labels(&[("a", ""), ("b", "")])));
    assert_eq!(parse("k in ()").requirements[0].values, vec![""]);
}

#[test]
fn keywords_are_values_in_value_context() {
    let sel = parse("k=in");
    assert_eq!(sel.requirements[0].values, vec!["in"]);
}

#[test]
fn parse_errors_mirror_kube() {
    for (s, want) in [
        ("app=demo,", "found '', expected: identifier after ','"),
        (
            "a b",
            "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt",
        ),
        (
            "=x",
            "found '=', expected: !, identifier, or 'end of string'",
        ),
        (
            "a in (x y)",
            "unable to parse requirement: found 'y', expected: ',' or ')'",
        ),
        ("a=b c", "found 'c', expected: ',' or 'end of string'"),
        (
            "n>x",
            "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer",
        ),
    ] {
        assert_eq!(
            s.parse::<LabelSelector>().unwrap_err().to_string(),
            want,
            "{s}"
        );
    }
}

#[test]
fn invalid_keys_and_values_are_rejected() {
    let e = "Bad Key=x"
        .parse::<LabelSelector>()
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("unable to parse requirement: found 'Key'"),
        "{e}"
    );
    let e = "-bad=x".parse::<LabelSelector>().unwrap_err().to_string();
    assert!(
        e.starts_with(
            "unable to parse requirement: key: Invalid value: \"-bad\": name part must consist"
        ),
        "{e}"
    );
    let e = "a=-v".parse::<LabelSelector>().unwrap_err().to_string();
    assert!(e.contains("values[0]: Invalid value: \"-v\""), "{e}");
    let long = format!("a={}", "v".repeat(64));
    assert!(long.parse::<LabelSelector>().is_err());
}

#[test]
fn metav1_label_selector() {
    let sel = LabelSelector::from_label_selector(&json!({
        "matchLabels": {"rbac.example.com/aggregate-to-manager": "true"},
        "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}]
    }))
    .unwrap();
    assert!(sel.matches(&labels(&[(
        "rbac.example.com/aggregate-to-manager",
        "true"
    )])));
    assert!(!sel.matches(&labels(&[
        ("rbac.example.com/aggregate-to-manager", "true"),
        ("tier", "db")
    ])));
    assert!(
        LabelSelector::from_label_selector(&json!({}))
            .unwrap()
            .matches(&labels(&[]))
    );
    assert!(
        !LabelSelector::from_label_selector(&Value::Null)
            .unwrap()
            .matches(&labels(&[]))
    );
    let e = LabelSelector::from_label_selector(
        &json!({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]}),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "\"Gt\" is not a valid label selector operator"
    );
    assert!(
        LabelSelector::from_label_selector(
            &json!({"matchExpressions": [{"key": "a", "operator": "In", "values": []}]})
        )
        .is_err()
    );
}

#[test]
fn matches_json_labels() {
    let sel = parse("app=demo");
    assert!(sel.matches_json(Some(&json!({"app": "demo"}))));
    assert!(!sel.matches_json(None));
}

fn field_getter(name: &'static str) -> impl Fn(&str) -> Option<String> {
    move |f: &str| match f {
        "metadata.name" => Some(name.to_string()),
        "metadata.namespace" => Some("default".to_string()),
        _ => None,
    }
}

#[test]
fn check_48_field_selector_by_name() {
    let sel: FieldSelector = "metadata.name=w1".parse().unwrap();
    assert!(sel.matches(&field_getter("w1")));
    assert!(!sel.matches(&field_getter("w2")));
    assert_eq!(sel.fields(), vec!["metadata.name"]);
    // The server refuses unsupported fields; parsing itself accepts any field name.
    let sel: FieldSelector = "spec.size=small".parse().unwrap();
    assert_eq!(sel.fields(), vec!["spec.size"]);
}

#[test]
fn field_selector_operators_and_sorting() {
    let sel: FieldSelector = "metadata.namespace!=kube-system,metadata.name==w1"
        .parse()
        .unwrap();
    assert_eq!(sel.requirements[0].field, "metadata.name");
    assert_eq!(sel.requirements[0].op, FieldOp::DoubleEquals);
    assert_eq!(sel.requirements[1].op, FieldOp::NotEquals);
    assert!(sel.matches(&field_getter("w1")));
    assert!("".parse::<FieldSelector>().unwrap().is_empty());
}

#[test]
fn non_ascii_input_never_panics() {
    let sel: FieldSelector = "metadata.name=wé\\,x".parse().unwrap();
    assert_eq!(sel.requirements[0].value, "wé,x");
    let sel: FieldSelector = "é\\é=1".parse().unwrap();
    assert_eq!(sel.requirements[0].field, "é\\é");
    assert!("ключ=значение".parse::<LabelSelector>().is_err());
}

proptest::proptest! {
    #[test]
    fn selectors_never_panic(s in "\\PC{0,40}") {
        let _ = s.parse::<LabelSelector>();
        let _ = s.parse::<FieldSelector>();
    }

    #[test]
    fn parsed_label_selectors_round_trip(s in "[a-z]{1,5}(=|!=|==)[a-z0-9]{0,5}(,[a-z]{1,5} (in|notin) \\([a-z]{1,3}(,[a-z]{1,3}){0,2}\\))?") {
        let sel: LabelSelector = s.parse().unwrap();
        let again: LabelSelector = sel.to_string().parse().unwrap();
        proptest::prop_assert_eq!(sel, again);
    }
}

#[test]
fn field_selector_escapes() {
    let sel: FieldSelector = r"a=x\,y\=z\\w".parse().unwrap();
    assert_eq!(sel.requirements[0].value, r"x,y=z\w");
    assert_eq!(sel.to_string(), r"a=x\,y\=z\\w");
    assert_eq!(
        r"a=b\q".parse::<FieldSelector>().unwrap_err().to_string(),
        r"invalid field selector: invalid escape sequence: \q"
    );
    assert_eq!(
        "a=b=c".parse::<FieldSelector>().unwrap_err().to_string(),
        "invalid field selector: unescaped character in value: 61"
    );
    assert_eq!(
        "nonsense".parse::<FieldSelector>().unwrap_err().to_string(),
        "invalid selector: 'nonsense'; can't understand 'nonsense'"
    );
}

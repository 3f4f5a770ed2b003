//! Unit tests of `cel`.

use super::syntax::R;
use super::*;
use serde_json::{Value, json};

fn run(rule: &str, this: Value) -> R<Value> {
    let env = Env::from([("self".to_string(), this)]);
    eval(&parse(rule)?, &env)
}

fn run_old(rule: &str, this: Value, old: Value) -> R<Value> {
    let env = Env::from([("self".to_string(), this), ("oldSelf".to_string(), old)]);
    eval(&parse(rule)?, &env)
}

#[test]
fn corpus_rules_evaluate() {
    assert_eq!(
        run_old("self == oldSelf", json!("a"), json!("a")),
        Ok(json!(true))
    );
    assert_eq!(
        run_old("self == oldSelf", json!("a"), json!("b")),
        Ok(json!(false))
    );
    let dup = json!([{"name": "a"}, {"name": "a"}]);
    let uniq = json!([{"name": "a"}, {"name": "b"}]);
    let r = "self.all(x, self.exists_one(y, x.name == y.name))";
    assert_eq!(run(r, uniq), Ok(json!(true)));
    assert_eq!(run(r, dup), Ok(json!(false)));
    assert_eq!(
        run(
            "self.all(i, isIP(i) || isCIDR(i))",
            json!(["10.0.0.1", "10.0.0.0/8", "::1"])
        ),
        Ok(json!(true))
    );
    assert_eq!(
        run("self.all(i, isIP(i) || isCIDR(i))", json!(["nope"])),
        Ok(json!(false))
    );
    assert_eq!(
        run("self in ['none','amazon-pool']", json!("none")),
        Ok(json!(true))
    );
    assert_eq!(
        run("self.startsWith('cagw-')", json!("cagw-1")),
        Ok(json!(true))
    );
    assert_eq!(
        run(
            "has(self.type) && self.type == 'Bool' ? has(self.bool) : true",
            json!({"type": "Bool"})
        ),
        Ok(json!(false))
    );
    assert_eq!(
        run("!(self in ['Ready','Available'])", json!("Ready")),
        Ok(json!(false))
    );
    assert_eq!(
        run(
            "[has(self.layout),has(self.diskLayout)].filter(x,x==true).size() <= 1",
            json!({"layout": 1, "diskLayout": 2})
        ),
        Ok(json!(false))
    );
    assert_eq!(
        run_old(
            "(!has(self.region) && !has(oldSelf.region)) || self.region == oldSelf.region",
            json!({}),
            json!({})
        ),
        Ok(json!(true))
    );
    assert_eq!(
        run("self == null || has(self.mtu)", json!(null)),
        Ok(json!(true))
    );
}

#[test]
fn operators_and_functions() {
    assert_eq!(
        run("1 + 2 * 3 == 7 && 7 % 4 == 3 && -1 < 0", json!(null)),
        Ok(json!(true))
    );
    assert_eq!(
        run("size(self) == 3 && self.size() == 3", json!("abc")),
        Ok(json!(true))
    );
    assert_eq!(
        run("self.matches('^[a-z]+$')", json!("abc")),
        Ok(json!(true))
    );
    assert_eq!(run("self.map(x, x * 2)", json!([1, 2])), Ok(json!([2, 4])));
    assert_eq!(
        run("self.exists(k, k == 'a')", json!({"a": 1})),
        Ok(json!(true))
    );
    assert_eq!(run("self.x.y", json!({"x": {"y": "z"}})), Ok(json!("z")));
    assert_eq!(run("self[1]", json!([1, 2])), Ok(json!(2)));
    assert_eq!(run("{'a': 1}.a == 1", json!(null)), Ok(json!(true)));
    assert_eq!(
        run("\"x\" + 'y' == 'xy' ? 1 : 2", json!(null)),
        Ok(json!(1))
    );
    assert_eq!(run("2.5 > 2", json!(null)), Ok(json!(true)));
}

#[test]
fn errors_are_absorbed_by_short_circuit() {
    // self.missing errors, but the other side decides.
    assert_eq!(run("self.missing == 1 || true", json!({})), Ok(json!(true)));
    assert_eq!(
        run("false && self.missing == 1", json!({})),
        Ok(json!(false))
    );
    assert!(matches!(
        run("self.missing == 1", json!({})),
        Err(CelError::Eval(_))
    ));
    assert!(matches!(
        run("self.quantity().isLessThan(1)", json!({})),
        Err(CelError::Unsupported(_))
    ));
    assert!(matches!(parse("self ==="), Err(CelError::Syntax(_))));
    assert!(matches!(parse("'open"), Err(CelError::Syntax(_))));
}

#[test]
fn transition_rules_are_detected() {
    assert!(uses_old_self(&parse("self == oldSelf").unwrap()));
    assert!(!uses_old_self(&parse("self.size() > 0").unwrap()));
}

#[test]
fn negating_the_smallest_integer_is_an_error() {
    assert!(matches!(
        run("-self", json!(i64::MIN)),
        Err(CelError::Eval(_))
    ));
    assert_eq!(run("-self", json!(5)), Ok(json!(-5)));
}

#[test]
fn deep_or_long_rules_are_refused_not_overflowed() {
    assert!(parse(&"!".repeat(5000)).is_err());
    assert!(parse(&format!("{}1{}", "(".repeat(500), ")".repeat(500))).is_err());
    assert!(parse(&format!("self{}", ".a".repeat(3000))).is_err());
}

proptest::proptest! {
    #[test]
    fn arbitrary_rules_never_panic(src in "[a-z.()\\[\\]{}!=<>&|?:,'\" 0-9+*/%-]{0,60}") {
        if let Ok(e) = parse(&src) {
            let env = Env::from([("self".to_string(), json!({"a": [1, "x", {"b": null}]}))]);
            let _ = eval(&e, &env);
        }
    }
}

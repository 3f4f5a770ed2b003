//! The label and field selector parsers.

use crate::generators::*;
use capi_conformance::apiserver::selector::{FieldSelector, LabelSelector};
use proptest::prelude::*;

fn selector_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "\\PC{0,40}",
        "[a-z0-9=!,() .\\\\/_-]{0,40}",
        "(!?[a-z]{1,4}(\\.[a-z]{1,3})?(/[a-z]{1,4})?( ?(=|==|!=|in|notin|<|>) ?\\(?[a-z0-9,]{0,6}\\)?)?,?){1,4}",
    ]
}

proptest! {
    #![proptest_config(config())]

    /// Any text: label and field selector parsing never panics; what parses prints back to an
    /// equivalent selector.
    #[test]
    fn selectors_parse_and_round_trip(s in selector_text()) {
        if let Ok(sel) = s.parse::<LabelSelector>() {
            let again: LabelSelector = sel.to_string().parse()
                .map_err(|e| TestCaseError::fail(format!("{s:?} printed as {:?}: {e}", sel.to_string())))?;
            prop_assert_eq!(sel, again);
        }
        if let Ok(sel) = s.parse::<FieldSelector>() {
            let again: FieldSelector = sel.to_string().parse()
                .map_err(|e| TestCaseError::fail(format!("{s:?} printed as {:?}: {e}", sel.to_string())))?;
            prop_assert_eq!(sel, again);
        }
    }

    /// Arbitrary JSON as a `metav1.LabelSelector` object: an error or a selector, never a panic.
    #[test]
    fn label_selector_objects(v in json_value(), labels in proptest::collection::btree_map("[a-z]{0,3}", "[a-z]{0,3}", 0..4)) {
        if let Ok(sel) = LabelSelector::from_label_selector(&v) {
            let _ = sel.matches(&labels);
        }
    }
}

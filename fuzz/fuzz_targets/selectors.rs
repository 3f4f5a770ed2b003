//! Label and field selector parsers (string syntax and `metav1.LabelSelector` objects): must not
//! panic, and what parses prints back to an equal selector.
#![no_main]

use embedded_apiserver::selector::{FieldSelector, LabelSelector};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(sel) = text.parse::<LabelSelector>() {
        let again: LabelSelector = sel
            .to_string()
            .parse()
            .unwrap_or_else(|e| panic!("{text:?} printed as {:?}: {e}", sel.to_string()));
        assert_eq!(sel, again);
    }
    if let Ok(sel) = text.parse::<FieldSelector>() {
        let again: FieldSelector = sel
            .to_string()
            .parse()
            .unwrap_or_else(|e| panic!("{text:?} printed as {:?}: {e}", sel.to_string()));
        assert_eq!(sel, again);
    }
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(data) {
        let _ = LabelSelector::from_label_selector(&v);
    }
});

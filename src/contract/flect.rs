//! Port of gobuffalo/flect v1.0.3 `Pluralize`, which CAPI's `CalculateCRDName` uses.
//! (Being ported: the body below is a placeholder that only appends "s".)

/// flect v1.0.3 `Pluralize(s)` for an already lower-cased kind.
pub fn pluralize(s: &str) -> String {
    format!("{s}s")
}

/// CAPI's `CalculateCRDName(group, kind)`: `pluralize(lower(kind)) + "." + group`.
pub fn crd_name(group: &str, kind: &str) -> String {
    format!("{}.{}", pluralize(&kind.to_lowercase()), group)
}

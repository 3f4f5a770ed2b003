//! Typed rule ids: one constant per catalog rule, generated from `suites/*.yaml` at build time
//! (`build.rs`), in a module per id prefix: `infra-machine/provider-id` is
//! [`infra_machine::PROVIDER_ID`]. Code naming a rule uses these, so a misspelt or removed id is
//! a compile error instead of a rule that silently never matches. Each is a [`RuleId`], which
//! only this module can make: a function taking a `RuleId` cannot be given an arbitrary string
//! (a string from outside, a `--mock-faults` list, is looked up with [`RuleId::of`]).

use serde::{Serialize, Serializer};
use std::fmt;
use std::ops::Deref;

include!(concat!(env!("OUT_DIR"), "/rule_ids.rs"));

/// The id of a rule of the catalog (`infra-machine/provider-id`); the constants of this module
/// are all there are. Reads as the `&str` it holds (`Deref`, `AsRef<str>`, `Display`, compared
/// with strings, serialised as a string).
///
/// A string is not a rule id, and no code outside this module can make one:
///
/// ```compile_fail
/// fn judge(_: capi_contract::rule_ids::RuleId) {}
/// judge("infra-machine/provider-id");
/// ```
///
/// ```compile_fail
/// let _ = capi_contract::rule_ids::RuleId("made/up");
/// ```
///
/// ```
/// fn judge(_: capi_contract::rule_ids::RuleId) {}
/// judge(capi_contract::rule_ids::infra_machine::PROVIDER_ID);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RuleId(&'static str);

impl RuleId {
    /// The id as text.
    pub const fn as_str(self) -> &'static str {
        self.0
    }

    /// The catalog's id spelt `id`, if there is one.
    pub fn of(id: &str) -> Option<RuleId> {
        ALL.iter().copied().find(|r| r.0 == id)
    }
}

impl Deref for RuleId {
    type Target = str;
    fn deref(&self) -> &str {
        self.0
    }
}

impl AsRef<str> for RuleId {
    fn as_ref(&self) -> &str {
        self.0
    }
}

impl std::borrow::Borrow<str> for RuleId {
    fn borrow(&self) -> &str {
        self.0
    }
}

impl fmt::Display for RuleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl fmt::Debug for RuleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.0, f)
    }
}

impl Serialize for RuleId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0)
    }
}

impl PartialEq<str> for RuleId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for RuleId {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<RuleId> for str {
    fn eq(&self, other: &RuleId) -> bool {
        self == other.0
    }
}

impl PartialEq<RuleId> for &str {
    fn eq(&self, other: &RuleId) -> bool {
        *self == other.0
    }
}

impl PartialEq<String> for RuleId {
    fn eq(&self, other: &String) -> bool {
        self.0 == other
    }
}

impl PartialEq<RuleId> for String {
    fn eq(&self, other: &RuleId) -> bool {
        self == other.0
    }
}

impl PartialEq<RuleId> for crate::model::shared_str::SharedStr {
    fn eq(&self, other: &RuleId) -> bool {
        self.as_str() == other.0
    }
}

impl PartialEq<crate::model::shared_str::SharedStr> for RuleId {
    fn eq(&self, other: &crate::model::shared_str::SharedStr) -> bool {
        self.0 == other.as_str()
    }
}

impl From<RuleId> for String {
    fn from(id: RuleId) -> String {
        id.0.to_string()
    }
}

impl From<RuleId> for &'static str {
    fn from(id: RuleId) -> &'static str {
        id.0
    }
}

#[cfg(test)]
mod tests {
    use crate::suite::Catalog;

    #[test]
    fn the_constants_are_the_catalog() {
        let catalog = Catalog::embedded().unwrap();
        let ids: Vec<&str> = catalog.rules().iter().map(|r| r.id.as_str()).collect();
        let mut sorted = ids.clone();
        sorted.sort();
        let mut generated: Vec<&str> = super::ALL.iter().map(|r| r.as_str()).collect();
        generated.sort();
        assert_eq!(generated, sorted);
        assert_eq!(
            super::infra_machine::PROVIDER_ID,
            "infra-machine/provider-id"
        );
        assert_eq!(
            super::RuleId::of("infra-machine/provider-id"),
            Some(super::infra_machine::PROVIDER_ID)
        );
        assert_eq!(super::RuleId::of("infra-machine/no-such-rule"), None);
    }
}

//! [`SharedStr`]: an immutable string whose clones share one allocation. The result model
//! repeats the same few strings in every cell (a rule id in each of its columns, a column's
//! provider and kind in each of its rules, a CRD's object name and input location in each
//! piece of evidence about it): 30k results for a 1,000-CRD input. Sharing them saves an
//! allocation and a copy per repeat. It reads, compares, hashes, prints and serialises exactly
//! like the `String` it replaces.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

#[derive(Clone, Default)]
pub struct SharedStr(Arc<str>);

// Hashes the text, as `Eq` compares it (and as `str` hashes: `Borrow<str>` lookups work).
impl std::hash::Hash for SharedStr {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

// Clones of one string compare without reading it: the results of one column share its
// provider and kind, the results of one rule its id.
impl PartialEq for SharedStr {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0 == other.0
    }
}

impl Eq for SharedStr {}

impl Ord for SharedStr {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        if Arc::ptr_eq(&self.0, &other.0) {
            std::cmp::Ordering::Equal
        } else {
            self.0.cmp(&other.0)
        }
    }
}

impl PartialOrd for SharedStr {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl SharedStr {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Deref for SharedStr {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for SharedStr {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for SharedStr {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

impl fmt::Debug for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl From<String> for SharedStr {
    fn from(s: String) -> Self {
        SharedStr(s.into())
    }
}

impl From<&str> for SharedStr {
    fn from(s: &str) -> Self {
        SharedStr(s.into())
    }
}

impl From<&String> for SharedStr {
    fn from(s: &String) -> Self {
        SharedStr(s.as_str().into())
    }
}

impl From<SharedStr> for String {
    fn from(s: SharedStr) -> Self {
        s.0.to_string()
    }
}

impl PartialEq<str> for SharedStr {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for SharedStr {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl PartialEq<String> for SharedStr {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<SharedStr> for str {
    fn eq(&self, other: &SharedStr) -> bool {
        self == &*other.0
    }
}

impl PartialEq<SharedStr> for &str {
    fn eq(&self, other: &SharedStr) -> bool {
        *self == &*other.0
    }
}

impl PartialEq<SharedStr> for String {
    fn eq(&self, other: &SharedStr) -> bool {
        **self == *other.0
    }
}

impl Serialize for SharedStr {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for SharedStr {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(SharedStr::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_compares_and_serialises_like_a_string() {
        let a = SharedStr::from("all/api-group");
        let b = a.clone();
        assert!(
            std::ptr::eq(a.as_str(), b.as_str()),
            "clones share the text"
        );
        assert_eq!(a, "all/api-group");
        assert_eq!("all/api-group", a);
        assert_eq!(a, String::from("all/api-group"));
        let later = SharedStr::from("all/b");
        assert!(a < later);
        assert_eq!(later.cmp(&a), std::cmp::Ordering::Greater);
        assert_eq!(a.cmp(&b), std::cmp::Ordering::Equal);
        assert_eq!(
            a,
            SharedStr::from("all/api-group"),
            "equal text, separate allocations"
        );
        assert_eq!(format!("{a} {a:?}"), "all/api-group \"all/api-group\"");
        let json = serde_json::to_string(&a).unwrap();
        assert_eq!(json, "\"all/api-group\"");
        assert_eq!(serde_json::from_str::<SharedStr>(&json).unwrap(), a);
        let mut set = std::collections::HashSet::new();
        set.insert(a);
        assert!(set.contains("all/api-group"));
    }
}

//! Kube-aware version ordering, as apimachinery's `CompareKubeAwareVersionStrings`:
//! `v2 > v1 > v1beta2 > v1beta1 > v1alpha1 > (non-kube-like strings)`. kube-apiserver orders
//! API versions this way (discovery, a CRD's preferred version), and Cluster API picks the
//! version a contract label maps to this way.
//!
//! One implementation for the whole workspace: the embedded API server and the contract crate
//! both need it and may not depend on each other. `kube::core::Version` is close but not the
//! same order: it reads `v1beta` and `v1alpha` (no number) as pre-releases, where apimachinery
//! calls them non-kube-like, and it caps numbers at `u32`, where Go's `Atoi` takes an `int`.
//!
//! **Never depends on** anything: no crate of capi-conformance, no third-party crate.

use std::cmp::Ordering;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Stability {
    Alpha,
    Beta,
    Ga,
}

/// `(major, stability, minor)` for strings shaped `v<N>[alpha|beta<M>]`, else `None`.
fn parse(v: &str) -> Option<(i64, Stability, i64)> {
    let rest = v.strip_prefix('v')?;
    let major_len = rest.bytes().take_while(u8::is_ascii_digit).count();
    if major_len == 0 {
        return None;
    }
    let major: i64 = rest[..major_len].parse().ok()?;
    let tail = &rest[major_len..];
    if tail.is_empty() {
        return Some((major, Stability::Ga, 0));
    }
    let (stability, minor) = if let Some(m) = tail.strip_prefix("alpha") {
        (Stability::Alpha, m)
    } else if let Some(m) = tail.strip_prefix("beta") {
        (Stability::Beta, m)
    } else {
        return None;
    };
    if minor.is_empty() || !minor.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((major, stability, minor.parse().ok()?))
}

/// True for strings shaped `v<N>[alpha|beta<M>]`.
pub fn is_kube_like(v: &str) -> bool {
    parse(v).is_some()
}

/// Compares two version strings the way Kubernetes (and so CAPI) orders them.
/// `Ordering::Greater` means `a` is the newer/preferred version.
pub fn compare(a: &str, b: &str) -> Ordering {
    if a == b {
        return Ordering::Equal;
    }
    match (parse(a), parse(b)) {
        // apimachinery: strings.Compare(v2, v1), i.e. reversed lexical order.
        (None, None) => b.cmp(a),
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some((ma, sa, na)), Some((mb, sb, nb))) => sa.cmp(&sb).then(ma.cmp(&mb)).then(na.cmp(&nb)),
    }
}

/// Sorts ascending (oldest first, so the last element is the one CAPI picks).
pub fn sort_ascending<S: AsRef<str>>(versions: &mut [S]) {
    versions.sort_by(|a, b| compare(a.as_ref(), b.as_ref()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kube_order() {
        let mut v = vec![
            "v1alpha1", "v1", "foo", "v1beta2", "v2", "v1beta1", "v10", "v2alpha3", "bar",
        ];
        sort_ascending(&mut v);
        assert_eq!(
            v,
            vec![
                "foo", "bar", "v1alpha1", "v2alpha3", "v1beta1", "v1beta2", "v1", "v2", "v10"
            ]
        );
    }

    #[test]
    fn pre_releases_without_a_number_are_not_kube_like() {
        // apimachinery's regexp `^v\d+(?:(alpha|beta)\d+)?$`: `v1beta` is a plain string, so
        // below every kube-like version, and ordered with other plain strings in reverse.
        assert_eq!(compare("v1beta", "v1alpha1"), Ordering::Less);
        assert_eq!(compare("v1alpha", "v1beta"), Ordering::Greater);
        assert_eq!(compare("v1beta", "foo"), Ordering::Less);
    }

    #[test]
    fn non_kube_like() {
        for s in [
            "", "v", "1", "v1gamma1", "vbeta1", "v1beta", "v1beta1x", "V1", "v1.2",
        ] {
            assert!(!is_kube_like(s), "{s}");
        }
        assert!(is_kube_like("v1beta10"));
        // A number above u32 (where kube::core::Version stops) but within Go's int.
        assert!(is_kube_like("v5000000000"));
        assert_eq!(compare("v5000000000", "v4"), Ordering::Greater);
        // Overflowing numbers are not kube-like (Go's Atoi fails).
        assert!(!is_kube_like("v99999999999999999999"));
    }
}

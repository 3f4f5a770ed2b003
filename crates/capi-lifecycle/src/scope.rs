//! Where a scenario's objects live: in the run's namespace, or (a kind whose CRD says
//! `spec.scope: Cluster`, e.g. an IPAM provider's global pool) at the cluster level. Every
//! create, read, watch and delete of the tool asks [`Scopes`], which knows the cluster-scoped
//! kinds of the run from their CRDs ([`ClusterScopedKinds::of_inventory`]).
//!
//! A cluster-scoped object has no namespace to keep two sides (baseline and target) or two
//! runs apart, so its name carries a tag of the side's namespace ([`Scopes::name`]); reports
//! show the name without it ([`Scopes::display`]), so two runs report the same names.

use capi_contract::inventory::Inventory;
use kube::discovery::ApiResource;
use std::collections::BTreeSet;
use std::sync::Arc;

/// The `spec.scope` of a CRD whose objects have no namespace.
pub const CLUSTER_SCOPE: &str = "Cluster";

/// The cluster-scoped kinds of a run, by (group, kind).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClusterScopedKinds(Arc<BTreeSet<(String, String)>>);

impl ClusterScopedKinds {
    /// The kinds whose CRD (among the inventory's) has `spec.scope: Cluster`.
    pub fn of_inventory(inv: &Inventory) -> ClusterScopedKinds {
        ClusterScopedKinds::of(
            inv.providers
                .iter()
                .flat_map(|p| &p.crds)
                .filter(|c| c.crd.scope == CLUSTER_SCOPE)
                .map(|c| (c.crd.group.clone(), c.crd.kind.clone())),
        )
    }

    /// The given (group, kind) pairs.
    pub fn of(kinds: impl IntoIterator<Item = (String, String)>) -> ClusterScopedKinds {
        ClusterScopedKinds(Arc::new(kinds.into_iter().collect()))
    }

    pub fn contains(&self, group: &str, kind: &str) -> bool {
        self.0
            .iter()
            .any(|(g, k)| g.as_str() == group && k.as_str() == kind)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// One side's view of where objects live: the run namespace for namespaced kinds, the cluster
/// for the [`ClusterScopedKinds`].
#[derive(Debug, Clone, Default)]
pub struct Scopes {
    kinds: ClusterScopedKinds,
    /// `-<tag>`: what a cluster-scoped object's name gets (empty: no cluster-scoped kind).
    suffix: String,
}

impl Scopes {
    /// The scopes of a side whose namespaced objects live in `namespace`.
    pub fn new(kinds: ClusterScopedKinds, namespace: &str) -> Scopes {
        let suffix = if kinds.is_empty() {
            String::new()
        } else {
            format!("-{:08x}", fnv1a(namespace.as_bytes()))
        };
        Scopes { kinds, suffix }
    }

    /// Whether objects of `resource` have no namespace.
    pub fn is_cluster_scoped(&self, resource: &ApiResource) -> bool {
        self.kinds.contains(&resource.group, &resource.kind)
    }

    /// Whether objects of `group`/`kind` have no namespace.
    pub fn kind_is_cluster_scoped(&self, group: &str, kind: &str) -> bool {
        self.kinds.contains(group, kind)
    }

    /// The namespace objects of `resource` are written in: `namespace`, or `None` for a
    /// cluster-scoped kind.
    pub fn namespace_of<'a>(&self, resource: &ApiResource, namespace: &'a str) -> Option<&'a str> {
        (!self.is_cluster_scoped(resource)).then_some(namespace)
    }

    /// The name the tool gives an object of `group`/`kind` it calls `base`: `base` itself for a
    /// namespaced kind, `base-<tag>` (the tag names the side's namespace; at most 63
    /// characters in all) for a cluster-scoped one.
    pub fn name(&self, group: &str, kind: &str, base: &str) -> String {
        if !self.kind_is_cluster_scoped(group, kind) {
            return base.to_string();
        }
        self.tagged(base)
    }

    /// `base` with the side's tag (see [`Self::name`]).
    pub fn tagged(&self, base: &str) -> String {
        let room = 63usize.saturating_sub(self.suffix.len());
        let cut: String = base.chars().take(room).collect();
        format!("{}{}", cut.trim_end_matches(['-', '.']), self.suffix)
    }

    /// `text` with the side's tag removed from the names in it (what reports show: the same
    /// names in every run).
    pub fn display(&self, text: &str) -> String {
        if self.suffix.is_empty() {
            text.to_string()
        } else {
            text.replace(&self.suffix, "")
        }
    }
}

/// FNV-1a (32 bit): a short, stable tag of a namespace name.
fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5u32, |h, b| {
        (h ^ u32::from(*b)).wrapping_mul(0x0100_0193)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resource(group: &str, kind: &str) -> ApiResource {
        ApiResource {
            group: group.into(),
            version: "v1".into(),
            api_version: format!("{group}/v1"),
            kind: kind.into(),
            plural: format!("{}s", kind.to_lowercase()),
        }
    }

    #[test]
    fn cluster_scoped_kinds_have_no_namespace_and_a_tagged_name_per_side() {
        let kinds = ClusterScopedKinds::of([("ipam.example.com".into(), "GlobalPool".into())]);
        let target = Scopes::new(kinds.clone(), "capi-conformance-1234");
        let baseline = Scopes::new(kinds, "capi-conformance-1234-baseline");
        let global = resource("ipam.example.com", "GlobalPool");
        let local = resource("ipam.example.com", "Pool");
        assert!(target.is_cluster_scoped(&global));
        assert_eq!(target.namespace_of(&global, "ns"), None);
        assert_eq!(target.namespace_of(&local, "ns"), Some("ns"));
        assert_eq!(target.name("ipam.example.com", "Pool", "p"), "p");
        let (t, b) = (
            target.name("ipam.example.com", "GlobalPool", "p"),
            baseline.name("ipam.example.com", "GlobalPool", "p"),
        );
        assert_ne!(t, b);
        assert!(t.starts_with("p-") && t.len() == 2 + 8, "{t}");
        assert_eq!(
            target.display(&format!("GlobalPool {t} lost it")),
            "GlobalPool p lost it"
        );
        let long = target.tagged(&"x".repeat(80));
        assert_eq!(long.len(), 63);
        assert_eq!(target.display(&long), "x".repeat(54));
    }

    #[test]
    fn without_cluster_scoped_kinds_nothing_is_renamed() {
        let s = Scopes::new(ClusterScopedKinds::default(), "ns");
        assert_eq!(s.display("a-b"), "a-b");
        assert!(!s.is_cluster_scoped(&resource("g", "K")));
    }
}

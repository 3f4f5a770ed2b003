//! Port of gobuffalo/flect v1.0.3 `Pluralize`, which CAPI's `CalculateCRDName` uses, plus
//! apimachinery's naive plural guess (for explaining why the naive guess is wrong).
//!
//! flect's algorithm, for input `s` whose last word (see the `words` module) is `w`:
//! 1. `s` is a dictionary singular → its plural; `s` is a known plural → `s`.
//! 2. `lower(w)` is a known plural → `s`; `lower(w)` is a dictionary singular → `s` with `w`
//!    replaced by the plural (capitalised when `w` is).
//! 3. The first suffix rule matching `w` wins. Rules come from the non-exact dictionary words
//!    (last word first) and then the suffix list; each rule is preceded by a no-op rule for
//!    its plural suffix, so words already in plural form stay unchanged.
//! 4. Otherwise `s` stays unchanged when `lower(w)` ends in `s`, else gets an `s` appended.
//!
//! Only flect's built-in tables are used: CAPI binaries never load an `inflections.json`.

mod tables;
mod words;

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

use tables::{DICTIONARY, SUFFIXES};

/// A suffix rewrite: `suffix` is replaced by `replacement`, or the word is kept as is.
#[derive(Debug, Clone, Copy)]
struct SuffixRule {
    suffix: &'static str,
    replacement: Option<&'static str>,
}

impl SuffixRule {
    fn apply(self, word: &str) -> String {
        match self.replacement {
            Some(replacement) => {
                let stem = word.strip_suffix(self.suffix).unwrap_or(word);
                format!("{stem}{replacement}")
            }
            None => word.to_owned(),
        }
    }
}

/// Dictionary singular → plural (flect's `singleToPlural`).
static SINGULAR_TO_PLURAL: LazyLock<HashMap<&'static str, &'static str>> =
    LazyLock::new(|| DICTIONARY.iter().map(|w| (w.singular, w.plural)).collect());

/// Words flect knows to be plural already (the keys of flect's `pluralToSingle`).
static KNOWN_PLURALS: LazyLock<HashSet<&'static str>> = LazyLock::new(|| {
    DICTIONARY
        .iter()
        .filter(|w| !w.one_way)
        .flat_map(|w| std::iter::once(w.plural).chain(w.alternative))
        .collect()
});

/// flect's `pluralRules`, in priority order.
static PLURAL_RULES: LazyLock<Vec<SuffixRule>> = LazyLock::new(|| {
    let pair = |singular: &'static str, plural: &'static str| {
        [
            SuffixRule {
                suffix: plural,
                replacement: None,
            },
            SuffixRule {
                suffix: singular,
                replacement: Some(plural),
            },
        ]
    };
    let from_dictionary = DICTIONARY
        .iter()
        .rev()
        .filter(|w| !w.exact)
        .flat_map(|w| pair(w.singular, w.plural));
    let from_suffixes = SUFFIXES
        .iter()
        .flat_map(|&(singular, plural)| pair(singular, plural));
    from_dictionary.chain(from_suffixes).collect()
});

/// flect v1.0.3 `Pluralize(s)`. CAPI applies it to the lower-cased kind.
pub fn pluralize(s: &str) -> String {
    let Some(last) = words::last_word(s) else {
        return String::new();
    };
    if let Some(plural) = SINGULAR_TO_PLURAL.get(s) {
        return (*plural).to_owned();
    }
    if KNOWN_PLURALS.contains(s) {
        return s.to_owned();
    }

    let lower = words::go_lower(&last);
    if KNOWN_PLURALS.contains(lower.as_str()) {
        return s.to_owned();
    }
    if let Some(plural) = SINGULAR_TO_PLURAL.get(lower.as_str()) {
        let plural = if last == words::capitalize(&last) {
            words::capitalize(plural)
        } else {
            (*plural).to_owned()
        };
        return replace_suffix(s, &last, &plural);
    }
    // The last byte is compared first: most rules end in another letter.
    let last_byte = last.as_bytes().last();
    if let Some(rule) = PLURAL_RULES
        .iter()
        .find(|r| match r.suffix.as_bytes().last() {
            Some(b) => last_byte == Some(b) && last.ends_with(r.suffix),
            None => true,
        })
    {
        return replace_suffix(s, &last, &rule.apply(&last));
    }
    if lower.ends_with('s') {
        return s.to_owned();
    }
    format!("{s}s")
}

/// flect's `Ident.ReplaceSuffix`: `whole` without the suffix `old` (when it has it), then `new`.
/// When the last word was upper-cased as an acronym it is not a suffix of `whole`, which
/// gives flect's quirk `dns` → `dnsDNSes`.
fn replace_suffix(whole: &str, old: &str, new: &str) -> String {
    let stem = whole.strip_suffix(old).unwrap_or(whole);
    format!("{stem}{new}")
}

/// CAPI's `CalculateCRDName(group, kind)`: `pluralize(lower(kind)) + "." + group`.
pub fn crd_name(group: &str, kind: &str) -> String {
    format!("{}.{}", pluralize(&words::go_lower(kind)), group)
}

/// apimachinery's `UnsafeGuessKindToResource` plural: lower-case, then `…s` → `…ses`,
/// `…y` → `…ies`, else append `s`. Used only to explain how it differs from flect.
pub fn naive_plural(kind: &str) -> String {
    let lower = words::go_lower(kind);
    if lower.is_empty() {
        return lower;
    }
    if lower.ends_with('s') {
        format!("{lower}es")
    } else if let Some(stem) = lower.strip_suffix('y') {
        format!("{stem}ies")
    } else {
        format!("{lower}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The examples of docs/contract.md §2 and more, as (kind, expected plural).
    const CONTRACT_RULES_EXAMPLES: &[(&str, &str)] = &[
        ("FooCluster", "fooclusters"),
        ("FooClusterTemplate", "fooclustertemplates"),
        ("FooMachine", "foomachines"),
        ("FooMachineTemplate", "foomachinetemplates"),
        ("FooMachinePool", "foomachinepools"),
        ("FooMachinePoolTemplate", "foomachinepooltemplates"),
        ("FooConfig", "fooconfigs"),
        ("FooConfigTemplate", "fooconfigtemplates"),
        ("FooControlPlane", "foocontrolplanes"),
        ("FooControlPlaneTemplate", "foocontrolplanetemplates"),
        ("FooProxy", "fooproxies"),
        ("FooPolicy", "foopolicies"),
        ("FooIdentity", "fooidentities"),
        ("FooRegistry", "fooregistries"),
        ("FooGateway", "foogateways"),
        ("FooKey", "fookeys"),
        ("FooAddress", "fooaddresses"),
        ("FooIPAddress", "fooipaddresses"),
        ("FooAccess", "fooaccesses"),
        ("FooStatus", "foostatuses"),
        ("FooVirus", "fooviruses"),
        ("FooCampus", "foocampuses"),
        ("FooIndex", "fooindices"),
        ("FooMatrix", "foomatrices"),
        ("FooBox", "fooboxes"),
        ("FooHash", "foohashes"),
        ("FooWatch", "foowatches"),
        ("FooQuiz", "fooquizzes"),
        ("FooInfo", "fooinfoes"),
        ("FooVideo", "foovideoes"),
        ("FooHero", "fooheroes"),
        ("FooRadio", "fooradios"),
        ("FooPhoto", "foophotos"),
        ("FooPiano", "foopianos"),
        ("FooData", "foodata"),
        ("FooMetadata", "foometadata"),
        ("Metal3Data", "metal3data"),
        ("FooBeta", "foobeta"),
        ("FooOS", "fooos"),
        ("FooAlias", "fooalias"),
        ("FooAxis", "fooaxis"),
        ("FooCanvas", "foocanvas"),
        ("FooDNS", "foodns"),
        ("FooAKS", "fooaks"),
        ("FooSeries", "fooseries"),
        ("FooSpecies", "foospecies"),
        ("FooNews", "foonews"),
        ("FooSheep", "foosheep"),
        ("FooEquipment", "fooequipment"),
        ("FooChild", "foochildren"),
        ("FooPerson", "foopeople"),
        ("FooMan", "foomen"),
        ("FooHuman", "foohumans"),
        ("FooLeaf", "fooleaves"),
        ("FooOctopus", "foooctupuses"),
        ("FooVM", "foovms"),
        ("VSphereVM", "vspherevms"),
        ("FooIPPool", "fooippools"),
        ("InClusterIPPool", "inclusterippools"),
        ("KubeadmConfig", "kubeadmconfigs"),
    ];

    #[test]
    fn contract_rules_examples() {
        let mismatches: Vec<String> = CONTRACT_RULES_EXAMPLES
            .iter()
            .filter_map(|&(kind, want)| {
                let got = pluralize(&kind.to_lowercase());
                (got != want).then(|| format!("{kind}: got {got}, want {want}"))
            })
            .collect();
        assert!(mismatches.is_empty(), "{mismatches:#?}");
    }

    #[test]
    fn crd_name_is_plural_dot_group() {
        assert_eq!(
            crd_name("infrastructure.cluster.x-k8s.io", "FooConfig"),
            "fooconfigs.infrastructure.cluster.x-k8s.io"
        );
        assert_eq!(crd_name("g.io", "FooProxy"), "fooproxies.g.io");
        assert_eq!(crd_name("g.io", "Metal3Data"), "metal3data.g.io");
    }

    #[test]
    fn whole_word_acronym_quirk() {
        assert_eq!(pluralize("dns"), "dnsDNSes");
        assert_eq!(pluralize("ip"), "ips");
        assert_eq!(pluralize("id"), "ids");
        assert_eq!(pluralize("ID"), "IDs");
    }

    #[test]
    fn exact_words_match_only_whole() {
        assert_eq!(pluralize("alias"), "aliases");
        assert_eq!(pluralize("axis"), "axes");
        assert_eq!(pluralize("ox"), "oxen");
        assert_eq!(pluralize("box"), "boxes");
        assert_eq!(pluralize("toe"), "toes");
        assert_eq!(pluralize("tiptoe"), "tiptoes");
    }

    #[test]
    fn only_the_last_word_is_inflected() {
        assert_eq!(pluralize("foo-child"), "foo-children");
        assert_eq!(pluralize("foo_bar"), "foo_bars");
        assert_eq!(pluralize("FooChild"), "FooChildren");
        assert_eq!(pluralize("Child"), "Children");
    }

    #[test]
    fn known_plurals_and_empty_input_are_kept() {
        assert_eq!(pluralize("people"), "people");
        assert_eq!(pluralize("octopi"), "octopi");
        assert_eq!(pluralize(""), "");
        assert_eq!(pluralize("  "), "");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(10_000))]

        /// Arbitrary (including non-ASCII) input never panics and never loses the word.
        #[test]
        fn pluralize_never_panics(s in "\\PC*") {
            let plural = pluralize(&s);
            if !s.trim().is_empty() && plural.is_empty() {
                // Only inputs with no word characters at all may pluralize to "".
                proptest::prop_assert!(words::last_word(&s).is_none(), "{s:?} lost");
            }
            let _ = crd_name("g.io", &s);
            let _ = naive_plural(&s);
        }

        /// Mixed separators, acronyms and case, which exercise the word splitter.
        #[test]
        fn pluralize_never_panics_on_identifier_like_input(
            s in "([A-Za-z0-9İıſßǆΣ_:/ -]|DNS|IP|ID){0,12}"
        ) {
            let _ = pluralize(&s);
            let _ = pluralize(&s.to_lowercase());
        }
    }

    #[test]
    fn naive_guess_rules() {
        assert_eq!(naive_plural("FooCluster"), "fooclusters");
        assert_eq!(naive_plural("FooAddress"), "fooaddresses");
        assert_eq!(naive_plural("FooStatus"), "foostatuses");
        assert_eq!(naive_plural("FooAlias"), "fooaliases");
        assert_eq!(naive_plural("FooProxy"), "fooproxies");
        assert_eq!(naive_plural("FooGateway"), "foogatewaies");
        assert_eq!(naive_plural("FooData"), "foodatas");
        assert_eq!(naive_plural(""), "");
    }

    #[test]
    fn naive_guess_differs_from_flect_where_documented() {
        for kind in [
            "FooGateway",
            "FooKey",
            "FooData",
            "FooIndex",
            "FooAlias",
            "FooChild",
        ] {
            let lower = kind.to_lowercase();
            assert_ne!(naive_plural(kind), pluralize(&lower), "{kind}");
        }
        for kind in ["FooCluster", "FooProxy", "FooAddress"] {
            let lower = kind.to_lowercase();
            assert_eq!(naive_plural(kind), pluralize(&lower), "{kind}");
        }
    }
}

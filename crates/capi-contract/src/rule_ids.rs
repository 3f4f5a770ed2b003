//! Typed rule ids: one constant per catalog rule, generated from `suites/*.yaml` at build time
//! (`build.rs`), in a module per id prefix: `infra-machine/provider-id` is
//! [`infra_machine::PROVIDER_ID`]. Code naming a rule uses these, so a misspelt or removed id is
//! a compile error instead of a rule that silently never matches.

include!(concat!(env!("OUT_DIR"), "/rule_ids.rs"));

#[cfg(test)]
mod tests {
    use crate::suite::Catalog;

    #[test]
    fn the_constants_are_the_catalog() {
        let catalog = Catalog::embedded().unwrap();
        let ids: Vec<&str> = catalog.rules().iter().map(|r| r.id.as_str()).collect();
        let mut sorted = ids.clone();
        sorted.sort();
        let mut generated = super::ALL.to_vec();
        generated.sort();
        assert_eq!(generated, sorted);
        assert_eq!(
            super::infra_machine::PROVIDER_ID,
            "infra-machine/provider-id"
        );
    }
}

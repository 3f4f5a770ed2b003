//! `kubectl capi-conformance`: the same tool, installed under the name kubectl looks for.

/// The same allocator as `capi-conformance` ([`capi_conformance::allocator`]).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    capi_conformance::allocator::purge_at_once();
    capi_conformance::entry::run_main(true)
}

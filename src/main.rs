/// mimalloc instead of the system allocator: the embedded API server allocates and frees many
/// small JSON nodes per request (glibc malloc was about a quarter of its CPU time); its arenas
/// return freed pages at once ([`capi_conformance::allocator`]).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    capi_conformance::allocator::purge_at_once();
    let argv0 = std::env::args_os().next();
    let caller = std::env::var_os(capi_conformance::entry::KUBECTL_PLUGINS_CALLER);
    let as_plugin = capi_conformance::entry::invoked_as_plugin(argv0.as_ref(), caller.as_ref());
    capi_conformance::entry::run_main(as_plugin)
}

//! `kubectl capi-conformance`: the same tool, installed under the name kubectl looks for.

fn main() {
    capi_conformance::entry::run_main(true)
}

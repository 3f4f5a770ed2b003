//! Property-based fuzzing. `cargo fuzz` is not installed on CI machines, so
//! these proptests cover the same entry points with ≥ 10,000 generated cases each:
//! the manifest loader (bytes and YAML/JSON documents → inventory), the schema walker of the
//! static checks, the label/field-selector parsers and the embedded server's request decoding.
//!
//! `FUZZ_CASES` overrides the case count (e.g. `FUZZ_CASES=200000` for a long run).

#[path = "fuzz/generators.rs"]
mod generators;

#[path = "fuzz/manifests.rs"]
mod manifests;
#[path = "fuzz/selectors.rs"]
mod selectors;
#[path = "fuzz/server.rs"]
mod server;

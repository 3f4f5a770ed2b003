//! Integration tests of the static engine and `lint`: fixtures, the catalog walk over
//! violations, the real-provider corpus, bad input, determinism.

#[path = "lint/generate.rs"]
mod generate;
#[path = "shared/shared_data.rs"]
mod shared_data;
#[path = "lint/support.rs"]
mod support;

#[path = "lint/bad_input.rs"]
mod bad_input;
#[path = "lint/conformant.rs"]
mod conformant;
#[path = "lint/corpus.rs"]
mod corpus;
#[path = "lint/kustomize.rs"]
mod kustomize;
#[path = "lint/repos.rs"]
mod repos;
#[path = "lint/violations.rs"]
mod violations;
#[path = "lint/waivers.rs"]
mod waivers;

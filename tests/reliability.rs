//! Reliability: the same verdict on every run and under server faults,
//! nothing left behind after any kind of ending, no Secret payload in any output.

#[path = "reliability/cleanup.rs"]
mod cleanup;
#[path = "reliability/common.rs"]
mod common;
#[path = "reliability/determinism.rs"]
mod determinism;
#[path = "reliability/faults.rs"]
mod faults;
#[path = "reliability/leaks.rs"]
mod leaks;
#[path = "shared/manifests.rs"]
mod manifests;
#[path = "reliability/races.rs"]
mod races;
#[path = "reliability/serve.rs"]
mod serve;
#[path = "shared/signals.rs"]
mod signals;

//! `check` and the lifecycle scenarios against the embedded API server.

#[path = "scenarios/common.rs"]
mod common;
#[path = "scenarios/components.rs"]
mod components;
#[path = "shared/components_file.rs"]
mod components_file;
#[path = "scenarios/embedded.rs"]
mod embedded;
#[path = "scenarios/faults.rs"]
mod faults;
#[path = "shared/manifests.rs"]
mod manifests;
#[path = "scenarios/process.rs"]
mod process;
#[path = "shared/shared_data.rs"]
mod shared_data;
#[path = "shared/signals.rs"]
mod signals;
#[path = "scenarios/static_only.rs"]
mod static_only;

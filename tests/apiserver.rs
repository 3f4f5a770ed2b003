//! The embedded API server against emulator-spec §7 (checks 1–53) and real kube-rs clients.

#[path = "apiserver/basics.rs"]
mod basics;
#[path = "apiserver/common.rs"]
mod common;
#[path = "apiserver/crd.rs"]
mod crd;
#[path = "apiserver/deletion.rs"]
mod deletion;
#[path = "apiserver/discovery.rs"]
mod discovery;
#[path = "apiserver/patches.rs"]
mod patches;
#[path = "apiserver/schema.rs"]
mod schema;
#[path = "apiserver/status.rs"]
mod status;
#[path = "apiserver/watch.rs"]
mod watch;

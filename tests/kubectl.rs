//! docs/embedded-apiserver.md §7 checks 54–64: the real kubectl binaries against `capi-conformance serve`.
//! Every versioned binary `kubectl.1.29` … `kubectl.1.33` beside the `kubectl` on PATH is used;
//! absent ones are skipped with a printed reason.

#[path = "shared/components_file.rs"]
mod components_file;
#[path = "shared/shared_data.rs"]
mod shared_data;
#[path = "kubectl/support.rs"]
mod support;
#[path = "../crates/embedded-apiserver/tests/support/webhooks.rs"]
mod webhook_support;

#[path = "kubectl/checks.rs"]
mod checks;
#[path = "kubectl/components.rs"]
mod components;
#[path = "kubectl/endpoints.rs"]
mod endpoints;
#[path = "kubectl/objects.rs"]
mod objects;
#[path = "kubectl/serve.rs"]
mod serve;
#[path = "kubectl/webhooks.rs"]
mod webhooks;

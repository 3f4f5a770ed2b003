//! The embedded API server against docs/embedded-apiserver.md §7 checks 1–53 and real kube-rs clients.

#[path = "apiserver/apply_lists.rs"]
mod apply_lists;
#[path = "apiserver/basics.rs"]
mod basics;
#[path = "apiserver/client_certs.rs"]
mod client_certs;
#[path = "apiserver/common.rs"]
mod common;
#[path = "apiserver/crd.rs"]
mod crd;
#[path = "apiserver/deletion.rs"]
mod deletion;
#[path = "apiserver/discovery.rs"]
mod discovery;
#[path = "apiserver/endpoints.rs"]
mod endpoints;
#[path = "apiserver/extras.rs"]
mod extras;
#[path = "apiserver/fidelity.rs"]
mod fidelity;
#[path = "apiserver/kube_clients.rs"]
mod kube_clients;
#[path = "apiserver/managed_fields.rs"]
mod managed_fields;
#[path = "apiserver/measured.rs"]
mod measured;
#[path = "apiserver/more.rs"]
mod more;
#[path = "apiserver/patches.rs"]
mod patches;
#[path = "apiserver/python_client.rs"]
mod python_client;
#[path = "apiserver/rbac.rs"]
mod rbac;
#[path = "apiserver/schema.rs"]
mod schema;
#[path = "apiserver/status.rs"]
mod status;
#[path = "apiserver/watch.rs"]
mod watch;
#[path = "apiserver/webhook_admission.rs"]
mod webhook_admission;
#[path = "apiserver/webhook_conversion.rs"]
mod webhook_conversion;
#[path = "support/webhooks.rs"]
mod webhook_support;
#[path = "apiserver/webhook_tls.rs"]
mod webhook_tls;
#[path = "apiserver/webhooks.rs"]
mod webhooks;

//! See design.md.

pub mod protobuf;
pub mod rbac;
pub mod schema;
pub mod selector;
pub mod smp;

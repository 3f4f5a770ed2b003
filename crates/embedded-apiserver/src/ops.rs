//! The write pipeline and reads (docs/embedded-apiserver.md M3, M7, M10–M14): one code path for every
//! create, update, patch and delete, whether it came over HTTP or from a controller.

mod create;
mod delete;
mod options;
mod read;
mod steps;
mod update;
mod versions;

pub use self::create::create;
pub use self::delete::delete;
pub use self::options::{DeleteOpts, Deleted, UpdateKind, WriteOpts, Written, write_options};
pub use self::read::{get, get_shared, list};
pub use self::update::{
    PreparedUpdate, commit_if_unchanged, commit_update, prepare_update, update,
};
pub use self::versions::at_version;
pub use crate::target::{Target, present, presented};

#[cfg(test)]
mod tests;

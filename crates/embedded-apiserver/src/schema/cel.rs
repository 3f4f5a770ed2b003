//! A small CEL interpreter for CRD `x-kubernetes-validations` rules: the subset real provider
//! CRDs use (field selection, `has()`, comparisons, `&&`/`||`/`!`/`?:`, `in`, arithmetic,
//! list/map literals, `size`, string functions, `matches`, `isIP`/`isCIDR`, and the
//! `all`/`exists`/`exists_one`/`filter`/`map` macros). Anything outside the subset is reported
//! as [`CelError::Unsupported`] so the caller can skip the rule instead of guessing.

mod eval;
mod syntax;

pub use self::eval::{Env, eval};
pub use self::syntax::{CelError, Expr, parse, uses_old_self};

#[cfg(test)]
mod tests;

//! See design.md.

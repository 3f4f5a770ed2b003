//! Placeholder, filled in by a later commit.

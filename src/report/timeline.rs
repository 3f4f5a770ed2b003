//! Inline SVG timelines of scenario transitions.

//! Markdown for a GitHub PR comment or CI job summary.

use super::RenderOptions;
use super::model::Matrix;
use super::text;

pub(crate) fn render(m: &Matrix, _opts: &RenderOptions) -> String {
    format!("{}\n", text::summary_line(m))
}

//! Label and field selectors with kube-apiserver's syntax and error wording
//! (apimachinery `labels.Parse`, `metav1.LabelSelectorAsSelector`, `fields.ParseSelector`).

mod fields;
mod labels;
mod parse;

pub use self::fields::*;
pub use self::labels::*;

#[cfg(test)]
mod tests;

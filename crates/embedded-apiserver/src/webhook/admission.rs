//! Admission webhook dispatch (`webhook/mutating/dispatcher.go`, `webhook/validating/
//! dispatcher.go`, `webhook/request/admissionreview.go`, `webhook/errors/statuserror.go`):
//! AdmissionReview v1/v1beta1, response verification, JSONPatch application, reinvocation,
//! failure policies, dry run and side effects, and kube's error texts and codes.

mod attributes;
mod dispatch;
mod review;

pub use self::attributes::*;
pub use self::dispatch::*;
pub use self::review::*;

#[cfg(test)]
mod tests;

//! CRD `openAPIV3Schema` handling as apiextensions-apiserver does it: structural-schema checks,
//! the prune → default → validate pipeline for custom resources, and ObjectMeta validation.

pub mod names;

//! The built-in mock provider: manifests, CRDs, and (against the embedded API server) its
//! reconcilers per role × contract and per fault.

mod mock {
    pub mod manifests;
}

//! PATCH: JSON patch, merge patch, strategic merge patch and apply, retried on optimistic conflicts.

use serde_json::Value;

use crate::error::ApiError;
use crate::ops::{self, Target, UpdateKind, WriteOpts};
use crate::patch::{self, PatchType};
use crate::ssa;
use crate::state::EmbeddedServer;

/// Applies a patch of any type to the stored object and runs the update strategy.
pub(super) fn patch_object(
    store: &mut crate::store::Store,
    t: &Target,
    ptype: PatchType,
    body: Value,
    opts: &WriteOpts,
) -> Result<(ops::Written, u16), ApiError> {
    if ptype == PatchType::Apply {
        return ssa::apply(store, t, body, opts);
    }
    let current = ops::get_shared(store, t)?;
    let is_scale = t.subresource.as_deref() == Some("scale");
    let base = if is_scale {
        crate::scale::to_scale(t, &current)
    } else {
        ops::at_version(t, &current, opts.oracle.as_deref())?.into_owned()
    };
    let patched = apply_patch(t, ptype, base, &body)?;
    let w = if is_scale {
        crate::scale_write::write_scale(store, t, patched, UpdateKind::Patch, opts)?
    } else {
        ops::update(store, t, patched, UpdateKind::Patch, opts)?
    };
    Ok((w, 200))
}

/// A non-apply patch body applied to `base` (the object as the client's version presents it).
pub(super) fn apply_patch(
    t: &Target,
    ptype: PatchType,
    base: Value,
    body: &Value,
) -> Result<Value, ApiError> {
    match ptype {
        PatchType::Merge => patch::merge_into(base, body),
        PatchType::Json => patch::json_patch(&base, body),
        PatchType::Strategic => smp_patch(&base, body, &t.rt.kind),
        PatchType::Apply => Err(ApiError::internal("unreachable apply")),
    }
}

/// Optimistic attempts of [`patch_unlocked`] before it holds the lock throughout.
pub(super) const OPTIMISTIC_ATTEMPTS: usize = 8;

/// A non-apply patch of the main resource or `/status`, computed outside the store lock: the
/// stored object is read, patched and run through the update strategy unlocked, and the result
/// is committed only if the object was not written meanwhile; otherwise the patch is computed
/// again from the newer object (kube-apiserver's patcher retries on conflict the same way). The
/// lock is held only to read and to commit, so concurrent writers do not queue behind each
/// other's admission and managedFields work. After [`OPTIMISTIC_ATTEMPTS`] lost races the patch
/// runs under the lock.
pub(super) fn patch_unlocked(
    server: &EmbeddedServer,
    t: &Target,
    ptype: PatchType,
    body: Value,
    opts: &WriteOpts,
) -> Result<ops::Written, ApiError> {
    for _ in 0..OPTIMISTIC_ATTEMPTS {
        let current = ops::get_shared(&server.lock(), t)?;
        let base = ops::present(&t.rt, &t.version, (*current).clone());
        let patched = apply_patch(t, ptype, base, &body)?;
        let prepared = ops::prepare_update(t, Some(&current), patched, UpdateKind::Patch, opts)?;
        if let Ok(w) = ops::commit_if_unchanged(&mut server.lock(), t, prepared) {
            return Ok(w);
        }
    }
    let mut store = server.lock();
    patch_object(&mut store, t, ptype, body, opts).map(|(w, _)| w)
}

/// Strategic merge patch for built-ins, by [`smp`].
pub(super) fn smp_patch(original: &Value, patch: &Value, kind: &str) -> Result<Value, ApiError> {
    crate::smp::apply(original, patch, kind).map_err(|e| ApiError::bad_request(e.to_string()))
}

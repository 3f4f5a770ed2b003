//! A stored object at the version a request asked, and a written one at the storage version (conversion by webhook through the oracle, else the apiVersion rewritten).

use serde_json::Value;

use super::steps::*;
use crate::error::ApiError;
use crate::target::{Target, present, presented};
use crate::webhook::oracle::Oracle;

/// A stored object at the target's version: a conversion webhook answer when the CRD converts
/// by webhook (asked through the oracle), else [`presented`]. Without an oracle (internal
/// writers) the apiVersion is rewritten.
pub fn at_version<'a>(
    t: &Target,
    obj: &'a Value,
    oracle: Option<&Oracle>,
) -> Result<std::borrow::Cow<'a, Value>, ApiError> {
    match oracle {
        Some(o) if t.rt.conversion.is_some() => Ok(std::borrow::Cow::Owned(
            o.convert_stored(obj.clone(), &t.version)?,
        )),
        _ => Ok(presented(&t.rt, &t.version, obj)),
    }
}

/// An object at the target's version converted to the storage version.
pub(super) fn to_storage(
    t: &Target,
    obj: Value,
    oracle: Option<&Oracle>,
) -> Result<Value, ApiError> {
    let storage = storage_name(&t.rt, &t.version).to_string();
    match oracle {
        Some(o) if t.rt.conversion.is_some() => {
            let converted = needs_conversion_to(t, &obj, &storage);
            let mut obj = o.convert(obj, &storage)?;
            // kube-apiserver defaults what it reads back from etcd with the storage version's
            // defaults; a converted object gets them here, before it is stored.
            if converted
                && let Some(schema) = t.rt.version(&storage).and_then(|v| v.schema.as_ref())
            {
                crate::schema::apply_defaults(&mut obj, schema);
            }
            Ok(obj)
        }
        _ => {
            let converted = t.rt.custom && needs_conversion_to(t, &obj, &storage);
            let mut obj = present(&t.rt, &storage, obj);
            // Strategy None too: what kube reads back is defaulted at the storage version.
            if converted
                && let Some(schema) = t.rt.version(&storage).and_then(|v| v.schema.as_ref())
            {
                crate::schema::apply_defaults(&mut obj, schema);
            }
            Ok(obj)
        }
    }
}

pub(super) fn needs_conversion_to(t: &Target, obj: &Value, version: &str) -> bool {
    crate::webhook::crd_conversion::needs_conversion(obj, &t.rt.api_version(version))
}

//! LIST responses (docs/embedded-apiserver.md S5): `limit`/`continue` bound to the first page's snapshot,
//! `resourceVersion` with `resourceVersionMatch` (`Exact`, `NotOlderThan`) and kube-apiserver's
//! `ListOptions` validation.
//!
//! Like etcd, a continued page and an `Exact` read show the collection as it was at the snapshot
//! resourceVersion, rebuilt from the current objects by undoing the retained event history; a
//! snapshot older than that history is `410 Expired`.

use std::borrow::Cow;
use std::collections::BTreeMap;

use base64::Engine as _;
use serde_json::{Value, json};

use super::error::{ApiError, StatusCause};
use super::filter::Filter;
use super::meta;
use super::ops::Target;
use super::query::Query;
use super::store::{EventType, Store};

/// The `v` of kube-apiserver's continue token.
const TOKEN_VERSION: &str = "meta.k8s.io/v1";

const LIST_EXPIRED: &str = "The resourceVersion for the provided list is too old.";

const CONTINUE_EXPIRED: &str = "The provided continue parameter is too old to display a consistent list result. \
You can start a new list without the continue parameter, or use the continue token in this response to retrieve \
the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that \
were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.";

/// A decoded continue token: the snapshot RV (`-1`: the latest state, as in the token a 410
/// hands out) and the key after which the next page starts.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ContinueToken {
    rv: i64,
    start: String,
}

fn encode_continue(rv: i64, last_key: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(
        json!({"v": TOKEN_VERSION, "rv": rv, "start": format!("{last_key}\u{0}")}).to_string(),
    )
}

fn decode_continue(token: &str) -> Result<ContinueToken, ApiError> {
    let invalid = |why: &str| ApiError::bad_request(format!("invalid continue token: {why}"));
    // Go's RawURLEncoding: lenient about the last symbol's unused bits.
    let engine = base64::engine::GeneralPurpose::new(
        &base64::alphabet::URL_SAFE,
        base64::engine::GeneralPurposeConfig::new()
            .with_encode_padding(false)
            .with_decode_allow_trailing_bits(true)
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::RequireNone),
    );
    let raw = engine
        .decode(token)
        .map_err(|e| invalid(&format!("continue key is not valid: {e}")))?;
    let v: Value = serde_json::from_slice(&raw).map_err(|e| {
        invalid(&format!(
            "continue key is not valid: {}",
            crate::gojson::syntax_error(&raw, &e)
        ))
    })?;
    if v.get("v").and_then(Value::as_str) != Some(TOKEN_VERSION) {
        return Err(invalid(
            "continue key is not valid: server does not recognize this encoded version",
        ));
    }
    let rv = v.get("rv").and_then(Value::as_i64).unwrap_or(0);
    if rv == 0 {
        return Err(invalid(
            "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
        ));
    }
    let start = v.get("start").and_then(Value::as_str).unwrap_or_default();
    if start.is_empty() {
        return Err(invalid(
            "continue key is not valid: encoded start key empty (version meta.k8s.io/v1)",
        ));
    }
    Ok(ContinueToken {
        rv,
        start: start.to_string(),
    })
}

/// Which state of the collection a list shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Read {
    /// The current state (RV unset, `0`, or `NotOlderThan` a past RV).
    Latest,
    /// Exactly the state at this RV.
    At(u64),
}

fn parse_rv(s: &str) -> Result<u64, ApiError> {
    s.parse::<u64>().map_err(|_| {
        ApiError::bad_request(format!("invalid resource version: {}", rv_syntax_error(s)))
    })
}

/// kube's error for a resourceVersion that is not a number:
/// `resourceVersion: Invalid value: "x": strconv.ParseUint: parsing "x": invalid syntax`.
pub fn rv_syntax_error(s: &str) -> String {
    let why = if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        "value out of range"
    } else {
        "invalid syntax"
    };
    let q = crate::schema::go_quote(s);
    format!("resourceVersion: Invalid value: {q}: strconv.ParseUint: parsing {q}: {why}")
}

fn list_options_invalid(causes: Vec<StatusCause>) -> ApiError {
    ApiError::invalid("meta.k8s.io", "ListOptions", "", causes)
}

fn forbidden(field: &str, detail: &str) -> StatusCause {
    StatusCause::new("FieldValueForbidden", field, format!("Forbidden: {detail}"))
}

/// kube-apiserver's `ValidateListOptions` for a list (422 `ListOptions.meta.k8s.io`).
fn validate(rv: &str, rv_match: &str, cont: &str, send_initial: bool) -> Result<(), ApiError> {
    let mut causes = Vec::new();
    if send_initial {
        causes.push(forbidden(
            "sendInitialEvents",
            "sendInitialEvents is forbidden for list",
        ));
    }
    if !rv_match.is_empty() {
        if rv.is_empty() {
            causes.push(forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden unless resourceVersion is provided",
            ));
        }
        if !cont.is_empty() {
            causes.push(forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden when continue is provided",
            ));
        }
        if rv_match != "Exact" && rv_match != "NotOlderThan" {
            causes.push(StatusCause::new(
                "FieldValueNotSupported",
                "resourceVersionMatch",
                format!(
                    "Unsupported value: \"{rv_match}\": supported values: \"Exact\", \"NotOlderThan\", \"\""
                ),
            ));
        }
        if rv_match == "Exact" && rv == "0" {
            causes.push(forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
            ));
        }
    }
    if causes.is_empty() {
        Ok(())
    } else {
        Err(list_options_invalid(causes))
    }
}

/// kube-apiserver's `ValidateListOptions` for a watch (422 before the stream starts).
pub fn validate_watch(q: &Query) -> Result<(), ApiError> {
    let get = |k: &str| q.get(k).map(String::as_str).unwrap_or_default();
    let (rv_match, cont) = (get("resourceVersionMatch"), get("continue"));
    let send_initial = q.contains_key("sendInitialEvents");
    let mut causes = Vec::new();
    if send_initial && rv_match != "NotOlderThan" {
        causes.push(forbidden(
            "resourceVersionMatch",
            "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        ));
    }
    if !rv_match.is_empty() {
        if !send_initial {
            causes.push(forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
            ));
        }
        if rv_match != "NotOlderThan" {
            causes.push(StatusCause::new(
                "FieldValueNotSupported",
                "resourceVersionMatch",
                format!("Unsupported value: \"{rv_match}\": supported values: \"NotOlderThan\""),
            ));
        }
        if !cont.is_empty() {
            causes.push(forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden when continue is provided",
            ));
        }
    }
    if causes.is_empty() {
        Ok(())
    } else {
        Err(list_options_invalid(causes))
    }
}

/// kube-apiserver's answer to a resourceVersion the store has not reached yet.
fn too_large(requested: u64, current: u64) -> ApiError {
    let mut e = ApiError::new(
        504,
        "Timeout",
        format!("Too large resource version: {requested}, current: {current}"),
    )
    .with_details(json!({
        "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
        "retryAfterSeconds": 1,
    }));
    e.headers.push(("retry-after", "1".into()));
    e
}

/// The etcd-style key of an object relative to the collection prefix: `ns/name` or `name`.
fn sort_key(o: &Value) -> String {
    let ns = meta::namespace(o);
    if ns.is_empty() {
        meta::name(o).to_string()
    } else {
        format!("{ns}/{}", meta::name(o))
    }
}

/// The objects of `t`'s collection (their keys beside them, in key order) as they were at `rv`,
/// or `Expired` when the history that far back is gone. The current objects are borrowed from
/// the store; only those the history rewinds are copies.
fn snapshot<'a>(
    store: &'a Store,
    t: &'a Target,
    rv: Option<u64>,
) -> Result<Vec<(String, Cow<'a, Value>)>, ApiError> {
    let ns = (t.rt.namespaced && !t.namespace.is_empty()).then_some(t.namespace.as_str());
    let current = store
        .objects_of(&t.rt.group, &t.rt.resource, ns)
        .map(|o| (sort_key(o), Cow::Borrowed(o)));
    let Some(rv) = rv.filter(|rv| *rv < store.rv) else {
        let mut objects: Vec<_> = current.collect();
        objects.sort_by(|a, b| a.0.cmp(&b.0));
        return Ok(objects);
    };
    let mut objects: BTreeMap<String, Cow<'a, Value>> = current.collect();
    let events = store
        .events_since(rv)
        .map_err(|_| ApiError::expired(LIST_EXPIRED))?;
    for ev in events.iter().rev() {
        if ev.group != t.rt.group
            || ev.resource != t.rt.resource
            || ns.is_some_and(|n| n != ev.namespace)
        {
            continue;
        }
        let key = sort_key(&ev.object);
        match (ev.type_, &ev.old) {
            (EventType::Added, _) | (_, None) => {
                objects.remove(&key);
            }
            (EventType::Modified | EventType::Deleted, Some(old)) => {
                objects.insert(key, Cow::Owned((**old).clone()));
            }
        }
    }
    Ok(objects.into_iter().collect())
}

/// The `<Kind>List` for a list request.
pub fn list(store: &Store, t: &Target, filter: &Filter, q: &Query) -> Result<Value, ApiError> {
    let get = |k: &str| q.get(k).map(String::as_str).unwrap_or_default();
    let (rv_param, rv_match, cont) = (
        get("resourceVersion"),
        get("resourceVersionMatch"),
        get("continue"),
    );
    validate(
        rv_param,
        rv_match,
        cont,
        q.contains_key("sendInitialEvents"),
    )?;
    let limit: usize = match get("limit") {
        "" | "0" => 0,
        l => l
            .parse::<i64>()
            .map_err(|_| ApiError::bad_request(format!("invalid limit: {l}")))?
            .max(0) as usize,
    };
    let token = if cont.is_empty() {
        None
    } else {
        let token = decode_continue(cont)?;
        if !rv_param.is_empty() && rv_param != "0" {
            return Err(ApiError::bad_request(
                "specifying resource version is not allowed when using continue",
            ));
        }
        Some(token)
    };
    let read = match (&token, rv_match) {
        (Some(t), _) if t.rv > 0 => Read::At(t.rv as u64),
        (Some(_), _) => Read::Latest,
        (None, "Exact") => Read::At(parse_rv(rv_param)?),
        (None, _) if rv_param.is_empty() => Read::Latest,
        (None, _) => {
            let rv = parse_rv(rv_param)?;
            if rv > store.rv {
                return Err(too_large(rv, store.rv));
            }
            Read::Latest
        }
    };
    let (objects, list_rv) = match read {
        Read::Latest => (snapshot(store, t, None)?, store.rv),
        Read::At(rv) if rv > store.rv => return Err(too_large(rv, store.rv)),
        Read::At(rv) => match snapshot(store, t, Some(rv)) {
            Ok(objs) => (objs, rv),
            Err(e) => {
                return Err(match &token {
                    Some(tok) => continue_expired(tok),
                    None => e,
                });
            }
        },
    };
    let start_after = token.as_ref().map(|t| t.start.trim_end_matches('\u{0}'));
    let matching: Vec<(String, Cow<'_, Value>)> = objects
        .into_iter()
        .filter(|(key, _)| start_after.is_none_or(|after| key.as_str() > after))
        .filter(|(_, o)| filter.matches(o))
        .collect();
    let mut metadata = json!({"resourceVersion": list_rv.to_string()});
    // A custom resource's list (unstructured) always says where to continue, if only "".
    if t.rt.custom {
        metadata["continue"] = json!("");
    }
    let remaining = if limit > 0 && matching.len() > limit {
        matching.len() - limit
    } else {
        0
    };
    let page = &matching[..matching.len() - remaining];
    if remaining > 0
        && let Some((last_key, _)) = page.last()
    {
        let token_rv = match read {
            Read::Latest if token.is_some() => -1,
            _ => list_rv as i64,
        };
        metadata["continue"] = json!(encode_continue(token_rv, last_key));
        // Like etcd3's store: the count is only known when no selector filters the items.
        if filter.labels.is_everything() && filter.fields.is_empty() {
            metadata["remainingItemCount"] = json!(remaining);
        }
    }
    // Only the returned items are copied out of the store.
    let items = page.iter().map(|(_, o)| o.as_ref().clone());
    // Webhook-converted kinds are converted by the caller, in one review for the page.
    let items: Vec<Value> = if t.rt.conversion.is_some() {
        items.collect()
    } else {
        items
            .map(|o| super::target::present(&t.rt, &t.version, o))
            .collect()
    };
    Ok(json!({
        "kind": t.rt.list_kind,
        "apiVersion": t.rt.api_version(&t.version),
        "metadata": metadata,
        "items": items,
    }))
}

/// 410 for a continue token whose snapshot was compacted, carrying a token that continues from
/// the same key at the latest state (kube-apiserver's "inconsistent continue").
fn continue_expired(tok: &ContinueToken) -> ApiError {
    let mut e = ApiError::expired(CONTINUE_EXPIRED);
    e.list_continue = Some(encode_continue(-1, tok.start.trim_end_matches('\u{0}')).into());
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_round_trip_and_errors() {
        let t = encode_continue(7, "default/c1");
        assert_eq!(
            decode_continue(&t).unwrap(),
            ContinueToken {
                rv: 7,
                start: "default/c1\u{0}".into()
            }
        );
        for bad in [
            "garbage!".to_string(),
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .encode(r#"{"v":"x","rv":1,"start":"a"}"#),
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .encode(r#"{"v":"meta.k8s.io/v1","rv":0,"start":"a"}"#),
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .encode(r#"{"v":"meta.k8s.io/v1","rv":3,"start":""}"#),
        ] {
            let e = decode_continue(&bad).unwrap_err();
            assert_eq!(e.code, 400, "{bad}");
            assert!(
                e.message
                    .starts_with("invalid continue token: continue key is not valid")
            );
        }
    }

    #[test]
    fn list_options_validation() {
        assert!(validate("", "", "", false).is_ok());
        assert_eq!(validate("", "", "", true).unwrap_err().code, 422);
        assert!(validate("5", "Exact", "", false).is_ok());
        let e = validate("", "NotOlderThan", "", false).unwrap_err();
        assert_eq!(e.code, 422);
        assert_eq!(
            e.message,
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"
        );
        let e = validate("0", "Exact", "", false).unwrap_err();
        assert!(
            e.message
                .contains("\"exact\" is forbidden for resourceVersion \"0\"")
        );
        let e = validate("", "Bogus", "", false).unwrap_err();
        assert_eq!(e.status()["details"]["causes"].as_array().unwrap().len(), 2);
    }
}

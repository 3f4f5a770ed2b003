//! Query parameters of a request.

use std::collections::BTreeMap;

/// Parsed query parameters (last value wins).
pub type Query = BTreeMap<String, String>;

pub fn parse_query(uri: &axum::http::Uri) -> Query {
    let Some(q) = uri.query() else {
        return Query::new();
    };
    axum::extract::Query::<Vec<(String, String)>>::try_from_uri(uri)
        .map(|axum::extract::Query(v)| v.into_iter().collect())
        .unwrap_or_else(|_| {
            let _ = q;
            Query::new()
        })
}

pub fn truthy(q: &Query, k: &str) -> bool {
    matches!(q.get(k).map(String::as_str), Some("true" | "1"))
}

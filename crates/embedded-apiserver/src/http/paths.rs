//! Request paths: which API, group, version, resource, namespace, name and subresource a path addresses.

/// A resource path.
#[derive(Debug, Clone)]
pub(super) struct ResPath {
    pub(super) group: String,
    pub(super) version: String,
    pub(super) namespace: Option<String>,
    pub(super) resource: String,
    pub(super) name: Option<String>,
    pub(super) sub: Option<String>,
}

pub(super) enum Route {
    /// `/` and `/index.html`: kube's index of root paths.
    Root,
    Metrics,
    Version,
    Health,
    ApiVersions,
    GroupList,
    Group(String),
    ResourceList(String, String),
    OpenApiV2,
    OpenApiRoot,
    OpenApiGv(String),
    Resource(ResPath),
    NotFound,
}

pub(super) fn parse_resource(group: &str, version: &str, rest: &[&str]) -> Route {
    let (namespace, rest) = if rest.len() >= 3
        && rest[0] == "namespaces"
        && !(rest.len() == 3 && matches!(rest[2], "status" | "finalize"))
    {
        (Some(rest[1].to_string()), &rest[2..])
    } else {
        (None, rest)
    };
    if rest.is_empty() || rest.len() > 3 || rest.iter().any(|s| s.is_empty()) {
        return Route::NotFound;
    }
    Route::Resource(ResPath {
        group: group.to_string(),
        version: version.to_string(),
        namespace,
        resource: rest[0].to_string(),
        name: rest.get(1).map(|s| s.to_string()),
        sub: rest.get(2).map(|s| s.to_string()),
    })
}

pub(super) fn route(path: &str) -> Route {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    match segs.as_slice() {
        [""] | ["index.html"] => Route::Root,
        ["metrics"] => Route::Metrics,
        ["version"] => Route::Version,
        ["healthz" | "livez" | "readyz", ..] => Route::Health,
        ["api"] => Route::ApiVersions,
        ["api", "v1"] => Route::ResourceList(String::new(), "v1".into()),
        ["api", v, rest @ ..] => parse_resource("", v, rest),
        ["apis"] => Route::GroupList,
        ["apis", g] => Route::Group(g.to_string()),
        ["apis", g, v] => Route::ResourceList(g.to_string(), v.to_string()),
        ["apis", g, v, rest @ ..] => parse_resource(g, v, rest),
        ["openapi", "v2"] => Route::OpenApiV2,
        ["openapi", "v3"] => Route::OpenApiRoot,
        ["openapi", "v3", rest @ ..] => Route::OpenApiGv(rest.join("/")),
        _ => Route::NotFound,
    }
}

//! Property-based fuzzing (issue 6 item 7). `cargo fuzz` is not installed on CI machines, so
//! these proptests cover the same entry points with ≥ 10,000 generated cases each:
//! the manifest loader (bytes and YAML/JSON documents → inventory), the schema walker of the
//! static checks, the label/field-selector parsers and the embedded server's request decoding.
//!
//! `FUZZ_CASES` overrides the case count (e.g. `FUZZ_CASES=200000` for a long run).

use capi_conformance::apiserver::selector::{FieldSelector, LabelSelector};
use capi_conformance::apiserver::{EmbeddedServer, ServerOptions};
use capi_conformance::checks::schema::{self, Lookup};
use capi_conformance::inventory::{
    Crd, Document, Inventory, Origin, SchemaForm, SchemaNode, parse_text, parse_text_as,
};
use capi_conformance::suite::JsonType;
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

fn cases() -> u32 {
    std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000)
}

fn config() -> ProptestConfig {
    ProptestConfig {
        failure_persistence: None,
        ..ProptestConfig::with_cases(cases())
    }
}

// ---------------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------------

/// Keys real manifests use, plus a few odd ones, so generated documents reach deep code paths.
const KEYS: &[&str] = &[
    "apiVersion",
    "kind",
    "metadata",
    "name",
    "namespace",
    "labels",
    "annotations",
    "spec",
    "status",
    "group",
    "names",
    "plural",
    "singular",
    "scope",
    "versions",
    "served",
    "storage",
    "schema",
    "openAPIV3Schema",
    "properties",
    "items",
    "additionalProperties",
    "type",
    "subresources",
    "scale",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-int-or-string",
    "$ref",
    "rules",
    "template",
    "cluster.x-k8s.io/provider",
    "cluster.x-k8s.io/v1beta1",
    "",
    "..",
    "é",
];

const STRINGS: &[&str] = &[
    "CustomResourceDefinition",
    "apiextensions.k8s.io/v1",
    "ClusterRole",
    "Role",
    "Deployment",
    "Namespace",
    "List",
    "Metadata",
    "clusterctl.cluster.x-k8s.io/v1alpha3",
    "infrastructure.cluster.x-k8s.io",
    "FooMachine",
    "foomachines",
    "Namespaced",
    "Cluster",
    "object",
    "string",
    "array",
    "integer",
    "boolean",
    "v1beta1",
    "v1beta2",
    "v1beta1_v1beta2",
    "",
    "../..",
];

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => proptest::sample::select(KEYS).prop_map(str::to_string),
        1 => "\\PC{0,8}",
    ]
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        proptest::sample::select(STRINGS).prop_map(|s| Value::String(s.into())),
        "\\PC{0,12}".prop_map(Value::String),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(5, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::vec((key(), inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// A CRD-shaped document whose schema and other fields are arbitrary.
fn crd_like() -> impl Strategy<Value = Value> {
    (json_value(), json_schema(), json_value(), any::<bool>()).prop_map(
        |(labels, schema, extra, scoped)| {
            json!({
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": {"name": "foomachines.infrastructure.cluster.x-k8s.io", "labels": labels},
                "spec": {
                    "group": "infrastructure.cluster.x-k8s.io",
                    "names": {"kind": "FooMachine", "plural": "foomachines", "extra": extra},
                    "scope": if scoped { "Namespaced" } else { "Cluster" },
                    "versions": [{"name": "v1beta1", "served": true, "storage": true,
                                  "schema": {"openAPIV3Schema": schema},
                                  "subresources": {"status": {}}}],
                },
            })
        },
    )
}

/// Documents as YAML or JSON text, optionally cut or spliced with noise.
fn manifest_text() -> impl Strategy<Value = String> {
    let docs = proptest::collection::vec(prop_oneof![json_value(), crd_like()], 1..3);
    (
        docs,
        any::<bool>(),
        any::<prop::sample::Index>(),
        "\\PC{0,6}",
    )
        .prop_map(|(docs, yaml, cut, noise)| {
            let mut text = String::new();
            for d in &docs {
                if yaml {
                    text.push_str("---\n");
                    text.push_str(&serde_saphyr::to_string(d).unwrap_or_default());
                } else {
                    text.push_str(&serde_json::to_string(d).unwrap_or_default());
                    text.push('\n');
                }
            }
            if !noise.is_empty() {
                let mut at = cut.index(text.len() + 1);
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                text.insert_str(at, &noise);
            }
            text
        })
}

const TYPES: &[&str] = &[
    "object", "array", "string", "integer", "number", "boolean", "",
];
const FIELDS: &[&str] = &[
    "spec",
    "status",
    "a",
    "b",
    "ready",
    "items",
    "properties",
    "",
];

/// JSON-schema-like nodes: mostly well-formed, sometimes wrong-typed values in every slot.
fn json_schema() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        8 => (proptest::sample::select(TYPES), any::<u8>()).prop_map(|(t, flags)| {
            let mut o = Map::new();
            if !t.is_empty() {
                o.insert("type".into(), json!(t));
            }
            if flags & 1 != 0 {
                o.insert("x-kubernetes-preserve-unknown-fields".into(), json!(true));
            }
            if flags & 2 != 0 {
                o.insert("x-kubernetes-int-or-string".into(), json!(flags & 4 != 0));
            }
            Value::Object(o)
        }),
        1 => scalar(),
    ];
    leaf.prop_recursive(8, 64, 4, |inner| {
        (
            proptest::sample::select(TYPES),
            proptest::collection::vec((proptest::sample::select(FIELDS), inner.clone()), 0..4),
            proptest::option::of(inner.clone()),
            proptest::option::of(prop_oneof![inner, any::<bool>().prop_map(Value::Bool)]),
            any::<u8>(),
        )
            .prop_map(|(t, props, items, additional, flags)| {
                let mut o = Map::new();
                if !t.is_empty() {
                    o.insert("type".into(), json!(t));
                }
                if flags & 1 != 0 {
                    o.insert("x-kubernetes-preserve-unknown-fields".into(), json!(true));
                }
                if flags & 2 != 0 {
                    // Wrong shape on purpose: properties as an array.
                    o.insert("properties".into(), json!(["a", 1]));
                } else if !props.is_empty() {
                    let m: Map<String, Value> =
                        props.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
                    o.insert("properties".into(), Value::Object(m));
                }
                if let Some(i) = items {
                    o.insert("items".into(), i);
                }
                if let Some(a) = additional {
                    o.insert("additionalProperties".into(), a);
                }
                Value::Object(o)
            })
    })
}

/// Dotted paths with `[]` array steps, empty segments and odd names.
fn schema_path() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        (
            prop_oneof![
                6 => proptest::sample::select(FIELDS).prop_map(str::to_string),
                1 => "\\PC{0,4}",
            ],
            any::<bool>(),
        ),
        0..7,
    )
    .prop_map(|segs| {
        segs.into_iter()
            .map(|(s, arr)| if arr { format!("{s}[]") } else { s })
            .collect::<Vec<_>>()
            .join(".")
    })
}

/// The schema with every node the walk reaches made structural: a scalar node becomes
/// `{type: string}`, an untyped node without the Kubernetes flags gets `type: object`.
fn structural(v: Value) -> Value {
    let Value::Object(mut o) = v else {
        return json!({"type": "string"});
    };
    o.remove("$ref");
    let typed = o
        .get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| !t.is_empty());
    let flag = |o: &Map<String, Value>, k: &str| o.get(k).and_then(Value::as_bool) == Some(true);
    if !typed
        && !flag(&o, "x-kubernetes-int-or-string")
        && !flag(&o, "x-kubernetes-preserve-unknown-fields")
    {
        o.insert("type".into(), json!("object"));
    }
    if let Some(Value::Object(props)) = o.remove("properties") {
        let props: Map<String, Value> =
            props.into_iter().map(|(k, c)| (k, structural(c))).collect();
        o.insert("properties".into(), Value::Object(props));
    }
    for key in ["items", "additionalProperties"] {
        if let Some(child @ Value::Object(_)) = o.remove(key) {
            o.insert(key.into(), structural(child));
        }
    }
    Value::Object(o)
}

/// Every path that exists in a schema (walking `properties`, `items`), capped.
fn existing_paths(node: &Value, prefix: Option<&str>, out: &mut Vec<String>) {
    if out.len() > 64 {
        return;
    }
    let Some(props) = node.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (k, child) in props {
        if k.contains('.') || k.ends_with("[]") {
            continue;
        }
        let p = match prefix {
            None => k.clone(),
            Some(prefix) => format!("{prefix}.{k}"),
        };
        out.push(p.clone());
        existing_paths(child, Some(&p), out);
        if let Some(items) = child.get("items") {
            let arr = format!("{p}[]");
            out.push(arr.clone());
            existing_paths(items, Some(&arr), out);
        }
    }
}

const JSON_TYPES: &[JsonType] = &[
    JsonType::Boolean,
    JsonType::String,
    JsonType::Integer,
    JsonType::Number,
    JsonType::Object,
    JsonType::Array,
    JsonType::StringMap,
    JsonType::ObjectMap,
    JsonType::StringArray,
    JsonType::ObjectArray,
    JsonType::IntOrString,
];

fn doc(value: Value) -> Document {
    Document::new(value, Origin::new("fuzz.yaml", 0, 1))
}

/// Loader errors always name their source (`fuzz.yaml…` / `fuzz.json…`).
fn assert_names_source(
    file: &str,
    docs: &[Result<Document, capi_conformance::inventory::InputError>],
) {
    for d in docs {
        match d {
            Ok(doc) => {
                assert_eq!(doc.origin.file, file);
                assert!(doc.value.is_object());
            }
            Err(e) => {
                let msg = e.to_string();
                assert!(msg.starts_with(file), "error does not name {file}: {msg}");
                assert!(!msg.contains('\n'), "multi-line error: {msg}");
                assert!(e.source_label().starts_with(file));
            }
        }
    }
}

fn build_inventory(docs: Vec<Result<Document, capi_conformance::inventory::InputError>>) {
    let ok: Vec<Document> = docs.into_iter().filter_map(Result::ok).collect();
    let overrides = BTreeMap::new();
    match Inventory::build(ok.clone(), &overrides, true) {
        Ok((inv, problems)) => {
            for p in problems {
                assert!(p.to_string().starts_with("fuzz."), "{p}");
            }
            let _ = inv.crd_count();
        }
        Err(e) => panic!("keep_going build failed: {e}"),
    }
    if let Err(e) = Inventory::build(ok, &overrides, false) {
        assert!(e.to_string().starts_with("fuzz."), "{e}");
    }
}

// ---------------------------------------------------------------------------------------------
// Manifest loader
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config())]

    /// Arbitrary bytes (lossily decoded, as the loader only accepts UTF-8) never panic the
    /// YAML or JSON path; every error names the file.
    #[test]
    fn loader_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let text = String::from_utf8_lossy(&bytes);
        for file in ["fuzz.yaml", "fuzz.json"] {
            let docs = parse_text(file, &text);
            assert_names_source(file, &docs);
            build_inventory(docs);
        }
    }

    /// Generated YAML/JSON manifests (CRD-shaped or not, cut with noise) → inventory.
    #[test]
    fn loader_documents_to_inventory(text in manifest_text()) {
        for file in ["fuzz.yaml", "fuzz.json"] {
            let docs = parse_text(file, &text);
            assert_names_source(file, &docs);
            build_inventory(docs);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Schema walker
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config())]

    /// Arbitrary schemas and paths: lookups never panic; a path that exists is found (or open);
    /// a missing path names a prefix of the asked path.
    #[test]
    fn schema_walker_lookups(schema_v in json_schema(), path in schema_path(), t in proptest::sample::select(JSON_TYPES)) {
        // Reading an arbitrary schema never panics; a non-structural one names the node.
        if let Err(e) = SchemaNode::from_value(&schema_v) {
            prop_assert!(e.starts_with("openAPIV3Schema"), "{}", e);
        }
        let schema_v = structural(schema_v);
        let node = match SchemaNode::from_value(&schema_v) {
            Ok(node) => node,
            Err(e) => return Err(TestCaseError::fail(format!("made structural but refused: {e}"))),
        };
        match schema::lookup(&node, &path) {
            Lookup::Found(found) => {
                let _ = schema::describe(found);
                let _ = schema::is_placeholder(found);
            }
            Lookup::Missing { at } | Lookup::Open { at } => {
                prop_assert!(path.starts_with(&at), "{at} is not a prefix of {path}");
            }
        }
        let _ = schema::field_state(&node, &path, t);
        let _ = schema::describe(&node);
        let mut paths = Vec::new();
        existing_paths(&schema_v, None, &mut paths);
        for p in paths {
            let found = schema::lookup(&node, &p);
            prop_assert!(!matches!(found, Lookup::Missing { .. }), "{p} exists but was reported missing");
        }
        // The CRD reader walks the same schema (structural check).
        let crd = json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "foos.example.com"},
            "spec": {"group": "example.com", "names": {"kind": "Foo", "plural": "foos"},
                     "scope": "Namespaced",
                     "versions": [{"name": "v1", "served": true, "storage": true,
                                   "schema": {"openAPIV3Schema": schema_v}}]},
        });
        if let Err(e) = Crd::from_document(&doc(crd.clone())) {
            prop_assert!(e.to_string().starts_with("fuzz.yaml"), "{}", e);
        }
        // `lint` reads CRD schemas straight from the YAML text into their compact form: the
        // CRD it gets (or the error, word for word) is the one read from the whole document.
        let text = serde_saphyr::to_string(&crd).unwrap();
        let read = |form| {
            parse_text_as("fuzz.yaml", &text, form)
                .into_iter()
                .map(|d| d.and_then(Crd::from_owned_document))
                .collect::<Vec<_>>()
        };
        prop_assert_eq!(read(SchemaForm::Compact), read(SchemaForm::Whole), "{}", text);
    }
}

// ---------------------------------------------------------------------------------------------
// Selectors
// ---------------------------------------------------------------------------------------------

fn selector_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "\\PC{0,40}",
        "[a-z0-9=!,() .\\\\/_-]{0,40}",
        "(!?[a-z]{1,4}(\\.[a-z]{1,3})?(/[a-z]{1,4})?( ?(=|==|!=|in|notin|<|>) ?\\(?[a-z0-9,]{0,6}\\)?)?,?){1,4}",
    ]
}

proptest! {
    #![proptest_config(config())]

    /// Any text: label and field selector parsing never panics; what parses prints back to an
    /// equivalent selector.
    #[test]
    fn selectors_parse_and_round_trip(s in selector_text()) {
        if let Ok(sel) = s.parse::<LabelSelector>() {
            let again: LabelSelector = sel.to_string().parse()
                .map_err(|e| TestCaseError::fail(format!("{s:?} printed as {:?}: {e}", sel.to_string())))?;
            prop_assert_eq!(sel, again);
        }
        if let Ok(sel) = s.parse::<FieldSelector>() {
            let again: FieldSelector = sel.to_string().parse()
                .map_err(|e| TestCaseError::fail(format!("{s:?} printed as {:?}: {e}", sel.to_string())))?;
            prop_assert_eq!(sel, again);
        }
    }

    /// Arbitrary JSON as a `metav1.LabelSelector` object: an error or a selector, never a panic.
    #[test]
    fn label_selector_objects(v in json_value(), labels in proptest::collection::btree_map("[a-z]{0,3}", "[a-z]{0,3}", 0..4)) {
        if let Ok(sel) = LabelSelector::from_label_selector(&v) {
            let _ = sel.matches(&labels);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Server request decoding
// ---------------------------------------------------------------------------------------------

const SEGMENTS: &[&str] = &[
    "api",
    "apis",
    "v1",
    "namespaces",
    "default",
    "kube-system",
    "configmaps",
    "secrets",
    "pods",
    "status",
    "scale",
    "watch",
    "apiextensions.k8s.io",
    "customresourcedefinitions",
    "rbac.authorization.k8s.io",
    "clusterroles",
    "authorization.k8s.io",
    "subjectaccessreviews",
    "openapi",
    "v2",
    "v3",
    "version",
    "healthz",
    "readyz",
    "cm1",
    "..",
    "%2F",
    "%ff",
    "",
];

/// Real endpoints, so bodies reach decoding, admission and validation.
const VALID_PATHS: &[&str] = &[
    "/api/v1/namespaces/default/configmaps",
    "/api/v1/namespaces/default/configmaps/cm1",
    "/api/v1/namespaces/default/secrets",
    "/api/v1/namespaces",
    "/api/v1/namespaces/default",
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/foos.example.com",
    "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    "/apis/authorization.k8s.io/v1/subjectaccessreviews",
    "/apis/example.com/v1/namespaces/default/foos",
    "/api/v1/namespaces/default/configmaps/cm1/status",
];

const CONTENT_TYPES: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/json-patch+json",
    "application/apply-patch+yaml",
    "text/plain",
    "application/json; charset=utf-8",
    "",
    "\u{7f}garbage/;;",
];

const QUERIES: &[&str] = &[
    "watch",
    "labelSelector",
    "fieldSelector",
    "resourceVersion",
    "resourceVersionMatch",
    "limit",
    "continue",
    "timeoutSeconds",
    "dryRun",
    "fieldManager",
    "force",
    "propagationPolicy",
    "sendInitialEvents",
    "allowWatchBookmarks",
    "fieldValidation",
];

const METHODS: &[&str] = &["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

fn body() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..128),
        json_value().prop_map(|v| serde_json::to_vec(&v).unwrap_or_default()),
        (
            json_value(),
            proptest::sample::select(
                &[
                    "ConfigMap",
                    "Secret",
                    "CustomResourceDefinition",
                    "Namespace",
                    "SubjectAccessReview",
                    "Status"
                ][..]
            ),
            "[a-z0-9.-]{0,12}"
        )
            .prop_map(|(data, kind, name)| {
                serde_json::to_vec(&json!({"apiVersion": "v1", "kind": kind,
                    "metadata": {"name": name, "namespace": "default"},
                    "data": data, "spec": data}))
                .unwrap_or_default()
            }),
        json_value().prop_map(|v| serde_saphyr::to_string(&v).unwrap_or_default().into_bytes()),
    ]
}

fn request_parts() -> impl Strategy<Value = (String, String, String, Vec<u8>, bool)> {
    let path = proptest::collection::vec(
        prop_oneof![
            6 => proptest::sample::select(SEGMENTS).prop_map(str::to_string),
            1 => "[a-zA-Z0-9%._~-]{0,8}",
        ],
        0..8,
    )
    .prop_map(|s| format!("/{}", s.join("/")));
    let path = prop_oneof![
        1 => path,
        1 => proptest::sample::select(VALID_PATHS).prop_map(str::to_string),
    ];
    let query = proptest::collection::vec(
        (
            proptest::sample::select(QUERIES),
            "[a-zA-Z0-9%=,!()._ -]{0,10}",
        ),
        0..4,
    )
    .prop_map(|kv| {
        kv.into_iter()
            .map(|(k, v)| format!("{k}={}", v.replace(' ', "+")))
            .collect::<Vec<_>>()
            .join("&")
    });
    (
        proptest::sample::select(METHODS).prop_map(str::to_string),
        path,
        query,
        body(),
        any::<bool>(),
    )
        .prop_map(|(m, p, q, b, table)| {
            let uri = if q.is_empty() { p } else { format!("{p}?{q}") };
            (m, uri, String::new(), b, table)
        })
}

#[test]
fn server_request_decoding() {
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let _guard = rt.enter();
    let server = EmbeddedServer::new(ServerOptions::default());
    let mut runner = proptest::test_runner::TestRunner::new(config());
    let strategy = (request_parts(), proptest::sample::select(CONTENT_TYPES));
    let result = runner.run(&strategy, |((method, uri, _, body, table), ct)| {
        rt.block_on(async {
            let mut req = http::Request::builder().method(method.as_str()).uri(&uri);
            if !ct.is_empty() {
                req = req.header("content-type", ct);
            }
            if table {
                req = req.header(
                    "accept",
                    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
                );
            }
            let Ok(req) = req.body(axum::body::Body::from(body)) else {
                // Not a valid HTTP request at all (hyper would refuse it before us).
                return Ok(());
            };
            let resp = server.router().oneshot(req).await.unwrap();
            let status = resp.status().as_u16();
            prop_assert!(status < 500, "{method} {uri} ({ct}) answered {status}");
            if status >= 400 {
                let bytes = tokio::time::timeout(
                    std::time::Duration::from_secs(5),
                    resp.into_body().collect(),
                )
                .await
                .map_err(|_| TestCaseError::fail("error body did not end"))?
                .map_err(|e| TestCaseError::fail(e.to_string()))?
                .to_bytes();
                if method != "HEAD" {
                    let v: Value = serde_json::from_slice(&bytes).map_err(|e| {
                        TestCaseError::fail(format!("{method} {uri}: error body is not JSON: {e}"))
                    })?;
                    prop_assert_eq!(
                        v["kind"].as_str(),
                        Some("Status"),
                        "{} {}: {}",
                        method,
                        uri,
                        v
                    );
                    prop_assert_eq!(v["code"].as_u64(), Some(u64::from(status)));
                }
            }
            Ok(())
        })
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    println!("server_request_decoding: {} cases", cases());
}

//! Unit tests of `protobuf`.

use super::*;

fn meta(name: &str, ns: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.into()),
        namespace: Some(ns.into()),
        ..Default::default()
    }
}

/// A `kubectl create secret generic s --from-literal=a=b` body assembled by hand, byte by
/// byte, so the field numbers are checked independently of the prost structs.
fn hand_assembled_secret() -> Vec<u8> {
    // ObjectMeta{name=1:"s", namespace=3:"default"}
    let meta: Vec<u8> = [&[0x0a, 0x01][..], b"s", &[0x1a, 0x07], b"default"].concat();
    // data map entry {key=1:"a", value=2:"b"} as field 2 (length-delimited)
    let entry: Vec<u8> = [&[0x0a, 0x01][..], b"a", &[0x12, 0x01], b"b"].concat();
    let secret: Vec<u8> = [
        &[0x0a, meta.len() as u8][..],
        &meta,
        &[0x12, entry.len() as u8],
        &entry,
        &[0x1a, 0x06],
        b"Opaque",
    ]
    .concat();
    // TypeMeta{apiVersion=1:"v1", kind=2:"Secret"}
    let tm: Vec<u8> = [&[0x0a, 0x02][..], b"v1", &[0x12, 0x06], b"Secret"].concat();
    let unknown: Vec<u8> = [
        &[0x0a, tm.len() as u8][..],
        &tm,
        &[0x12, secret.len() as u8],
        &secret,
        &[0x1a, 0x00, 0x22, 0x00],
    ]
    .concat();
    [&b"k8s\0"[..], &unknown].concat()
}

#[test]
fn hand_assembled_secret_decodes() {
    let v = decode(&hand_assembled_secret()).unwrap();
    assert_eq!(
        v,
        json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "s", "namespace": "default"},
            "data": {"a": "Yg=="}, "type": "Opaque"})
    );
}

/// client-go's gogo marshaller writes every non-pointer field, empty or not: empty
/// strings, `generation: 0`, an empty `creationTimestamp` message, `immutable` absent.
#[test]
fn gogo_style_secret_with_zero_fields_decodes() {
    let meta: Vec<u8> = [
        &[0x0a, 0x01][..],
        b"s",
        &[0x12, 0x00], // generateName ""
        &[0x1a, 0x07],
        b"default",
        &[0x22, 0x00], // selfLink ""
        &[0x2a, 0x00], // uid ""
        &[0x32, 0x00], // resourceVersion ""
        &[0x38, 0x00], // generation 0
        &[0x42, 0x00], // creationTimestamp {}
        &[0x50, 0x00], // deletionGracePeriodSeconds 0 (varint, field 10)
    ]
    .concat();
    let secret: Vec<u8> = [
        &[0x0a, meta.len() as u8][..],
        &meta,
        &[0x1a, 0x00], // type ""
    ]
    .concat();
    let tm: Vec<u8> = [&[0x0a, 0x02][..], b"v1", &[0x12, 0x06], b"Secret"].concat();
    let unknown: Vec<u8> = [
        &[0x0a, tm.len() as u8][..],
        &tm,
        &[0x12, secret.len() as u8],
        &secret,
        &[0x1a, 0x00, 0x22, 0x00],
    ]
    .concat();
    let body = [&b"k8s\0"[..], &unknown].concat();
    assert_eq!(
        decode(&body).unwrap(),
        json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "s", "namespace": "default"}})
    );
}

#[test]
fn prost_encoding_matches_hand_assembly() {
    let s = Secret {
        metadata: Some(meta("s", "default")),
        data: BTreeMap::from([("a".to_string(), b"b".to_vec())]),
        r#type: Some("Opaque".into()),
        ..Default::default()
    };
    assert_eq!(encode("v1", "Secret", &s), hand_assembled_secret());
}

#[test]
fn secret_with_string_data_labels_and_owner() {
    let mut m = meta("s", "ns");
    m.labels.insert("app".into(), "demo".into());
    m.finalizers.push("x.io/f".into());
    m.owner_references.push(OwnerReference {
        api_version: Some("v1".into()),
        kind: Some("ConfigMap".into()),
        name: Some("c".into()),
        uid: Some("u1".into()),
        controller: Some(true),
        block_owner_deletion: None,
    });
    let s = Secret {
        metadata: Some(m),
        string_data: BTreeMap::from([("k".to_string(), "v".to_string())]),
        immutable: Some(true),
        ..Default::default()
    };
    let v = decode(&encode("v1", "Secret", &s)).unwrap();
    assert_eq!(v["stringData"], json!({"k": "v"}));
    assert_eq!(v["immutable"], json!(true));
    assert_eq!(v["metadata"]["labels"], json!({"app": "demo"}));
    assert_eq!(v["metadata"]["finalizers"], json!(["x.io/f"]));
    assert_eq!(
        v["metadata"]["ownerReferences"],
        json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": "c", "uid": "u1", "controller": true}])
    );
}

#[test]
fn configmap_namespace_serviceaccount() {
    let cm = ConfigMap {
        metadata: Some(meta("c", "default")),
        data: BTreeMap::from([("k".to_string(), "v".to_string())]),
        binary_data: BTreeMap::from([("b".to_string(), vec![0u8, 1])]),
        immutable: None,
    };
    let v = decode(&encode("v1", "ConfigMap", &cm)).unwrap();
    assert_eq!(v["data"], json!({"k": "v"}));
    assert_eq!(v["binaryData"], json!({"b": "AAE="}));
    assert_eq!(v["kind"], "ConfigMap");

    let ns = Namespace {
        metadata: Some(ObjectMeta {
            name: Some("team".into()),
            ..Default::default()
        }),
        spec: None,
    };
    assert_eq!(
        decode(&encode("v1", "Namespace", &ns)).unwrap(),
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
    );

    let sa = ServiceAccount {
        metadata: Some(meta("sa", "default")),
        secrets: vec![ObjectReference {
            name: Some("tok".into()),
            ..Default::default()
        }],
        image_pull_secrets: vec![LocalObjectReference {
            name: Some("reg".into()),
        }],
        automount_service_account_token: Some(false),
    };
    let v = decode(&encode("v1", "ServiceAccount", &sa)).unwrap();
    assert_eq!(v["secrets"], json!([{"name": "tok"}]));
    assert_eq!(v["imagePullSecrets"], json!([{"name": "reg"}]));
    assert_eq!(v["automountServiceAccountToken"], json!(false));
}

#[test]
fn self_subject_access_review_and_self_subject_review() {
    let ssar = AccessReview {
        metadata: None,
        spec: Some(AccessReviewSpec {
            resource_attributes: Some(ResourceAttributes {
                namespace: Some("default".into()),
                verb: Some("create".into()),
                group: Some("example.com".into()),
                resource: Some("widgets".into()),
                ..Default::default()
            }),
            ..Default::default()
        }),
    };
    let v = decode(&encode(
        "authorization.k8s.io/v1",
        "SelfSubjectAccessReview",
        &ssar,
    ))
    .unwrap();
    assert_eq!(
        v["spec"],
        json!({"resourceAttributes": {"namespace": "default", "verb": "create",
            "group": "example.com", "resource": "widgets"}})
    );
    let nra = AccessReview {
        metadata: None,
        spec: Some(AccessReviewSpec {
            non_resource_attributes: Some(NonResourceAttributes {
                path: Some("/healthz".into()),
                verb: Some("get".into()),
            }),
            ..Default::default()
        }),
    };
    let v = decode(&encode(
        "authorization.k8s.io/v1",
        "SelfSubjectAccessReview",
        &nra,
    ))
    .unwrap();
    assert_eq!(v["spec"]["nonResourceAttributes"]["path"], "/healthz");
    let ssr = SelfSubjectReview { metadata: None };
    assert_eq!(
        decode(&encode(
            "authentication.k8s.io/v1",
            "SelfSubjectReview",
            &ssr
        ))
        .unwrap(),
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview", "metadata": {}})
    );
}

#[test]
fn errors() {
    assert_eq!(decode(b"{}"), Err(ProtoError::MissingMagic));
    let pod = encode("v1", "Pod", &SelfSubjectReview { metadata: None });
    assert_eq!(
        decode(&pod),
        Err(ProtoError::UnsupportedKind {
            api_version: "v1".into(),
            kind: "Pod".into()
        })
    );
    assert!(matches!(
        decode(b"k8s\0\x0a\xff"),
        Err(ProtoError::Envelope(_))
    ));
    let mut gz = Unknown {
        type_meta: None,
        raw: None,
        content_encoding: Some("gzip".into()),
        content_type: None,
    }
    .encode_to_vec();
    gz.splice(0..0, MAGIC.iter().copied());
    assert_eq!(
        decode(&gz),
        Err(ProtoError::UnsupportedEncoding("gzip".into()))
    );
    // Garbage inside a known kind is a message error, never a panic.
    let bad = Unknown {
        type_meta: Some(TypeMeta {
            api_version: Some("v1".into()),
            kind: Some("Secret".into()),
        }),
        raw: Some(vec![0x0a, 0x05, 0x01]),
        content_encoding: None,
        content_type: None,
    };
    let mut body = MAGIC.to_vec();
    body.extend(bad.encode_to_vec());
    assert!(matches!(decode(&body), Err(ProtoError::Message { .. })));
}

#[test]
fn default_type_fills_an_empty_type_meta() {
    let s = Secret {
        metadata: Some(meta("s", "default")),
        ..Default::default()
    };
    let env = Unknown {
        type_meta: None,
        raw: Some(s.encode_to_vec()),
        content_encoding: None,
        content_type: None,
    };
    let mut body = MAGIC.to_vec();
    body.extend(env.encode_to_vec());
    assert!(decode(&body).is_err());
    let v = decode_with_default(&body, Some(("v1", "Secret"))).unwrap();
    assert_eq!(v["kind"], "Secret");
}

proptest::proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(body in proptest::collection::vec(proptest::num::u8::ANY, 0..200)) {
        let _ = decode(&body);
        let mut prefixed = MAGIC.to_vec();
        prefixed.extend(&body);
        let _ = decode(&prefixed);
    }

    #[test]
    fn arbitrary_raw_for_every_kind_never_panics(
        raw in proptest::collection::vec(proptest::num::u8::ANY, 0..120),
        idx in 0usize..SUPPORTED.len(),
    ) {
        let (av, kind) = SUPPORTED[idx];
        let env = Unknown {
            type_meta: Some(TypeMeta { api_version: Some(av.into()), kind: Some(kind.into()) }),
            raw: Some(raw),
            content_encoding: None,
            content_type: None,
        };
        let mut body = MAGIC.to_vec();
        body.extend(env.encode_to_vec());
        if let Ok(v) = decode(&body) {
            proptest::prop_assert_eq!(v["kind"].as_str(), Some(kind));
        }
    }
}

/// A DELETE body as client-go's protobuf serializer writes it: DeleteOptions{propagationPolicy=4:
/// "Foreground", dryRun=5:["All"], preconditions=2:{resourceVersion=2:"7"}}, assembled by hand.
#[test]
fn delete_options_decode_from_a_hand_assembled_body() {
    let pre: Vec<u8> = [&[0x12, 0x01][..], b"7"].concat();
    let opts: Vec<u8> = [
        &[0x12, pre.len() as u8][..],
        &pre,
        &[0x22, 0x0a],
        b"Foreground",
        &[0x2a, 0x03],
        b"All",
    ]
    .concat();
    let body = [
        &MAGIC[..],
        &Unknown {
            type_meta: Some(TypeMeta {
                api_version: Some("meta.k8s.io/v1".into()),
                kind: Some("DeleteOptions".into()),
            }),
            raw: Some(opts.clone()),
            ..Default::default()
        }
        .encode_to_vec(),
    ]
    .concat();
    let v = decode(&body).unwrap();
    assert_eq!(v["propagationPolicy"], "Foreground");
    assert_eq!(v["dryRun"], json!(["All"]));
    assert_eq!(v["preconditions"]["resourceVersion"], "7");
    assert!(v.get("gracePeriodSeconds").is_none());
    // Without type information in the envelope, the DELETE handler's default applies.
    let untyped = [
        &MAGIC[..],
        &Unknown {
            raw: Some(opts),
            ..Default::default()
        }
        .encode_to_vec(),
    ]
    .concat();
    let v = decode_with_default(&untyped, Some(("meta.k8s.io/v1", "DeleteOptions"))).unwrap();
    assert_eq!(v["propagationPolicy"], "Foreground");
}

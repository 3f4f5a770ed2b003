use super::*;

fn saphyr(doc: &str) -> Option<Value> {
    serde_saphyr::from_str::<Value>(doc).ok()
}

/// Wherever the fast reader answers, it answers exactly what serde-saphyr does, and its
/// compact reading agrees with it ([`compact_agrees`]).
fn agrees(doc: &str) -> bool {
    match parse(doc) {
        None => {
            assert!(
                parse_compact(doc).is_none(),
                "only compact reading answers {doc:?}"
            );
            false
        }
        Some(v) => {
            assert_eq!(
                Some(&v),
                saphyr(doc).as_ref(),
                "fast reader differs on {doc:?}"
            );
            compact_agrees(doc, &v);
            true
        }
    }
}

/// The `openAPIV3Schema` value of a slot.
fn slot_value(v: &mut Value, slot: SchemaSlot) -> Option<&mut Value> {
    let spec = v.get_mut("spec")?;
    let holder = match slot {
        SchemaSlot::Version(i) => spec.get_mut("versions")?.get_mut(i)?.get_mut("schema")?,
        SchemaSlot::Validation => spec.get_mut("validation")?,
    };
    holder.get_mut("openAPIV3Schema")
}

/// Compact reading gives the same document with the schemas it read set to `null`, and
/// each schema is what [`SchemaNode::from_value`] reads from the whole value. Returns how
/// many schemas it read.
fn compact_agrees(doc: &str, whole: &Value) -> usize {
    let (value, read) = parse_compact(doc).expect("compact reading answers too");
    let mut expected = whole.clone();
    for (slot, node) in &read {
        let schema = slot_value(&mut expected, *slot).expect("a read schema has a slot");
        assert_eq!(
            &SchemaNode::from_value(schema),
            node,
            "schema at {slot:?} differs on {doc:?}"
        );
        *schema = Value::Null;
    }
    assert_eq!(value, expected, "compact reading differs on {doc:?}");
    read.len()
}

#[test]
fn compact_reading_reads_crd_schemas_as_from_value_does() {
    let crd = |schema: &str| {
        format!(
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: a.b\nspec:\n  versions:\n  - name: v1\n    schema:\n      openAPIV3Schema:\n{schema}  - name: v2\n    served: true\n"
        )
    };
    let indent = |body: &str| {
        body.lines()
            .map(|l| format!("        {l}\n"))
            .collect::<String>()
    };
    let cases = [
        "type: object\nproperties:\n  b:\n    type: string\n  a:\n    type: array\n    items:\n      type: integer\n",
        "type: object\nproperties:\n  spec:\n    properties: {}\n",
        "type: object\nproperties:\n  s:\n    type: object\n    additionalProperties:\n      $ref: x\n",
        "type: object\nproperties:\n  s: {}\n",
        "type: object\nproperties:\n  s: scalar\n",
        "type: object\nproperties:\n  s:\n  - a\n",
        "type: object\nproperties: {}\nitems: []\nadditionalProperties: true\n",
        "type: array\nitems:\n- type: string\n",
        "type: array\nitems: {}\n",
        "x-kubernetes-preserve-unknown-fields: true\ndescription: |-\n  long\n  text\n",
        "x-kubernetes-int-or-string: \"true\"\n",
        "type: 3\nx-kubernetes-int-or-string: true\n",
        "type: object\nrequired:\n- a\nproperties:\n  a:\n    type: string\n    enum:\n    - red\n    - blue\n",
        "type: object\nproperties:\n  z:\n    type: string\n  a:\n    nope: 1\n",
    ];
    for body in cases {
        let doc = crd(&indent(body));
        let whole = parse(&doc);
        assert!(whole.is_some(), "answers {doc}");
        let whole = whole.unwrap();
        assert_eq!(compact_agrees(&doc, &whole), 1, "{doc}");
    }
    // Duplicate keys in a schema are left to serde-saphyr, as elsewhere.
    for body in [
        "type: object\ntype: object\n",
        "type: object\nproperties:\n  a:\n    type: string\n  a:\n    type: string\n",
    ] {
        let doc = crd(&indent(body));
        assert!(
            parse(&doc).is_none() && parse_compact(&doc).is_none(),
            "{doc}"
        );
    }
    // Not a CRD, or `kind` after `spec`: nothing is read.
    let doc = crd(&indent("type: object\n")).replace("CustomResourceDefinition", "Other");
    assert_eq!(compact_agrees(&doc, &parse(&doc).unwrap()), 0);
}

#[test]
fn reads_block_yaml_like_serde_saphyr() {
    let doc = "\
# comment
apiVersion: v1
kind: ConfigMap
metadata:
  name: x
  labels:
    a.b/c: \"true\"
    d: 'it''s'
    e: \"\"
  annotations: {}
data:
  num: 12
  neg: -7
  zero: 0
  t: true
  f: False
  nul: null
  tilde: ~
  empty:
  cpu: 100m
  mem: 1Gi
  list:
  - a
  - 1
  -
  - - x
  nested:
    - name: a
      args:
      - --namespace=${NS:=}
      - --v=2
      value: 3
    - name: b
  text: |
    line one

    line three
  stripped: |-
    a
      b
  after: z
  emptylist: []
";
    // `- - x` is outside the subset.
    assert!(parse(doc).is_none());
    let doc = doc.replace("  - - x\n", "");
    assert!(agrees(&doc));
}

#[test]
fn leaves_everything_ambiguous_to_serde_saphyr() {
    for doc in [
        "a: yes\n",
        "a: on\n",
        "a: 1.5\n",
        "a: 0x1f\n",
        "a: 012\n",
        "a: 1_000\n",
        "a: .inf\n",
        "a: .NaN\n",
        "a: .5\n",
        "a: nan\n",
        "a: &x 1\nb: *x\n",
        "a: !!str 1\n",
        "a: [1, 2]\n",
        "a: {b: 1}\n",
        "a: >\n  folded\n",
        "a: b: c\n",
        "a: x # comment\n",
        "a: 1\na: 2\n",
        "a:\tb\n",
        "a: \"esc\\n\"\n",
        "a: multi\n  line\n",
        "- a\n",
        "  a: 1\n",
        "? a\n: b\n",
        "y: 1\n",
        "a: 12345678901234567890\n",
        "a: |\n\n  x\n",
        "a: |2\n   x\n",
    ] {
        assert!(
            parse(doc).is_none(),
            "{doc:?} should be left to serde-saphyr"
        );
    }
}

#[test]
fn agrees_on_edge_cases_it_answers() {
    for doc in [
        "a: 9223372036854775\n",
        "a: -1\n",
        "a: b:c\n",
        "a: x,y\n",
        "a: a'b\"c\n",
        "a: 'x # y'\n",
        "a: \"p: q\"\n",
        "\"quoted key\": 1\n",
        "a:\n- b\n- c\nd: e\n",
        "a:\n  - b: 1\n    c:\n      d: 2\n  - e\n",
        "a: |\n  x\n\n\nb: 1\n",
        "a: |-\n  x\n  # not a comment\n",
        "a:\n  b: |\n    deep\n   # comment\nc: 1\n",
        "a: 3.0.1a\n",
        "a: 10s\n",
        "a: .spec.replicas\n",
        "a: café\n",
        "- x\n",
    ] {
        let _ = agrees(doc);
    }
    assert!(agrees("a: |\n  x\n\n\nb: 1\n"));
    assert!(agrees("a:\n  - b: 1\n    c:\n      d: 2\n  - e\n"));
}

#[test]
fn fixture_documents_agree_with_serde_saphyr() {
    // The fixtures are the workspace root's.
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let mut dirs = vec![root.join("fixtures")];
    dirs.extend(crate::shared_data::shared_or_skip(
        "corpus",
        "fixture_documents_agree_with_serde_saphyr (real-provider corpus part)",
    ));
    let mut answered = 0;
    let mut total = 0;
    let mut read_schemas = 0;
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
                continue;
            }
            if !matches!(p.extension().and_then(|x| x.to_str()), Some("yaml" | "yml")) {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            for doc in text.split("\n---\n") {
                total += 1;
                answered += usize::from(agrees(doc));
                if let Some(v) = parse(doc) {
                    read_schemas += compact_agrees(doc, &v);
                }
            }
        }
    }
    println!(
        "fast reader answered {answered} of {total} documents, read {read_schemas} schemas compactly"
    );
    assert!(answered > 0);
    assert!(read_schemas > 0);
}

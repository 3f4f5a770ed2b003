//! Fidelity to kube-apiserver beyond the §7 checks: paginated lists bound to a snapshot,
//! `resourceVersionMatch`, list options validation (Update managedFields: `managed_fields.rs`;
//! structured-merge-diff list semantics of apply: `apply_lists.rs`).

use embedded_apiserver::ServerOptions;
use serde_json::{Value, json};

use super::common::*;

pub(crate) const CM: &str = "/api/v1/namespaces/default/configmaps";

pub(crate) async fn configmaps(h: &H, names: &[&str]) {
    for n in names {
        let r = h
            .post(
                CM,
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": n}, "data": {"v": "1"}}),
            )
            .await;
        assert_eq!(r.code, 201, "{}", r.body);
    }
}

pub(crate) fn names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn continued_pages_show_the_first_pages_snapshot() {
    let h = H::new();
    configmaps(&h, &["a", "b", "c", "d"]).await;
    let first = h.get(&format!("{CM}?limit=2")).await.body;
    assert_eq!(names(&first), ["a", "b"]);
    let snapshot_rv = first["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let cont = first["metadata"]["continue"].as_str().unwrap().to_string();
    // Writes after the first page: a new item, a modified one, a deleted one.
    configmaps(&h, &["e"]).await;
    let r = h
        .patch(&format!("{CM}/c"), MERGE, json!({"data": {"v": "2"}}))
        .await;
    assert_eq!(r.code, 200);
    assert_eq!(h.delete(&format!("{CM}/d")).await.code, 200);
    let second = h.get(&format!("{CM}?limit=10&continue={cont}")).await;
    assert_eq!(second.code, 200, "{}", second.body);
    assert_eq!(names(&second.body), ["c", "d"]);
    assert_eq!(second.body["items"][0]["data"]["v"], "1");
    assert_eq!(second.body["metadata"]["resourceVersion"], snapshot_rv);
    assert!(second.body["metadata"].get("continue").is_none());
    // A fresh list sees the writes.
    assert_eq!(names(&h.get(CM).await.body), ["a", "b", "c", "e"]);
}

#[tokio::test]
async fn compacted_continue_token_is_410_with_an_inconsistent_token() {
    let h = H::new();
    configmaps(&h, &["a", "b", "c"]).await;
    let first = h.get(&format!("{CM}?limit=1")).await.body;
    let cont = first["metadata"]["continue"].as_str().unwrap().to_string();
    configmaps(&h, &["d"]).await;
    h.server.compact_history();
    let r = h.get(&format!("{CM}?limit=1&continue={cont}")).await;
    assert_eq!(r.code, 410, "{}", r.body);
    assert_eq!(r.body["reason"], "Expired");
    assert!(r.body["message"].as_str().unwrap().starts_with(
        "The provided continue parameter is too old to display a consistent list result."
    ));
    // The token in the Status continues from the same key at the latest state.
    let inconsistent = r.body["metadata"]["continue"].as_str().unwrap().to_string();
    let mut rest = Vec::new();
    let mut cont = inconsistent;
    loop {
        let page = h.get(&format!("{CM}?limit=1&continue={cont}")).await;
        assert_eq!(page.code, 200, "{}", page.body);
        rest.extend(names(&page.body));
        match page.body["metadata"]["continue"].as_str() {
            Some(c) => cont = c.to_string(),
            None => break,
        }
    }
    assert_eq!(rest, ["b", "c", "d"]);
}

#[tokio::test]
async fn malformed_continue_and_rv_with_continue_are_400() {
    let h = H::new();
    configmaps(&h, &["a", "b"]).await;
    let r = h.get(&format!("{CM}?limit=1&continue=%21%21")).await;
    assert_eq!(r.code, 400);
    assert_eq!(r.body["reason"], "BadRequest");
    assert!(
        r.body["message"]
            .as_str()
            .unwrap()
            .starts_with("invalid continue token")
    );
    let cont = h.get(&format!("{CM}?limit=1")).await.body["metadata"]["continue"]
        .as_str()
        .unwrap()
        .to_string();
    let r = h
        .get(&format!("{CM}?limit=1&continue={cont}&resourceVersion=5"))
        .await;
    assert_eq!(r.code, 400);
    assert_eq!(
        r.body["message"],
        "specifying resource version is not allowed when using continue"
    );
    // resourceVersion=0 is tolerated with continue.
    let r = h
        .get(&format!("{CM}?limit=1&continue={cont}&resourceVersion=0"))
        .await;
    assert_eq!(r.code, 200);
    assert_eq!(names(&r.body), ["b"]);
}

#[tokio::test]
async fn resource_version_match_exact_serves_history() {
    let h = H::new();
    configmaps(&h, &["a"]).await;
    let at = rv(&h.get(CM).await.body);
    configmaps(&h, &["b"]).await;
    h.patch(&format!("{CM}/a"), MERGE, json!({"data": {"v": "2"}}))
        .await;
    let exact = h
        .get(&format!(
            "{CM}?resourceVersion={at}&resourceVersionMatch=Exact"
        ))
        .await;
    assert_eq!(exact.code, 200, "{}", exact.body);
    assert_eq!(names(&exact.body), ["a"]);
    assert_eq!(exact.body["items"][0]["data"]["v"], "1");
    assert_eq!(exact.body["metadata"]["resourceVersion"], at.to_string());
    // NotOlderThan a past RV serves the latest state.
    let newer = h
        .get(&format!(
            "{CM}?resourceVersion={at}&resourceVersionMatch=NotOlderThan"
        ))
        .await;
    assert_eq!(names(&newer.body), ["a", "b"]);
    assert!(rv(&newer.body) > at);
    // Compacted → 410.
    h.server.compact_history();
    let gone = h
        .get(&format!(
            "{CM}?resourceVersion={at}&resourceVersionMatch=Exact"
        ))
        .await;
    assert_eq!(gone.code, 410);
    assert_eq!(gone.body["reason"], "Expired");
    assert_eq!(
        gone.body["message"],
        "The resourceVersion for the provided list is too old."
    );
    // A future RV → 504 ResourceVersionTooLarge.
    let future = rv(&newer.body) + 100;
    let r = h
        .get(&format!(
            "{CM}?resourceVersion={future}&resourceVersionMatch=Exact"
        ))
        .await;
    assert_eq!(r.code, 504);
    assert_eq!(
        r.body["details"]["causes"][0]["reason"],
        "ResourceVersionTooLarge"
    );
}

#[tokio::test]
async fn list_options_validation_matches_kube_apiserver() {
    let h = H::new();
    for (query, expect) in [
        (
            "resourceVersionMatch=NotOlderThan",
            "resourceVersionMatch is forbidden unless resourceVersion is provided",
        ),
        (
            "resourceVersionMatch=Exact&resourceVersion=0",
            "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
        ),
        (
            "resourceVersionMatch=Sometimes&resourceVersion=3",
            "Unsupported value: \"Sometimes\"",
        ),
    ] {
        let r = h.get(&format!("{CM}?{query}")).await;
        assert_eq!(r.code, 422, "{query}: {}", r.body);
        assert_eq!(r.body["reason"], "Invalid");
        let msg = r.body["message"].as_str().unwrap();
        assert!(
            msg.starts_with("ListOptions.meta.k8s.io \"\" is invalid: "),
            "{msg}"
        );
        assert!(msg.contains(expect), "{msg}");
        assert_eq!(
            r.body["details"]["causes"][0]["field"],
            "resourceVersionMatch"
        );
    }
    assert_eq!(h.get(&format!("{CM}?resourceVersion=abc")).await.code, 400);
    let r = h.get(&format!("{CM}?sendInitialEvents=true")).await;
    assert_eq!(r.code, 422);
    assert!(
        r.body["message"]
            .as_str()
            .unwrap()
            .contains("sendInitialEvents is forbidden for list")
    );
    // Watches: resourceVersionMatch only with sendInitialEvents, and only NotOlderThan.
    let r = h
        .get(&format!(
            "{CM}?watch=true&resourceVersion=1&resourceVersionMatch=NotOlderThan"
        ))
        .await;
    assert_eq!(r.code, 422, "{}", r.body);
    assert!(r.body["message"].as_str().unwrap().contains(
        "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"
    ));
    let r = h
        .get(&format!(
            "{CM}?watch=true&sendInitialEvents=true&resourceVersionMatch=Exact&resourceVersion=1"
        ))
        .await;
    assert_eq!(r.code, 422);
    assert!(
        r.body["message"]
            .as_str()
            .unwrap()
            .contains("supported values: \"NotOlderThan\"")
    );
}

#[tokio::test]
async fn remaining_item_count_only_without_selectors() {
    let h = H::with(ServerOptions::default());
    configmaps(&h, &["a", "b", "c"]).await;
    let plain = h.get(&format!("{CM}?limit=1")).await.body;
    assert_eq!(plain["metadata"]["remainingItemCount"], 2);
    let filtered = h
        .get(&format!(
            "{CM}?limit=1&fieldSelector=metadata.namespace%3Ddefault"
        ))
        .await
        .body;
    assert!(filtered["metadata"]["continue"].is_string());
    assert!(filtered["metadata"].get("remainingItemCount").is_none());
}

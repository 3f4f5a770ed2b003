//! Lists with limit and continue, and watches: from a version, with bookmarks, initial events,
//! selectors, and from a version too old.

use super::*;

pub(super) async fn lists(rec: &mut Recorder) {
    for name in ["l1", "l2", "l3"] {
        let mut w = widget(
            name,
            json!({"size": if name == "l2" {"large"} else {"small"}}),
        );
        w["metadata"]["labels"] = json!({"env": name, "tier": "list"});
        rec.send(
            kube(widgets().create(&PostParams::default(), bytes(w)).unwrap())
                .label(&format!("create {name}")),
        )
        .await;
    }
    rec.send(
        kube(
            widgets()
                .list(&ListParams::default().labels("tier=list").limit(2))
                .unwrap(),
        )
        .capture("cont", "/metadata/continue")
        .label("list limit=2"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .list(
                    &ListParams::default()
                        .labels("tier=list")
                        .limit(2)
                        .continue_token("${cont}"),
                )
                .unwrap(),
        )
        .label("list limit=2, continued"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .list(&ListParams::default().continue_token("garbage"))
                .unwrap(),
        )
        .label("list with a bad continue token"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .list(&ListParams::default().labels("env in (l1,l3),!missing"))
                .unwrap(),
        )
        .label("list: set-based selector"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .list(&ListParams::default().labels("env in l1"))
                .unwrap(),
        )
        .label("list: malformed selector"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .list(&ListParams::default().fields("metadata.name=l2"))
                .unwrap(),
        )
        .label("list: field selector on the name"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .list(&ListParams::default().fields("spec.size=large"))
                .unwrap(),
        )
        .label("list: field selector on a selectable field"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .list(&ListParams::default().fields("spec.mode=auto"))
                .unwrap(),
        )
        .label("list: field selector on another field"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .list(&ListParams::default().match_any().labels("tier=list"))
                .unwrap(),
        )
        .label("list resourceVersion=0 NotOlderThan"),
    )
    .await;
    rec.send(
        get(&format!(
            "{WIDGETS}?resourceVersion=1&resourceVersionMatch=Exact&labelSelector=tier%3Dlist"
        ))
        .label("list at an exact old resourceVersion"),
    )
    .await;
    rec.send(
        get(&format!("{WIDGETS}?resourceVersionMatch=NotOlderThan"))
            .label("list with resourceVersionMatch and no resourceVersion"),
    )
    .await;
    rec.send(
        get("/apis/diff.example.com/v1/widgets?labelSelector=tier%3Dlist")
            .label("list across namespaces"),
    )
    .await;
    rec.send(
        get("/apis/diff.example.com/v1/namespaces/empty-ns/widgets")
            .label("list in a namespace that does not exist"),
    )
    .await;
}

pub(super) async fn watches(rec: &mut Recorder) {
    let (a, b) = rec
        .send(
            kube(
                widgets()
                    .list(&ListParams::default().labels("watch=yes"))
                    .unwrap(),
            )
            .capture("wrv", "/metadata/resourceVersion")
            .label("list before the watched changes"),
        )
        .await;
    let _ = (a, b);
    let pp = PostParams::default();
    let mut w = widget("wa", json!({"size": "small"}));
    w["metadata"]["labels"] = json!({"watch": "yes"});
    rec.send(kube(widgets().create(&pp, bytes(w)).unwrap()).label("create wa"))
        .await;
    let mp = PatchParams::default();
    rec.send(
        kube(
            widgets()
                .patch("wa", &mp, &Patch::Merge(json!({"spec": {"replicas": 1}})))
                .unwrap(),
        )
        .label("patch wa"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .patch(
                    "wa",
                    &mp,
                    &Patch::Merge(json!({"metadata": {"labels": {"watch": "no"}}})),
                )
                .unwrap(),
        )
        .label("relabel wa out"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .patch(
                    "wa",
                    &mp,
                    &Patch::Merge(json!({"metadata": {"labels": {"watch": "yes"}}})),
                )
                .unwrap(),
        )
        .label("relabel wa back"),
    )
    .await;
    rec.send(kube(widgets().delete("wa", &DeleteParams::default()).unwrap()).label("delete wa"))
        .await;
    let within = Duration::from_secs(6);
    // kube-runtime's watcher: from the list's version, with bookmarks.
    let wp = WatchParams::default().timeout(1).labels("watch=yes");
    rec.send(
        kube(widgets().watch(&wp, "${wrv}").unwrap())
            .watch(20, within)
            .label("watch from a list's version, labelSelector, bookmarks"),
    )
    .await;
    let all = WatchParams::default()
        .timeout(1)
        .disable_bookmarks()
        .fields("metadata.name=wa");
    rec.send(
        kube(widgets().watch(&all, "${wrv}").unwrap())
            .watch(20, within)
            .label("watch from a list's version, fieldSelector, no bookmarks"),
    )
    .await;
    let any = WatchParams::default().timeout(1).labels("tier=list");
    rec.send(
        kube(widgets().watch(&any, "0").unwrap())
            .watch(20, within)
            .label("watch from 0"),
    )
    .await;
    rec.send(
        get(&format!(
            "{WIDGETS}?watch=true&timeoutSeconds=1&labelSelector=tier%3Dlist"
        ))
        .watch(20, within)
        .label("watch without a version"),
    )
    .await;
    rec.send(get(&format!("{WIDGETS}?watch=true&timeoutSeconds=1&allowWatchBookmarks=true&labelSelector=tier%3Dlist")).watch(20, within).label("watch without a version, bookmarks"))
        .await;
    let streaming = WatchParams::streaming_lists()
        .timeout(1)
        .labels("tier=list");
    rec.send(
        kube(widgets().watch(&streaming, "0").unwrap())
            .watch(20, within)
            .label("watch with sendInitialEvents (streaming list)"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .watch(&WatchParams::default().timeout(1), "1")
                .unwrap(),
        )
        .watch(5, within)
        .label("watch from a too old version"),
    )
    .await;
    rec.send(
        get(&format!(
            "{WIDGETS}?watch=true&timeoutSeconds=1&fieldSelector=spec.mode%3Dauto"
        ))
        .watch(5, within)
        .label("watch with an unsupported field selector"),
    )
    .await;
    rec.send(
        get(&format!(
            "{WIDGETS}?watch=true&timeoutSeconds=1&resourceVersion=notanumber"
        ))
        .watch(5, within)
        .label("watch from a malformed version"),
    )
    .await;
    rec.send(
        get(&format!(
            "{WIDGETS}?watch=true&timeoutSeconds=1&sendInitialEvents=true&resourceVersion=0"
        ))
        .watch(5, within)
        .label("watch with sendInitialEvents and no resourceVersionMatch"),
    )
    .await;
}

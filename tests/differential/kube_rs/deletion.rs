//! Deletion with finalizers and propagation, namespace and CRD deletion.

use super::*;

pub(super) async fn deletion(rec: &mut Recorder) {
    let pp = PostParams::default();
    rec.send(
        kube(widgets().delete("l3", &DeleteParams::default()).unwrap())
            .label("delete without finalizers"),
    )
    .await;
    rec.send(
        kube(widgets().delete("l3", &DeleteParams::default()).unwrap())
            .label("delete a missing object"),
    )
    .await;
    let mut f = widget("fin", json!({"size": "small"}));
    f["metadata"]["finalizers"] = json!(["diff.example.com/hold"]);
    rec.send(kube(widgets().create(&pp, bytes(f)).unwrap()).label("create fin with a finalizer"))
        .await;
    rec.send(
        kube(widgets().delete("fin", &DeleteParams::default()).unwrap()).label("delete fin: held"),
    )
    .await;
    rec.send(
        kube(widgets().delete("fin", &DeleteParams::default()).unwrap()).label("delete fin again"),
    )
    .await;
    let mp = PatchParams::default();
    rec.send(kube(widgets().patch("fin", &mp, &Patch::Merge(json!({"metadata": {"finalizers": ["diff.example.com/hold", "diff.example.com/more"]}}))).unwrap()).label("add a finalizer while deleting"))
        .await;
    rec.send(
        kube(
            widgets()
                .patch("fin", &mp, &Patch::Merge(json!({"spec": {"replicas": 3}})))
                .unwrap(),
        )
        .label("change the spec while deleting"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .patch(
                    "fin",
                    &mp,
                    &Patch::Merge(json!({"metadata": {"finalizers": null}})),
                )
                .unwrap(),
        )
        .label("remove the last finalizer"),
    )
    .await;
    rec.send(
        kube(widgets().get("fin", &Default::default()).unwrap())
            .until(WAIT, code(404))
            .label("get fin until gone"),
    )
    .await;
    // Preconditions.
    let (a, b) = rec
        .send(
            kube(widgets().get("l1", &Default::default()).unwrap())
                .capture("l1_uid", "/metadata/uid")
                .label("get l1"),
        )
        .await;
    let _ = (a, b);
    rec.send(
        delete(&format!("{WIDGETS}/l1"))
            .json(json!({"preconditions": {"uid": "00000000-0000-0000-0000-000000000000"}}))
            .label("delete with a wrong uid precondition"),
    )
    .await;
    rec.send(
        delete(&format!("{WIDGETS}/l1"))
            .json(json!({"preconditions": {"resourceVersion": "1"}}))
            .label("delete with a stale resourceVersion precondition"),
    )
    .await;
    rec.send(delete(&format!("{WIDGETS}/l1?dryRun=All")).label("delete dryRun"))
        .await;
    // Propagation: an owner and a dependent ConfigMap.
    for policy in ["Foreground", "Background", "Orphan"] {
        let owner = format!("owner-{}", policy.to_lowercase());
        rec.send(
            kube(
                widgets()
                    .create(&pp, bytes(widget(&owner, json!({"size": "small"}))))
                    .unwrap(),
            )
            .capture("owner_uid", "/metadata/uid")
            .label(&format!("create {owner}")),
        )
        .await;
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("dep-{owner}"), "namespace": NS,
            "ownerReferences": [{"apiVersion": "diff.example.com/v1", "kind": "Widget", "name": owner, "uid": "${owner_uid}", "blockOwnerDeletion": true}]},
            "data": {"k": "v"}});
        rec.send(
            post(&format!("/api/v1/namespaces/{NS}/configmaps"), cm)
                .label(&format!("create the dependent of {owner}")),
        )
        .await;
        let dp = match policy {
            "Foreground" => DeleteParams::foreground(),
            "Background" => DeleteParams::background(),
            _ => DeleteParams::orphan(),
        };
        rec.send(
            kube(widgets().delete(&owner, &dp).unwrap())
                .label(&format!("delete {owner} ({policy})")),
        )
        .await;
        rec.send(
            kube(widgets().get(&owner, &Default::default()).unwrap())
                .until(WAIT, code(404))
                .label(&format!("get {owner} until gone")),
        )
        .await;
        let cm_path = format!("/api/v1/namespaces/{NS}/configmaps/dep-{owner}");
        if policy == "Orphan" {
            rec.send(
                get(&cm_path)
                    .until(WAIT, |r| r.body["metadata"]["ownerReferences"].is_null())
                    .label("get the orphan until its owner reference is gone"),
            )
            .await;
        } else {
            rec.send(
                get(&cm_path)
                    .until(WAIT, code(404))
                    .label(&format!("get the dependent of {owner} until gone")),
            )
            .await;
        }
    }
    rec.send(
        kube(
            widgets()
                .delete_collection(
                    &DeleteParams::default(),
                    &ListParams::default().labels("tier=list"),
                )
                .unwrap(),
        )
        .label("delete collection by label"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .list(&ListParams::default().labels("tier=list"))
                .unwrap(),
        )
        .label("list after the collection delete"),
    )
    .await;
}

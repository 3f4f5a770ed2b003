//! The Machines and MachinePools core creates for a cluster, and the bootstrap gate in front of
//! a Machine's infrastructure: `spec.bootstrap.dataSecretName` and a Secret as a bootstrap
//! provider writes it.

use super::*;

impl Env {
    /// Creates a Machine of `cluster` referencing `infra` and what `m` names.
    pub async fn create_machine(
        &self,
        name: &str,
        cluster: &str,
        infra: (&ApiResource, &str),
        m: MachineSpec<'_>,
    ) -> Result<Value, EnvError> {
        let MachineSpec {
            bootstrap_config,
            data_secret,
            failure_domain,
            control_plane,
        } = m;
        let mut bootstrap = json!({});
        if let Some((r, n)) = bootstrap_config {
            bootstrap["configRef"] = contract_ref(r, n);
        }
        if let Some(s) = data_secret {
            bootstrap["dataSecretName"] = json!(s);
        }
        let mut spec = json!({
            "clusterName": cluster,
            "bootstrap": bootstrap,
            "infrastructureRef": contract_ref(infra.0, infra.1),
        });
        if let Some(fd) = failure_domain {
            spec["failureDomain"] = json!(fd);
        }
        spec["version"] = json!(MACHINE_VERSION);
        let mut meta = self.core_meta(name, Some(cluster));
        if control_plane {
            // A control-plane Machine as its owner labels it (KCP adds `control-plane-name` too;
            // a stand-alone one has the key alone): CABPK tells init / join-control-plane from a
            // worker join by the key's presence (`util.IsControlPlaneMachine`).
            meta["labels"][CONTROL_PLANE_LABEL] = json!("");
        }
        // A stand-alone Machine is owned by its Cluster (a plain owner reference): core's
        // Machine controller adopts it (`reconcileMachineOwnerAndLabels`, `shouldAdopt`:
        // no controller, no MachineSet / MachinePool / control-plane name label). A Cluster
        // that does not exist adopts nothing.
        if let Some(c) = self.cluster_opt(cluster).await? {
            meta["ownerReferences"] = json!([{
                "apiVersion": format!("{CORE_GROUP}/{CORE_VERSION}"),
                "kind": "Cluster",
                "name": cluster,
                "uid": c.pointer("/metadata/uid"),
            }]);
        }
        let obj = json!({"metadata": meta, "spec": spec});
        self.create(&machine_resource(), obj).await
    }

    /// Opens the bootstrap gate: `Machine.spec.bootstrap.dataSecretName`.
    pub async fn set_data_secret_name(
        &self,
        machine: &str,
        secret: &str,
    ) -> Result<Value, EnvError> {
        self.merge_patch(
            &machine_resource(),
            machine,
            json!({"spec": {"bootstrap": {"dataSecretName": secret}}}),
            "open gate: bootstrap dataSecretName",
        )
        .await
    }

    /// Creates a MachinePool of `cluster` with `replicas` referencing `infra`.
    pub async fn create_machine_pool(
        &self,
        name: &str,
        cluster: &str,
        replicas: i64,
        infra: (&ApiResource, &str),
        data_secret: &str,
    ) -> Result<Value, EnvError> {
        let obj = json!({
            "metadata": self.core_meta(name, Some(cluster)),
            "spec": {
                "clusterName": cluster,
                "replicas": replicas,
                "template": {"spec": {
                    "clusterName": cluster,
                    "version": MACHINE_VERSION,
                    "bootstrap": {"dataSecretName": data_secret},
                    "infrastructureRef": contract_ref(infra.0, infra.1),
                }},
            },
        });
        self.create(&machine_pool_resource(), obj).await
    }

    /// Creates a Secret the way a bootstrap provider would (used to open the bootstrap gate).
    pub async fn create_bootstrap_secret(
        &self,
        name: &str,
        cluster: &str,
    ) -> Result<Value, EnvError> {
        let obj = json!({
            "metadata": {"name": name, "labels": {CLUSTER_NAME_LABEL: cluster}},
            "type": "cluster.x-k8s.io/secret",
            "stringData": {"value": "#cloud-config\n"},
        });
        self.create(&secret_resource(), obj).await
    }
}

//! The Machine's references to its bootstrap config and InfraMachine, as core's
//! `ensureExternalOwnershipAndWatch` resolves them: the referenced kind at the version core
//! reads it (watched from then on), the object itself, and the ownership core takes of it.

use super::*;

impl Sim {
    /// The resource of a `{apiGroup, kind}` reference, read at the version core reads it: the
    /// newest version the CRD lists under the `cluster.x-k8s.io/<core version>` contract label
    /// (`contract.GetAPIVersion`), else its storage version. Starts a watch of it (core's
    /// `externalTracker.Watch`).
    pub(super) async fn resource_of(
        &mut self,
        group: &str,
        kind: &str,
    ) -> Result<ApiResource, EnvError> {
        let k = (group.to_string(), kind.to_string());
        if let Some(r) = self.resources.get(&k) {
            return Ok(r.clone());
        }
        use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
        let crds: Api<CustomResourceDefinition> = Api::all(self.env.client.clone());
        let list = crds
            .list(&ListParams::default())
            .await
            .map_err(|source| EnvError::Api {
                action: "list",
                object: "CustomResourceDefinitions".into(),
                source,
            })?;
        let crd = list
            .items
            .into_iter()
            .find(|c| c.spec.group == group && c.spec.names.kind == kind)
            .ok_or_else(|| EnvError::Invalid(format!("no CRD serves {kind}.{group}")))?;
        let label = format!("{CORE_GROUP}/{}", self.env.core_version);
        let mut listed: Vec<String> = crd
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(&label))
            .map(|v| v.split('_').map(str::to_string).collect())
            .unwrap_or_default();
        kube_version_order::sort_ascending(&mut listed);
        let served = |v: &str| crd.spec.versions.iter().any(|x| x.name == v && x.served);
        let version = listed
            .iter()
            .rev()
            .find(|v| served(v))
            .cloned()
            .or_else(|| {
                crd.spec
                    .versions
                    .iter()
                    .find(|v| v.storage)
                    .map(|v| v.name.clone())
            })
            .ok_or_else(|| EnvError::Invalid(format!("CRD of {kind}.{group} has no version")))?;
        let resource = ApiResource {
            group: group.to_string(),
            version: version.clone(),
            api_version: format!("{group}/{version}"),
            kind: kind.to_string(),
            plural: crd.spec.names.plural.clone(),
        };
        self.watches.push(wake_on(
            self.env.api(&resource),
            watcher::Config::default().labels(&self.selector()),
            self.wake.clone(),
        ));
        self.resources.insert(k, resource.clone());
        Ok(resource)
    }

    pub(super) async fn referenced(
        &mut self,
        reference: Option<&Value>,
    ) -> Result<Referenced, EnvError> {
        let Some(r) = reference else {
            return Ok(None);
        };
        let (Some(group), Some(kind), Some(name)) = (
            r.get("apiGroup").and_then(Value::as_str),
            r.get("kind").and_then(Value::as_str),
            r.get("name").and_then(Value::as_str),
        ) else {
            return Ok(None);
        };
        let resource = match self.resource_of(group, kind).await {
            Ok(r) => r,
            // No CRD serves the kind: nothing of it exists (core reads NotFound).
            Err(EnvError::Invalid(_)) => return Ok(None),
            Err(e) => return Err(e),
        };
        let obj = self
            .env
            .api(&resource)
            .get_opt(name)
            .await
            .map_err(|source| EnvError::Api {
                action: "read",
                object: key(&resource, name),
                source,
            })?
            .and_then(|o| serde_json::to_value(o).ok());
        Ok(Some((resource, name.to_string(), obj)))
    }

    /// The Machine's bootstrap config and InfraMachine (each: resource, name, the object).
    pub(super) async fn references(
        &mut self,
        m: &Value,
    ) -> Result<(Referenced, Referenced), EnvError> {
        let bootstrap = self
            .referenced(m.pointer("/spec/bootstrap/configRef"))
            .await?;
        let infra = self
            .referenced(m.pointer("/spec/infrastructureRef"))
            .await?;
        Ok((bootstrap, infra))
    }

    /// `ensureExternalOwnershipAndWatch` on one referenced object.
    pub(super) async fn own(
        &self,
        machine: &Value,
        resource: &ApiResource,
        name: &str,
        obj: &Value,
    ) -> Result<(), EnvError> {
        let machine_name = name_of(machine);
        let uid = machine
            .pointer("/metadata/uid")
            .cloned()
            .unwrap_or(Value::Null);
        let refs: Vec<Value> = obj
            .pointer("/metadata/ownerReferences")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let on_create = |o: &Value| {
            let group = o
                .get("apiVersion")
                .and_then(Value::as_str)
                .and_then(|av| av.split_once('/'))
                .map_or("", |(g, _)| g);
            let kind = o.get("kind").and_then(Value::as_str).unwrap_or_default();
            (group == CORE_GROUP && kind == "MachineSet")
                || (group == self.control_plane.group && kind == self.control_plane.kind)
        };
        let is_machine_controller = |o: &Value| {
            o.get("kind").and_then(Value::as_str) == Some("Machine")
                && o.get("name").and_then(Value::as_str) == Some(machine_name)
                && o.get("uid") == Some(&uid)
                && o.get("controller").and_then(Value::as_bool) == Some(true)
        };
        let labelled = obj
            .pointer("/metadata/labels")
            .and_then(|l| l.get(CLUSTER_NAME_LABEL))
            .and_then(Value::as_str)
            == Some(self.cluster.as_str());
        if !refs.iter().any(on_create) && refs.iter().any(is_machine_controller) && labelled {
            return Ok(());
        }
        let mut kept: Vec<Value> = refs
            .into_iter()
            .filter(|o| !on_create(o))
            .filter(|o| {
                !(o.get("kind").and_then(Value::as_str) == Some("Machine")
                    && o.get("name").and_then(Value::as_str) == Some(machine_name))
            })
            .collect();
        if kept
            .iter()
            .any(|o| o.get("controller").and_then(Value::as_bool) == Some(true))
        {
            return Err(EnvError::Invalid(format!(
                "{} has another controller; core's SetControllerReference refuses it",
                key(resource, name)
            )));
        }
        kept.push(json!({
            "apiVersion": format!("{CORE_GROUP}/{}", self.env.core_version),
            "kind": "Machine",
            "name": machine_name,
            "uid": uid,
            "controller": true,
            "blockOwnerDeletion": true,
        }));
        self.env
            .merge_patch(
                resource,
                name,
                json!({"metadata": {
                    "ownerReferences": kept,
                    "labels": {CLUSTER_NAME_LABEL: self.cluster},
                    "resourceVersion": obj.pointer("/metadata/resourceVersion"),
                }}),
                "set owner (core's Machine controller)",
            )
            .await
            .map(|_| ())
    }
}

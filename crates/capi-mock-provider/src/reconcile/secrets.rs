//! Secrets the mock writes: bootstrap data and cluster kubeconfig.

use super::{Result, Subject};
use crate::object::{CLUSTER_NAME_LABEL, FIELD_MANAGER};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::{Api, PostParams};
use kube::{Client, ResourceExt};
use std::collections::BTreeMap;

/// CAPI's type for controller-created secrets.
pub const CAPI_SECRET_TYPE: &str = "cluster.x-k8s.io/secret";

/// What a Secret should look like.
pub struct SecretSpec<'a> {
    pub name: &'a str,
    pub cluster: Option<&'a str>,
    pub data: Vec<(&'a str, String)>,
    pub secret_type: &'a str,
    pub owned: bool,
}

/// A controller owner reference to the subject at its contract version.
pub fn controller_ref(s: &Subject) -> OwnerReference {
    OwnerReference {
        api_version: format!("{}/{}", s.kind.group, s.contract.as_str()),
        kind: s.kind.kind.to_string(),
        name: s.name.clone(),
        uid: s.obj.uid().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// Creates the Secret unless one with that name exists; returns the Secret.
pub async fn ensure(client: &Client, s: &Subject, spec: SecretSpec<'_>) -> Result<Secret> {
    let api: Api<Secret> = Api::namespaced(client.clone(), &s.namespace);
    if let Some(existing) = api.get_opt(spec.name).await? {
        return Ok(existing);
    }
    let labels: BTreeMap<String, String> = spec
        .cluster
        .map(|c| (CLUSTER_NAME_LABEL.to_string(), c.to_string()))
        .into_iter()
        .collect();
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some(spec.name.to_string()),
            namespace: Some(s.namespace.clone()),
            labels: (!labels.is_empty()).then_some(labels),
            owner_references: spec.owned.then(|| vec![controller_ref(s)]),
            ..Default::default()
        },
        type_: Some(spec.secret_type.to_string()),
        data: Some(
            spec.data
                .into_iter()
                .map(|(k, v)| (k.to_string(), ByteString(v.into_bytes())))
                .collect(),
        ),
        ..Default::default()
    };
    let params = PostParams {
        field_manager: Some(FIELD_MANAGER.into()),
        ..Default::default()
    };
    match api.create(&params, &secret).await {
        Ok(created) => Ok(created),
        Err(kube::Error::Api(e)) if e.code == 409 => Ok(api.get(spec.name).await?),
        Err(e) => Err(e.into()),
    }
}

//! The mock's CRDs, generated from the Rust types in [`super::api`]: one CRD per kind with the
//! two served versions merged (`v1beta2` stored), the contract labels and the provider label.
//!
//! The two versions have genuinely different shapes, so (as for every Cluster API provider)
//! only a conversion webhook keeps an object whole: an API server converts an object written at
//! `v1beta1` to the stored `v1beta2` and prunes it by that version's schema, conversion strategy
//! None included. Every two-version CRD converts through the mock's webhook Service
//! ([`CONVERSION_SERVICE`], path [`CONVERSION_PATH`]; the conversion is `webhook::convert`), and its schemas carry
//! where conversion keeps what the other version cannot say (v1beta2 `status.deprecated.v1beta1`,
//! v1beta1 `status.v1beta2`). Whoever installs them routes the Service and sets its CA
//! ([`with_ca_bundle`]): `mock-provider run --webhook-cert-dir` serves it, `check` serves it for
//! its baseline.

use super::api::{
    bootstrap, controlplane, infrastructure_v1beta1 as i1, infrastructure_v1beta2 as i2, ipam,
};
use super::kinds::provider_label;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, JSONSchemaProps,
};
use kube::CustomResourceExt;
use kube::core::crd::{MergeError, merge_crds};

/// The storage version of every mock CRD.
pub const STORAGE_VERSION: &str = "v1beta2";

/// The Service the mock's CRDs convert through (`namespace`, `name`; port 443, path
/// `/convert`), in the namespace `mock-provider manifests` installs the manager into.
pub const CONVERSION_SERVICE: (&str, &str) =
    ("capi-conformance-mock-system", super::serving::SERVICE_NAME);

/// The port of [`CONVERSION_SERVICE`].
pub const CONVERSION_SERVICE_PORT: u16 = 443;

/// The path the mock serves conversion at (controller-runtime's).
pub const CONVERSION_PATH: &str = "/convert";

/// Every mock CRD, in manifest order (base kind before its template; the IPAM pool last).
pub fn mock_crds() -> Result<Vec<CustomResourceDefinition>, MergeError> {
    let pairs = vec![
        (i1::MockCluster::crd(), i2::MockCluster::crd()),
        (
            i1::MockClusterTemplate::crd(),
            i2::MockClusterTemplate::crd(),
        ),
        (i1::MockMachine::crd(), i2::MockMachine::crd()),
        (
            i1::MockMachineTemplate::crd(),
            i2::MockMachineTemplate::crd(),
        ),
        (i1::MockMachinePool::crd(), i2::MockMachinePool::crd()),
        (
            i1::MockMachinePoolTemplate::crd(),
            i2::MockMachinePoolTemplate::crd(),
        ),
        (
            bootstrap::v1beta1::MockConfig::crd(),
            bootstrap::v1beta2::MockConfig::crd(),
        ),
        (
            bootstrap::v1beta1::MockConfigTemplate::crd(),
            bootstrap::v1beta2::MockConfigTemplate::crd(),
        ),
        (
            controlplane::v1beta1::MockControlPlane::crd(),
            controlplane::v1beta2::MockControlPlane::crd(),
        ),
        (
            controlplane::v1beta1::MockControlPlaneTemplate::crd(),
            controlplane::v1beta2::MockControlPlaneTemplate::crd(),
        ),
    ];
    let mut crds = pairs
        .into_iter()
        .map(|(b1, b2)| {
            merge_crds(vec![b1, b2], STORAGE_VERSION)
                .map(labelled)
                .map(with_type_meta)
                .map(converted)
        })
        .collect::<Result<Vec<_>, _>>()?;
    crds.extend(mock_ipam_crds());
    Ok(crds)
}

/// The mock's IPAM CRDs: the pool kinds `mockippools.ipam.mock.capi-conformance.io`
/// (namespaced) and `mockglobalippools.ipam.mock.capi-conformance.io` (cluster-scoped), one
/// version each (`v1alpha1`), with the provider label `ipam-mock` and no contract labels (IPAM
/// pool CRDs carry none: the IPAM contract is not versioned by them).
pub fn mock_ipam_crds() -> Vec<CustomResourceDefinition> {
    [
        (
            ipam::MockIPPool::crd(),
            "MockIPPool of the capi-conformance mock provider: addresses for IPAddressClaims.",
        ),
        (
            ipam::MockGlobalIPPool::crd(),
            "MockGlobalIPPool of the capi-conformance mock provider: a cluster-scoped pool, addresses for IPAddressClaims of every namespace.",
        ),
    ]
    .into_iter()
    .map(|(crd, description)| {
        let mut crd = with_type_meta(crd);
        for version in &mut crd.spec.versions {
            if let Some(schema) = version
                .schema
                .as_mut()
                .and_then(|s| s.open_api_v3_schema.as_mut())
            {
                schema.description = Some(description.into());
            }
        }
        let labels = crd.metadata.labels.get_or_insert_with(Default::default);
        labels.insert(
            "cluster.x-k8s.io/provider".into(),
            provider_label(&crd.spec.group).into(),
        );
        crd
    })
    .collect()
}

/// Sets `listKind`, adds `apiVersion`, `kind` and `metadata` to every version's root schema
/// (kube-derive leaves them out) and replaces the generated description.
fn with_type_meta(mut crd: CustomResourceDefinition) -> CustomResourceDefinition {
    let kind = crd.spec.names.kind.clone();
    crd.spec.names.list_kind = Some(format!("{kind}List"));
    for version in &mut crd.spec.versions {
        let Some(schema) = version
            .schema
            .as_mut()
            .and_then(|s| s.open_api_v3_schema.as_mut())
        else {
            continue;
        };
        schema.description = Some(format!(
            "{kind} of the capi-conformance mock provider (contract {} shapes).",
            version.name
        ));
        let props = schema.properties.get_or_insert_with(Default::default);
        let string = || JSONSchemaProps {
            type_: Some("string".into()),
            ..Default::default()
        };
        props.insert("apiVersion".into(), string());
        props.insert("kind".into(), string());
        props.insert(
            "metadata".into(),
            JSONSchemaProps {
                type_: Some("object".into()),
                ..Default::default()
            },
        );
    }
    crd
}

/// Conversion through [`CONVERSION_SERVICE`], and the status fields conversion keeps the other
/// version's status in.
fn converted(mut crd: CustomResourceDefinition) -> CustomResourceDefinition {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
        CustomResourceConversion, ServiceReference, WebhookClientConfig, WebhookConversion,
    };
    let (namespace, name) = CONVERSION_SERVICE;
    crd.spec.conversion = Some(CustomResourceConversion {
        strategy: "Webhook".into(),
        webhook: Some(WebhookConversion {
            conversion_review_versions: vec!["v1".into()],
            client_config: Some(WebhookClientConfig {
                service: Some(ServiceReference {
                    namespace: namespace.into(),
                    name: name.into(),
                    path: Some(CONVERSION_PATH.into()),
                    port: Some(i32::from(CONVERSION_SERVICE_PORT)),
                }),
                ..Default::default()
            }),
        }),
    });
    for v in &mut crd.spec.versions {
        let other = match v.name.as_str() {
            "v1beta2" => "deprecated",
            "v1beta1" => "v1beta2",
            _ => continue,
        };
        let Some(status) = v
            .schema
            .as_mut()
            .and_then(|s| s.open_api_v3_schema.as_mut())
            .and_then(|s| s.properties.as_mut())
            .and_then(|p| p.get_mut("status"))
            .and_then(|s| s.properties.as_mut())
        else {
            continue;
        };
        status.insert(
            other.into(),
            JSONSchemaProps {
                type_: Some("object".into()),
                x_kubernetes_preserve_unknown_fields: Some(true),
                description: Some("What conversion keeps of the other version's status.".into()),
                ..Default::default()
            },
        );
    }
    crd
}

/// Sets `caBundle` (PEM) of every mock CRD in `docs` that converts through a webhook.
pub fn with_ca_bundle(docs: &mut [serde_json::Value], ca_pem: &str) {
    use base64::Engine as _;
    let bundle = base64::engine::general_purpose::STANDARD.encode(ca_pem.as_bytes());
    for d in docs {
        if let Some(cc) = d.pointer_mut("/spec/conversion/webhook/clientConfig")
            && let Some(m) = cc.as_object_mut()
        {
            m.insert("caBundle".into(), serde_json::Value::String(bundle.clone()));
        }
    }
}

/// Adds the contract labels and the clusterctl provider label.
fn labelled(mut crd: CustomResourceDefinition) -> CustomResourceDefinition {
    let provider = provider_label(&crd.spec.group);
    let labels = crd.metadata.labels.get_or_insert_with(Default::default);
    labels.insert("cluster.x-k8s.io/v1beta1".into(), "v1beta1".into());
    labels.insert("cluster.x-k8s.io/v1beta2".into(), "v1beta2".into());
    labels.insert("cluster.x-k8s.io/provider".into(), provider.into());
    crd
}

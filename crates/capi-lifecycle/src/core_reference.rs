//! The core reference trace (`check --embedded --core-cmd`): one Cluster and one Machine of the
//! mock provider taken through their life, then a Cluster whose control plane (the mock's, as
//! KCP) makes its Machine, with CAPI core's part played either by a real core manager or by the
//! simulation ([`super::core_sim`], its Machine controller for a control plane's Machines). After each step, what the contract names
//! (references, owner references, labels, annotations, the fields core copies, which objects
//! exist) is snapshotted; [`differences`] compares two traces field by field. Where they
//! differ, the simulation is wrong (docs/core-simulation.md "Checked against real core").

use super::core_sim::{
    CLUSTER_NAME_LABEL, ClusterSpec, MachineSpec, clone_annotations, cluster_owner_ref,
    cluster_resource, controller_owner_ref, machine_resource, mock_companion, sample_object,
};
use super::env::{Env, EnvError, key};
use super::{RUN_LABEL, WATCH_FILTER_LABEL};
use capi_contract::contract::{Contract, Role};
use kube::discovery::ApiResource;
use serde_json::{Value, json};
use std::collections::BTreeMap;

mod compare;
pub use compare::{Difference, compared_fields, differences, project};
use compare::{normalize, project_with};

/// Who plays core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Core {
    /// The tool, with the simulation's own acts.
    Simulated,
    /// A core manager watching the namespace: the tool creates what a user (or topology)
    /// creates and waits for core to act.
    Real,
}

/// The names of the trace's Cluster and Machine (the same on both sides).
pub const CLUSTER: &str = "reference";
pub const MACHINE: &str = "reference-cp";
/// The Cluster of the control plane, the control plane and its machine template (one name,
/// different kinds).
pub const MANAGED: &str = "reference-managed";
/// The control plane's Machine and its InfraMachine (the mock names them `<cp>-<index>`).
pub const MANAGED_MACHINE: &str = "reference-managed-0";

/// What the contract names of the trace's objects after one step: `"<Kind>/<name> <field>"` →
/// value (absent fields are not listed).
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub step: &'static str,
    pub fields: BTreeMap<String, Value>,
}

/// The mock's kinds of the trace (v1beta2 contract) with their samples.
struct Kinds {
    infra_cluster: (ApiResource, Value),
    infra_machine: (ApiResource, Value),
    bootstrap: (ApiResource, Value),
    control_plane: (ApiResource, Value),
    machine_template: (ApiResource, Value),
}

impl Kinds {
    fn mock() -> Result<Self, EnvError> {
        Ok(Kinds {
            infra_cluster: mock_companion(Role::InfraCluster, Contract::V1Beta2, false)?,
            infra_machine: mock_companion(Role::InfraMachine, Contract::V1Beta2, false)?,
            bootstrap: mock_companion(Role::BootstrapConfig, Contract::V1Beta2, false)?,
            control_plane: mock_companion(Role::ControlPlane, Contract::V1Beta2, false)?,
            machine_template: mock_companion(Role::InfraMachineTemplate, Contract::V1Beta2, false)?,
        })
    }

    /// Every object of the trace's first Cluster, in snapshot order.
    fn objects(&self) -> Vec<Tracked> {
        vec![
            Tracked::new(cluster_resource(), CLUSTER),
            Tracked::new(self.infra_cluster.0.clone(), CLUSTER),
            Tracked::new(machine_resource(), MACHINE),
            Tracked::new(self.bootstrap.0.clone(), MACHINE),
            Tracked::new(self.infra_machine.0.clone(), MACHINE),
        ]
    }

    /// Every object of the control plane's Cluster: core's Machine controller acts on the
    /// control plane's Machine, so its finalizer and conditions are compared too.
    fn managed_objects(&self) -> Vec<Tracked> {
        vec![
            Tracked::new(cluster_resource(), MANAGED),
            Tracked::new(self.control_plane.0.clone(), MANAGED),
            Tracked {
                controller_state: true,
                ..Tracked::new(machine_resource(), MANAGED_MACHINE)
            },
            Tracked::new(self.infra_machine.0.clone(), MANAGED_MACHINE),
        ]
    }
}

/// One object a snapshot projects ([`project`]).
struct Tracked {
    resource: ApiResource,
    name: &'static str,
    /// Also its finalizers and its conditions (type and status: the reasons and messages are
    /// the controller's wording), where the controller that acts on it is compared.
    controller_state: bool,
}

impl Tracked {
    fn new(resource: ApiResource, name: &'static str) -> Self {
        Tracked {
            resource,
            name,
            controller_state: false,
        }
    }
}

fn is_true(v: Option<&Value>) -> bool {
    v == Some(&Value::Bool(true))
}

/// Whether `obj` has condition `t` with `status`.
fn condition_is(obj: &Value, t: &str, status: &str) -> bool {
    super::json::condition(obj, t)
        .and_then(|c| c.get("status"))
        .and_then(Value::as_str)
        == Some(status)
}

fn non_empty(v: Option<&Value>) -> bool {
    v.and_then(Value::as_str).is_some_and(|s| !s.is_empty())
}

/// Waits (watching, at most the step timeout) until `name`'s state satisfies `pred` (`None`:
/// the object does not exist).
async fn await_state(
    env: &Env,
    resource: &ApiResource,
    name: &str,
    what: &'static str,
    pred: impl Fn(Option<&Value>) -> bool,
) -> Result<(), EnvError> {
    use kube::runtime::wait::await_condition;
    let api = env.api(resource);
    let cond = move |o: Option<&kube::api::DynamicObject>| {
        let v = o.and_then(|o| serde_json::to_value(o).ok());
        pred(v.as_ref())
    };
    let timeout = env.step_deadline();
    match tokio::time::timeout(timeout, await_condition(api, name, cond)).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(EnvError::Invalid(format!(
            "watching {}: {e}",
            key(resource, name)
        ))),
        Err(_) => Err(EnvError::NotSeen {
            object: key(resource, name),
            what,
            secs: timeout.as_secs(),
        }),
    }
}

/// An object of the trace created as a user or core's template cloning creates it, before core
/// acts on it: its sample, core's clone annotations and the cluster-name label
/// (`external.GenerateTemplate` sets both).
fn cloned(role: Role, (resource, sample): &(ApiResource, Value), name: &str) -> Value {
    let mut obj = sample_object(sample, name);
    clone_annotations(&mut obj, role, resource);
    obj["metadata"]["labels"][super::core_sim::CLUSTER_NAME_LABEL] = json!(CLUSTER);
    obj
}

/// Runs the trace on `env` (a namespace of its own, the mock reconciling it) with `core`
/// playing core; one snapshot per step.
pub async fn trace(env: &Env, core: Core) -> Result<Vec<Snapshot>, EnvError> {
    let kinds = Kinds::mock()?;
    let objects = kinds.objects();
    let (ic, im, bc) = (
        &kinds.infra_cluster.0,
        &kinds.infra_machine.0,
        &kinds.bootstrap.0,
    );
    let mut out = Vec::new();

    // 1. A Cluster referencing its InfraCluster, which the provider provisions.
    let cluster_spec = || ClusterSpec {
        infrastructure: Some((ic, CLUSTER)),
        ..ClusterSpec::default()
    };
    match core {
        Core::Simulated => {
            let cluster = env.create_cluster(CLUSTER, cluster_spec()).await?;
            env.create_owned_infra_cluster(&cluster, ic, &kinds.infra_cluster.1)
                .await?;
        }
        Core::Real => {
            env.create(
                ic,
                cloned(Role::InfraCluster, &kinds.infra_cluster, CLUSTER),
            )
            .await?;
            env.create_cluster(CLUSTER, cluster_spec()).await?;
        }
    }
    await_state(env, ic, CLUSTER, "provisioned", |o| {
        is_true(o.and_then(|o| o.pointer("/status/initialization/provisioned")))
    })
    .await?;
    match core {
        Core::Simulated => {
            env.copy_cluster_infrastructure(CLUSTER, ic, CLUSTER)
                .await?;
        }
        Core::Real => {
            await_state(
                env,
                &cluster_resource(),
                CLUSTER,
                "infrastructure provisioned",
                |o| {
                    is_true(o.and_then(|o| {
                        o.pointer("/status/initialization/infrastructureProvisioned")
                    }))
                },
            )
            .await?;
        }
    }
    out.push(snapshot(env, "cluster infrastructure provisioned", &objects).await?);

    // 2. A control-plane Machine with its bootstrap config and InfraMachine; the bootstrap
    // provider creates its data.
    env.create(bc, cloned(Role::BootstrapConfig, &kinds.bootstrap, MACHINE))
        .await?;
    env.create(
        im,
        cloned(Role::InfraMachine, &kinds.infra_machine, MACHINE),
    )
    .await?;
    let machine = env
        .create_machine(
            MACHINE,
            CLUSTER,
            (im, MACHINE),
            MachineSpec {
                bootstrap_config: Some((bc, MACHINE)),
                control_plane: true,
                ..MachineSpec::default()
            },
        )
        .await?;
    if core == Core::Simulated {
        env.adopt(bc, MACHINE, controller_owner_ref(&machine), CLUSTER)
            .await?;
        env.own_infra_machine(im, MACHINE, &machine, CLUSTER)
            .await?;
    }
    await_state(env, bc, MACHINE, "bootstrap data", |o| {
        non_empty(o.and_then(|o| o.pointer("/status/dataSecretName")))
    })
    .await?;
    match core {
        Core::Simulated => {
            env.copy_machine_bootstrap(MACHINE, bc, MACHINE).await?;
        }
        Core::Real => {
            await_state(
                env,
                &machine_resource(),
                MACHINE,
                "bootstrap data secret name",
                |o| {
                    non_empty(o.and_then(|o| o.pointer("/spec/bootstrap/dataSecretName")))
                        && is_true(o.and_then(|o| {
                            o.pointer("/status/initialization/bootstrapDataSecretCreated")
                        }))
                },
            )
            .await?;
        }
    }
    out.push(snapshot(env, "machine bootstrap data created", &objects).await?);

    // 3. The infrastructure provider provisions the InfraMachine.
    await_state(env, im, MACHINE, "provisioned", |o| {
        is_true(o.and_then(|o| o.pointer("/status/initialization/provisioned")))
            && non_empty(o.and_then(|o| o.pointer("/spec/providerID")))
    })
    .await?;
    match core {
        Core::Simulated => {
            env.copy_machine_infrastructure(MACHINE, im, MACHINE)
                .await?;
        }
        Core::Real => {
            await_state(
                env,
                &machine_resource(),
                MACHINE,
                "infrastructure provisioned",
                |o| {
                    is_true(o.and_then(|o| {
                        o.pointer("/status/initialization/infrastructureProvisioned")
                    })) && non_empty(o.and_then(|o| o.pointer("/spec/providerID")))
                },
            )
            .await?;
        }
    }
    out.push(snapshot(env, "machine infrastructure provisioned", &objects).await?);

    // 4. The Machine is deleted: its bootstrap config and InfraMachine go with it.
    env.delete(&machine_resource(), MACHINE).await?;
    for (r, n) in [
        (machine_resource(), MACHINE),
        (bc.clone(), MACHINE),
        (im.clone(), MACHINE),
    ] {
        await_state(env, &r, n, "gone", |o| o.is_none()).await?;
    }
    out.push(snapshot(env, "machine deleted", &objects).await?);

    // 5. The Cluster is deleted: its InfraCluster goes with it.
    env.delete(&cluster_resource(), CLUSTER).await?;
    for (r, n) in [(cluster_resource(), CLUSTER), (ic.clone(), CLUSTER)] {
        await_state(env, &r, n, "gone", |o| o.is_none()).await?;
    }
    out.push(snapshot(env, "cluster deleted", &objects).await?);

    managed_trace(env, core, &kinds, &mut out).await?;
    Ok(out)
}

/// Steps 6 and 7: a Cluster with only a control plane (no InfraCluster: core marks its
/// infrastructure provisioned), the mock's control plane making its Machine and cloning its
/// InfraMachine from the machine template, as KCP does; core's Machine controller takes the
/// InfraMachine over and reports the Machine's state, the Cluster controller copies the control
/// plane's initialized flag and endpoint. Then the control plane is deleted: its Machine and
/// InfraMachine go through core's Machine deletion.
async fn managed_trace(
    env: &Env,
    core: Core,
    kinds: &Kinds,
    out: &mut Vec<Snapshot>,
) -> Result<(), EnvError> {
    let objects = kinds.managed_objects();
    let (cpr, mt) = (&kinds.control_plane.0, &kinds.machine_template.0);
    env.create(mt, sample_object(&kinds.machine_template.1, MANAGED))
        .await?;
    let mut cp = sample_object(&kinds.control_plane.1, MANAGED);
    cp["spec"]["replicas"] = json!(1);
    cp["spec"]["machineTemplate"] = json!({"spec": {"infrastructureRef":
        {"apiGroup": mt.group, "kind": mt.kind, "name": MANAGED}}});
    let spec = || ClusterSpec {
        control_plane: Some((cpr, MANAGED)),
        ..ClusterSpec::default()
    };
    let controller = match core {
        Core::Simulated => {
            // As SC-controlplane: the control plane created owned by its Cluster, whose
            // infrastructure core marks provisioned (no infrastructureRef).
            let cluster = env.create_cluster(MANAGED, spec()).await?;
            env.set_infra_provisioned(MANAGED, true).await?;
            cp["metadata"]["ownerReferences"] = json!([cluster_owner_ref(&cluster)]);
            cp["metadata"]["labels"][CLUSTER_NAME_LABEL] = json!(MANAGED);
            env.create(cpr, cp).await?;
            Some(env.start_machine_controller(MANAGED, cpr, MANAGED))
        }
        Core::Real => {
            env.create(cpr, cp).await?;
            env.create_cluster(MANAGED, spec()).await?;
            None
        }
    };
    let steps = async {
        await_state(
            env,
            &machine_resource(),
            MANAGED_MACHINE,
            "infrastructure provisioned",
            // Not `bootstrapDataSecretCreated`: core sets it from a bootstrap config only, and
            // the control plane names the data Secret itself. The InfrastructureReady
            // condition: real core writes it with the copy, the simulation right after.
            |o| {
                is_true(
                    o.and_then(|o| o.pointer("/status/initialization/infrastructureProvisioned")),
                ) && non_empty(o.and_then(|o| o.pointer("/spec/providerID")))
                    && o.is_some_and(|o| condition_is(o, "InfrastructureReady", "True"))
            },
        )
        .await?;
        await_state(
            env,
            &cluster_resource(),
            MANAGED,
            "control plane initialized",
            |o| {
                is_true(o.and_then(|o| o.pointer("/status/initialization/controlPlaneInitialized")))
            },
        )
        .await?;
        out.push(snapshot(env, "control plane machine provisioned", &objects).await?);

        // 7. The control plane is deleted: the mock deletes its Machine first (as KCP).
        env.delete(cpr, MANAGED).await?;
        for (r, n) in [
            (cpr.clone(), MANAGED),
            (machine_resource(), MANAGED_MACHINE),
            (kinds.infra_machine.0.clone(), MANAGED_MACHINE),
        ] {
            await_state(env, &r, n, "gone", |o| o.is_none()).await?;
        }
        out.push(snapshot(env, "control plane deleted", &objects).await?);
        Ok::<(), EnvError>(())
    };
    let result = steps.await;
    if let Some(c) = controller {
        c.stop().await;
    }
    result?;
    env.delete(&cluster_resource(), MANAGED).await?;
    await_state(env, &cluster_resource(), MANAGED, "gone", |o| o.is_none()).await?;
    env.delete(mt, MANAGED).await
}

async fn snapshot(
    env: &Env,
    step: &'static str,
    objects: &[Tracked],
) -> Result<Snapshot, EnvError> {
    let mut fields = BTreeMap::new();
    for t in objects {
        let (r, name) = (&t.resource, t.name);
        let obj = match env.api(r).get_opt(name).await {
            Ok(o) => o.and_then(|o| serde_json::to_value(o).ok()),
            Err(source) => {
                return Err(EnvError::Api {
                    action: "read",
                    object: key(r, name),
                    source,
                });
            }
        };
        fields.extend(project_with(
            &r.kind,
            name,
            obj.as_ref(),
            t.controller_state,
        ));
    }
    normalize(&mut fields, &env.namespace);
    Ok(Snapshot { step, fields })
}

//! Machinery shared by the scripts: steps with timings, the provider object under test, the
//! pause check, and contract field paths.

use super::Subject;
use super::acting::{v1beta2_paused_condition_is, without_paused_condition};
use super::core_sim::{PAUSED_ANNOTATION, cluster_owner_ref};
use super::env::{Env, EnvError, key};
use super::json::{self, condition};
use super::observer::{Observer, watch_object};
use super::timeline::{Mark, Snapshot};
use super::verdicts::Verdicts;
use capi_contract::contract::Contract;
use capi_contract::model::{Evidence, Outcome, StepRecord};
use capi_contract::rule_ids::{self as id, RuleId};
use kube::discovery::ApiResource;
use serde_json::{Value, json};

mod judges;
mod meant;
mod watching;

/// A script's state while it runs.
pub struct ScriptRun<'a> {
    pub env: &'a Env,
    pub subject: &'a Subject,
    pub verdicts: Verdicts,
    pub steps: Vec<StepRecord>,
    /// Set when the environment (not the provider) broke the run.
    pub environment_error: Option<String>,
    observers: Vec<Observer>,
    /// The open step: its name, start (ms on the recorder's clock) and failures before it.
    step: Option<(String, u64, usize)>,
}

impl<'a> ScriptRun<'a> {
    pub fn new(env: &'a Env, subject: &'a Subject) -> Self {
        ScriptRun {
            env,
            subject,
            verdicts: Verdicts::default(),
            steps: Vec::new(),
            environment_error: None,
            observers: Vec::new(),
            step: None,
        }
    }

    /// A run of another part of the same script on the same environment, to run concurrently
    /// with this one (independent objects, independent quiet windows); see [`Self::absorb`].
    pub fn part(&self) -> ScriptRun<'a> {
        ScriptRun::new(self.env, self.subject)
    }

    /// Takes over a finished [`Self::part`] (ending this run's open step first): its `result`
    /// (an environment error), verdicts and steps (after this run's steps, in a fixed order)
    /// and its watches.
    pub fn absorb(&mut self, mut part: ScriptRun<'a>, result: Result<(), EnvError>) {
        self.end_step();
        if let Err(e) = result {
            part.env_failed(e);
        }
        part.end_step();
        if self.environment_error.is_none() {
            self.environment_error = part.environment_error.take();
        }
        self.verdicts.merge(std::mem::take(&mut part.verdicts));
        self.steps.append(&mut part.steps);
        self.observers.append(&mut part.observers);
    }

    /// `<script> <column>`: how progress names this run.
    pub fn label(&self) -> String {
        format!(
            "{} {}",
            super::script_for(self.subject.role()).unwrap_or("-"),
            self.subject.column.id()
        )
    }

    pub fn contract(&self) -> Contract {
        self.subject.column.contract.unwrap_or(Contract::V1Beta2)
    }

    /// Short unique prefix for object names of this subject (`mockmachine-b2`); for a
    /// cluster-scoped kind with the side's tag (`mockglobalippool-b2-<tag>`: its objects share
    /// no namespace with the other side's, [`super::scope::Scopes::tagged`]).
    pub fn prefix(&self) -> String {
        let prefix = format!(
            "{}-{}",
            self.subject.resource.kind.to_lowercase(),
            self.contract().short()
        );
        if self.env.scopes.is_cluster_scoped(&self.subject.resource) {
            self.env.scopes.tagged(&prefix)
        } else {
            prefix
        }
    }

    /// Starts a step (closing the previous one).
    pub fn step(&mut self, name: &str) {
        self.end_step();
        if self.env.events.listening() {
            self.env.events.emit(crate::events::Event::Step {
                scenario: self.label(),
                step: name.to_string(),
            });
        }
        let at_ms = self.env.recorder.elapsed_ms();
        self.step = Some((name.to_string(), at_ms, self.fail_count()));
    }

    fn fail_count(&self) -> usize {
        self.verdicts
            .0
            .values()
            .filter(|v| v.outcome == Outcome::Fail)
            .count()
    }

    pub fn end_step(&mut self) {
        if let Some((name, start, fails)) = self.step.take() {
            let outcome = if self.environment_error.is_some() {
                Outcome::Inconclusive
            } else if self.fail_count() > fails {
                Outcome::Fail
            } else {
                Outcome::Pass
            };
            self.steps.push(StepRecord {
                name,
                outcome,
                at_ms: Some(start),
                duration_ms: Some(self.env.recorder.elapsed_ms().saturating_sub(start)),
            });
        }
    }

    /// Ends the script with the `result` of its steps (an environment error stops it).
    pub fn finish(&mut self, result: Result<(), EnvError>) {
        if let Err(e) = result {
            self.env_failed(e);
        }
        self.end_step();
    }

    /// Records an environment failure (the script stops; its rules become inconclusive).
    pub fn env_failed(&mut self, e: EnvError) {
        if self.environment_error.is_none() {
            self.environment_error = Some(e.to_string());
        }
    }

    /// Starts watching one object and waits for the watch to be established.
    pub async fn watch(&mut self, resource: &ApiResource, name: &str) {
        let mut o = watch_object(
            self.env.client.clone(),
            resource,
            self.env.namespace_of(resource),
            name,
            self.env.recorder.clone(),
        );
        o.ready(self.env.settings.step_timeout).await;
        self.observers.push(o);
    }

    pub fn keep(&mut self, o: Observer) {
        self.observers.push(o);
    }

    /// The provider object to create from the sample: `name`, sample spec/labels/annotations,
    /// at the version the sample is written in ([`super::env::Env::create`] converts), with
    /// core's clone annotations where core clones the kind from a template
    /// ([`super::core_sim::clone_annotations`]).
    pub fn provider_object(&self, name: &str, extra_annotations: &[(&str, &str)]) -> Value {
        let sample = self.subject.sample.clone().unwrap_or_else(|| json!({}));
        let mut obj = super::core_sim::sample_object(&sample, name);
        super::core_sim::clone_annotations(&mut obj, self.subject.role(), &self.subject.resource);
        for (k, v) in extra_annotations {
            obj["metadata"]["annotations"][*k] = json!(v);
        }
        obj
    }

    /// [`Self::provider_object`] spelled at the column's version: a sample written at another
    /// version is converted by the server (the provider's conversion webhook) through a probe
    /// object created at the sample's version and read at the column's (`<name>-at`, deleted
    /// again), whose `spec` and annotations (with CAPI's conversion-data, what the column's
    /// version cannot hold) it takes. For the rules that write the column's version themselves
    /// (`all/conversion-lossless`, `all/defaulting-admitted`).
    pub async fn column_object(
        &self,
        name: &str,
        extra_annotations: &[(&str, &str)],
    ) -> Result<Value, EnvError> {
        let res = &self.subject.resource;
        let mut obj = self.provider_object(name, extra_annotations);
        if super::env::written_at(obj.get("apiVersion"), res).version == res.version {
            obj["apiVersion"] = json!(res.api_version);
            return Ok(obj);
        }
        let probe = super::core_sim::truncate_name(&format!("{name}-at"));
        let mut at = obj.clone();
        at["metadata"]["name"] = json!(probe);
        let converted = self.env.create(res, at).await?;
        self.env.delete(res, &probe).await?;
        obj["apiVersion"] = json!(res.api_version);
        obj["spec"] = converted.get("spec").cloned().unwrap_or(json!({}));
        if let Some(a) = converted.pointer("/metadata/annotations") {
            obj["metadata"]["annotations"] = a.clone();
        }
        Ok(obj)
    }

    /// Evidence naming the object under test (namespace omitted: it changes per run).
    pub fn evidence(&self, name: &str, message: impl Into<String>, path: Option<&str>) -> Evidence {
        Evidence {
            message: message.into(),
            object: Some(format!("{} {name}", self.subject.resource.kind).into()),
            path: path.map(str::to_string),
            resource_version: None,
            location: None,
            source: None,
        }
    }

    pub fn key(&self, name: &str) -> String {
        key(&self.subject.resource, name)
    }
}

/// The owner reference core would set for an object owned by a Cluster.
pub fn cluster_owner(cluster: &Value) -> Value {
    cluster_owner_ref(cluster)
}

/// The "infrastructure provisioned" flag path of InfraCluster/InfraMachine per contract.
pub fn provisioned_path(contract: Contract) -> &'static str {
    match contract {
        Contract::V1Beta1 => "status.ready",
        Contract::V1Beta2 => "status.initialization.provisioned",
    }
}

/// A provider finalizer is present.
pub fn has_finalizer(v: &Value) -> bool {
    !json::finalizers(v).is_empty()
}

/// `Ready` condition present (any status).
pub fn has_ready_condition(v: &Value) -> bool {
    condition(v, "Ready").is_some()
}

/// Annotation key helper for readability in scripts.
pub fn has_annotation(v: &Value, key: &str) -> bool {
    v.pointer("/metadata/annotations")
        .and_then(|a| a.get(key))
        .is_some()
}

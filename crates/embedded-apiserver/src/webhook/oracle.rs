//! How the synchronous write pipeline gets webhook answers without holding the store lock
//! across a network call.
//!
//! The pipeline (`ops::create`, `ops::prepare_update`, `ops::delete`, apply, scale) asks an
//! [`Oracle`] at each point kube-apiserver would call out: mutating admission, validating
//! admission, and conversion between versions. An answer the oracle already has is returned
//! at once; an unknown one is recorded as pending and the pipeline is abandoned (nothing was
//! stored). The [`run`] driver then releases the lock, obtains the answer (webhook calls),
//! and replays the pipeline from the start under the lock. The replay is deterministic (the
//! clock, uids and generated names are frozen for the request), so it reaches the same
//! questions with the same inputs and gets them answered from memory; the replay that needs
//! no new answer commits. If another write changed the object in between, the inputs differ
//! and the new questions are asked, as kube-apiserver re-runs admission when its optimistic
//! update retries.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::admission::{self, Attributes, Ctx};
use super::config::{Configs, Webhook};
use super::matching;
use crate::error::ApiError;
use crate::meta::{self, ReplaySeed};
use crate::rbac::UserInfo;
use crate::registry::ResourceType;
use crate::response::warning_header;
use crate::state::EmbeddedServer;
use crate::store::Store;
use crate::target::Target;

/// A question the pipeline could not get answered from memory.
#[derive(Debug, Clone)]
enum Pending {
    Mutate(Attributes, Value, Value),
    Validate(Attributes, Value, Value),
    /// An object to convert, a version, and whether the object is as stored.
    Convert(Value, String, bool),
}

#[derive(Debug, Default)]
struct Memo {
    mutations: Vec<(Attributes, Value, Value, Result<Value, ApiError>)>,
    validations: Vec<(Attributes, Value, Value, Result<(), ApiError>)>,
    conversions: Vec<(Value, String, Result<Value, ApiError>)>,
    pending: Option<Pending>,
}

/// The webhook answers of one request (see the module docs).
pub struct Oracle {
    rt: Arc<ResourceType>,
    user: UserInfo,
    mutating: Vec<Arc<Webhook>>,
    validating: Vec<Arc<Webhook>>,
    needs_namespaces: bool,
    namespaces: Mutex<BTreeMap<String, BTreeMap<String, String>>>,
    memo: Mutex<Memo>,
    warnings: Mutex<Vec<String>>,
}

impl std::fmt::Debug for Oracle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Oracle")
            .field("resource", &self.rt.resource)
            .field("mutating", &self.mutating.len())
            .field("validating", &self.validating.len())
            .finish()
    }
}

/// The marker error of an abandoned replay.
fn suspended() -> ApiError {
    ApiError::internal("webhook answer pending")
}

/// Any rule of `w` applies to this resource (some version, operation, subresource)?
fn concerns(w: &Webhook, rt: &ResourceType) -> bool {
    w.rules.iter().any(|r| {
        r.api_groups.iter().any(|g| g == "*" || *g == rt.group)
            && r.resources.iter().any(|res| {
                let base = res.split_once('/').map_or(res.as_str(), |(b, _)| b);
                base == "*" || base == rt.resource
            })
    })
}

impl Oracle {
    /// The oracle for a write to `rt` by `user`, or None when no webhook can be involved
    /// (then the pipeline runs once, as without webhooks).
    pub fn engaged(
        store: &Store,
        server: &EmbeddedServer,
        rt: &Arc<ResourceType>,
        user: &UserInfo,
    ) -> Option<Arc<Self>> {
        let exempt = matching::is_exempt(&rt.group, &rt.resource);
        let configs: Arc<Configs> = if exempt {
            Arc::new(Configs::default())
        } else {
            server.webhooks().configs(store)
        };
        let pick = |hooks: &[Arc<Webhook>]| -> Vec<Arc<Webhook>> {
            hooks.iter().filter(|w| concerns(w, rt)).cloned().collect()
        };
        let mutating = pick(&configs.mutating);
        let validating = pick(&configs.validating);
        if mutating.is_empty() && validating.is_empty() && rt.conversion.is_none() {
            return None;
        }
        let needs_namespaces = mutating
            .iter()
            .chain(&validating)
            .any(|w| w.namespace_selector.is_some());
        Some(Arc::new(Self {
            rt: rt.clone(),
            user: user.clone(),
            mutating,
            validating,
            needs_namespaces,
            namespaces: Mutex::new(BTreeMap::new()),
            memo: Mutex::new(Memo::default()),
            warnings: Mutex::new(Vec::new()),
        }))
    }

    fn memo(&self) -> std::sync::MutexGuard<'_, Memo> {
        self.memo.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records `p` unless an earlier question of this replay is pending; always the marker.
    fn ask(&self, p: Pending) -> ApiError {
        let mut memo = self.memo();
        if memo.pending.is_none() {
            memo.pending = Some(p);
        }
        suspended()
    }

    fn applies(&self, hooks: &[Arc<Webhook>], attrs: &Attributes) -> bool {
        let versions: Vec<String> = self.rt.versions.iter().map(|v| v.name.clone()).collect();
        let req = attrs.request_info(&self.rt, &versions);
        hooks.iter().any(|w| matching::may_apply(w, &req))
    }

    /// Mutating admission of `obj` (Null for DELETE) with `old` (Null for CREATE): the object
    /// the mutating webhooks made of it.
    pub fn mutate(&self, attrs: Attributes, obj: Value, old: &Value) -> Result<Value, ApiError> {
        if !self.applies(&self.mutating, &attrs) {
            return Ok(obj);
        }
        let memo = self.memo();
        if let Some((_, _, _, r)) = memo
            .mutations
            .iter()
            .find(|(a, o, p, _)| *a == attrs && *o == obj && p == old)
        {
            return r.clone();
        }
        drop(memo);
        Err(self.ask(Pending::Mutate(attrs, obj, old.clone())))
    }

    /// Validating admission of the final object (Null for DELETE) against `old`.
    pub fn validate(&self, attrs: Attributes, obj: &Value, old: &Value) -> Result<(), ApiError> {
        if !self.applies(&self.validating, &attrs) {
            return Ok(());
        }
        let memo = self.memo();
        if let Some((_, _, _, r)) = memo
            .validations
            .iter()
            .find(|(a, o, p, _)| *a == attrs && o == obj && p == old)
        {
            return r.clone();
        }
        drop(memo);
        Err(self.ask(Pending::Validate(attrs, obj.clone(), old.clone())))
    }

    /// `obj` converted to `version` of this oracle's resource (a conversion webhook call when
    /// the CRD converts by webhook and the object is at another version).
    pub fn convert(&self, obj: Value, version: &str) -> Result<Value, ApiError> {
        self.convert_object(obj, version, false)
    }

    /// [`Self::convert`] of an object as stored (its conversion may be remembered:
    /// [`super::stored_conversions`]).
    pub fn convert_stored(&self, obj: Value, version: &str) -> Result<Value, ApiError> {
        self.convert_object(obj, version, true)
    }

    fn convert_object(&self, obj: Value, version: &str, stored: bool) -> Result<Value, ApiError> {
        let desired = self.rt.api_version(version);
        if self.rt.conversion.is_none() || !super::crd_conversion::needs_conversion(&obj, &desired)
        {
            return Ok(crate::target::present(&self.rt, version, obj));
        }
        let memo = self.memo();
        if let Some((_, _, r)) = memo
            .conversions
            .iter()
            .find(|(o, v, _)| *o == obj && v == version)
        {
            return r.clone();
        }
        drop(memo);
        Err(self.ask(Pending::Convert(obj, version.to_string(), stored)))
    }

    fn take_pending(&self) -> Option<Pending> {
        self.memo().pending.take()
    }

    fn refresh_namespaces(&self, store: &Store) {
        if !self.needs_namespaces {
            return;
        }
        let map: BTreeMap<String, BTreeMap<String, String>> = store
            .objects_of("", "namespaces", None)
            .map(|ns| (meta::name(ns).to_string(), meta::labels(ns)))
            .collect();
        *self.namespaces.lock().unwrap_or_else(|p| p.into_inner()) = map;
    }

    /// Obtains the answer to `p` (network calls, no lock held) and remembers it.
    async fn answer(&self, server: &EmbeddedServer, p: Pending) {
        let ctx = Ctx {
            server,
            rt: self.rt.clone(),
            user: self.user.clone(),
            namespaces: self
                .namespaces
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
            warnings: Mutex::new(Vec::new()),
        };
        match p {
            Pending::Mutate(attrs, obj, old) => {
                let r = admission::mutate(&ctx, &attrs, obj.clone(), &old, &self.mutating).await;
                self.memo().mutations.push((attrs, obj, old, r));
            }
            Pending::Validate(attrs, obj, old) => {
                let r = admission::validate(&ctx, &attrs, &obj, &old, &self.validating).await;
                self.memo().validations.push((attrs, obj, old, r));
            }
            Pending::Convert(obj, version, stored) => {
                let objects = vec![obj.clone()];
                let r = if stored {
                    super::conversion::convert_stored(server, &self.rt, objects, &version, false)
                        .await
                } else {
                    super::conversion::convert(server, &self.rt, objects, &version, false).await
                }
                .map(|mut v| v.pop().unwrap_or(Value::Null))
                .map_err(ApiError::internal_error);
                self.memo().conversions.push((obj, version, r));
            }
        }
        let mut w = ctx.warnings.into_inner().unwrap_or_else(|p| p.into_inner());
        self.warnings
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .append(&mut w);
    }

    /// Warnings the webhooks returned so far (deduplicated, in order).
    pub fn warnings(&self) -> Vec<String> {
        let all = self.warnings.lock().unwrap_or_else(|p| p.into_inner());
        let mut out: Vec<String> = Vec::new();
        for w in all.iter() {
            if !out.contains(w) {
                out.push(w.clone());
            }
        }
        out
    }
}

/// Replays allowed before a write that keeps meeting new questions gives up (409: another
/// writer kept changing the object).
const MAX_REPLAYS: usize = 64;

/// Whether a write of `rt` by `user` involves webhooks (some configuration concerns it, or the
/// CRD converts by webhook).
pub fn involved(server: &EmbeddedServer, rt: &Arc<ResourceType>, user: &UserInfo) -> bool {
    rt.conversion.is_some() || {
        let store = server.lock();
        Oracle::engaged(&store, server, rt, user).is_some()
    }
}

/// Runs `f` (a write pipeline: create, update, patch, apply, delete; given the oracle to put in
/// its options) the way the module docs describe: once under the lock when no webhook can be
/// involved; otherwise replayed with an [`Oracle`] until it commits or fails. Returns the
/// result and the webhooks' warnings (on errors, as `Warning` headers of the error).
pub async fn run<R>(
    server: &EmbeddedServer,
    t: &Target,
    user: &UserInfo,
    input: Value,
    f: impl Fn(&mut Store, Option<Arc<Oracle>>, Value) -> Result<R, ApiError>,
) -> Result<(R, Vec<String>), ApiError> {
    let oracle = {
        let mut store = server.lock();
        match Oracle::engaged(&store, server, &t.rt, user) {
            Some(o) => o,
            None => return f(&mut store, None, input).map(|r| (r, Vec::new())),
        }
    };
    let mut seed = ReplaySeed::new();
    for _ in 0..MAX_REPLAYS {
        let result = {
            let mut store = server.lock();
            oracle.refresh_namespaces(&store);
            meta::with_replay(&mut seed, || {
                f(&mut store, Some(oracle.clone()), input.clone())
            })
        };
        match result {
            Ok(r) => return Ok((r, oracle.warnings())),
            Err(e) => match oracle.take_pending() {
                Some(p) => oracle.answer(server, p).await,
                None => return Err(with_warnings(e, &oracle.warnings())),
            },
        }
    }
    Err(ApiError::modified(&t.rt.group, &t.rt.resource, &t.name))
}

/// `e` carrying the webhooks' warnings as `Warning` headers (kube sends them on errors too).
pub fn with_warnings(mut e: ApiError, warnings: &[String]) -> ApiError {
    for w in warnings {
        e.headers.push(("warning", warning_header(w)));
    }
    e
}

//! The components' webhooks on the embedded server: the serving certificate whose CA is
//! injected into them, and what would route the baseline mock's objects through the target's
//! webhooks, kept back until the target starts.

use super::*;

/// Whether `doc` is a CRD of the mock's groups.
pub(super) fn is_mock_crd(doc: &Document) -> bool {
    doc.value.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition")
        && doc
            .value
            .pointer("/spec/group")
            .and_then(Value::as_str)
            .is_some_and(|g| g.ends_with(MOCK_GROUP_SUFFIX))
}

/// Whether webhook configuration `doc` has a rule for a mock group (or every group).
pub(super) fn hooks_mock_groups(doc: &Document) -> bool {
    crate::serving::components::is_webhook_configuration(&doc.value)
        && doc
            .value
            .get("webhooks")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .flat_map(|w| {
                w.get("rules")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
            })
            .flat_map(|r| {
                r.get("apiGroups")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
            })
            .filter_map(Value::as_str)
            .any(|g| g == "*" || g.ends_with(MOCK_GROUP_SUFFIX))
}

/// The baseline (the in-process mock) and a target that is the mock itself in webhook mode
/// share the mock's CRDs. So that the baseline runs on the mock's CRDs as it always does (and a
/// target's faulty webhook cannot fail it), what would route the baseline's objects through the
/// target's webhooks waits until the target starts: webhook configurations with rules for the
/// mock's groups, and the conversion settings of the mock's CRDs (installed now without them).
/// Returns the documents to install at target start; `docs` keeps what is installed now.
pub(super) fn split_shared(docs: &mut Vec<Document>) -> Vec<Document> {
    if !docs.iter().any(is_mock_crd) {
        return Vec::new();
    }
    let mut deferred = Vec::new();
    let mut now = Vec::new();
    for doc in docs.drain(..) {
        if hooks_mock_groups(&doc) {
            deferred.push(doc);
        } else if is_mock_crd(&doc)
            && crate::serving::components::is_webhook_converted_crd(&doc.value)
        {
            // Until then the CRD keeps the run's conversion of the baseline's CRDs.
            let mut without = doc.clone();
            if let Some(spec) = without.value.get_mut("spec").and_then(Value::as_object_mut) {
                spec.remove("conversion");
            }
            now.push(without);
            deferred.push(doc);
        } else {
            now.push(doc);
        }
    }
    *docs = now;
    deferred
}

/// Issues the serving certificate of the components' webhooks and injects its CA into `docs`
/// (as cert-manager would); a CA injection that cannot be done and a webhook Service the
/// components do not define are report notes. `None` when
/// the components have neither webhook Services nor CA injections.
pub(super) fn webhook_serving(
    docs: &mut [Document],
    notes: &mut Vec<crate::report::Note>,
) -> anyhow::Result<Option<crate::serving::Plan>> {
    let mut values: Vec<Value> = docs.iter().map(|d| d.value.clone()).collect();
    let plan = crate::serving::Plan::for_components(&mut values)
        .context("issuing the provider's webhook serving certificate")?;
    for (doc, value) in docs.iter_mut().zip(values) {
        doc.value = value;
    }
    for i in &plan.injections {
        if let Err(why) = &i.outcome {
            let message = format!("CA injection: {}: {why}", i.object);
            eprintln!("{message}");
            notes.push(crate::report::Note {
                source: "--crds".into(),
                message,
            });
        }
    }
    for svc in plan.services.iter().filter(|s| !s.defined) {
        let message = format!(
            "{} call(s) Service {}/{}, which the components do not define: calls to it fail (service \"{}\" not found), here as on any cluster",
            svc.used_by.join(", "),
            svc.namespace,
            svc.name,
            svc.name
        );
        eprintln!("{message}");
        notes.push(crate::report::Note {
            source: "--crds".into(),
            message,
        });
    }
    let used = !plan.services.is_empty() || plan.injections.iter().any(|i| i.outcome.is_ok());
    Ok(used.then_some(plan))
}

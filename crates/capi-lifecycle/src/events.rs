//! What a run tells while it works, as events: the scenarios it will run, the step each has
//! reached, each one's end. The run emits them into an [`Events`] sink; the progress display
//! (the CLI's) consumes them, as cargo-nextest's reporter consumes its runner's
//! events. Nothing here is process-wide: a run without a sink tells nothing.

use std::sync::Arc;

/// How a scenario ended, for the progress display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScenarioEnd {
    /// Every verdict of the scenario passed or skipped.
    Ok,
    /// The provider failed some rule.
    Fail,
    /// The environment stopped the scenario.
    Inconclusive,
}

impl ScenarioEnd {
    pub fn as_str(self) -> &'static str {
        match self {
            ScenarioEnd::Ok => "ok",
            ScenarioEnd::Fail => "FAIL",
            ScenarioEnd::Inconclusive => "inconclusive",
        }
    }
}

/// One thing a run tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// `count` more scenarios will run.
    ScenariosPlanned { count: usize },
    /// A scenario (`<script> <column>`) started a step.
    Step { scenario: String, step: String },
    /// A scenario finished.
    ScenarioFinished {
        scenario: String,
        end: ScenarioEnd,
        duration_ms: u64,
    },
}

/// A consumer of events.
type Consumer = Arc<dyn Fn(&Event) + Send + Sync>;

/// Where a run's events go: a consumer, or nowhere (the default).
#[derive(Clone, Default)]
pub struct Events(Option<Consumer>);

impl std::fmt::Debug for Events {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Events(consumer)"
        } else {
            "Events(none)"
        })
    }
}

impl Events {
    /// Events to `consumer`.
    pub fn to(consumer: impl Fn(&Event) + Send + Sync + 'static) -> Events {
        Events(Some(Arc::new(consumer)))
    }

    /// Whether anyone listens (a producer may skip building an event nobody reads).
    pub fn listening(&self) -> bool {
        self.0.is_some()
    }

    pub fn emit(&self, event: Event) {
        if let Some(f) = &self.0 {
            f(&event);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn events_reach_their_consumer_only() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let events = Events::to(move |e| sink.lock().unwrap().push(e.clone()));
        assert!(events.listening());
        events.emit(Event::ScenariosPlanned { count: 2 });
        Events::default().emit(Event::ScenariosPlanned { count: 5 });
        assert_eq!(
            *seen.lock().unwrap(),
            vec![Event::ScenariosPlanned { count: 2 }]
        );
    }
}

//! The progress display, a consumer of a run's [`Event`]s. On a terminal: one status line on
//! stderr, redrawn in place, showing how many scenarios finished out of how many and the step
//! each running scenario is at; finished scenarios print a plain line above it. Elsewhere (with
//! `--progress always`): one line per finished scenario. A run without it tells nothing.

use crate::events::{Event, Events};
use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Widest status line drawn (longer ones are cut).
const WIDTH: usize = 110;
/// Redraws at most this often for step changes.
const THROTTLE: Duration = Duration::from_millis(40);

#[derive(Debug, Default)]
struct Live {
    total: usize,
    done: usize,
    /// (scenario label, current step), in start order.
    running: Vec<(String, String)>,
    drawn: Option<Instant>,
}

/// How a run shows its progress (`--progress`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Progress {
    /// A live line when stderr is a terminal, else nothing.
    #[default]
    Auto,
    /// On a terminal the live line, else one line per finished scenario (e.g. in CI logs).
    Always,
    /// Nothing.
    Never,
}

/// The events of a run shown as `mode` says ([`Progress`]), with the guard that clears the
/// live line.
pub fn events(mode: Progress) -> (Events, Option<LiveGuard>) {
    let enabled = match mode {
        Progress::Always => true,
        Progress::Never => false,
        Progress::Auto => std::io::stderr().is_terminal(),
    };
    if !enabled {
        return (Events::default(), None);
    }
    if !std::io::stderr().is_terminal() {
        return (Events::to(plain_line), None);
    }
    let live = Arc::new(Mutex::new(Some(Live::default())));
    let consumer = live.clone();
    (
        Events::to(move |e| {
            let mut g = consumer.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(l) = g.as_mut() {
                on_event(l, e);
            }
        }),
        Some(LiveGuard(live)),
    )
}

/// One line per finished scenario.
fn plain_line(e: &Event) {
    if let Event::ScenarioFinished { .. } = e {
        eprintln!("  {}", finished_line(e));
    }
}

fn finished_line(e: &Event) -> String {
    match e {
        Event::ScenarioFinished {
            scenario,
            end,
            duration_ms,
        } => format!("{scenario} {} ({duration_ms} ms)", end.as_str()),
        _ => String::new(),
    }
}

/// Keeps the live line while it lives; dropping it clears the line.
pub struct LiveGuard(Arc<Mutex<Option<Live>>>);

impl Drop for LiveGuard {
    fn drop(&mut self) {
        let mut g = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if g.take().is_some() {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
        }
    }
}

fn on_event(l: &mut Live, e: &Event) {
    match e {
        Event::ScenariosPlanned { count } => {
            l.total += count;
            draw(l, true);
        }
        Event::Step { scenario, step } => {
            match l.running.iter_mut().find(|(s, _)| s == scenario) {
                Some(entry) => entry.1 = step.clone(),
                None => l.running.push((scenario.clone(), step.clone())),
            }
            draw(l, false);
        }
        Event::ScenarioFinished { scenario, .. } => {
            l.done += 1;
            l.running.retain(|(s, _)| s != scenario);
            let _ = writeln!(std::io::stderr(), "\r\x1b[2K  {}", finished_line(e));
            draw(l, true);
        }
    }
}

fn draw(l: &mut Live, force: bool) {
    if !force && l.drawn.is_some_and(|t| t.elapsed() < THROTTLE) {
        return;
    }
    l.drawn = Some(Instant::now());
    let _ = write!(std::io::stderr(), "\r\x1b[2K{}", status_line(l));
    let _ = std::io::stderr().flush();
}

/// `[done/total] <first running scenario>: <its step> (+k more)`, at most [`WIDTH`] chars.
fn status_line(l: &Live) -> String {
    let mut s = format!("[{}/{}]", l.done, l.total);
    if let Some((label, step)) = l.running.first() {
        s.push_str(&format!(" {label}: {step}"));
        if l.running.len() > 1 {
            s.push_str(&format!(" (+{} running)", l.running.len() - 1));
        }
    }
    if s.chars().count() > WIDTH {
        s = s.chars().take(WIDTH - 1).collect::<String>() + "…";
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_line_counts_and_names_the_running_step() {
        let mut l = Live {
            total: 40,
            done: 3,
            ..Live::default()
        };
        assert_eq!(status_line(&l), "[3/40]");
        l.running.push((
            "SC-inframachine mock/MockMachine@v1beta2".into(),
            "delete".into(),
        ));
        l.running.push(("SC-bootstrap x".into(), "pause".into()));
        assert_eq!(
            status_line(&l),
            "[3/40] SC-inframachine mock/MockMachine@v1beta2: delete (+1 running)"
        );
        l.running[0].1 = "x".repeat(300);
        assert_eq!(status_line(&l).chars().count(), WIDTH);
    }
}

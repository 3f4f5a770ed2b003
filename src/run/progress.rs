//! Live progress on a terminal: one status line on stderr, redrawn in place, showing how many
//! scenarios finished out of how many and the step each running scenario is at; finished
//! scenarios print a plain line above it. Off unless [`install_live`] was called (`check` does
//! when stderr is a TTY), so library users and tests see nothing.

use std::io::Write;
use std::sync::Mutex;
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

static LIVE: Mutex<Option<Live>> = Mutex::new(None);

fn with_live(f: impl FnOnce(&mut Live)) {
    let mut g = match LIVE.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    if let Some(live) = g.as_mut() {
        f(live);
    }
}

/// Turns the live line on until the returned guard is dropped (which clears the line).
pub fn install_live() -> LiveGuard {
    let mut g = match LIVE.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    *g = Some(Live::default());
    LiveGuard(())
}

/// Clears the status line and turns live progress off.
pub struct LiveGuard(());

impl Drop for LiveGuard {
    fn drop(&mut self) {
        let mut g = match LIVE.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        if g.take().is_some() {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
        }
    }
}

/// Whether a live line is being drawn.
pub fn is_live() -> bool {
    match LIVE.lock() {
        Ok(g) => g.is_some(),
        Err(p) => p.into_inner().is_some(),
    }
}

/// `n` more scenarios will run.
pub fn add_total(n: usize) {
    with_live(|l| {
        l.total += n;
        draw(l, true);
    });
}

/// A scenario (`label`) reached `step`.
pub fn step(label: &str, step: &str) {
    with_live(|l| {
        match l.running.iter_mut().find(|(s, _)| s == label) {
            Some(entry) => entry.1 = step.to_string(),
            None => l.running.push((label.to_string(), step.to_string())),
        }
        draw(l, false);
    });
}

/// A scenario finished: prints `line` above the status line.
pub fn finished(label: &str, line: &str) {
    with_live(|l| {
        l.done += 1;
        l.running.retain(|(s, _)| s != label);
        let _ = writeln!(std::io::stderr(), "\r\x1b[2K  {line}");
        draw(l, true);
    });
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

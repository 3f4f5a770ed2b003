//! Ctrl-C handling for `check`. [`install`] runs first thing, before the run creates anything:
//! from then on SIGINT and SIGTERM never kill the process outright.
//!
//! Outside a [`Section`] the run has created nothing (yet, or any more), so an interrupt exits at
//! once with 130. While a section is open (creating objects, running scenarios, cleaning up),
//! the first interrupt stops the work passed to [`Section::run`] so the caller can clean up, and
//! a second one aborts at once (130).

use std::future::Future;
use std::sync::{Mutex, MutexGuard, OnceLock};
use tokio::sync::watch;

/// Exit code of an interrupted process (128 + SIGINT), as shells report it.
const INTERRUPTED_EXIT: i32 = 130;

struct Interrupts {
    /// How many sections are open. The signal task decides under this lock, so a section
    /// cannot open (and create objects) between "no section is open" and the exit.
    open: Mutex<usize>,
    /// Interrupts received while a section was open.
    received: watch::Sender<u32>,
}

static INTERRUPTS: OnceLock<Interrupts> = OnceLock::new();

impl Interrupts {
    fn open(&self) -> MutexGuard<'_, usize> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What one SIGINT/SIGTERM does.
    fn on_signal(&self) {
        let open = self.open();
        if *open == 0 {
            eprintln!("interrupted");
            // What the run started before any section (a manager's `--help` run) goes too.
            kill_abort_groups();
            std::process::exit(INTERRUPTED_EXIT);
        }
        self.received.send_modify(|n| *n += 1);
        if *self.received.borrow() == 1 {
            eprintln!("interrupted: cleaning up (press Ctrl-C again to abort)");
        } else {
            eprintln!(
                "aborted: objects of this run may be left over (see `capi-conformance cleanup`)"
            );
            // Processes are not left over: a `--provider-cmd` provider dies with the tool.
            kill_abort_groups();
            // Nor the private files of the run (the provider's kubeconfig, its webhook serving
            // key).
            for path in ABORT_REMOVE
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
            {
                if std::fs::remove_dir_all(path).is_err() {
                    let _ = std::fs::remove_file(path);
                }
            }
            std::process::exit(INTERRUPTED_EXIT);
        }
    }
}

/// Process groups killed when the run is aborted (a second interrupt, or any interrupt outside
/// a section).
static ABORT_KILL: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// Kills every group of [`ABORT_KILL`].
fn kill_abort_groups() {
    for group in ABORT_KILL.lock().unwrap_or_else(|e| e.into_inner()).iter() {
        signal_group("KILL", *group);
    }
}

/// Kills process group `group` if the run is aborted, until the returned guard is dropped
/// (the normal stop has taken over by then).
pub fn kill_group_on_abort(group: u32) -> AbortKill {
    ABORT_KILL
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(group);
    AbortKill { group }
}

/// See [`kill_group_on_abort`].
pub struct AbortKill {
    group: u32,
}

impl Drop for AbortKill {
    fn drop(&mut self) {
        ABORT_KILL
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|g| *g != self.group);
    }
}

/// Directories and files removed when the run is aborted (a second interrupt).
static ABORT_REMOVE: Mutex<Vec<std::path::PathBuf>> = Mutex::new(Vec::new());

/// Removes directory (or file) `dir` if the run is aborted, until the returned guard is dropped
/// (the owner removes it itself then).
pub fn remove_dir_on_abort(dir: &std::path::Path) -> AbortRemove {
    ABORT_REMOVE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(dir.to_path_buf());
    AbortRemove {
        dir: dir.to_path_buf(),
    }
}

/// See [`remove_dir_on_abort`].
pub struct AbortRemove {
    dir: std::path::PathBuf,
}

impl Drop for AbortRemove {
    fn drop(&mut self) {
        ABORT_REMOVE
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|d| *d != self.dir);
    }
}

/// Sends `signal` (`TERM`, `KILL`, `0` to probe) to process group `group`; whether `kill`
/// succeeded (for `0`: whether any process of the group is left).
pub fn signal_group(signal: &str, group: u32) -> bool {
    std::process::Command::new("kill")
        .args([&format!("-{signal}"), "--", &format!("-{group}")])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Takes over SIGINT and SIGTERM for the rest of the process (idempotent). Call it inside the
/// tokio runtime, before anything of the run is created.
pub fn install() {
    INTERRUPTS.get_or_init(|| {
        let signals = Signals::register();
        tokio::spawn(async move {
            let mut signals = signals;
            loop {
                signals.next().await;
                if let Some(i) = INTERRUPTS.get() {
                    i.on_signal();
                }
            }
        });
        Interrupts {
            open: Mutex::new(0),
            received: watch::Sender::new(0),
        }
    });
}

/// Opens a section: until it is dropped, interrupts are left to the section's owner.
pub fn section() -> Section {
    install();
    if let Some(i) = INTERRUPTS.get() {
        *i.open() += 1;
    }
    Section { _private: () }
}

/// A stretch of `check` during which the run's objects may exist (see the module doc).
pub struct Section {
    _private: (),
}

impl Section {
    /// Runs `fut` until it completes (`Some`) or an interrupt arrives (`None`; also when one
    /// already arrived).
    pub async fn run<T>(&self, fut: impl Future<Output = T>) -> Option<T> {
        let Some(i) = INTERRUPTS.get() else {
            return Some(fut.await);
        };
        let mut received = i.received.subscribe();
        tokio::select! {
            biased;
            _ = received.wait_for(|n| *n > 0) => None,
            out = fut => Some(out),
        }
    }
}

impl Drop for Section {
    fn drop(&mut self) {
        if let Some(i) = INTERRUPTS.get() {
            let mut open = i.open();
            *open = open.saturating_sub(1);
        }
    }
}

/// SIGINT and SIGTERM, registered when created (not at first poll), so a signal arriving
/// between [`install`] and the signal task's first poll is not lost or fatal. Long-running
/// commands (`serve`, `mock-provider`) register them before they announce they are ready.
pub struct Signals {
    #[cfg(unix)]
    int: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    pub fn register() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Signals {
                int: signal(SignalKind::interrupt()).ok(),
                term: signal(SignalKind::terminate()).ok(),
            }
        }
        #[cfg(not(unix))]
        {
            Signals {}
        }
    }

    pub async fn next(&mut self) {
        #[cfg(unix)]
        {
            async fn recv(s: &mut Option<tokio::signal::unix::Signal>) {
                match s {
                    Some(s) => {
                        if s.recv().await.is_none() {
                            std::future::pending::<()>().await;
                        }
                    }
                    None => std::future::pending::<()>().await,
                }
            }
            tokio::select! {
                _ = recv(&mut self.int) => {}
                _ = recv(&mut self.term) => {}
            }
        }
        #[cfg(not(unix))]
        {
            if tokio::signal::ctrl_c().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }
}

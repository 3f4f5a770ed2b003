//! Ctrl-C handling: the first SIGINT (or SIGTERM) stops the scenarios so the caller can clean
//! up; a second one aborts at once (exit 130).

use std::future::Future;

/// Waits for SIGINT or SIGTERM.
async fn signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Runs `fut` until it completes (`Some`) or the first interrupt (`None`). After an interrupt,
/// a second one exits the process with 130 while the caller is still cleaning up.
pub async fn run_guarded<T>(fut: impl Future<Output = T>) -> Option<T> {
    tokio::select! {
        out = fut => Some(out),
        _ = signal() => {
            eprintln!("interrupted: cleaning up (press Ctrl-C again to abort)");
            tokio::spawn(async {
                signal().await;
                eprintln!("aborted: objects of this run may be left over (see `capi-conformance cleanup`)");
                std::process::exit(130);
            });
            None
        }
    }
}

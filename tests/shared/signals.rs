//! Signals sent to child processes of the tool.

/// Sends SIGINT (Ctrl-C) to `child`.
pub fn sigint(child: &std::process::Child) {
    let pid = child.id().to_string();
    let sent = std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .expect("run kill");
    assert!(sent.success(), "kill -INT {pid}: {sent}");
}

/// Waits until process `pid` catches SIGINT (Linux: bit 2 of `SigCgt` in /proc/PID/status),
/// i.e. until its Ctrl-C handling is installed. False when it exited first or never does.
pub fn wait_until_catching_sigint(pid: u32, within: std::time::Duration) -> bool {
    let deadline = std::time::Instant::now() + within;
    while std::time::Instant::now() < deadline {
        let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
            return false;
        };
        let caught = status
            .lines()
            .find_map(|l| l.strip_prefix("SigCgt:"))
            .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
            .is_some_and(|mask| mask & (1 << (SIGINT - 1)) != 0);
        if caught {
            return true;
        }
        if status
            .lines()
            .any(|l| l.starts_with("State:") && l.contains('Z'))
        {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    false
}

/// SIGINT's number on Linux.
const SIGINT: u32 = 2;

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

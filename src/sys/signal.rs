//! Signals by number and name, for messages that say how a process ended
//! (`signal 9 (SIGKILL)`): a number alone sends the user to a manual page;
//! and the one disposition sledge sets by hand, SIGINT ignored (a handler
//! is installed in `suite::interrupt`, nowhere else), with its undoing in
//! the programs sledge starts.

/// Ignores SIGINT in this process from now on. A Ctrl-C on a terminal
/// reaches the whole foreground process group, so a child that its parent
/// stops itself (a round's process, an `http --from` agent) must not also
/// act on the user's Ctrl-C.
pub fn ignore_sigint() {
    // SAFETY: setting a signal's disposition to SIG_IGN has no memory
    // effects.
    unsafe { libc::signal(libc::SIGINT, libc::SIG_IGN) };
}

/// Gives SIGINT its default action again. An ignored signal stays ignored
/// across `exec`, so a program a round's process starts (the user's
/// command, a build) would otherwise ignore SIGINT where it would not in
/// a shell: `kill -INT` or `timeout -s INT` would not stop it, and a
/// benchmark that ends on SIGINT would run on. Async-signal-safe, for
/// `pre_exec`.
pub fn default_sigint() {
    // SAFETY: setting a signal's disposition to SIG_DFL has no memory
    // effects, and signal(2) is async-signal-safe.
    unsafe { libc::signal(libc::SIGINT, libc::SIG_DFL) };
}

/// `signal N (SIGNAME)`, or `signal N` for one without a standard name
/// (a real-time signal).
pub fn describe(sig: i32) -> String {
    match name(sig) {
        Some(name) => format!("signal {sig} ({name})"),
        None => format!("signal {sig}"),
    }
}

/// The standard name of `sig` on this platform.
fn name(sig: i32) -> Option<&'static str> {
    const NAMES: &[(i32, &str)] = &[
        (libc::SIGHUP, "SIGHUP"),
        (libc::SIGINT, "SIGINT"),
        (libc::SIGQUIT, "SIGQUIT"),
        (libc::SIGILL, "SIGILL"),
        (libc::SIGTRAP, "SIGTRAP"),
        (libc::SIGABRT, "SIGABRT"),
        (libc::SIGBUS, "SIGBUS"),
        (libc::SIGFPE, "SIGFPE"),
        (libc::SIGKILL, "SIGKILL"),
        (libc::SIGUSR1, "SIGUSR1"),
        (libc::SIGSEGV, "SIGSEGV"),
        (libc::SIGUSR2, "SIGUSR2"),
        (libc::SIGPIPE, "SIGPIPE"),
        (libc::SIGALRM, "SIGALRM"),
        (libc::SIGTERM, "SIGTERM"),
        (libc::SIGCHLD, "SIGCHLD"),
        (libc::SIGCONT, "SIGCONT"),
        (libc::SIGSTOP, "SIGSTOP"),
        (libc::SIGTSTP, "SIGTSTP"),
        (libc::SIGTTIN, "SIGTTIN"),
        (libc::SIGTTOU, "SIGTTOU"),
        (libc::SIGURG, "SIGURG"),
        (libc::SIGXCPU, "SIGXCPU"),
        (libc::SIGXFSZ, "SIGXFSZ"),
        (libc::SIGVTALRM, "SIGVTALRM"),
        (libc::SIGPROF, "SIGPROF"),
        (libc::SIGWINCH, "SIGWINCH"),
        (libc::SIGIO, "SIGIO"),
        (libc::SIGPWR, "SIGPWR"),
        (libc::SIGSYS, "SIGSYS"),
    ];
    NAMES.iter().find(|(n, _)| *n == sig).map(|(_, name)| *name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_are_named_where_they_have_a_name() {
        assert_eq!(describe(libc::SIGKILL), "signal 9 (SIGKILL)");
        assert_eq!(describe(libc::SIGTERM), "signal 15 (SIGTERM)");
        assert_eq!(
            describe(libc::SIGRTMIN() + 1),
            format!("signal {}", libc::SIGRTMIN() + 1)
        );
    }
}

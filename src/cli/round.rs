//! `sledge __round`: the child side of a round in its own process (see
//! `suite::subprocess`). Hidden: only `sledge run` starts it.

use super::output::ExitStatus;
use crate::engine::CancelToken;
use crate::suite::interrupt;
use crate::suite::subprocess::serve_round;
use crate::sys::child_process;

/// Runs the round job on stdin. SIGTERM (which the parent sends when it is
/// interrupted, and the kernel when the parent dies) stops the round after
/// its cleanup; another one exits at once, but only once the parent is
/// gone. SIGINT is ignored: a Ctrl-C on the terminal reaches the whole
/// process group, and the parent forwards it as SIGTERM, so one Ctrl-C
/// must not count twice here.
///
/// One SIGTERM can arrive twice in the same way: `timeout` signals the
/// whole process group it started (parent and round alike), as does
/// `kill -TERM -PGID`, and systemd signals every process of a service's
/// cgroup; the parent then forwards its own as well. Counted twice, the
/// second would end the round in the middle of its cleanup and leave its
/// build directory behind. So while the parent is alive (and waits for
/// the round's cleanup and result) the parent decides: its own second
/// interrupt exits it, and the SIGTERM its death then sends here finds it
/// gone and exits at once.
pub fn execute() -> anyhow::Result<ExitStatus> {
    let cancel = CancelToken::new();
    let handler_cancel = cancel.clone();
    let parent = child_process::parent_pid();
    // Without a handler the round would die on the signal without cleanup,
    // so a failure to install one is an error.
    interrupt::try_install(vec![
        Box::new(move || handler_cancel.cancel()),
        Box::new(move || {
            if child_process::parent_pid() != parent {
                std::process::exit(130);
            }
        }),
    ])
    .map_err(|e| anyhow::anyhow!("cannot catch interrupts in a round's process: {e}"))?;
    // After the handler, which catches SIGINT as well as SIGTERM: the
    // parent forwards a Ctrl-C as SIGTERM, so SIGINT must not count too.
    crate::sys::signal::ignore_sigint();
    serve_round(&cancel)?;
    Ok(ExitStatus::Success)
}

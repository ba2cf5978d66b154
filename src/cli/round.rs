//! `sledge __round`: the child side of a round in its own process (see
//! `suite::subprocess`). Hidden: only `sledge run` starts it.

use super::output::ExitStatus;
use crate::engine::CancelToken;
use crate::suite::interrupt;
use crate::suite::subprocess::serve_round;

/// Runs the round job on stdin. SIGTERM (which the parent sends when it is
/// interrupted, and the kernel when the parent dies) stops the round after
/// its cleanup; a second one exits at once. SIGINT is ignored: a Ctrl-C on
/// the terminal reaches the whole process group, and the parent forwards it
/// as SIGTERM, so one Ctrl-C must not count twice here.
pub fn execute() -> anyhow::Result<ExitStatus> {
    let cancel = CancelToken::new();
    let handler_cancel = cancel.clone();
    // Without a handler the round would die on the signal without cleanup,
    // so a failure to install one is an error.
    interrupt::try_install(vec![
        Box::new(move || handler_cancel.cancel()),
        Box::new(|| std::process::exit(130)),
    ])
    .map_err(|e| anyhow::anyhow!("cannot catch interrupts in a round's process: {e}"))?;
    // After the handler, which catches SIGINT as well as SIGTERM: the
    // parent forwards a Ctrl-C as SIGTERM, so SIGINT must not count too.
    crate::sys::signal::ignore_sigint();
    serve_round(&cancel)?;
    Ok(ExitStatus::Success)
}

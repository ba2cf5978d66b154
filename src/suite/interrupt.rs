//! Ctrl-C (and SIGTERM) for the commands that run something: each
//! interrupt takes the next step of an escalation (stop cleanly, then
//! faster, then at once), so a user who presses Ctrl-C again gets more
//! force, never a second copy of the first request.
//!
//! One handler serves `run`, `calibrate`, `ab` (see [`install_for_run`]),
//! `fleet run` and `http` (whose steps are their own), a round's process
//! and a command that writes a file ([`try_install`]); a process has one
//! handler, installed once, and this is the only place that installs it.

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::engine::CancelToken;
use crate::store::{Store, StoreLocation};

/// What one interrupt does when its turn comes.
pub type Step = Box<dyn Fn() + Send + 'static>;

/// The step the interrupt numbered `seen` (0 for the first) takes: its own,
/// or the last one for every interrupt past the last.
fn step_for(seen: usize, steps: usize) -> usize {
    seen.min(steps.saturating_sub(1))
}

/// Installs the process's interrupt handler: the first interrupt runs the
/// first of `steps`, the second the second, and every one past the last
/// runs the last again. When no handler can be installed, a warning says
/// what an interrupt will then fail to do (`lost`).
pub fn install(steps: Vec<Step>, lost: &str) {
    if let Err(err) = try_install(steps) {
        crate::say!("warning: cannot catch Ctrl-C ({err}); {lost}");
    }
}

/// [`install`] for a caller that decides itself what a failure means: a
/// round's process cannot do without its handler, a file write can (a
/// handler already installed is then the one that decides). With no
/// steps, nothing is installed.
pub fn try_install(steps: Vec<Step>) -> Result<(), ctrlc::Error> {
    if steps.is_empty() {
        return Ok(());
    }
    let seen = AtomicUsize::new(0);
    ctrlc::set_handler(move || {
        let n = seen.fetch_add(1, Ordering::SeqCst);
        steps[step_for(n, steps.len())]();
    })
}

/// The steps of a run on this host: the first interrupt asks the run to
/// stop after cleaning up (`cancel`); a second one marks the run `partial`
/// in the store at `store` (the runs this process owns that are still
/// `running`), puts back the knobs `sledge ab` changed, and exits at once.
pub fn install_for_run(cancel: &CancelToken, store: StoreLocation) {
    let cancel = cancel.clone();
    install(
        vec![
            Box::new(move || {
                crate::say!("\ninterrupted: cleaning up; press Ctrl-C again to exit at once");
                cancel.cancel();
            }),
            Box::new(move || {
                let marked = Store::open_existing_at(&store)
                    .and_then(|mut store| store.mark_own_runs_partial(&now()));
                match marked {
                    Ok(runs) if !runs.is_empty() => crate::say!(
                        "\nsecond interrupt: run {} marked partial; exiting without cleanup (the next run removes what this one left behind)",
                        runs.iter()
                            .map(i64::to_string)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    Ok(_) => crate::say!("\nsecond interrupt: exiting without cleanup"),
                    Err(err) => crate::say!(
                        "\nsecond interrupt: exiting without cleanup; the run could not be marked partial: {err}"
                    ),
                }
                // An exit skips destructors: the commands sledge started
                // (a setup command of `sledge ab`) end here with all they
                // started, and the knobs go back.
                crate::sys::group_command::kill_live_groups();
                super::ab::knob_journal::restore_now();
                std::process::exit(130);
            }),
        ],
        "an interrupt will not store a partial run",
    );
}

/// The current time, RFC 3339 in UTC with seconds.
fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_interrupt_takes_the_next_step_and_the_last_repeats() {
        let taken: Vec<usize> = (0..5).map(|seen| step_for(seen, 3)).collect();
        assert_eq!(taken, [0, 1, 2, 2, 2]);
        assert_eq!(step_for(4, 1), 0);
    }
}

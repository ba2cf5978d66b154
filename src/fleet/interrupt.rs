//! Ctrl-C (or SIGTERM) during `sledge fleet run`: the first interrupt
//! stops every remote run as Ctrl-C would stop it there, keeping what it
//! stored; a second one kills them at once; a third exits without
//! cleaning up. The escalation itself is the suite's
//! ([`crate::suite::interrupt`]).

use crate::engine::CancelToken;
use crate::suite::interrupt;

/// Installs the fleet's steps: `cancel` stops the remote runs, `hurry`
/// kills them.
pub fn install(cancel: &CancelToken, hurry: &CancelToken) {
    let (cancel, hurry) = (cancel.clone(), hurry.clone());
    interrupt::install(
        vec![
            Box::new(move || {
                crate::say!(
                    "\ninterrupted: stopping every remote run and cleaning up; press Ctrl-C again to kill them"
                );
                cancel.cancel();
            }),
            Box::new(move || {
                crate::say!("\nsecond interrupt: killing the remote runs, then cleaning up");
                hurry.cancel();
            }),
            Box::new(|| {
                crate::say!("\nthird interrupt: exiting without cleaning up the hosts");
                std::process::exit(130);
            }),
        ],
        "an interrupt will leave remote runs going",
    );
}

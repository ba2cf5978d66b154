//! `sledge run`: plan, probe, idle check, run, store, print.

use super::output::{ExitStatus, print, run_in};
pub use super::run_args::RunArgs;
use super::run_steps::{exit_status, open_for_runs, prepare, run_once};
use crate::report::export::Format;
use crate::store::StoreLocation;
use crate::suite;

/// Runs the plan and stores every finished case as it ends.
pub fn execute(args: RunArgs, store_location: Option<StoreLocation>) -> anyhow::Result<ExitStatus> {
    let (request, prepared) = prepare(&args, store_location)?;
    let (mut store, cancel) = open_for_runs(&request, &prepared)?;
    let run = match run_once(&request, &prepared, &mut store, &cancel) {
        Ok(run) => run,
        Err(err) => {
            // The store failed midway: show what it still holds, then fail.
            if let Some(failed) = err.downcast_ref::<suite::StoreFailedMidRun>()
                && let Ok(stored) = store.load_run(failed.run_id)
            {
                print(&run_in(&stored, Format::Table, args.shown())?)?;
                crate::say!(
                    "the cases above are stored as run {} in {}",
                    stored.id,
                    crate::visible::escape(&store.path().display().to_string())
                );
            }
            // The store was lost and the run went on into a local file:
            // show the run from there, read-only (the file is the user's to
            // move now, not to upgrade); the error says how to move it.
            if let Some(lost) = err.downcast_ref::<suite::StoreLostMidRun>()
                && let Ok(stored) =
                    crate::store::Store::open_read_only(&StoreLocation::File(lost.file.clone()))
                        .and_then(|fallback| fallback.load_run(lost.run_id))
            {
                print(&run_in(&stored, Format::Table, args.shown())?)?;
            }
            return Err(err);
        }
    };

    let format = args.format();
    print(&run_in(&run, format, args.shown())?)?;
    // A program reading the output finds the run's id in it.
    if format.is_for_people() {
        crate::say!(
            "stored as run {} in {}",
            run.id,
            crate::visible::escape(&store.path().display().to_string())
        );
    }
    Ok(exit_status(&run))
}

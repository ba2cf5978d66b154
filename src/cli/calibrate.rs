//! `sledge calibrate [PROFILE|WORKLOAD...]`: measure how much each case
//! moves between runs on this host, on purpose.
//!
//! A comparison never calls a difference smaller than the host's measured
//! run-to-run noise a change, and that noise is measured from earlier runs
//! of the same case on the same host. Ordinary runs build it up over time;
//! calibrating runs the selection several times back to back so that the
//! next comparison has it at once.

use clap::Args;

use super::output::{ExitStatus, UsageError, print};
use super::run_args::RunArgs;
use super::run_steps::{exit_status, open_for_runs, prepare, run_once};
use crate::analysis::noise_history::calibration;
use crate::report::export::View;
use crate::store::StoreLocation;

/// The most runs one calibration makes.
const MAX_RUNS: u32 = 100;

/// Options of `sledge calibrate`.
#[derive(Debug, Args)]
#[command(after_help = "\
Cost: RUNS times the selection's run time (the quick profile takes about 3 \
minutes here, so the default 3 runs take about 9). The runs are stored like \
any other and count as history for later comparisons on this host (same \
host name, CPU model, CPU count and kernel). At least 3 runs of a case are \
needed before its noise is known; more runs give a tighter estimate.")]
pub struct CalibrateArgs {
    /// How many runs to make.
    #[arg(long, default_value_t = 3, value_name = "N")]
    runs: u32,
    #[command(flatten)]
    run: RunArgs,
}

/// Runs the selection `--runs` times and prints each case's run-to-run
/// noise on this host.
pub fn execute(
    args: CalibrateArgs,
    store_location: Option<StoreLocation>,
) -> anyhow::Result<ExitStatus> {
    if args.runs == 0 || args.runs > MAX_RUNS {
        return Err(UsageError(format!(
            "--runs {}: give a number of runs from 1 to {MAX_RUNS}",
            args.runs
        ))
        .into());
    }
    // The noise is a table for people; its runs are in the store for
    // programs.
    if !args.run.format().is_for_people() {
        return Err(UsageError(
            "calibrate prints a noise table, not a run: leave out --json (`sledge show RUN --json` prints each stored run)".to_string(),
        )
        .into());
    }
    let (request, prepared) = prepare(&args.run, store_location)?;
    let (mut store, cancel) = open_for_runs(&request, &prepared)?;
    let mut last = None;
    for i in 1..=args.runs {
        crate::say!("calibration run {i} of {}", args.runs);
        let run = run_once(&request, &prepared, &mut store, &cancel)?;
        crate::say!(
            "stored as run {} in {}",
            run.id,
            crate::visible::escape(&store.path().display().to_string())
        );
        let status = exit_status(&run);
        last = Some(run);
        if status != ExitStatus::Success {
            return Ok(status);
        }
    }
    let run = last.expect("at least one run");
    let noise = calibration(&store, &run);
    print(&args.run.format().render(&View::Calibration(&noise))?)?;
    Ok(ExitStatus::Success)
}

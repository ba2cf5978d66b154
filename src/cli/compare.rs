//! `sledge compare RUN RUN`.

use std::path::PathBuf;

use clap::Args;

use super::output::{ExitStatus, open_existing_store, print};
use crate::report;

/// Options of `sledge compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline run (id, `last`, `last~N`).
    baseline: String,
    /// The candidate run, compared against the baseline.
    candidate: String,
    /// Print the comparison as JSON.
    #[arg(long)]
    json: bool,
}

/// Prints the comparison of two stored runs.
pub fn execute(args: CompareArgs, store: Option<PathBuf>) -> anyhow::Result<ExitStatus> {
    let store = open_existing_store(store)?;
    let baseline = store.load_run(store.resolve_run(&args.baseline)?)?;
    let candidate = store.load_run(store.resolve_run(&args.candidate)?)?;
    let comparison = report::compare::compare_runs(&baseline, &candidate);
    if args.json {
        print(&(serde_json::to_string_pretty(&comparison)? + "\n"))?;
    } else {
        print(&report::compare::render(&comparison))?;
    }
    Ok(ExitStatus::Success)
}

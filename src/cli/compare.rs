//! `sledge compare RUN RUN`.

use std::path::PathBuf;

use clap::Args;

use super::output::{ExitStatus, open_existing_store, print};
use crate::report;
use crate::results::{RunRecord, RunStatus};

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
    for run in [&baseline, &candidate] {
        comparable(run)?;
    }
    let comparison = report::compare::compare_runs(&baseline, &candidate);
    if args.json {
        print(&(serde_json::to_string_pretty(&comparison)? + "\n"))?;
    } else {
        print(&report::compare::render(&comparison))?;
    }
    Ok(ExitStatus::Success)
}

/// Refuses a run that cannot be compared yet, saying why: one still
/// `running` (its cases are not all there, or its sledge died without
/// saying so), or one without a single stored case.
fn comparable(run: &RunRecord) -> anyhow::Result<()> {
    // Every status is named, so that a new one must be decided on here.
    match run.status {
        RunStatus::Running => anyhow::bail!(
            "run {} has not finished: it is still `running` (started {}, {} case(s) stored so far), or the sledge that ran it was killed; compare it once it is complete, partial or failed",
            run.id,
            run.started,
            run.cases.len()
        ),
        RunStatus::Complete | RunStatus::Partial | RunStatus::Failed => {}
    }
    if run.cases.is_empty() {
        anyhow::bail!(
            "run {} ({}) stored no case, so there is nothing to compare; `sledge list` shows the runs with their case counts",
            run.id,
            run.status.as_str()
        );
    }
    Ok(())
}

//! `sledge list`.

use std::path::PathBuf;

use clap::Args;

use super::output::{ExitStatus, open_store, print};
use crate::report;

/// Options of `sledge list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print the list as JSON.
    #[arg(long)]
    json: bool,
}

/// Prints the stored runs.
pub fn execute(args: ListArgs, store: Option<PathBuf>) -> anyhow::Result<ExitStatus> {
    let store = open_store(store)?;
    let runs = store.list_runs()?;
    if args.json {
        print(&(serde_json::to_string_pretty(&runs)? + "\n"))?;
    } else {
        print(&report::listing::runs(&runs))?;
    }
    Ok(ExitStatus::Success)
}

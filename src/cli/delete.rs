//! `sledge delete RUN...`.

use std::io::{BufRead as _, IsTerminal as _};

use clap::Args;

use super::output::{ExitStatus, UsageError, open_store, resolve_runs};
use crate::results::RunStatus;
use crate::store::RunListing;
use crate::store::StoreLocation;
use crate::visible;

/// Options of `sledge delete`.
#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// The runs: ids, `last`, `last~N` or UUIDs.
    #[arg(required = true, value_name = "RUN")]
    runs: Vec<String>,
    /// Do not ask for confirmation (needed when standard input is not a
    /// terminal).
    #[arg(short, long)]
    yes: bool,
}

/// Removes the runs after asking (on a terminal) or with `--yes`.
pub fn execute(args: DeleteArgs, store: Option<StoreLocation>) -> anyhow::Result<ExitStatus> {
    let mut store = open_store(store)?;
    let ids = resolve_runs(&store, &args.runs)?;
    let listing = store.list_runs()?;
    refuse_running(&listing, &ids)?;
    let described: Vec<String> = ids
        .iter()
        .map(|id| match listing.iter().find(|r| r.id == *id) {
            Some(r) => visible::escape(&format!(
                "run {} ({} · {} · {} · {})",
                r.id,
                r.hostname,
                r.profile,
                r.started,
                crate::report::format::count(r.cases as usize, "case", "cases")
            ))
            .into_owned(),
            None => format!("run {id}"),
        })
        .collect();
    if !args.yes {
        if !std::io::stdin().is_terminal() {
            return Err(UsageError(format!(
                "delete asks for confirmation on a terminal; standard input is not one, so pass --yes to delete {}",
                described.join(", ")
            ))
            .into());
        }
        crate::say!(
            "this removes from {}:",
            crate::visible::escape(&store.path().display().to_string())
        );
        for line in &described {
            crate::say!("  {line}");
        }
        visible::ask("delete? [y/N] ");
        let mut answer = String::new();
        std::io::stdin().lock().read_line(&mut answer)?;
        if !matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
            crate::say!("nothing deleted");
            return Ok(ExitStatus::Success);
        }
    }
    store.delete_runs(&ids)?;
    for line in &described {
        crate::say!("deleted {line}");
    }
    Ok(ExitStatus::Success)
}

/// Refuses, before anything is asked or removed, a run that a live sledge
/// is still running: deleting it would make that sledge fail when it
/// stores its next case and lose its measurements. As `compare`, only a
/// run whose sledge is gone (`abandoned`, see `list`) may go while it
/// never finished.
fn refuse_running(listing: &[RunListing], ids: &[i64]) -> Result<(), UsageError> {
    for run in listing.iter().filter(|r| ids.contains(&r.id)) {
        if run.status == RunStatus::Running {
            return Err(UsageError(format!(
                "run {} is still `running` (started {}, {} case(s) stored so far): the sledge running it would fail when it stores its next case; delete it once it is complete, partial or failed, or once it reads `abandoned` in `sledge list` (its sledge gone); nothing was deleted",
                run.id, run.started, run.cases
            )));
        }
    }
    Ok(())
}

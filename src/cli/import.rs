//! `sledge import FILE...`.

use std::path::PathBuf;

use clap::Args;

use super::output::{ExitStatus, open_store, print};
use crate::report::portable;
use crate::store::Imported;
use crate::store::StoreLocation;
use crate::visible;

/// Options of `sledge import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Export documents made by `sledge export` (`-` reads standard input).
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
}

/// Reads and checks every file first, so that a bad one stops the import
/// before anything is written; then stores each file's runs in one
/// transaction. Runs already in the store (same UUID) are not added again.
pub fn execute(args: ImportArgs, store: Option<StoreLocation>) -> anyhow::Result<ExitStatus> {
    let mut documents = Vec::with_capacity(args.files.len());
    for path in &args.files {
        documents.push((path, portable::read_file(path)?));
    }

    let mut store = open_store(store)?;
    let (mut added, mut present) = (0, 0);
    let mut out = String::new();
    for (path, runs) in &documents {
        for (run, outcome) in runs.iter().zip(store.import_runs(runs)?) {
            // The document's own words, escaped: it may hold anything.
            let what = visible::escape(&format!(
                "{} ({} · {} · {})",
                run.uuid,
                if run.host.hostname.is_empty() {
                    "unknown host"
                } else {
                    &run.host.hostname
                },
                run.profile,
                run.started
            ))
            .into_owned();
            match outcome {
                Imported::Added { id, .. } => {
                    added += 1;
                    out.push_str(&format!("imported run {what} as run {id}\n"));
                }
                Imported::AlreadyStored { id, .. } => {
                    present += 1;
                    out.push_str(&format!(
                        "run {what} is already stored as run {id}: nothing added\n"
                    ));
                }
            }
        }
        if runs.is_empty() {
            out.push_str(&format!("{}: holds no runs\n", path.display()));
        }
    }
    out.push_str(&format!(
        "{added} run{} added, {present} already stored, in {}\n",
        if added == 1 { "" } else { "s" },
        store.path().display()
    ));
    print(&out)?;
    Ok(ExitStatus::Success)
}

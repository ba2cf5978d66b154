//! `sledge import FILE...`.

use std::path::PathBuf;

use clap::Args;

use super::output::{ExitStatus, open_store, print};
use crate::report::{import_summary, portable};
use crate::store::StoreLocation;
use crate::suite::import::import_documents;

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
    for path in args.files {
        let runs = portable::read_file(&path)?;
        documents.push((path, runs));
    }
    let mut store = open_store(store)?;
    let imported = import_documents(&mut store, &documents)?;
    print(&import_summary::render(&imported, store.path()))?;
    Ok(ExitStatus::Success)
}

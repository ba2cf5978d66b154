//! The start `sledge report` and `sledge export` share: open the store
//! read-only, refuse an output file that is the store itself (before
//! anything is read), and load the runs named on the command line.

use std::path::PathBuf;

use super::output::{open_existing_store, resolve_runs};
use super::output_file::refuse_store_as_output;
use crate::results::RunRecord;
use crate::store::{Store, StoreLocation};

/// The runs a command writes out, with the store they came from.
pub struct OpenRuns {
    /// The store, opened read-only.
    pub store: Store,
    /// The file to write, or `None` for standard output (none given, or
    /// `-`).
    pub output: Option<PathBuf>,
    /// The runs' ids, distinct, in the order given.
    pub ids: Vec<i64>,
    /// The runs, in the same order.
    pub runs: Vec<RunRecord>,
}

/// Opens the store at `store` (or the default one), checks that `output`
/// is not the store, and loads the runs `references` name (ids, `last`,
/// `last~N` or UUIDs; one that names no run is a usage error).
pub fn open_runs(
    store: Option<StoreLocation>,
    references: &[String],
    output: Option<PathBuf>,
) -> anyhow::Result<OpenRuns> {
    let store = open_existing_store(store)?;
    let output = output.filter(|path| path.as_os_str() != "-");
    if let Some(path) = &output {
        refuse_store_as_output(path, store.location())?;
    }
    let ids = resolve_runs(&store, references)?;
    let runs = ids
        .iter()
        .map(|&id| store.load_run(id))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(OpenRuns {
        store,
        output,
        ids,
        runs,
    })
}

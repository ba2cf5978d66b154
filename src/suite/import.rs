//! `sledge import`: the runs of export documents added to the store, each
//! document's in one transaction, a run already stored (same UUID) left as
//! it is. The documents are read and checked before this (`report::
//! portable`), so that a bad one stops the import before anything is
//! written.

use std::path::{Path, PathBuf};

use crate::results::RunRecord;
use crate::store::{Imported, Store, StoreError};

/// What importing one document did.
#[derive(Debug)]
pub struct DocumentImported<'a> {
    /// The document's file (`-` for standard input).
    pub path: &'a Path,
    /// Each of its runs with what the store did with it, in its order.
    pub runs: Vec<(&'a RunRecord, Imported)>,
}

/// Adds every document's runs to `store`, document by document.
pub fn import_documents<'a>(
    store: &mut Store,
    documents: &'a [(PathBuf, Vec<RunRecord>)],
) -> Result<Vec<DocumentImported<'a>>, StoreError> {
    let mut imported = Vec::with_capacity(documents.len());
    for (path, runs) in documents {
        imported.push(DocumentImported {
            path,
            runs: runs.iter().zip(store.import_runs(runs)?).collect(),
        });
    }
    Ok(imported)
}

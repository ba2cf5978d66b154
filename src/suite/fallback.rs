//! A run whose PostgreSQL store is lost midway (the server stopped, the
//! network went, a statement stalled past its deadline) goes on into a
//! local SQLite file instead of throwing away what it measured.
//!
//! The file holds the whole run: the cases stored on the server before
//! the loss, again, and every case after it, so that it can be imported
//! into the server as one run once the server is back. It gets a UUID of
//! its own (the server may keep the first cases under the original one,
//! and an import skips a UUID the store already holds); a warning in the
//! run names the original.

use std::path::{Path, PathBuf};

use crate::results::{CaseRecord, RunRecord, RunStatus};
use crate::store::{Store, StoreError};

/// The run went on in a fallback file after its store was lost: the
/// error a run ends with then, naming the file and how to move the run.
#[derive(Debug, thiserror::Error)]
#[error(
    "the store {lost} was lost midway ({cause}); the run went on and is kept whole as run {run_id} in {}: once the server is back, `sledge --store {} export {run_id} -o run.json`, then `sledge --store URL import run.json`",
    file.display(),
    file.display()
)]
pub struct StoreLostMidRun {
    /// The lost store, password masked.
    pub lost: String,
    /// Why it was lost.
    pub cause: String,
    /// The fallback file.
    pub file: PathBuf,
    /// The run's id in it.
    pub run_id: i64,
}

/// The fallback store of one run.
pub struct Fallback {
    store: Store,
    run_id: i64,
    case_ids: Vec<Option<i64>>,
    lost: String,
    cause: String,
}

impl Fallback {
    /// Opens a new fallback file for `run` (lost from the store shown as
    /// `lost` because of `cause`) next to the default store, and stores
    /// in it the run and every case in `cases` (by plan position).
    pub fn start(
        run: &RunRecord,
        lost: &Path,
        cause: &StoreError,
        cases: &[Option<CaseRecord>],
    ) -> anyhow::Result<Fallback> {
        let mut moved = run.clone();
        moved.uuid = crate::results::new_run_uuid();
        let lost = lost.display().to_string();
        moved.warnings.push(format!(
            "the store {lost} was lost midway ({cause}); this run went on into a local fallback file; the server may hold its first cases as run {}",
            run.uuid
        ));
        let mut store = Store::open_fallback(&moved.uuid)?;
        let run_id = store.begin_run(&moved)?;
        let mut fallback = Fallback {
            store,
            run_id,
            case_ids: vec![None; cases.len()],
            lost,
            cause: cause.to_string(),
        };
        for (position, case) in cases.iter().enumerate() {
            if let Some(case) = case {
                fallback.save(position, case)?;
            }
        }
        Ok(fallback)
    }

    /// The fallback file.
    pub fn file(&self) -> &Path {
        self.store.path()
    }

    /// Stores the new state of the case at `position`.
    pub fn save(&mut self, position: usize, case: &CaseRecord) -> anyhow::Result<()> {
        let id =
            self.store
                .save_case(self.run_id, Some(position), self.case_ids[position], case)?;
        self.case_ids[position] = Some(id);
        Ok(())
    }

    /// Marks the run ended with `status`, and returns the error that says
    /// where it is.
    pub fn finish(
        mut self,
        status: RunStatus,
        finished: &str,
        warnings: &[String],
    ) -> anyhow::Result<StoreLostMidRun> {
        // The warnings given at the start, and the one saying where the
        // run came from.
        let mut all = warnings.to_vec();
        all.extend(
            self.store
                .load_run(self.run_id)?
                .warnings
                .into_iter()
                .filter(|w| !warnings.contains(w)),
        );
        self.store.finish_run(self.run_id, status, finished, &all)?;
        Ok(StoreLostMidRun {
            lost: self.lost,
            cause: self.cause,
            file: self.store.path().to_path_buf(),
            run_id: self.run_id,
        })
    }
}

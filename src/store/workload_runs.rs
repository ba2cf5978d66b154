//! Which stored runs measured a workload, and on which host: the index
//! `sledge history` picks a host's runs from before loading them.

use super::db::{DbError, params};

use super::error::StoreError;
use super::handle::Store;
use super::read::from_json;
use super::sql_error::sql_err;

/// One stored run with at least one case of a workload.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadRun {
    /// The run's id.
    pub id: i64,
    /// When it started (RFC 3339, UTC).
    pub started: String,
    /// The host name of its inventory.
    pub hostname: String,
    /// The host as `sledge fleet run --hosts` named it, for a fleet's run
    /// (clones of one image share a host name, not this).
    pub fleet_host: Option<String>,
    /// Whether it came from a document (`sledge import`).
    pub imported: bool,
}

impl WorkloadRun {
    /// The name that tells the host apart: its fleet name, else its host
    /// name.
    pub fn host(&self) -> &str {
        self.fleet_host.as_deref().unwrap_or(&self.hostname)
    }
}

impl Store {
    /// Every run with a case of `workload` that did not fail, oldest first
    /// (by start, then id), whatever its host.
    pub fn runs_with_workload(&self, workload: &str) -> Result<Vec<WorkloadRun>, StoreError> {
        let path = self.path.as_path();
        let doing = "finding the runs of a workload";
        let rows = self
            .conn
            .query(
                "SELECT r.id, r.started, r.hostname, r.notes, r.imported FROM run r
                 WHERE r.id IN (SELECT c.run_id FROM run_case c
                                WHERE c.workload = ?1 AND c.error IS NULL)
                 ORDER BY r.started, r.id",
                params![workload],
            )
            .and_then(|rows| {
                rows.iter()
                    .map(|row| {
                        Ok((
                            row.get::<i64>(0)?,
                            row.get::<String>(1)?,
                            row.get::<String>(2)?,
                            row.get::<String>(3)?,
                            row.get::<i64>(4)?,
                        ))
                    })
                    .collect::<Result<Vec<_>, DbError>>()
            })
            .map_err(sql_err(path, doing))?;
        rows.into_iter()
            .map(|(id, started, hostname, notes, imported)| {
                let notes: Vec<String> = from_json(path, &notes, || format!("run {id}: notes"))?;
                Ok(WorkloadRun {
                    id,
                    started,
                    hostname,
                    fleet_host: crate::results::fleet_host(&notes).map(str::to_string),
                    imported: imported != 0,
                })
            })
            .collect()
    }
}

//! Writing runs: the run row, one transaction per case, the final status.

use std::path::Path;

use rusqlite::{OptionalExtension as _, TransactionBehavior, params};
use serde::Serialize;

use super::{Store, StoreError, sql_err};
use crate::results::{CaseRecord, RunRecord, RunStatus};

impl Store {
    /// Inserts the run row (status from `run.status`; `run.id` and
    /// `run.cases` are ignored) and returns the new run's id.
    pub fn begin_run(&mut self, run: &RunRecord) -> Result<i64, StoreError> {
        let what = || format!("run started at {}", run.started);
        let host = serde_json::to_value(&run.host)
            .map_err(|e| invalid(&self.path, what(), format!("host inventory: {e}")))?;
        let hostname = find_hostname(&host).unwrap_or_default().to_owned();
        let cpus = to_json(&self.path, what, "CPU list", &run.cpus)?;
        let warnings = to_json(&self.path, what, "warnings", &run.warnings)?;
        let notes = to_json(&self.path, what, "notes", &run.notes)?;
        self.conn
            .execute(
                "INSERT INTO run (started, finished, sledge_version, profile, command_line,
                                  status, cpus, warnings, hostname, host, host_key, notes)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                params![
                    run.started,
                    run.finished,
                    run.sledge_version,
                    run.profile,
                    run.command_line,
                    run.status.as_str(),
                    cpus,
                    warnings,
                    hostname,
                    host.to_string(),
                    run.host_key(),
                    notes,
                ],
            )
            .map_err(sql_err(&self.path, "storing a new run"))?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Stores one case of run `run_id` with its trials (health as JSON),
    /// metric summaries, samples and latency histogram, all in one
    /// transaction, after the run's other cases; returns the case's id.
    pub fn add_case(&mut self, run_id: i64, case: &CaseRecord) -> Result<i64, StoreError> {
        self.save_case(run_id, None, None, case)
    }

    /// Stores a case of run `run_id` in one transaction: a new one
    /// (`case_id` `None`), or the new state of case `case_id`, whose
    /// trials, metrics and histogram are replaced (a case is saved again
    /// after each of its rounds). `position` is its place in the run's
    /// plan (cases load in that order); `None` puts it after the others.
    /// Returns the case's id.
    pub fn save_case(
        &mut self,
        run_id: i64,
        position: Option<usize>,
        case_id: Option<i64>,
        case: &CaseRecord,
    ) -> Result<i64, StoreError> {
        let Store { conn, path } = self;
        let path: &Path = path;
        let what = || format!("case `{}`", case.label());

        // Everything that can be checked is checked before the transaction.
        let params_json = to_json(path, what, "parameters", &case.params)?;
        let warnings = to_json(path, what, "warnings", &case.warnings)?;
        let mut trials = Vec::with_capacity(case.trials.len());
        for (pos, trial) in case.trials.iter().enumerate() {
            if pos > 0 && trial.index <= case.trials[pos - 1].index {
                return Err(invalid(
                    path,
                    what(),
                    format!(
                        "trial indexes must increase, found {} after {}",
                        trial.index,
                        case.trials[pos - 1].index
                    ),
                ));
            }
            let health = to_json(path, what, "trial health", &trial.health)?;
            trials.push((
                trial.index,
                trial.round,
                trial.replaced,
                trial.seconds,
                health,
            ));
        }
        let rounds = to_json(path, what, "rounds", &case.rounds)?;
        let mut metrics = Vec::with_capacity(case.metrics.len());
        for metric in &case.metrics {
            if metric.outliers.len() > metric.samples.len() {
                return Err(invalid(
                    path,
                    what(),
                    format!(
                        "metric {} has {} outlier flags for {} samples",
                        metric.name,
                        metric.outliers.len(),
                        metric.samples.len()
                    ),
                ));
            }
            // Through serde, so that this works whether or not `Direction`
            // is `Copy`; the stored word is its serde name.
            let direction = serde_json::to_string(&metric.direction)
                .and_then(|text| serde_json::from_str::<String>(&text));
            let direction = match direction {
                Ok(word) => word,
                other => {
                    return Err(invalid(
                        path,
                        what(),
                        format!(
                            "metric {}: direction does not serialize to a word ({other:?})",
                            metric.name
                        ),
                    ));
                }
            };
            let n = i64::try_from(metric.summary.n).map_err(|_| {
                invalid(
                    path,
                    what(),
                    format!("metric {}: n is too large", metric.name),
                )
            })?;
            let levels = metric
                .levels
                .as_ref()
                .map(|l| to_json(path, what, "levels", l))
                .transpose()?;
            metrics.push((metric, direction, n, levels));
        }

        let doing = "storing a case";
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql_err(path, doing))?;
        let run_exists = tx
            .query_row("SELECT 1 FROM run WHERE id = ?1", [run_id], |_| Ok(()))
            .optional()
            .map_err(sql_err(path, doing))?
            .is_some();
        if !run_exists {
            return Err(StoreError::NoSuchRun {
                id: run_id,
                path: path.to_path_buf(),
            });
        }

        let position = match position {
            Some(p) => i64::try_from(p).ok(),
            None => tx
                .query_row(
                    "SELECT coalesce(max(coalesce(position, 0)) + 1, 0) FROM run_case
                     WHERE run_id = ?1",
                    [run_id],
                    |row| row.get::<_, i64>(0),
                )
                .map(Some)
                .map_err(sql_err(path, doing))?,
        };
        let case_id = match case_id {
            None => {
                tx.execute(
                    "INSERT INTO run_case (run_id, workload, workload_version, params, warnings,
                                           error, position, rounds)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                    params![
                        run_id,
                        case.workload,
                        case.workload_version,
                        params_json,
                        warnings,
                        case.error,
                        position,
                        rounds,
                    ],
                )
                .map_err(sql_err(path, doing))?;
                tx.last_insert_rowid()
            }
            Some(case_id) => {
                let changed = tx
                    .execute(
                        "UPDATE run_case SET workload = ?1, workload_version = ?2, params = ?3,
                                warnings = ?4, error = ?5, position = ?6, rounds = ?7
                         WHERE id = ?8 AND run_id = ?9",
                        params![
                            case.workload,
                            case.workload_version,
                            params_json,
                            warnings,
                            case.error,
                            position,
                            rounds,
                            case_id,
                            run_id,
                        ],
                    )
                    .map_err(sql_err(path, doing))?;
                if changed == 0 {
                    return Err(invalid(
                        path,
                        what(),
                        format!("run {run_id} has no case {case_id} to update"),
                    ));
                }
                // Samples go with their metrics (ON DELETE CASCADE).
                for table in ["trial", "metric", "histogram"] {
                    tx.execute(
                        &format!("DELETE FROM {table} WHERE case_id = ?1"),
                        [case_id],
                    )
                    .map_err(sql_err(path, doing))?;
                }
                case_id
            }
        };

        {
            let mut insert_trial = tx
                .prepare_cached(
                    "INSERT INTO trial (case_id, idx, round, replaced, seconds, health)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )
                .map_err(sql_err(path, doing))?;
            for (index, round, replaced, seconds, health) in &trials {
                insert_trial
                    .execute(params![case_id, index, round, replaced, seconds, health])
                    .map_err(sql_err(path, doing))?;
            }

            let mut insert_metric = tx
                .prepare_cached(
                    "INSERT INTO metric (case_id, name, unit, direction, n, mean, median, stddev,
                                         ci_low, ci_high, min, max, levels)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                )
                .map_err(sql_err(path, doing))?;
            let mut insert_sample = tx
                .prepare_cached(
                    "INSERT INTO sample (metric_id, trial_idx, value, outlier)
                     VALUES (?1, ?2, ?3, ?4)",
                )
                .map_err(sql_err(path, doing))?;
            for (metric, direction, n, levels) in &metrics {
                let s = &metric.summary;
                insert_metric
                    .execute(params![
                        case_id,
                        metric.name,
                        metric.unit,
                        direction,
                        n,
                        s.mean,
                        s.median,
                        s.stddev,
                        s.ci_low,
                        s.ci_high,
                        s.min,
                        s.max,
                        levels,
                    ])
                    .map_err(sql_err(path, doing))?;
                let metric_id = tx.last_insert_rowid();
                for (trial_idx, value) in metric.samples.iter().enumerate() {
                    insert_sample
                        .execute(params![
                            metric_id,
                            trial_idx as i64,
                            value,
                            metric.outliers.get(trial_idx),
                        ])
                        .map_err(sql_err(path, doing))?;
                }
            }

            if let Some(histogram) = &case.latency_histogram {
                tx.execute(
                    "INSERT INTO histogram (case_id, data) VALUES (?1, ?2)",
                    params![case_id, histogram],
                )
                .map_err(sql_err(path, doing))?;
            }
        }

        tx.commit().map_err(sql_err(path, doing))?;
        Ok(case_id)
    }

    /// Sets the run's status, finished time and warnings (replacing the
    /// warnings given to [`Store::begin_run`]).
    pub fn finish_run(
        &mut self,
        run_id: i64,
        status: RunStatus,
        finished: &str,
        warnings: &[String],
    ) -> Result<(), StoreError> {
        let what = || format!("the end of run {run_id}");
        let warnings = to_json(&self.path, what, "warnings", &warnings)?;
        let changed = self
            .conn
            .execute(
                "UPDATE run SET status = ?1, finished = ?2, warnings = ?3 WHERE id = ?4",
                params![status.as_str(), finished, warnings, run_id],
            )
            .map_err(sql_err(&self.path, "finishing a run"))?;
        if changed == 0 {
            return Err(StoreError::NoSuchRun {
                id: run_id,
                path: self.path.clone(),
            });
        }
        Ok(())
    }
}

/// Serializes `value` to JSON text, naming the record and field on error.
fn to_json<T: Serialize + ?Sized>(
    path: &Path,
    what: impl FnOnce() -> String,
    field: &str,
    value: &T,
) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| invalid(path, what(), format!("{field}: {e}")))
}

/// The first string member named `hostname` in the host inventory: at the
/// top level if there is one, else in a nested object.
pub(super) fn find_hostname(host: &serde_json::Value) -> Option<&str> {
    let serde_json::Value::Object(map) = host else {
        return None;
    };
    if let Some(name) = map.get("hostname").and_then(serde_json::Value::as_str) {
        return Some(name);
    }
    map.values().find_map(find_hostname)
}

/// A [`StoreError::InvalidRecord`].
fn invalid(path: &Path, what: String, reason: String) -> StoreError {
    StoreError::InvalidRecord {
        path: path.to_path_buf(),
        what,
        reason,
    }
}

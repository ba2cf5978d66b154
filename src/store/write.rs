//! Writing runs: the run row, one transaction per case, the final status;
//! whole imported runs in one transaction; deleting runs.

use std::path::Path;

use super::db::{Conn, DbError, TxKind, Value, params};
use serde::Serialize;

use super::error::StoreError;
use super::handle::Store;
use super::read::run_id_by_uuid;
use super::sql_error::sql_err;
use crate::results::{CaseRecord, MetricRecord, RunRecord, RunStatus};

impl Store {
    /// Inserts the run row (status from `run.status`; `run.id` and
    /// `run.cases` are ignored) and returns the new run's id. A run without
    /// a UUID gets a new one.
    pub fn begin_run(&mut self, run: &RunRecord) -> Result<i64, StoreError> {
        let row = RunRow::new(&self.path, run, false)?;
        row.insert(&self.conn, &self.path)
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
        let Store { conn, path, .. } = self;
        let path: &Path = path;
        // Everything that can be checked is checked before the transaction.
        let prepared = PreparedCase::new(path, case)?;

        let doing = "storing a case";
        let tx = conn.begin(TxKind::Write).map_err(sql_err(path, doing))?;
        let run_exists = tx
            .query_opt("SELECT 1 FROM run WHERE id = ?1", params![run_id])
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
            None => Some(next_position(&tx, path, run_id)?),
        };
        let case_id = match case_id {
            None => prepared.insert(&tx, path, run_id, position)?,
            Some(case_id) => prepared.replace(&tx, path, run_id, case_id, position)?,
        };
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

    /// Marks every run stored as `running` whose sledge is gone (killed,
    /// or the machine rebooted) as `abandoned`, with a warning saying so;
    /// returns the ids marked. Runs whose owner was never recorded (made by
    /// an older sledge) are left alone: nothing says they stopped.
    pub fn mark_abandoned_runs(&mut self) -> Result<Vec<i64>, StoreError> {
        let Store { conn, path, .. } = self;
        let path: &Path = path;
        let doing = "marking abandoned runs";
        let running: Vec<(i64, Option<String>, String, String)> = conn
            .query(
                "SELECT id, owner, warnings, hostname FROM run WHERE status = 'running'",
                params![],
            )
            .and_then(|rows| {
                rows.iter()
                    .map(|row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)))
                    .collect()
            })
            .map_err(sql_err(path, doing))?;
        let mut marked = Vec::new();
        for (id, owner, warnings, hostname) in running {
            if !super::read::owner_is_gone(owner.as_deref(), &hostname) {
                continue;
            }
            let mut warnings: Vec<String> = serde_json::from_str(&warnings).unwrap_or_default();
            let pid = owner
                .as_deref()
                .and_then(crate::monitor::procfs::ProcessIdentity::parse)
                .map_or(0, |o| o.pid);
            warnings.push(format!(
                "abandoned: the sledge running it (pid {pid}) is gone, killed or rebooted without saying how the run ended; the cases it stored are kept"
            ));
            let warnings = to_json(path, || format!("run {id}"), "warnings", &warnings)?;
            // Only if still running and still this owner: another sledge
            // may have marked it meanwhile.
            let changed = conn
                .execute(
                    "UPDATE run SET status = 'abandoned', warnings = ?1
                     WHERE id = ?2 AND status = 'running' AND coalesce(owner, '') = coalesce(?3, '')",
                    params![warnings, id, owner],
                )
                .map_err(sql_err(path, doing))?;
            if changed > 0 {
                marked.push(id);
            }
        }
        Ok(marked)
    }

    /// Marks the runs this process started that are still `running` as
    /// `partial`, finished at `finished` (what a second Ctrl-C does before
    /// exiting); returns their ids.
    pub fn mark_own_runs_partial(&mut self, finished: &str) -> Result<Vec<i64>, StoreError> {
        let Some(me) = crate::monitor::procfs::ProcessIdentity::current() else {
            return Ok(Vec::new());
        };
        let doing = "marking this process's runs partial";
        let ids: Vec<i64> = self
            .conn
            .query(
                "SELECT id FROM run WHERE status = 'running' AND owner = ?1",
                params![me.to_string()],
            )
            .and_then(|rows| rows.iter().map(|row| row.get(0)).collect())
            .map_err(sql_err(&self.path, doing))?;
        for id in &ids {
            self.conn
                .execute(
                    "UPDATE run SET status = 'partial', finished = ?1 WHERE id = ?2",
                    params![finished, id],
                )
                .map_err(sql_err(&self.path, doing))?;
        }
        Ok(ids)
    }

    /// Adds whole runs read from an export document (`sledge import`) in
    /// ONE transaction: either every new run is stored with all its cases,
    /// or nothing is. A run whose UUID the store already holds (or that
    /// came earlier in `runs`) is not added again. Runs keep their status,
    /// times, warnings and UUID; they get new local ids. They are marked
    /// imported: a document can hold anything, so its runs are compared
    /// but never taken as their host's run-to-run history
    /// ([`Store::case_history`]).
    pub fn import_runs(&mut self, runs: &[RunRecord]) -> Result<Vec<Imported>, StoreError> {
        self.add_whole_runs(runs, true)
    }

    /// Adds the runs `fleet run` made on a client host and brought back,
    /// as [`Store::import_runs`] does, but as runs sledge measured itself:
    /// they are their host's history, as a run made on this host is.
    pub fn land_fleet_runs(&mut self, runs: &[RunRecord]) -> Result<Vec<Imported>, StoreError> {
        self.add_whole_runs(runs, false)
    }

    /// See [`Store::import_runs`]; `imported` marks the runs as from a
    /// document.
    fn add_whole_runs(
        &mut self,
        runs: &[RunRecord],
        imported: bool,
    ) -> Result<Vec<Imported>, StoreError> {
        let Store { conn, path, .. } = self;
        let path: &Path = path;
        let mut prepared = Vec::with_capacity(runs.len());
        for run in runs {
            if uuid::Uuid::try_parse(&run.uuid).is_err() {
                return Err(invalid(
                    path,
                    format!("run started at {}", run.started),
                    format!("`{}` is not a UUID", run.uuid),
                ));
            }
            let cases = run
                .cases
                .iter()
                .map(|case| PreparedCase::new(path, case))
                .collect::<Result<Vec<_>, _>>()?;
            prepared.push((RunRow::new(path, run, imported)?, cases));
        }

        let doing = "importing runs";
        let tx = conn.begin(TxKind::Write).map_err(sql_err(path, doing))?;
        let mut outcomes = Vec::with_capacity(prepared.len());
        for (row, cases) in &prepared {
            if let Some(id) = run_id_by_uuid(&tx, path, &row.uuid)? {
                outcomes.push(Imported::AlreadyStored {
                    id,
                    uuid: row.uuid.clone(),
                });
                continue;
            }
            let id = row.insert(&tx, path)?;
            for (position, case) in cases.iter().enumerate() {
                case.insert(&tx, path, id, i64::try_from(position).ok())?;
            }
            outcomes.push(Imported::Added {
                id,
                uuid: row.uuid.clone(),
            });
        }
        tx.commit().map_err(sql_err(path, doing))?;
        Ok(outcomes)
    }

    /// Removes runs with all their cases, trials, metrics, samples and
    /// histograms, in one transaction. Every id must exist, else nothing
    /// is removed.
    pub fn delete_runs(&mut self, ids: &[i64]) -> Result<(), StoreError> {
        let Store { conn, path, .. } = self;
        let path: &Path = path;
        let doing = "deleting runs";
        let tx = conn.begin(TxKind::Write).map_err(sql_err(path, doing))?;
        for &id in ids {
            let removed = tx
                .execute("DELETE FROM run WHERE id = ?1", params![id])
                .map_err(sql_err(path, doing))?;
            if removed == 0 {
                return Err(StoreError::NoSuchRun {
                    id,
                    path: path.to_path_buf(),
                });
            }
        }
        tx.commit().map_err(sql_err(path, doing))
    }
}

/// What [`Store::import_runs`] did with one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Imported {
    /// The run was added under a new local id.
    Added {
        /// Its id in this store.
        id: i64,
        /// Its UUID.
        uuid: String,
    },
    /// The store already held a run with this UUID; nothing was added.
    AlreadyStored {
        /// The id of the run already stored.
        id: i64,
        /// Its UUID.
        uuid: String,
    },
}

/// A run row, serialized and checked, ready to insert.
struct RunRow<'a> {
    run: &'a RunRecord,
    uuid: String,
    hostname: String,
    host: String,
    cpus: String,
    warnings: String,
    notes: String,
    /// From a document (`sledge import`): never a host's history.
    imported: bool,
}

impl<'a> RunRow<'a> {
    fn new(path: &Path, run: &'a RunRecord, imported: bool) -> Result<Self, StoreError> {
        let what = || format!("run started at {}", run.started);
        let host = serde_json::to_value(&run.host)
            .map_err(|e| invalid(path, what(), format!("host inventory: {e}")))?;
        let uuid = match uuid::Uuid::try_parse(&run.uuid) {
            Ok(uuid) => uuid.to_string(),
            Err(_) if run.uuid.is_empty() => crate::results::new_run_uuid(),
            Err(_) => {
                return Err(invalid(
                    path,
                    what(),
                    format!("`{}` is not a UUID", run.uuid),
                ));
            }
        };
        Ok(RunRow {
            run,
            uuid,
            hostname: find_hostname(&host).unwrap_or_default().to_owned(),
            host: host.to_string(),
            cpus: to_json(path, what, "CPU list", &run.cpus)?,
            warnings: to_json(path, what, "warnings", &run.warnings)?,
            notes: to_json(path, what, "notes", &run.notes)?,
            imported,
        })
    }

    fn insert(&self, conn: &Conn, path: &Path) -> Result<i64, StoreError> {
        let run = self.run;
        conn.query_one(
            "INSERT INTO run (started, finished, sledge_version, profile, command_line,
                              status, cpus, warnings, hostname, host, uuid, host_key, owner,
                              notes, imported)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)
             RETURNING id",
            params![
                run.started,
                run.finished,
                run.sledge_version,
                run.profile,
                run.command_line,
                run.status.as_str(),
                self.cpus,
                self.warnings,
                self.hostname,
                self.host,
                self.uuid,
                run.host_key(),
                // A run this process starts is this process's; an imported
                // one belongs to no process here.
                (run.status == RunStatus::Running)
                    .then(crate::monitor::procfs::ProcessIdentity::current)
                    .flatten()
                    .map(|o| o.to_string()),
                self.notes,
                self.imported,
            ],
        )
        .and_then(|row| row.get(0))
        .map_err(sql_err(path, "storing a new run"))
    }
}

/// A case whose JSON columns are serialized and whose shape is checked,
/// ready to insert inside a transaction.
struct PreparedCase<'a> {
    case: &'a CaseRecord,
    params: String,
    given_as_all: Option<String>,
    warnings: String,
    rounds: String,
    trials: Vec<PreparedTrial>,
    metrics: Vec<PreparedMetric<'a>>,
}

/// A trial row's values.
struct PreparedTrial {
    index: u32,
    round: u32,
    replaced: bool,
    seconds: f64,
    health: String,
}

/// A metric row's values.
struct PreparedMetric<'a> {
    metric: &'a MetricRecord,
    direction: String,
    n: i64,
    levels: Option<String>,
}

impl<'a> PreparedCase<'a> {
    fn new(path: &Path, case: &'a CaseRecord) -> Result<Self, StoreError> {
        let what = || format!("case `{}`", case.label());
        let params = to_json(path, what, "parameters", &case.params)?;
        let given_as_all = case
            .given_as_all
            .as_ref()
            .map(|names| to_json(path, what, "parameters given as `all`", names))
            .transpose()?;
        let warnings = to_json(path, what, "warnings", &case.warnings)?;
        let rounds = to_json(path, what, "rounds", &case.rounds)?;
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
            trials.push(PreparedTrial {
                index: trial.index,
                round: trial.round,
                replaced: trial.replaced,
                seconds: trial.seconds,
                health: to_json(path, what, "trial health", &trial.health)?,
            });
        }
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
            metrics.push(PreparedMetric {
                metric,
                direction,
                n,
                levels,
            });
        }
        Ok(PreparedCase {
            case,
            params,
            given_as_all,
            warnings,
            rounds,
            trials,
            metrics,
        })
    }

    /// Inserts the case into run `run_id` at `position`; the caller holds
    /// the transaction.
    fn insert(
        &self,
        tx: &Conn,
        path: &Path,
        run_id: i64,
        position: Option<i64>,
    ) -> Result<i64, StoreError> {
        let doing = "storing a case";
        let case = self.case;
        let case_id = tx
            .query_one(
                "INSERT INTO run_case (run_id, workload, workload_version, params, warnings,
                                       error, position, rounds, given_as_all)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                 RETURNING id",
                params![
                    run_id,
                    case.workload,
                    case.workload_version,
                    self.params,
                    self.warnings,
                    case.error,
                    position,
                    self.rounds,
                    self.given_as_all,
                ],
            )
            .and_then(|row| row.get(0))
            .map_err(sql_err(path, doing))?;
        self.insert_children(tx, path, case_id)?;
        Ok(case_id)
    }

    /// Replaces case `case_id` of run `run_id` with this one (its row
    /// updated, its trials, metrics, samples and histogram written anew);
    /// the caller holds the transaction.
    fn replace(
        &self,
        tx: &Conn,
        path: &Path,
        run_id: i64,
        case_id: i64,
        position: Option<i64>,
    ) -> Result<i64, StoreError> {
        let doing = "storing a case";
        let case = self.case;
        let changed = tx
            .execute(
                "UPDATE run_case SET workload = ?1, workload_version = ?2, params = ?3,
                        warnings = ?4, error = ?5, position = ?6, rounds = ?7,
                        given_as_all = ?8
                 WHERE id = ?9 AND run_id = ?10",
                params![
                    case.workload,
                    case.workload_version,
                    self.params,
                    self.warnings,
                    case.error,
                    position,
                    self.rounds,
                    self.given_as_all,
                    case_id,
                    run_id,
                ],
            )
            .map_err(sql_err(path, doing))?;
        if changed == 0 {
            return Err(invalid(
                path,
                format!("case `{}`", case.label()),
                format!("run {run_id} has no case {case_id} to update"),
            ));
        }
        // Samples go with their metrics (ON DELETE CASCADE).
        for table in ["trial", "metric", "histogram"] {
            tx.execute(
                &format!("DELETE FROM {table} WHERE case_id = ?1"),
                params![case_id],
            )
            .map_err(sql_err(path, doing))?;
        }
        self.insert_children(tx, path, case_id)?;
        Ok(case_id)
    }

    /// The case's trials, metrics, samples and histogram.
    fn insert_children(&self, tx: &Conn, path: &Path, case_id: i64) -> Result<(), StoreError> {
        let doing = "storing a case";
        let case = self.case;
        // Each table's rows go in one pipelined batch (see
        // `Conn::query_many`); metric ids come back in insertion order.
        let trials: Vec<Vec<Value>> = self
            .trials
            .iter()
            .map(|t| params![case_id, t.index, t.round, t.replaced, t.seconds, t.health].to_vec())
            .collect();
        tx.query_many(
            "INSERT INTO trial (case_id, idx, round, replaced, seconds, health)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            &trials,
        )
        .map_err(sql_err(path, doing))?;

        let metrics: Vec<Vec<Value>> = self
            .metrics
            .iter()
            .map(|m| {
                let s = &m.metric.summary;
                params![
                    case_id,
                    m.metric.name,
                    m.metric.unit.as_str(),
                    m.direction,
                    m.n,
                    s.mean,
                    s.median,
                    s.stddev,
                    s.ci_low,
                    s.ci_high,
                    s.min,
                    s.max,
                    m.levels,
                ]
                .to_vec()
            })
            .collect();
        let metric_ids = tx
            .query_many(
                "INSERT INTO metric (case_id, name, unit, direction, n, mean, median,
                                     stddev, ci_low, ci_high, min, max, levels)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
                 RETURNING id",
                &metrics,
            )
            .and_then(|answers| {
                answers
                    .iter()
                    .map(|rows| match rows.first() {
                        Some(row) => row.get::<i64>(0),
                        None => Err(DbError::Type("no id returned for a metric".to_string())),
                    })
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(sql_err(path, doing))?;
        let mut samples = Vec::new();
        for (m, metric_id) in self.metrics.iter().zip(metric_ids) {
            for (trial_idx, value) in m.metric.samples.iter().enumerate() {
                samples.push(
                    params![
                        metric_id,
                        trial_idx as i64,
                        value,
                        m.metric.outliers.get(trial_idx),
                    ]
                    .to_vec(),
                );
            }
        }
        tx.query_many(
            "INSERT INTO sample (metric_id, trial_idx, value, outlier)
             VALUES (?1, ?2, ?3, ?4)",
            &samples,
        )
        .map_err(sql_err(path, doing))?;

        if let Some(histogram) = &case.latency_histogram {
            tx.execute(
                "INSERT INTO histogram (case_id, data) VALUES (?1, ?2)",
                params![case_id, histogram],
            )
            .map_err(sql_err(path, doing))?;
        }
        Ok(())
    }
}

/// The position after the run's last case.
fn next_position(tx: &Conn, path: &Path, run_id: i64) -> Result<i64, StoreError> {
    tx.query_one(
        "SELECT coalesce(max(coalesce(position, 0)) + 1, 0) FROM run_case WHERE run_id = ?1",
        params![run_id],
    )
    .and_then(|row| row.get::<i64>(0))
    .map_err(sql_err(path, "storing a case"))
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

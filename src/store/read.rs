//! Reading runs back: whole runs, listings, and user run references.

use std::collections::BTreeMap;
use std::path::Path;

use super::db::{Conn, DbError, Row, TxKind, Value, params};
use serde::de::DeserializeOwned;

use super::error::StoreError;
use super::handle::Store;
use super::run_listing::RunListing;
use super::sql_error::sql_err;
use crate::results::{CaseRecord, MetricRecord, RunRecord, RunStatus, TrialRecord, Unit};
use crate::stats::{Direction, Summary};

/// A case row before its JSON columns are decoded.
struct CaseRow {
    id: i64,
    workload: String,
    workload_version: i64,
    params: String,
    given_as_all: Option<String>,
    warnings: String,
    error: Option<String>,
    rounds: String,
}

/// A metric row before its columns are decoded.
struct MetricRow {
    id: i64,
    name: String,
    unit: String,
    direction: String,
    n: i64,
    floats: [Option<f64>; 7],
    levels: Option<String>,
}

impl Store {
    /// Loads a whole run: cases in insertion order, metrics in insertion
    /// order, samples in trial order, latency histograms included.
    pub fn load_run(&self, run_id: i64) -> Result<RunRecord, StoreError> {
        self.load_run_where(run_id, None)
    }

    /// [`Store::load_run`] with only the cases of `workload`: a host's
    /// history of a workload (`sledge history`) needs each run's header
    /// and inventory, and none of its other cases.
    pub fn load_run_of_workload(
        &self,
        run_id: i64,
        workload: &str,
    ) -> Result<RunRecord, StoreError> {
        self.load_run_where(run_id, Some(workload))
    }

    /// [`Store::load_run`], with only the cases of `workload` when given.
    fn load_run_where(&self, run_id: i64, workload: Option<&str>) -> Result<RunRecord, StoreError> {
        let path = self.path.as_path();
        let doing = "loading a run";
        // One read transaction, so that a case being added meanwhile is
        // either wholly in or wholly out.
        let tx = self
            .conn
            .begin(TxKind::Snapshot)
            .map_err(sql_err(path, doing))?;
        let row = tx
            .query_opt(
                "SELECT started, finished, sledge_version, profile, command_line, status,
                        cpus, warnings, host, uuid, owner, notes, hostname
                 FROM run WHERE id = ?1",
                params![run_id],
            )
            .and_then(|row| {
                row.map(|row| {
                    Ok::<_, DbError>((
                        row.get::<String>(0)?,
                        row.get::<Option<String>>(1)?,
                        row.get::<String>(2)?,
                        row.get::<String>(3)?,
                        row.get::<String>(4)?,
                        row.get::<String>(5)?,
                        row.get::<String>(6)?,
                        row.get::<String>(7)?,
                        row.get::<String>(8)?,
                        row.get::<Option<String>>(9)?,
                        row.get::<Option<String>>(10)?,
                        row.get::<String>(11)?,
                        row.get::<String>(12)?,
                    ))
                })
                .transpose()
            })
            .map_err(sql_err(path, doing))?;
        let Some((
            started,
            finished,
            sledge_version,
            profile,
            command_line,
            status,
            cpus,
            warnings,
            host,
            uuid,
            owner,
            notes,
            hostname,
        )) = row
        else {
            return Err(StoreError::NoSuchRun {
                id: run_id,
                path: path.to_path_buf(),
            });
        };
        let what = |field: &str| format!("run {run_id}: {field}");

        let case_rows = match workload {
            None => tx.query(
                "SELECT id, workload, workload_version, params, warnings, error, rounds,
                        given_as_all
                 FROM run_case WHERE run_id = ?1
                 ORDER BY position IS NULL, position, id",
                params![run_id],
            ),
            Some(workload) => tx.query(
                "SELECT id, workload, workload_version, params, warnings, error, rounds,
                        given_as_all
                 FROM run_case WHERE run_id = ?1 AND workload = ?2
                 ORDER BY position IS NULL, position, id",
                params![run_id, workload],
            ),
        }
        .and_then(|rows| {
            rows.iter()
                .map(|row| {
                    Ok(CaseRow {
                        id: row.get(0)?,
                        workload: row.get(1)?,
                        workload_version: row.get(2)?,
                        params: row.get(3)?,
                        warnings: row.get(4)?,
                        error: row.get(5)?,
                        rounds: row.get(6)?,
                        given_as_all: row.get(7)?,
                    })
                })
                .collect::<Result<Vec<_>, DbError>>()
        })
        .map_err(sql_err(path, doing))?;
        let mut cases = Vec::with_capacity(case_rows.len());
        for case_row in case_rows {
            cases.push(load_case(&tx, path, run_id, case_row)?);
        }

        Ok(RunRecord {
            id: run_id,
            uuid: uuid.unwrap_or_default(),
            started,
            finished,
            sledge_version,
            profile,
            command_line,
            status: effective_status(
                parse_status(path, &status, || what("status"))?,
                owner,
                &hostname,
            ),
            cpus: from_json(path, &cpus, || what("CPU list"))?,
            notes: from_json(path, &notes, || what("notes"))?,
            warnings: from_json(path, &warnings, || what("warnings"))?,
            host: from_json(path, &host, || what("host inventory"))?,
            cases,
        })
    }

    /// Every stored run without its cases, newest first.
    pub fn list_runs(&self) -> Result<Vec<RunListing>, StoreError> {
        let path = self.path.as_path();
        let doing = "listing runs";
        let rows = self
            .conn
            .query(
                "SELECT r.id, r.started, r.finished, r.profile, r.status, r.hostname,
                        (SELECT count(*) FROM run_case c WHERE c.run_id = r.id),
                        r.sledge_version, r.uuid, r.owner, r.notes
                 FROM run r ORDER BY r.id DESC",
                params![],
            )
            .and_then(|rows| {
                rows.iter()
                    .map(|row| {
                        Ok((
                            row.get::<i64>(0)?,
                            row.get::<String>(1)?,
                            row.get::<Option<String>>(2)?,
                            row.get::<String>(3)?,
                            row.get::<String>(4)?,
                            row.get::<String>(5)?,
                            row.get::<i64>(6)?,
                            row.get::<String>(7)?,
                            row.get::<Option<String>>(8)?,
                            row.get::<Option<String>>(9)?,
                            row.get::<String>(10)?,
                        ))
                    })
                    .collect::<Result<Vec<_>, DbError>>()
            })
            .map_err(sql_err(path, doing))?;
        rows.into_iter()
            .map(
                |(
                    id,
                    started,
                    finished,
                    profile,
                    status,
                    hostname,
                    cases,
                    sledge_version,
                    uuid,
                    owner,
                    notes,
                )| {
                    let notes: Vec<String> =
                        from_json(path, &notes, || format!("run {id}: notes"))?;
                    Ok(RunListing {
                        id,
                        uuid: uuid.unwrap_or_default(),
                        started,
                        finished,
                        profile,
                        status: effective_status(
                            parse_status(path, &status, || format!("run {id}: status"))?,
                            owner,
                            &hostname,
                        ),
                        hostname,
                        fleet_host: crate::results::fleet_host(&notes).map(str::to_string),
                        cases: u32::try_from(cases).map_err(|_| StoreError::Corrupt {
                            path: path.to_path_buf(),
                            what: format!("run {id}: case count {cases}"),
                        })?,
                        sledge_version,
                    })
                },
            )
            .collect()
    }

    /// Resolves a user's run reference to a run id: a number (an id, which
    /// must exist), `last` or `latest` (the newest run), `last~N` /
    /// `latest~N` (N runs before the newest; `last~0` is `last`), or the
    /// run's UUID (or a unique prefix of it, at least 8 hex digits).
    pub fn resolve_run(&self, reference: &str) -> Result<i64, StoreError> {
        let path = self.path.as_path();
        let doing = "looking up a run";
        let text = reference.trim();
        if let Ok(id) = text.parse::<i64>() {
            let exists = self
                .conn
                .query_opt("SELECT 1 FROM run WHERE id = ?1", params![id])
                .map_err(sql_err(path, doing))?
                .is_some();
            if exists {
                return self.unless_also_a_uuid_prefix(text, id);
            }
            // A UUID's first 8 hex digits are all decimal digits about once
            // in 43 runs (10/16 to the 8th): such a prefix names its run
            // when no run has that id, and one that starts several runs'
            // UUIDs says so rather than "no run".
            match self.resolve_uuid(text) {
                Ok(Some(id)) => return Ok(id),
                Err(e @ StoreError::AmbiguousUuid { .. }) => return Err(e),
                Ok(None) | Err(_) => {}
            }
            return Err(StoreError::NoSuchRun {
                id,
                path: path.to_path_buf(),
            });
        }

        if let Some(id) = self.resolve_uuid(text)? {
            return Ok(id);
        }

        let bad = || StoreError::BadRunRef {
            reference: reference.to_string(),
            path: path.to_path_buf(),
        };
        let lower = text.to_ascii_lowercase();
        let back: u32 = match lower.split_once('~') {
            None if lower == "last" || lower == "latest" => 0,
            Some((head, n)) if head == "last" || head == "latest" => {
                if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(bad());
                }
                n.parse().map_err(|_| bad())?
            }
            _ => return Err(bad()),
        };
        let id = self
            .conn
            .query_opt(
                "SELECT id FROM run ORDER BY id DESC LIMIT 1 OFFSET ?1",
                params![back],
            )
            .and_then(|row| row.map(|row| row.get::<i64>(0)).transpose())
            .map_err(sql_err(path, doing))?;
        match id {
            Some(id) => Ok(id),
            None => {
                let count: i64 = self
                    .conn
                    .query_one("SELECT count(*) FROM run", params![])
                    .and_then(|row| row.get(0))
                    .map_err(sql_err(path, doing))?;
                Err(StoreError::NoRunAt {
                    reference: reference.to_string(),
                    count: count.max(0) as u64,
                    path: path.to_path_buf(),
                })
            }
        }
    }
}

impl Store {
    /// `id`, the run whose id `text` is, unless `text` also starts the UUID
    /// of another run: then neither is taken ([`StoreError::AmbiguousRunRef`]),
    /// since `list` shows UUID prefixes of all-decimal digits too.
    fn unless_also_a_uuid_prefix(&self, text: &str, id: i64) -> Result<i64, StoreError> {
        let uuid_runs = match self.resolve_uuid(text) {
            Ok(None) | Err(StoreError::NoSuchUuid { .. }) => return Ok(id),
            Ok(Some(other)) if other == id => return Ok(id),
            Ok(Some(other)) => {
                let uuid = self.load_uuid(other)?;
                format!("run {other} ({uuid})")
            }
            Err(StoreError::AmbiguousUuid { .. }) => "several runs".to_string(),
            Err(other) => return Err(other),
        };
        let by_id = if text == id.to_string() {
            "by its UUID".to_string()
        } else {
            format!("as `{id}`")
        };
        Err(StoreError::AmbiguousRunRef {
            reference: text.to_string(),
            id,
            uuid_runs,
            by_id,
            path: self.path.clone(),
        })
    }

    /// The UUID of run `id`.
    fn load_uuid(&self, id: i64) -> Result<String, StoreError> {
        self.conn
            .query_one("SELECT uuid FROM run WHERE id = ?1", params![id])
            .and_then(|row| row.get(0))
            .map_err(sql_err(&self.path, "looking up a run's UUID"))
    }

    /// The run a UUID, or a unique prefix of one (at least
    /// [`MIN_UUID_PREFIX`] hex digits), refers to; `None` when `text` does
    /// not look like one.
    fn resolve_uuid(&self, text: &str) -> Result<Option<i64>, StoreError> {
        let path = self.path.as_path();
        let prefix = text.to_ascii_lowercase();
        let looks_like_uuid = prefix.len() >= MIN_UUID_PREFIX
            && prefix.len() <= 36
            && prefix.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-')
            && prefix.bytes().any(|b| b.is_ascii_hexdigit());
        if !looks_like_uuid {
            return Ok(None);
        }
        let ids = self
            .conn
            .query(
                "SELECT id FROM run WHERE substr(uuid, 1, ?2) = ?1 LIMIT 2",
                params![prefix, prefix.len() as i64],
            )
            .and_then(|rows| {
                rows.iter()
                    .map(|row| row.get::<i64>(0))
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(sql_err(path, "looking up a run by UUID"))?;
        match ids.as_slice() {
            [id] => Ok(Some(*id)),
            [] => Err(StoreError::NoSuchUuid {
                reference: text.to_string(),
                path: path.to_path_buf(),
            }),
            _ => Err(StoreError::AmbiguousUuid {
                reference: text.to_string(),
                path: path.to_path_buf(),
            }),
        }
    }

    /// The id of the run with exactly this UUID, if the store holds one.
    pub fn find_uuid(&self, uuid: &str) -> Result<Option<i64>, StoreError> {
        run_id_by_uuid(&self.conn, &self.path, uuid)
    }
}

/// The shortest UUID prefix accepted as a run reference: 8 hex digits, the
/// first group of a UUID.
pub const MIN_UUID_PREFIX: usize = 8;

/// Loads one case with its trials, metrics, samples and histogram.
fn load_case(
    conn: &Conn,
    path: &Path,
    run_id: i64,
    row: CaseRow,
) -> Result<CaseRecord, StoreError> {
    let doing = "loading a case";
    let case_id = row.id;
    let what = |field: &str| format!("run {run_id}, case {case_id}: {field}");
    let corrupt = |field: &str| StoreError::Corrupt {
        path: path.to_path_buf(),
        what: what(field),
    };

    let trial_rows = conn
        .query(
            "SELECT idx, seconds, health, round, replaced FROM trial WHERE case_id = ?1
             ORDER BY idx",
            params![case_id],
        )
        .and_then(|rows| {
            rows.iter()
                .map(|row| {
                    Ok((
                        row.get::<i64>(0)?,
                        row.get::<Option<f64>>(1)?,
                        row.get::<String>(2)?,
                        row.get::<i64>(3)?,
                        row.get::<bool>(4)?,
                    ))
                })
                .collect::<Result<Vec<_>, DbError>>()
        })
        .map_err(sql_err(path, doing))?;
    let mut trials = Vec::with_capacity(trial_rows.len());
    for (index, seconds, health, round, replaced) in trial_rows {
        trials.push(TrialRecord {
            index: u32::try_from(index).map_err(|_| corrupt(&format!("trial index {index}")))?,
            round: u32::try_from(round).map_err(|_| corrupt(&format!("trial round {round}")))?,
            replaced,
            seconds: seconds.unwrap_or(f64::NAN),
            health: from_json(path, &health, || what(&format!("trial {index} health")))?,
        });
    }

    let metric_rows = conn
        .query(
            "SELECT id, name, unit, direction, n, mean, median, stddev, ci_low, ci_high,
                    min, max, levels
             FROM metric WHERE case_id = ?1 ORDER BY id",
            params![case_id],
        )
        .and_then(|rows| {
            rows.iter()
                .map(metric_row)
                .collect::<Result<Vec<_>, DbError>>()
        })
        .map_err(sql_err(path, doing))?;
    // Every metric's samples in one batch (one round trip on PostgreSQL).
    let ids: Vec<Vec<Value>> = metric_rows.iter().map(|m| params![m.id].to_vec()).collect();
    let samples = conn
        .query_many(
            "SELECT value, outlier FROM sample WHERE metric_id = ?1 ORDER BY trial_idx",
            &ids,
        )
        .map_err(sql_err(path, doing))?;
    let mut metrics = Vec::with_capacity(metric_rows.len());
    for (m, rows) in metric_rows.into_iter().zip(samples) {
        let sample_rows = rows
            .iter()
            .map(|row| Ok((row.get::<Option<f64>>(0)?, row.get::<Option<bool>>(1)?)))
            .collect::<Result<Vec<_>, DbError>>()
            .map_err(sql_err(path, doing))?;
        let direction: Direction =
            serde_json::from_value(serde_json::Value::String(m.direction.clone()))
                .map_err(|_| corrupt(&format!("metric {} direction `{}`", m.name, m.direction)))?;
        let [mean, median, stddev, ci_low, ci_high, min, max] =
            m.floats.map(|f| f.unwrap_or(f64::NAN));
        let levels = match &m.levels {
            Some(text) => Some(from_json(path, text, || {
                what(&format!("metric {} levels", m.name))
            })?),
            None => None,
        };
        metrics.push(MetricRecord {
            levels,
            summary: Summary {
                n: usize::try_from(m.n).map_err(|_| corrupt(&format!("metric {} n", m.name)))?,
                mean,
                median,
                stddev,
                ci_low,
                ci_high,
                min,
                max,
            },
            samples: sample_rows
                .iter()
                .map(|(value, _)| value.unwrap_or(f64::NAN))
                .collect(),
            outliers: sample_rows.iter().filter_map(|(_, flag)| *flag).collect(),
            name: m.name,
            unit: Unit::parse(m.unit),
            direction,
        });
    }

    let latency_histogram = conn
        .query_opt(
            "SELECT data FROM histogram WHERE case_id = ?1",
            params![case_id],
        )
        .and_then(|row| row.map(|row| row.get::<Vec<u8>>(0)).transpose())
        .map_err(sql_err(path, doing))?;

    Ok(CaseRecord {
        workload: row.workload,
        workload_version: u32::try_from(row.workload_version)
            .map_err(|_| corrupt(&format!("workload version {}", row.workload_version)))?,
        params: from_json::<BTreeMap<String, String>>(path, &row.params, || what("parameters"))?,
        given_as_all: match &row.given_as_all {
            Some(text) => Some(from_json(path, text, || what("parameters given as `all`"))?),
            None => None,
        },
        warnings: from_json(path, &row.warnings, || what("warnings"))?,
        error: row.error,
        rounds: from_json(path, &row.rounds, || what("rounds"))?,
        trials,
        metrics,
        latency_histogram,
        values: None,
    })
}

/// The columns of a metric row.
fn metric_row(row: &Row) -> Result<MetricRow, DbError> {
    Ok(MetricRow {
        id: row.get(0)?,
        name: row.get(1)?,
        unit: row.get(2)?,
        direction: row.get(3)?,
        n: row.get(4)?,
        floats: [
            row.get(5)?,
            row.get(6)?,
            row.get(7)?,
            row.get(8)?,
            row.get(9)?,
            row.get(10)?,
            row.get(11)?,
        ],
        levels: row.get(12)?,
    })
}

/// A run stored as `running` whose sledge is known to be gone reads as
/// `abandoned` (before `sledge run` marks it so in the store).
fn effective_status(stored: RunStatus, owner: Option<String>, hostname: &str) -> RunStatus {
    if stored == RunStatus::Running && owner_is_gone(owner.as_deref(), hostname) {
        RunStatus::Abandoned
    } else {
        stored
    }
}

/// The id of the run with this UUID, if the store holds one.
pub(super) fn run_id_by_uuid(
    conn: &Conn,
    path: &Path,
    uuid: &str,
) -> Result<Option<i64>, StoreError> {
    conn.query_opt("SELECT id FROM run WHERE uuid = ?1", params![uuid])
        .and_then(|row| row.map(|row| row.get(0)).transpose())
        .map_err(sql_err(path, "looking up a run by UUID"))
}

/// Whether the process recorded as running a run is known to be gone
/// (an owner that cannot be read, or was never recorded, is not). Only a
/// run of this host can be judged: in a store shared by many hosts
/// (PostgreSQL), another host's run has another boot id, which here would
/// read as a reboot, and its process is not ours to look for.
pub(super) fn owner_is_gone(owner: Option<&str>, run_hostname: &str) -> bool {
    if run_hostname != crate::probe::hostname() {
        return false;
    }
    owner
        .and_then(crate::monitor::procfs::ProcessIdentity::parse)
        .and_then(|o| o.is_alive())
        == Some(false)
}

/// Parses a stored status word.
fn parse_status(
    path: &Path,
    word: &str,
    what: impl FnOnce() -> String,
) -> Result<RunStatus, StoreError> {
    RunStatus::parse(word).ok_or_else(|| StoreError::Corrupt {
        path: path.to_path_buf(),
        what: format!("{} `{word}` is not a run status", what()),
    })
}

/// Decodes a JSON column.
///
/// serde_json writes non-finite floats (a NaN in the host inventory or a
/// trial's health) as `null`, which it then refuses to read back as a
/// number. So if the text does not decode as is, object members that are
/// `null` are dropped and decoding is tried again: the `#[serde(default)]`
/// types then fall back to their defaults instead of making the whole run
/// unreadable.
pub(super) fn from_json<T: DeserializeOwned>(
    path: &Path,
    text: &str,
    what: impl FnOnce() -> String,
) -> Result<T, StoreError> {
    let corrupt = |what: String, e: serde_json::Error| StoreError::Corrupt {
        path: path.to_path_buf(),
        what: format!("{what}: {e}"),
    };
    let value: serde_json::Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(e) => return Err(corrupt(what(), e)),
    };
    match serde_json::from_value(value.clone()) {
        Ok(decoded) => Ok(decoded),
        Err(first) => {
            let mut lenient = value;
            drop_null_members(&mut lenient);
            serde_json::from_value(lenient).map_err(|_| corrupt(what(), first))
        }
    }
}

/// Removes every object member whose value is `null`, recursively.
fn drop_null_members(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            map.retain(|_, v| !v.is_null());
            map.values_mut().for_each(drop_null_members);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(drop_null_members),
        _ => {}
    }
}

//! Earlier measurements of one case on one host: the evidence for the
//! run-to-run noise a comparison must clear, and for how the next run
//! spends its time.

use std::collections::BTreeMap;

use super::db::{DbError, params};

use super::error::StoreError;
use super::handle::Store;
use super::later_params::LaterParam;
use super::read::from_json;
use super::sql_error::sql_err;
use crate::monitor::TrialHealth;
use crate::results::RoundRecord;
use crate::stats::Levels;

/// One earlier run's result for a case.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseHistoryEntry {
    /// The run's id.
    pub run_id: i64,
    /// When the run started.
    pub started: String,
    /// Each metric's mean and variance components, in the case's order
    /// (primary first).
    pub metrics: Vec<HistoryMetric>,
    /// The case's rounds in that run.
    pub rounds: Vec<RoundRecord>,
    /// Mean wall time of the counted trials the statistics used, seconds.
    pub mean_trial_seconds: f64,
    /// How many trials the statistics used.
    pub used_trials: usize,
    /// Whether any trial the statistics used was flagged (busy, steal,
    /// swap, throttled): such a result says how the host behaved while
    /// disturbed, not how much it moves between undisturbed runs.
    pub disturbed: bool,
}

/// One metric of a [`CaseHistoryEntry`].
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryMetric {
    /// Metric name.
    pub name: String,
    /// The run's value (mean of its round means).
    pub mean: f64,
    /// Its variance components, when the run had rounds.
    pub levels: Option<Levels>,
}

impl Store {
    /// Every stored result of the case `workload` (at `version`, with
    /// exactly `params`, where a parameter of `later` at its default may
    /// also be absent: see [`super::later_params`]) from runs on the host with `host_key` (see
    /// [`RunRecord::host_key`](crate::results::RunRecord::host_key)), oldest
    /// first, leaving out runs in `exclude`, cases that failed, and runs
    /// that came from a document (`sledge import`): a host's history is
    /// what sledge measured on it, and a document may say anything, under
    /// any host's name.
    pub fn case_history(
        &self,
        host_key: &str,
        workload: &str,
        version: u32,
        params: &BTreeMap<String, String>,
        later: &[LaterParam],
        exclude: &[i64],
    ) -> Result<Vec<CaseHistoryEntry>, StoreError> {
        let path = self.path.as_path();
        let doing = "reading a case's history";
        // Older runs may lack a parameter that came later at its default.
        let forms = super::later_params::stored_forms(later, params);
        let json = |params: &BTreeMap<String, String>| {
            serde_json::to_string(params).map_err(|e| StoreError::InvalidRecord {
                path: path.to_path_buf(),
                what: format!("case `{workload}`"),
                reason: format!("parameters: {e}"),
            })
        };
        let (params_json, later_json) = (json(&forms[0])?, json(&forms[1])?);
        let rows = self
            .conn
            .query(
                "SELECT c.id, r.id, r.started, c.rounds
                 FROM run_case c JOIN run r ON r.id = c.run_id
                 WHERE r.host_key = ?1 AND c.workload = ?2 AND c.workload_version = ?3
                   AND c.params IN (?4, ?5) AND c.error IS NULL AND r.imported = 0
                 ORDER BY r.started, r.id",
                params![host_key, workload, version, params_json, later_json],
            )
            .and_then(|rows| {
                rows.iter()
                    .map(|row| {
                        Ok((
                            row.get::<i64>(0)?,
                            row.get::<i64>(1)?,
                            row.get::<String>(2)?,
                            row.get::<String>(3)?,
                        ))
                    })
                    .collect::<Result<Vec<_>, DbError>>()
            })
            .map_err(sql_err(path, doing))?;
        let mut entries = Vec::with_capacity(rows.len());
        for (case_id, run_id, started, rounds) in rows {
            if exclude.contains(&run_id) {
                continue;
            }
            let what = |field: &str| format!("run {run_id}, case {case_id}: {field}");
            let metric_rows = self
                .conn
                .query(
                    "SELECT name, mean, levels FROM metric WHERE case_id = ?1 ORDER BY id",
                    params![case_id],
                )
                .and_then(|rows| {
                    rows.iter()
                        .map(|row| {
                            Ok((
                                row.get::<String>(0)?,
                                row.get::<Option<f64>>(1)?,
                                row.get::<Option<String>>(2)?,
                            ))
                        })
                        .collect::<Result<Vec<_>, DbError>>()
                })
                .map_err(sql_err(path, doing))?;
            let mut metrics = Vec::with_capacity(metric_rows.len());
            for (name, mean, levels) in metric_rows {
                let levels = match levels {
                    Some(text) => Some(from_json(path, &text, || what("levels"))?),
                    None => None,
                };
                metrics.push(HistoryMetric {
                    name,
                    mean: mean.unwrap_or(f64::NAN),
                    levels,
                });
            }
            let (mean_trial_seconds, used_trials) = self
                .conn
                .query_one(
                    "SELECT avg(seconds), count(*) FROM trial WHERE case_id = ?1 AND replaced = 0",
                    params![case_id],
                )
                .and_then(|row| Ok((row.get::<Option<f64>>(0)?, row.get::<i64>(1)?)))
                .map_err(sql_err(path, doing))?;
            let healths = self
                .conn
                .query(
                    "SELECT health FROM trial WHERE case_id = ?1 AND replaced = 0",
                    params![case_id],
                )
                .and_then(|rows| {
                    rows.iter()
                        .map(|row| row.get::<String>(0))
                        .collect::<Result<Vec<_>, DbError>>()
                })
                .map_err(sql_err(path, doing))?;
            let mut disturbed = false;
            for text in &healths {
                let health: TrialHealth = from_json(path, text, || what("trial health"))?;
                disturbed |= !health.flags.is_empty();
            }
            entries.push(CaseHistoryEntry {
                run_id,
                started,
                metrics,
                rounds: from_json(path, &rounds, || what("rounds"))?,
                mean_trial_seconds: mean_trial_seconds.unwrap_or(f64::NAN),
                used_trials: used_trials.max(0) as usize,
                disturbed,
            });
        }
        Ok(entries)
    }
}

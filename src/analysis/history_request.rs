//! `sledge history`'s question, checked and answered from the store: a
//! workload, narrowed by parameter values, on one host. Which runs are on
//! the host, which cases match, and when nothing does, what there is
//! instead ([`BadHistoryRequest`], named so the user can ask again).
//!
//! The history itself is built by [`super::change_points`] and rendered
//! by `report::history_text`.

use std::collections::BTreeMap;

use super::change_points::{self, History, HistoryRun};
use crate::store::Store;

/// A history request that names nothing there is (a parameter the
/// workload lacks, a host or case without runs); the message says what
/// there is.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadHistoryRequest(pub String);

/// What a history was asked for, its parameter filter checked.
#[derive(Debug, Clone)]
pub struct HistoryRequest {
    /// The workload (`cpu.primes`).
    pub workload: String,
    /// The host: its name or its fleet name; `None` for this machine.
    pub host: Option<String>,
    /// Only the cases with these parameter values.
    filter: BTreeMap<String, String>,
    /// The metric to follow; each case's headline when `None`.
    pub metric: Option<String>,
}

impl HistoryRequest {
    /// The request, `params` (`NAME=VALUE` pairs) parsed as its filter; a
    /// name the workload (when this sledge knows it) does not have is
    /// refused, naming those it has.
    pub fn new(
        workload: String,
        host: Option<String>,
        params: &[String],
        metric: Option<String>,
    ) -> Result<HistoryRequest, BadHistoryRequest> {
        let filter = parse_filter(&workload, params)?;
        Ok(HistoryRequest {
            workload,
            host,
            filter,
            metric,
        })
    }

    /// The host's history from `store`. No run of the workload, none on the
    /// host, or no case left by the filter or the metric is a
    /// [`BadHistoryRequest`] that says what there is.
    pub fn load(&self, store: &Store) -> anyhow::Result<History> {
        let workload = &self.workload;
        let runs = store.runs_with_workload(workload)?;
        if runs.is_empty() {
            return Err(BadHistoryRequest(match crate::workloads::find(workload) {
                Some(_) => format!("no stored run has a case of `{workload}`"),
                None => format!(
                    "`{workload}` is not a workload, and no stored run has it: `sledge workloads` lists them"
                ),
            })
            .into());
        }
        let host = self.host.clone().unwrap_or_else(crate::probe::hostname);
        let on_host: Vec<_> = runs
            .iter()
            .filter(|r| r.host() == host || r.hostname == host)
            .collect();
        if on_host.is_empty() {
            let mut hosts: BTreeMap<&str, usize> = BTreeMap::new();
            for run in &runs {
                *hosts.entry(run.host()).or_default() += 1;
            }
            let hosts: Vec<String> = hosts
                .iter()
                .map(|(name, n)| format!("{name} ({n} run{})", if *n == 1 { "" } else { "s" }))
                .collect();
            return Err(BadHistoryRequest(format!(
                "no stored run of `{workload}` on host `{host}`; its runs are on {}: choose one with --host",
                hosts.join(", ")
            ))
            .into());
        }
        let mut loaded = Vec::with_capacity(on_host.len());
        for run in on_host {
            loaded.push(HistoryRun {
                run: store.load_run_of_workload(run.id, workload)?,
                imported: run.imported,
            });
        }
        let history = change_points::build(
            &host,
            workload,
            &loaded,
            &self.filter,
            self.metric.as_deref(),
        );
        if history.cases.is_empty() {
            return Err(BadHistoryRequest(self.nothing_matched(&host, &loaded)).into());
        }
        Ok(history)
    }

    /// Why no case was left: the filter or the metric matched nothing;
    /// says what there is.
    fn nothing_matched(&self, host: &str, runs: &[HistoryRun]) -> String {
        let workload = &self.workload;
        let filtered = change_points::build(host, workload, runs, &self.filter, None);
        if let Some(metric) = self
            .metric
            .as_deref()
            .filter(|_| !filtered.cases.is_empty())
        {
            let mut names: Vec<&str> = runs
                .iter()
                .flat_map(|r| &r.run.cases)
                .flat_map(|c| &c.metrics)
                .map(|m| m.name.as_str())
                .collect();
            names.sort_unstable();
            names.dedup();
            return format!(
                "no case of `{workload}` on host `{host}` has a metric `{metric}`; its metrics: {}",
                names.join(", ")
            );
        }
        let cases: Vec<String> = change_points::build(host, workload, runs, &BTreeMap::new(), None)
            .cases
            .iter()
            .map(|c| crate::results::case_label(&c.workload, &c.params))
            .collect();
        let wanted: Vec<String> = self
            .filter
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        format!(
            "no case of `{workload}` on host `{host}` has {}; its cases there: {}",
            wanted.join(" "),
            cases.join("; ")
        )
    }
}

/// `-p NAME=VALUE` pairs as a filter; a name the workload (when this
/// sledge knows it) does not have is refused, naming those it has.
fn parse_filter(
    workload: &str,
    pairs: &[String],
) -> Result<BTreeMap<String, String>, BadHistoryRequest> {
    let known: Option<Vec<&str>> =
        crate::workloads::find(workload).map(|w| w.params().iter().map(|p| p.name).collect());
    let mut filter = BTreeMap::new();
    for pair in pairs {
        let Some((name, value)) = pair.split_once('=').filter(|(n, _)| !n.trim().is_empty()) else {
            return Err(BadHistoryRequest(format!(
                "-p `{pair}`: give NAME=VALUE, for example -p threads=1"
            )));
        };
        let name = name.trim();
        if let Some(known) = &known
            && !known.contains(&name)
        {
            return Err(BadHistoryRequest(format!(
                "-p `{pair}`: `{workload}` has no parameter `{name}`; its parameters: {}",
                known.join(", ")
            )));
        }
        filter.insert(name.to_string(), value.trim().to_string());
    }
    Ok(filter)
}

//! `sledge history`: a host's runs of a workload's cases over time, the
//! change points in each case's series (`stats::change_points`), and what
//! the host's inventory says changed at each of them (shown by
//! `report::history_text`).
//!
//! The point is not only *when* a case moved but *what differed* then:
//! each change point carries the facts (kernel, microcode, mitigations,
//! transparent huge pages, governor, sledge and workload versions...) that
//! differ between the last run before it and the first run after it,
//! the same list `compare` prints between two hosts.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::results::{CaseRecord, MetricRecord, RunRecord, Unit};
use crate::stats::{self, Direction};
use crate::store::{Store, StoreError};

/// One stored run of the host, with only the workload's cases
/// (`Store::load_run_of_workload`).
#[derive(Debug, Clone)]
pub struct HistoryRun {
    /// The run, its cases limited to the workload asked about.
    pub run: RunRecord,
    /// Whether it came from a document (`sledge import`) rather than
    /// being measured into this store.
    pub imported: bool,
}

/// What `sledge history --json` prints.
#[derive(Debug, Clone, Serialize)]
pub struct History {
    /// The host, as runs name it (its fleet name, else its host name).
    pub host: String,
    /// The workload asked about.
    pub workload: String,
    /// The significance level of the change points (Welch's t-test
    /// between their sides, two-sided).
    pub max_p_value: f64,
    /// The fewest runs on each side of a change point.
    pub min_runs_each_side: usize,
    /// One series per case, in the order the cases first appear.
    pub cases: Vec<CaseHistory>,
}

/// One case's series on the host.
#[derive(Debug, Clone, Serialize)]
pub struct CaseHistory {
    /// Workload id.
    pub workload: String,
    /// The case's parameters (a count given as `all` reads `all`).
    pub params: BTreeMap<String, String>,
    /// The metric followed: the case's headline, or the one asked for.
    pub metric: String,
    /// Its unit.
    pub unit: Unit,
    /// Whether higher or lower is better.
    pub direction: Direction,
    /// The runs, oldest first.
    pub runs: Vec<HistoryPoint>,
    /// The change points, oldest first.
    pub change_points: Vec<HistoryChange>,
}

/// One run's result in a [`CaseHistory`].
#[derive(Debug, Clone, Serialize)]
pub struct HistoryPoint {
    /// The run's id.
    pub run: i64,
    /// When it started (RFC 3339, UTC).
    pub started: String,
    /// The metric's mean in that run.
    pub mean: f64,
    /// Its 95% CI.
    pub ci_low: f64,
    /// Its 95% CI.
    pub ci_high: f64,
    /// The workload's version in that run.
    pub workload_version: u32,
    /// Disturbances in the trials the mean uses (`busy 2/6`); empty when
    /// clean.
    pub disturbed: Vec<String>,
    /// Whether the run came from a document (`sledge import`).
    pub imported: bool,
}

/// A change point of a [`CaseHistory`].
#[derive(Debug, Clone, Serialize)]
pub struct HistoryChange {
    /// The first run after the change.
    pub run: i64,
    /// The last run before it.
    pub run_before: i64,
    /// When the first run after it started.
    pub started: String,
    /// Index of `run` in the case's `runs`.
    pub index: usize,
    /// How many runs the segment before it holds (back to the previous
    /// change point).
    pub runs_before: usize,
    /// How many runs the segment after it holds (up to the next change
    /// point).
    pub runs_after: usize,
    /// Median of the segment before.
    pub median_before: f64,
    /// Median of the segment after.
    pub median_after: f64,
    /// `median_after / median_before`.
    pub ratio: f64,
    /// `faster` or `slower`, by the metric's direction.
    pub verdict: &'static str,
    /// Two-sided p of Welch's t-test between the two segments.
    pub p_value: f64,
    /// The facts that differ between `run_before` and `run`.
    pub differences: Vec<FactChange>,
}

/// One inventory fact that differs across a change point.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FactChange {
    /// What (`kernel`, `microcode`, `mitigation spectre_v2`, `sledge`,
    /// `workload cpu.primes`...).
    pub what: String,
    /// Its value in the run before.
    pub before: String,
    /// Its value in the run after.
    pub after: String,
}

/// One case's results in time order, each with the run it came from.
type Series<'a> = Vec<(&'a HistoryRun, &'a CaseRecord)>;

/// The histories of `workload`'s cases in `runs` (one host's, oldest
/// first): the cases whose parameters include every `filter` pair (a
/// count given as `all` matches `all`), each followed on `metric` (else
/// its headline).
pub fn build(
    host: &str,
    workload: &str,
    runs: &[HistoryRun],
    filter: &BTreeMap<String, String>,
    metric: Option<&str>,
) -> History {
    let mut cases: Vec<(BTreeMap<String, String>, Series)> = Vec::new();
    for history_run in runs {
        for case in history_run
            .run
            .cases
            .iter()
            .filter(|c| c.workload == workload)
        {
            let key = case_key(case);
            if filter.iter().any(|(k, v)| key.get(k) != Some(v)) {
                continue;
            }
            match cases.iter_mut().find(|(k, _)| *k == key) {
                // One result per run: a run holding the case twice keeps its first.
                Some((_, series))
                    if series
                        .last()
                        .is_some_and(|(r, _)| r.run.id == history_run.run.id) => {}
                Some((_, series)) => series.push((history_run, case)),
                None => cases.push((key, vec![(history_run, case)])),
            }
        }
    }
    let cases = cases
        .into_iter()
        .filter_map(|(params, series)| case_history(workload, params, &series, metric))
        .collect();
    History {
        host: host.to_string(),
        workload: workload.to_string(),
        max_p_value: stats::MAX_P_VALUE,
        min_runs_each_side: stats::MIN_SIDE,
        cases,
    }
}

/// The histories `sledge report --history` draws: for each host and
/// workload of `runs`, every stored run of it on that host, and of its
/// cases only those that `runs` hold on that host.
pub fn for_runs(store: &Store, runs: &[RunRecord]) -> Result<Vec<History>, StoreError> {
    let host_of = |run: &RunRecord| run.fleet_host().unwrap_or(&run.host.hostname).to_string();
    let mut seen: Vec<(String, &str)> = Vec::new();
    let mut histories = Vec::new();
    for run in runs {
        let host = host_of(run);
        for case in &run.cases {
            if seen.contains(&(host.clone(), case.workload.as_str())) {
                continue;
            }
            seen.push((host.clone(), case.workload.as_str()));
            let mut loaded = Vec::new();
            for stored in store.runs_with_workload(&case.workload)? {
                if stored.host() == host {
                    loaded.push(HistoryRun {
                        run: store.load_run_of_workload(stored.id, &case.workload)?,
                        imported: stored.imported,
                    });
                }
            }
            let mut history = build(&host, &case.workload, &loaded, &BTreeMap::new(), None);
            let keys: Vec<BTreeMap<String, String>> = runs
                .iter()
                .filter(|r| host_of(r) == host)
                .flat_map(|r| &r.cases)
                .filter(|c| c.workload == case.workload)
                .map(case_key)
                .collect();
            history.cases.retain(|c| keys.contains(&c.params));
            if !history.cases.is_empty() {
                histories.push(history);
            }
        }
    }
    Ok(histories)
}

/// A case's parameters as runs are matched over time: later parameters at
/// their defaults left out, and a count given as `all` read as `all`, so
/// that `threads=all` stays one case when the run's CPU count changes.
fn case_key(case: &CaseRecord) -> BTreeMap<String, String> {
    let mut params = crate::store::later_params::comparable(
        crate::workloads::later_params_of(&case.workload),
        &case.params,
    );
    for name in case.given_as_all.iter().flatten() {
        if let Some(value) = params.get_mut(name) {
            *value = "all".to_string();
        }
    }
    params
}

/// One case's series and change points; `None` when no run has the metric.
fn case_history(
    workload: &str,
    params: BTreeMap<String, String>,
    series: &[(&HistoryRun, &CaseRecord)],
    metric: Option<&str>,
) -> Option<CaseHistory> {
    let first = series
        .iter()
        .find_map(|(_, case)| chosen_metric(case, metric))?;
    let (name, unit, direction) = (first.name.clone(), first.unit.clone(), first.direction);
    let mut kept: Vec<&HistoryRun> = Vec::new();
    let mut runs = Vec::new();
    for (history_run, case) in series {
        let Some(m) =
            chosen_metric(case, metric).filter(|m| m.name == name && m.summary.mean.is_finite())
        else {
            continue;
        };
        kept.push(history_run);
        runs.push(HistoryPoint {
            run: history_run.run.id,
            started: history_run.run.started.clone(),
            mean: m.summary.mean,
            ci_low: m.summary.ci_low,
            ci_high: m.summary.ci_high,
            workload_version: case.workload_version,
            disturbed: case
                .disturbances()
                .into_iter()
                .map(|(kind, count)| format!("{kind} {count}/{}", case.used_trials()))
                .collect(),
            imported: history_run.imported,
        });
    }
    let values: Vec<f64> = runs.iter().map(|p| p.mean).collect();
    let change_points = stats::change_points(&values)
        .into_iter()
        .map(|cp| {
            let (before, after) = (&kept[cp.index - 1].run, &kept[cp.index].run);
            let ratio = cp.ratio();
            let better = match direction {
                Direction::Higher => ratio > 1.0,
                Direction::Lower => ratio < 1.0,
            };
            HistoryChange {
                run: after.id,
                run_before: before.id,
                started: after.started.clone(),
                index: cp.index,
                runs_before: cp.index - cp.before_start,
                runs_after: cp.after_end - cp.index,
                median_before: cp.before_median,
                median_after: cp.after_median,
                ratio,
                verdict: if better { "faster" } else { "slower" },
                p_value: cp.p_value,
                differences: super::host_facts::host_differences(before, after)
                    .into_iter()
                    .map(|d| FactChange {
                        what: d.what,
                        before: d.baseline,
                        after: d.candidate,
                    })
                    .collect(),
            }
        })
        .collect();
    Some(CaseHistory {
        workload: workload.to_string(),
        params,
        metric: name,
        unit,
        direction,
        runs,
        change_points,
    })
}

/// The metric of `case` a history follows: `metric`, else the headline.
fn chosen_metric<'a>(case: &'a CaseRecord, metric: Option<&str>) -> Option<&'a MetricRecord> {
    match metric {
        Some(name) => case.metrics.iter().find(|m| m.name == name),
        None => case.metrics.first(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures;

    /// A run of `cpu.primes threads=1` with headline `mean` (samples ±0.1%)
    /// on host `h` with `kernel`.
    fn run(id: i64, mean: f64, kernel: &str) -> HistoryRun {
        let samples = [mean * 0.999, mean, mean * 1.001];
        let headline = fixtures::metric("events_per_sec", "events/s", Direction::Higher, &samples);
        let case = fixtures::case("cpu.primes", &[("threads", "1")], headline);
        let mut run = fixtures::run(id, "h", 2, vec![case]);
        run.started = format!("2026-11-{id:02}T10:00:00Z");
        run.host.os.kernel = kernel.to_string();
        HistoryRun {
            run,
            imported: false,
        }
    }

    /// Twelve runs: 1000 ±1% for six, then 930 ±1% on a new kernel.
    fn stepped() -> Vec<HistoryRun> {
        let wobble = [1.0, 1.01, 0.99, 1.005, 0.995, 1.0];
        (0..12)
            .map(|i| {
                let (level, kernel) = if i < 6 {
                    (1000.0, "6.1.0")
                } else {
                    (930.0, "6.1.1")
                };
                run(i as i64 + 1, level * wobble[i % 6], kernel)
            })
            .collect()
    }

    #[test]
    fn a_step_is_named_with_the_kernel_that_changed_under_it() {
        let history = build("h", "cpu.primes", &stepped(), &BTreeMap::new(), None);
        assert_eq!(history.cases.len(), 1);
        let case = &history.cases[0];
        assert_eq!(case.runs.len(), 12);
        assert_eq!(case.change_points.len(), 1);
        let change = &case.change_points[0];
        assert_eq!((change.run_before, change.run, change.index), (6, 7, 6));
        assert_eq!((change.runs_before, change.runs_after), (6, 6));
        assert_eq!(change.verdict, "slower");
        assert!((change.ratio - 0.93).abs() < 1e-9, "{change:?}");
        assert_eq!(
            change.differences,
            [FactChange {
                what: "kernel".into(),
                before: "6.1.0".into(),
                after: "6.1.1".into()
            }]
        );
    }

    #[test]
    fn a_filter_that_matches_no_parameter_value_leaves_no_case() {
        let filter = BTreeMap::from([("threads".to_string(), "2".to_string())]);
        let history = build("h", "cpu.primes", &stepped(), &filter, None);
        assert!(history.cases.is_empty());
        let filter = BTreeMap::from([("threads".to_string(), "1".to_string())]);
        assert_eq!(
            build("h", "cpu.primes", &stepped(), &filter, None)
                .cases
                .len(),
            1
        );
    }

    #[test]
    fn the_text_shows_the_change_and_what_differed() {
        let history = build("h", "cpu.primes", &stepped(), &BTreeMap::new(), None);
        insta::assert_snapshot!(crate::report::history_text::render(&history), @r"
        history of cpu.primes on host h · change points: E-Divisive means, Welch's t-test p < 0.0003, at least 3 runs each side

        cpu.primes threads=1 · events_per_sec (events/s, higher is better)
          ▇█▆█▇▇│▂▂▁▂▁▂  12 runs, oldest first; │ a change point
          change at run 7 (2026-11-07T10:00:00Z): 7.0% slower, median 1000 → 930 (×0.930; p = 7.3e-9; 6 runs before, 6 after)
            what differs from run 6:
              kernel: 6.1.0 → 6.1.1
            run  started                   events_per_sec  flags
              1  2026-11-01T10:00:00Z        1000.0 ± 2.5
              2  2026-11-02T10:00:00Z        1010.0 ± 2.5
              3  2026-11-03T10:00:00Z         990.0 ± 2.5
              4  2026-11-04T10:00:00Z        1005.0 ± 2.5
              5  2026-11-05T10:00:00Z         995.0 ± 2.5
              6  2026-11-06T10:00:00Z        1000.0 ± 2.5
          ──────────────────────────────────────────────────
              7  2026-11-07T10:00:00Z         930.0 ± 2.3
              8  2026-11-08T10:00:00Z         939.3 ± 2.3
              9  2026-11-09T10:00:00Z         920.7 ± 2.3
             10  2026-11-10T10:00:00Z         934.6 ± 2.3
             11  2026-11-11T10:00:00Z         925.4 ± 2.3
             12  2026-11-12T10:00:00Z         930.0 ± 2.3
        ");
    }
}

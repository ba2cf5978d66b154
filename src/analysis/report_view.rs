//! What `sledge report` shows of a set of runs, decided apart from how the
//! page draws it: each later run compared with the first, each run's
//! scaling sweeps and their fits, the outlier hosts of a fleet, and per
//! workload the cases, sweeps and pivot tables matched across the runs,
//! with the latency spectra of the workloads that have them. The HTML
//! report (`report::html`) renders this view and computes nothing of its
//! own.

use std::collections::HashSet;

use super::change_points::History;
use super::host_outliers::{FleetOutliers, fleet_outliers};
use super::latency_spectrum::percentile_spectrum;
use super::matched_across_runs::{
    CaseKey, SweepGroup, TableGroup, match_cases, match_sweeps, match_tables, table_cases,
};
use super::pivot_grouping::PivotChoice;
use super::scaling_fit::{self, Sweep};
use super::varying::varying_params;
use super::verdicts::{CompareOptions, NoiseHistory, RunComparison, compare_runs};
use crate::results::{CaseRecord, RunRecord};
use crate::suite::defaults::Defaults;

/// The report of a set of runs, ready to render.
#[derive(Debug)]
pub struct ReportView<'a> {
    /// The runs; the first is the baseline of the comparisons.
    pub runs: &'a [RunRecord],
    /// The default parameters of each run's workloads, for its summary
    /// (`defaults[i]` for run `i`; a run without them shows every
    /// parameter).
    pub defaults: &'a [Defaults],
    /// Each later run compared with the first, in run order.
    pub comparisons: Vec<RunComparison>,
    /// Each run's scaling sweeps with their fits (`sweeps[i]` are run
    /// `i`'s).
    pub sweeps: Vec<Vec<Sweep>>,
    /// The outlier hosts among the runs' hosts of one CPU model.
    pub fleet_outliers: FleetOutliers,
    /// What the charts show, per workload in the order the runs first
    /// have them.
    pub workloads: Vec<WorkloadCharts<'a>>,
    /// Each case's history on its host (`sledge report --history`), or
    /// none.
    pub histories: &'a [History],
}

/// One workload's part of the charts.
#[derive(Debug)]
pub struct WorkloadCharts<'a> {
    /// The workload's id.
    pub workload: &'a str,
    /// The parameters that tell its cases apart, in name order.
    pub varying: Vec<String>,
    /// Its pivot tables matched across runs.
    pub pivots: Vec<TableGroup>,
    /// Its cases matched across runs, in the order first seen.
    pub cases: Vec<ChartedCase<'a>>,
    /// Its scaling sweeps matched across runs; the members index
    /// [`ReportView::sweeps`].
    pub sweeps: Vec<SweepGroup>,
}

/// One case across runs, as the charts show it.
#[derive(Debug)]
pub struct ChartedCase<'a> {
    /// What the runs' cases were matched on.
    pub key: CaseKey,
    /// (run index, its case) per run that has the case, in run order.
    pub cases: Vec<(usize, &'a CaseRecord)>,
    /// Whether a pivot table shows the case in every run that has it: its
    /// chart stands for the case's own.
    pub in_pivot: bool,
    /// (run index, its latency percentile spectrum) per run with a stored
    /// histogram, for a workload that shows one
    /// ([`crate::engine::Workload::latency_spectrum`]); empty otherwise.
    pub spectra: Vec<(usize, Vec<(f64, f64)>)>,
}

/// The view of `runs` (the first the baseline), with the pivot tables
/// `choice` makes and run-to-run noise from `noise` for the verdicts;
/// `defaults` and `histories` are carried to the page as they are.
pub fn report_view<'a>(
    runs: &'a [RunRecord],
    defaults: &'a [Defaults],
    noise: &dyn NoiseHistory,
    choice: &PivotChoice,
    histories: &'a [History],
) -> ReportView<'a> {
    let comparisons = runs
        .iter()
        .skip(1)
        .map(|candidate| compare_runs(&runs[0], candidate, noise, CompareOptions::default()))
        .collect();
    let sweeps: Vec<Vec<Sweep>> = runs.iter().map(scaling_fit::find).collect();
    let workloads = workload_charts(runs, &sweeps, choice);
    ReportView {
        runs,
        defaults,
        comparisons,
        sweeps,
        fleet_outliers: fleet_outliers(runs),
        workloads,
        histories,
    }
}

impl ReportView<'_> {
    /// Whether any run has a pivot table: `--pivot` with two parameters
    /// that no run sweeps both of has none to show.
    pub fn has_pivot_tables(&self) -> bool {
        self.workloads.iter().any(|w| !w.pivots.is_empty())
    }
}

/// The charts' part of each workload: its cases, pivot tables and sweeps,
/// each matched across runs.
fn workload_charts<'a>(
    runs: &'a [RunRecord],
    all_sweeps: &[Vec<Sweep>],
    choice: &PivotChoice,
) -> Vec<WorkloadCharts<'a>> {
    let mut pivot_groups = match_tables(runs, choice);
    let mut sweep_groups = match_sweeps(runs, all_sweeps);
    match_cases(runs)
        .into_iter()
        .map(|(workload, matched)| {
            let varying = {
                let cases: Vec<&CaseRecord> = matched
                    .iter()
                    .flat_map(|m| m.cases.iter().map(|p| p.1))
                    .collect();
                varying_params(&cases)
            };
            let pivots = pivot_groups.remove(workload).unwrap_or_default();
            let in_pivots: HashSet<*const CaseRecord> = pivots
                .iter()
                .flat_map(table_cases)
                .map(|(i, c)| &runs[i].cases[c] as *const _)
                .collect();
            let spectrum = has_latency_spectrum(workload);
            let cases = matched
                .into_iter()
                .map(|m| ChartedCase {
                    in_pivot: m
                        .cases
                        .iter()
                        .all(|&(_, case)| in_pivots.contains(&(case as *const _))),
                    spectra: if spectrum {
                        spectra(&m.cases)
                    } else {
                        Vec::new()
                    },
                    key: m.key,
                    cases: m.cases,
                })
                .collect();
            WorkloadCharts {
                workload,
                varying,
                pivots,
                cases,
                sweeps: sweep_groups.remove(workload).unwrap_or_default(),
            }
        })
        .collect()
}

/// Whether `workload` has a latency percentile spectrum to show: the
/// workload says so ([`crate::engine::Workload::latency_spectrum`]); a
/// workload this sledge does not know has none.
fn has_latency_spectrum(workload: &str) -> bool {
    crate::workloads::find(workload).is_some_and(|w| w.latency_spectrum())
}

/// The latency spectrum of each of `cases` that has a stored histogram.
fn spectra(cases: &[(usize, &CaseRecord)]) -> Vec<(usize, Vec<(f64, f64)>)> {
    cases
        .iter()
        .filter_map(|&(i, case)| {
            Some((i, percentile_spectrum(case.latency_histogram.as_deref()?)?))
        })
        .collect()
}

//! What a command prints, as one value: a [`View`] holds one kind of
//! result (a run, a comparison, a history, ...) with what its command
//! chose about showing it, and any format renders it
//! ([`Format::render`](super::output_format::Format::render)).
//!
//! An enum, not a trait object per kind: each format module matches on
//! it once, so a new kind of result does not compile until every format
//! has rendered it or refused it by name, and a new format is one module
//! with one match. A trait per kind would put every format back inside
//! each kind, the grid this replaces.

use std::path::Path;

use crate::analysis::change_points::History;
use crate::analysis::host_outliers::FleetOutliers;
use crate::analysis::noise_history::Calibration;
use crate::analysis::pivot_grouping::PivotChoice;
use crate::analysis::verdicts::MultiComparison;
use crate::engine::Methodology;
use crate::engine::estimate::PlanEstimate;
use crate::probe::HostInfo;
use crate::report::compare_table::MetricSelection;
use crate::report::fleet_run::FleetRunSummary;
use crate::report::http_load::{HostsShown, LoadShown};
use crate::results::RunRecord;
use crate::store::RunListing;

/// One result a command prints, and how it asked for it to be shown.
#[derive(Clone, Copy)]
pub enum View<'a> {
    /// One stored run (`run`, `show`).
    Run {
        run: &'a RunRecord,
        shown: RunShown<'a>,
    },
    /// A comparison of runs with a baseline (`compare`, `ab`).
    Comparison(ComparisonShown<'a>),
    /// A host's history of a workload's cases (`history`).
    History(&'a History),
    /// The stored runs, newest first (`list`).
    Runs {
        runs: &'a [RunListing],
        /// The store's path when there is no store there yet: a store
        /// not made yet holds no runs, and the table says why.
        no_store_at: Option<&'a Path>,
    },
    /// A host inventory (`probe`).
    Host(&'a HostInfo),
    /// What a run would do (`plan`), and the change `--detect` asked
    /// about, if given.
    Plan {
        estimate: &'a PlanEstimate,
        methodology: &'a Methodology,
        detect: Option<f64>,
    },
    /// The outlier hosts of a fleet (`fleet outliers`).
    FleetOutliers(&'a FleetOutliers),
    /// The closing table of a fleet run (`fleet run`).
    FleetRun(&'a FleetRunSummary),
    /// Each case's run-to-run noise after a calibration (`calibrate`).
    Calibration(&'a Calibration),
    /// An ad-hoc HTTP load from this host (`http`).
    HttpLoad(&'a LoadShown<'a>),
    /// An ad-hoc HTTP load from several client hosts (`http --from`).
    HttpHosts(&'a HostsShown<'a>),
}

impl View<'_> {
    /// The view in words, as a format that has no rendering of it names
    /// it: `--csv cannot show a comparison`.
    pub fn what(&self) -> &'static str {
        match self {
            View::Run { .. } => "a run",
            View::Comparison(_) => "a comparison",
            View::History(_) => "a history",
            View::Runs { .. } => "the list of runs",
            View::Host(_) => "a host inventory",
            View::Plan { .. } => "a plan",
            View::FleetOutliers(_) => "the outlier hosts",
            View::FleetRun(_) => "a fleet run",
            View::Calibration(_) => "the run-to-run noise",
            View::HttpLoad(_) | View::HttpHosts(_) => "an HTTP load",
        }
    }
}

/// Which view of a run the terminal table shows (`run` and `show`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunView {
    /// One screen: a row per workload (`report::scorecard`).
    Scorecard,
    /// One line per case with its headline (`report::summary`): `--full`.
    Full,
    /// Every metric of every case: `--metrics all`.
    AllMetrics,
}

/// How a run is shown: the terminal's view of it and the pivot tables
/// asked for (`--pivot`), which the CSV and Markdown exports use too.
#[derive(Debug, Clone, Copy)]
pub struct RunShown<'a> {
    /// The terminal table's view.
    pub view: RunView,
    /// The `--pivot` given, if any.
    pub pivot: Option<&'a PivotChoice>,
}

/// How a comparison is shown: the metrics the tables show (`--metrics`)
/// and the regression gate the command applies (`--fail-if-slower`),
/// which the JUnit report's failures follow.
#[derive(Clone, Copy)]
pub struct ComparisonShown<'a> {
    /// The comparison.
    pub comparison: &'a MultiComparison,
    /// The metrics the tables show; JSON has them all, JUnit the
    /// headlines the gate judges.
    pub metrics: MetricSelection,
    /// The `--fail-if-slower` percentage, if given.
    pub fail_if_slower: Option<f64>,
}

//! The output formats every command that prints results shares: one
//! [`Format`], chosen once on the command line (`--json`, `--csv`,
//! `--markdown`, else the terminal table), and one [`Exporter`] per
//! format, each in its own module, as hyperfine's `src/export/` has them.
//!
//! A command asks the chosen exporter for what it prints (a run, a
//! comparison, a history, ...). A format says which of those it renders;
//! the others are refused by name, though the command line offers a
//! format only where it has something to render.

mod csv;
mod delegated;
mod json;
mod markdown;
mod table;

use crate::engine::Methodology;
use crate::engine::estimate::PlanEstimate;
use crate::probe::HostInfo;
use crate::report::calibration::Calibration;
use crate::report::compare::MultiComparison;
use crate::report::compare_table::MetricSelection;
use crate::report::fleet_outliers::FleetOutliers;
use crate::report::fleet_run::FleetRunSummary;
use crate::report::history::History;
use crate::report::http_load::{HostsShown, LoadShown};
use crate::report::pivot::PivotChoice;
use crate::results::RunRecord;
use crate::store::RunListing;

/// How a command prints its results.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Format {
    /// Text for a terminal: the scorecard, the tables (the default).
    #[default]
    Table,
    /// The documented JSON shapes (docs/json.md), pretty-printed.
    Json,
    /// One CSV row per metric.
    Csv,
    /// Markdown tables, for pasting into an issue or a report.
    Markdown,
}

impl Format {
    /// The format's renderer.
    pub fn exporter(self) -> &'static dyn Exporter {
        match self {
            Format::Table => &table::TableExporter,
            Format::Json => &json::JsonExporter,
            Format::Csv => &csv::CsvExporter,
            Format::Markdown => &markdown::MarkdownExporter,
        }
    }

    /// The flag that asks for the format (`--json`), or `table` for the
    /// default: what a refusal names.
    pub fn name(self) -> &'static str {
        match self {
            Format::Table => "table",
            Format::Json => "--json",
            Format::Csv => "--csv",
            Format::Markdown => "--markdown",
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

/// A format's renderer: one method per kind of result a command prints.
/// Each returns the whole text to write to stdout. A format that has no
/// rendering of a kind keeps the default, which refuses it by name.
pub trait Exporter {
    /// The format this exporter writes.
    fn format(&self) -> Format;

    /// One stored run (`run`, `show`).
    fn run(&self, _run: &RunRecord, _shown: RunShown<'_>) -> anyhow::Result<String> {
        Err(not_offered(self.format(), "a run"))
    }

    /// A comparison of runs with a baseline (`compare`, `ab`).
    fn comparison(
        &self,
        _comparison: &MultiComparison,
        _metrics: MetricSelection,
    ) -> anyhow::Result<String> {
        Err(not_offered(self.format(), "a comparison"))
    }

    /// A host's history of a workload's cases (`history`).
    fn history(&self, _history: &History) -> anyhow::Result<String> {
        Err(not_offered(self.format(), "a history"))
    }

    /// The stored runs, newest first (`list`).
    fn runs(&self, _runs: &[RunListing]) -> anyhow::Result<String> {
        Err(not_offered(self.format(), "the list of runs"))
    }

    /// A host inventory (`probe`).
    fn host(&self, _host: &HostInfo) -> anyhow::Result<String> {
        Err(not_offered(self.format(), "a host inventory"))
    }

    /// What a run would do (`plan`).
    fn plan(
        &self,
        _estimate: &PlanEstimate,
        _methodology: &Methodology,
        _detect: Option<f64>,
    ) -> anyhow::Result<String> {
        Err(not_offered(self.format(), "a plan"))
    }

    /// The outlier hosts of a fleet (`fleet outliers`).
    fn fleet_outliers(&self, _view: &FleetOutliers) -> anyhow::Result<String> {
        Err(not_offered(self.format(), "the outlier hosts"))
    }

    /// The closing table of a fleet run (`fleet run`).
    fn fleet_run(&self, summary: &FleetRunSummary) -> anyhow::Result<String> {
        delegated::fleet_run(self.format(), summary)
    }

    /// Each case's run-to-run noise after a calibration (`calibrate`).
    fn calibration(&self, noise: &Calibration) -> anyhow::Result<String> {
        delegated::calibration(self.format(), noise)
    }

    /// An ad-hoc HTTP load from this host (`http`).
    fn http_load(&self, load: &LoadShown<'_>) -> anyhow::Result<String> {
        delegated::http_load(self.format(), load)
    }

    /// An ad-hoc HTTP load from several client hosts (`http --from`).
    fn http_hosts(&self, load: &HostsShown<'_>) -> anyhow::Result<String> {
        delegated::http_hosts(self.format(), load)
    }
}

/// The refusal of a format that has no rendering of `what`.
fn not_offered(format: Format, what: &str) -> anyhow::Error {
    anyhow::anyhow!("{} cannot show {what}", format.name())
}

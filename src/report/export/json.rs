//! `--json`: every result in its documented shape (docs/json.md),
//! pretty-printed with a final newline. JSON carries the text as stored,
//! unescaped: its readers are programs.

use serde::Serialize;

use super::{Exporter, Format, RunShown};
use crate::engine::Methodology;
use crate::engine::estimate::PlanEstimate;
use crate::probe::HostInfo;
use crate::report::compare::MultiComparison;
use crate::report::compare_table::MetricSelection;
use crate::report::fleet_outliers::FleetOutliers;
use crate::report::history::History;
use crate::results::RunRecord;
use crate::store::RunListing;

/// The JSON renderer.
pub struct JsonExporter;

/// `value` as pretty JSON and a newline.
fn pretty(value: &impl Serialize) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(value)? + "\n")
}

impl Exporter for JsonExporter {
    fn format(&self) -> Format {
        Format::Json
    }

    /// The run's shape is `RunRecord`'s, documented field by field in
    /// `results.rs` and pinned by a snapshot test; the views and pivot
    /// tables are the terminal's, not part of it.
    fn run(&self, run: &RunRecord, _shown: RunShown<'_>) -> anyhow::Result<String> {
        pretty(run)
    }

    /// Every metric is in the JSON whichever `--metrics` is given.
    fn comparison(
        &self,
        comparison: &MultiComparison,
        _metrics: MetricSelection,
    ) -> anyhow::Result<String> {
        pretty(comparison)
    }

    fn history(&self, history: &History) -> anyhow::Result<String> {
        pretty(history)
    }

    fn runs(&self, runs: &[RunListing]) -> anyhow::Result<String> {
        pretty(&runs)
    }

    fn host(&self, host: &HostInfo) -> anyhow::Result<String> {
        pretty(host)
    }

    fn plan(
        &self,
        estimate: &PlanEstimate,
        methodology: &Methodology,
        detect: Option<f64>,
    ) -> anyhow::Result<String> {
        crate::report::plan_table::json(estimate, methodology, detect)
    }

    fn fleet_outliers(&self, view: &FleetOutliers) -> anyhow::Result<String> {
        pretty(view)
    }
}

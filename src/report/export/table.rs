//! The default format: text for a terminal (the scorecard, the tables).
//! The text is escaped first ([`crate::visible`]): it is for people.

use super::{Exporter, Format, RunShown, RunView};
use crate::engine::Methodology;
use crate::engine::estimate::PlanEstimate;
use crate::probe::HostInfo;
use crate::report::compare::MultiComparison;
use crate::report::compare_table::{self, MetricSelection};
use crate::report::fleet_outliers::{self, FleetOutliers};
use crate::report::history::{self, History};
use crate::report::pivot::{self, PivotChoice};
use crate::report::{listing, plan_table, run_sections, run_table, scorecard, summary};
use crate::results::RunRecord;
use crate::store::RunListing;
use crate::visible::Escaped;

/// The terminal renderer.
pub struct TableExporter;

impl Exporter for TableExporter {
    fn format(&self) -> Format {
        Format::Table
    }

    /// The run in the chosen view. The per-case view shows each
    /// workload's own pivot tables (or the ones `--pivot` chooses) within
    /// it; the scorecard and the every-metric table add the tables only
    /// when `--pivot` asks for them.
    fn run(&self, run: &RunRecord, shown: RunShown<'_>) -> anyhow::Result<String> {
        let run = Escaped::new(run.clone());
        let asked_tables = |mut text: String| {
            let tables = shown.pivot.map(|choice| pivot::tables(&run, choice));
            if let Some(tables) = tables.filter(|t| !t.is_empty()) {
                text.push('\n');
                text.push_str(&pivot::text(&tables));
            }
            text
        };
        Ok(match shown.view {
            RunView::Scorecard => asked_tables(scorecard::render(&run)),
            RunView::Full => {
                let mut text = summary::render_pivoted(
                    &run,
                    &crate::suite::defaults_for(&run),
                    shown.pivot.unwrap_or(&PivotChoice::Natural),
                );
                // A run with UnixBench's tests ends with its index, as
                // UnixBench's does: the section its workloads add.
                text.push_str(&run_sections::text(&run));
                text
            }
            RunView::AllMetrics => asked_tables(run_table::render(&run)),
        })
    }

    fn comparison(
        &self,
        comparison: &MultiComparison,
        metrics: MetricSelection,
    ) -> anyhow::Result<String> {
        Ok(compare_table::render(
            &Escaped::new(comparison.clone()),
            metrics,
        ))
    }

    fn history(&self, history: &History) -> anyhow::Result<String> {
        Ok(history::render(history))
    }

    fn runs(&self, runs: &[RunListing]) -> anyhow::Result<String> {
        Ok(listing::runs(&Escaped::new(runs.to_vec())))
    }

    fn host(&self, host: &HostInfo) -> anyhow::Result<String> {
        Ok(listing::host(&Escaped::new(host.clone())))
    }

    fn plan(
        &self,
        estimate: &PlanEstimate,
        methodology: &Methodology,
        detect: Option<f64>,
    ) -> anyhow::Result<String> {
        Ok(plan_table::render(estimate, methodology, detect))
    }

    fn fleet_outliers(&self, view: &FleetOutliers) -> anyhow::Result<String> {
        Ok(fleet_outliers::render(view))
    }
}

//! The default format: text for a terminal (the scorecard, the tables).
//! The text is escaped first ([`crate::visible`]): it is for people.

use super::view::{ComparisonShown, RunShown, RunView, View};
use crate::analysis::pivot_grouping::{self, PivotChoice};
use crate::report::compare_table;
use crate::report::pivot;
use crate::report::{
    calibration, fleet_outliers, fleet_run, history_text, listing, plan_table, run_sections,
    run_table, scorecard, summary,
};
use crate::results::RunRecord;
use crate::visible::Escaped;

/// `view` as text for a terminal. Every view has one.
pub(super) fn render(view: &View<'_>) -> anyhow::Result<String> {
    Ok(match *view {
        View::Run { run, shown } => run_text(run, shown),
        View::Comparison(ComparisonShown {
            comparison,
            metrics,
            ..
        }) => compare_table::render(&Escaped::new(comparison.clone()), metrics),
        View::History(history) => history_text::render(history),
        View::Runs {
            no_store_at: Some(path),
            ..
        } => format!(
            "no runs stored yet (there is no store at {}); `sledge run` makes one\n",
            path.display()
        ),
        View::Runs {
            runs,
            no_store_at: None,
        } => listing::runs(&Escaped::new(runs.to_vec())),
        View::Host(host) => listing::host(&Escaped::new(host.clone())),
        View::Plan {
            estimate,
            methodology,
            detect,
        } => plan_table::render(estimate, methodology, detect),
        View::FleetOutliers(outliers) => fleet_outliers::render(outliers),
        View::FleetRun(summary) => fleet_run::render(summary),
        View::Calibration(noise) => calibration::render(noise),
        View::HttpLoad(load) => load.text(),
        View::HttpHosts(load) => load.text(),
    })
}
/// The run in the chosen view. The per-case view shows each workload's
/// own pivot tables (or the ones `--pivot` chooses) within it; the
/// scorecard and the every-metric table add the tables only when
/// `--pivot` asks for them.
fn run_text(run: &RunRecord, shown: RunShown<'_>) -> String {
    let run = Escaped::new(run.clone());
    let asked_tables = |mut text: String| {
        let tables = shown
            .pivot
            .map(|choice| pivot_grouping::tables(&run, choice));
        if let Some(tables) = tables.filter(|t| !t.is_empty()) {
            text.push('\n');
            text.push_str(&pivot::text(&tables));
        }
        text
    };
    match shown.view {
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
    }
}

//! `--markdown`: a run or a comparison as Markdown tables, for pasting
//! into an issue or a report. The text is escaped first
//! ([`crate::visible`]): it is for people.

use super::view::View;
use crate::analysis::pivot_grouping;
use crate::report::compare_table;
use crate::report::format::markdown_cell;
use crate::report::pivot;
use crate::report::run_table::{flags, header, value_with_ci};
use crate::results::RunRecord;
use crate::visible::Escaped;

/// `view` as Markdown: a run (its table, then its pivot tables: each
/// workload's own, or the ones `--pivot` chooses) or a comparison;
/// `None` for any other view.
pub(super) fn render(view: &View<'_>) -> Option<anyhow::Result<String>> {
    Some(match *view {
        View::Run { run, shown } => {
            let run = Escaped::new(run.clone());
            let choice = shown.pivot.cloned().unwrap_or_default();
            let mut text = run_markdown(&run);
            text.push_str(&pivot::markdown(&pivot_grouping::tables(&run, &choice)));
            Ok(text)
        }
        View::Comparison(shown) => Ok(compare_table::markdown(
            &Escaped::new(shown.comparison.clone()),
            shown.metrics,
        )),
        View::History(_)
        | View::Runs { .. }
        | View::Host(_)
        | View::Plan { .. }
        | View::FleetOutliers(_)
        | View::FleetRun(_)
        | View::Calibration(_)
        | View::HttpLoad(_)
        | View::HttpHosts(_) => return None,
    })
}

/// A run as one Markdown table, a row per metric.
fn run_markdown(run: &Escaped<RunRecord>) -> String {
    let mut out = format!("**{}**\n\n", header(run).trim_end());
    out.push_str("| workload | parameters | metric | value ± 95% CI | n | unit | flags |\n");
    out.push_str("|---|---|---|---:|---:|---|---|\n");
    for case in &run.cases {
        for (i, m) in case.metrics.iter().enumerate() {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} |\n",
                if i == 0 {
                    markdown_cell(&case.workload)
                } else {
                    String::new()
                },
                if i == 0 {
                    markdown_cell(&case.params_text())
                } else {
                    String::new()
                },
                markdown_cell(&m.name),
                value_with_ci(m),
                m.summary.n,
                markdown_cell(m.unit.as_str()),
                flags(case, m, i == 0)
            ));
        }
        if case.metrics.is_empty() {
            out.push_str(&format!(
                "| {} | {} | - | - | 0 | | failed |\n",
                markdown_cell(&case.workload),
                markdown_cell(&case.params_text())
            ));
        }
    }
    out
}

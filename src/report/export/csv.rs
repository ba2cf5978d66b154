//! `--csv`: one CSV row per metric of a run with every summary statistic,
//! or with `--pivot` the pivot tables instead. The text is escaped first
//! ([`crate::visible`]), as for every format but JSON.

use super::view::View;
use crate::analysis::pivot_grouping;
use crate::report::pivot;
use crate::results::RunRecord;
use crate::visible::Escaped;

/// `view` as CSV: a run only (`None` for any other view).
pub(super) fn render(view: &View<'_>) -> Option<anyhow::Result<String>> {
    Some(match *view {
        View::Run { run, shown } => {
            let run = Escaped::new(run.clone());
            match shown.pivot {
                Some(choice) => pivot::csv(&pivot_grouping::tables(&run, choice)),
                None => rows(&run),
            }
        }
        View::Comparison(_)
        | View::History(_)
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

/// One CSV row per metric with every summary statistic.
fn rows(run: &Escaped<RunRecord>) -> anyhow::Result<String> {
    let mut writer = ::csv::Writer::from_writer(Vec::new());
    writer.write_record([
        "run",
        "workload",
        "workload_version",
        "parameters",
        "metric",
        "unit",
        "direction",
        "n",
        "mean",
        "median",
        "stddev",
        "ci_low",
        "ci_high",
        "min",
        "max",
        "outliers",
        "disturbed_trials",
    ])?;
    for case in &run.cases {
        let disturbed = case
            .trials
            .iter()
            .filter(|t| !t.health.flags.is_empty())
            .count();
        for m in &case.metrics {
            let s = &m.summary;
            writer.write_record([
                run.id.to_string(),
                case.workload.clone(),
                case.workload_version.to_string(),
                case.params_text(),
                m.name.clone(),
                m.unit.to_string(),
                format!("{:?}", m.direction).to_lowercase(),
                s.n.to_string(),
                s.mean.to_string(),
                s.median.to_string(),
                s.stddev.to_string(),
                s.ci_low.to_string(),
                s.ci_high.to_string(),
                s.min.to_string(),
                s.max.to_string(),
                m.outliers.iter().filter(|&&o| o).count().to_string(),
                disturbed.to_string(),
            ])?;
        }
    }
    Ok(String::from_utf8(writer.into_inner()?)?)
}

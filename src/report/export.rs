//! Machine-readable exports of one run: JSON (the documented shape of
//! `RunRecord`), CSV (one row per metric) and Markdown.

use super::format::markdown_cell;
use super::run_table::{flags, header, value_with_ci};
use crate::results::RunRecord;
use crate::visible::Escaped;

/// The run as pretty JSON; the shape is `RunRecord`'s, documented field by
/// field in `results.rs` and pinned by a snapshot test.
pub fn json(run: &RunRecord) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(run)? + "\n")
}

/// One CSV row per metric with every summary statistic.
pub fn csv(run: &Escaped<RunRecord>) -> anyhow::Result<String> {
    let mut writer = csv::Writer::from_writer(Vec::new());
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
                m.unit.clone(),
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

/// A Markdown table, for pasting into an issue or a report.
pub fn markdown(run: &Escaped<RunRecord>) -> String {
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
                markdown_cell(&m.unit),
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

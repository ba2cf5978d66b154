//! The terminal table of one run: one row per metric, the case named on
//! its first row.

use comfy_table::{Cell, CellAlignment, Table};

use super::format;
use super::listing::new_table;
use crate::results::{CaseRecord, MetricRecord, RunRecord};

/// Renders the run's header and its results table, then UnixBench's index
/// tables when the run has UnixBench cases.
pub fn render(run: &RunRecord) -> String {
    let mut out = header(run);
    out.push('\n');
    out.push_str(&table(run).to_string());
    out.push('\n');
    out.push_str(&super::unixbench_index::render(run));
    for case in &run.cases {
        for warning in &case.warnings {
            out.push_str(&format!("warning: {}: {warning}\n", case.label()));
        }
        if let Some(error) = &case.error {
            out.push_str(&format!("error: {}: {error}\n", case.label()));
        }
    }
    for warning in &run.warnings {
        out.push_str(&format!("warning: {warning}\n"));
    }
    out
}

/// One line about the run: id, profile, status, host, time.
pub fn header(run: &RunRecord) -> String {
    format!(
        "run {} · profile {} · {} · {} ({} CPUs used) · {} · sledge {}\n",
        run.id,
        run.profile,
        run.status.as_str(),
        if run.host.hostname.is_empty() {
            "unknown host"
        } else {
            &run.host.hostname
        },
        run.cpus.len(),
        run.started,
        run.sledge_version
    )
}

/// The results table.
pub fn table(run: &RunRecord) -> Table {
    let mut table = new_table(vec![
        "workload",
        "parameters",
        "metric",
        "value ± 95% CI",
        "n",
        "unit",
        "flags",
    ]);
    for case in &run.cases {
        if case.metrics.is_empty() {
            table.add_row(vec![
                Cell::new(&case.workload),
                Cell::new(case.params_text()),
                Cell::new("-"),
                Cell::new("-"),
                Cell::new("0"),
                Cell::new(""),
                Cell::new("failed"),
            ]);
            continue;
        }
        for (i, metric) in case.metrics.iter().enumerate() {
            let first = i == 0;
            table.add_row(vec![
                Cell::new(if first { case.workload.as_str() } else { "" }),
                Cell::new(if first {
                    case.params_text()
                } else {
                    String::new()
                }),
                Cell::new(&metric.name),
                Cell::new(value_with_ci(metric)).set_alignment(CellAlignment::Right),
                Cell::new(metric.summary.n).set_alignment(CellAlignment::Right),
                Cell::new(&metric.unit),
                Cell::new(flags(case, metric, first)),
            ]);
        }
    }
    table
}

/// `807.3 ± 3.1`; just the value when there is a single sample.
pub fn value_with_ci(metric: &MetricRecord) -> String {
    let s = &metric.summary;
    if s.n < 2 {
        format::value(s.mean)
    } else {
        format::with_uncertainty(s.mean, s.ci_half_width())
    }
}

/// Outliers of this metric, and (on the case's first row) disturbed trials
/// and failure.
pub fn flags(case: &CaseRecord, metric: &MetricRecord, first_row: bool) -> String {
    let mut flags = Vec::new();
    let outliers = metric.outliers.iter().filter(|&&o| o).count();
    if outliers > 0 {
        flags.push(format!(
            "{outliers} outlier{}",
            if outliers > 1 { "s" } else { "" }
        ));
    }
    if first_row {
        for (kind, count) in case.disturbances() {
            flags.push(format!("{kind} {count}/{}", case.trials.len()));
        }
        if case.error.is_some() {
            flags.push("failed".to_string());
        }
    }
    flags.join(", ")
}

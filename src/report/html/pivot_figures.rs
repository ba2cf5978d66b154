//! The report's pivot tables (`analysis::pivot_grouping`): per table
//! matched across runs (`analysis::matched_across_runs`), one figure with
//! its chart (`pivot_chart`) and the table itself, a row per row value and
//! run, each cell the mean with its 95% CI. Failed cells say so, and the failures are listed under the table
//! with their errors, as the bar charts they replace did.

use maud::{Markup, html};

use super::pivot_chart::{PivotChart, PivotLine, pivot_chart};
use super::run_names::{run_heading, run_name};
use crate::analysis::matched_across_runs::TableGroup;
use crate::analysis::pivot_grouping::{self, Cell, PivotTable};
use crate::results::RunRecord;

/// The group's figure: caption, chart, table and failures.
pub fn figure(runs: &[RunRecord], group: &TableGroup) -> anyhow::Result<Markup> {
    let first = &group[0].1;
    let rows = pivot_grouping::ordered(group.iter().flat_map(|(_, t)| t.rows.iter()));
    let columns = pivot_grouping::ordered(group.iter().flat_map(|(_, t)| t.columns.iter()));
    let several = group.len() > 1;
    let mut lines = Vec::new();
    for (i, table) in group {
        for (r, row) in rows.iter().enumerate() {
            let points: Vec<(usize, f64, f64, f64)> = columns
                .iter()
                .enumerate()
                .filter_map(|(c, column)| match cell(table, row, column) {
                    Cell::Value {
                        mean,
                        ci_low,
                        ci_high,
                        ..
                    } => Some((c, mean, ci_low, ci_high)),
                    _ => None,
                })
                .collect();
            if points.is_empty() {
                continue;
            }
            lines.push(PivotLine {
                label: format!("{} · {row}", run_name(&runs[*i])),
                row_label: row.clone(),
                run: *i,
                row: r,
                points,
            });
        }
    }
    let svg = pivot_chart(&PivotChart {
        column: first.column.clone(),
        columns: columns.clone(),
        unit: first.metric.1.clone(),
        lines,
    })?;
    let fixed = params_of(first);
    Ok(html! {
        figure class="wide pivot" {
            figcaption {
                (first.row) " by " (first.column)
                @if !fixed.is_empty() { " · " (fixed) }
                " "
                span class="metric" { (first.metric.0) " (" (first.metric.1.as_str()) "), mean ± 95% CI" }
            }
            "\n" (svg) "\n"
            table class="pivot" {
                thead {
                    tr {
                        th { (first.corner()) }
                        @if several { th { "run" } }
                        @for column in &columns { th class="num" { (column) } }
                    }
                }
                tbody {
                    "\n"
                    @for row in &rows {
                        @for (k, (i, table)) in group.iter().enumerate() {
                            tr {
                                @if k == 0 { th rowspan=(group.len()) { (row) } }
                                @if several { td { (run_heading(*i, &runs[*i])) } }
                                @for column in &columns {
                                    td class="num" { (cell(table, row, column).text()) }
                                }
                            }
                            "\n"
                        }
                    }
                }
            }
            "\n"
            @for failure in failures(runs, group) {
                p class="note failed" { (failure) } "\n"
            }
        }
        "\n"
    })
}

/// A run's cell at (row value, column value).
fn cell(table: &PivotTable, row: &str, column: &str) -> Cell {
    let r = table.rows.iter().position(|v| v == row);
    let c = table.columns.iter().position(|v| v == column);
    match (r, c) {
        (Some(r), Some(c)) => table.cells[r][c].clone(),
        _ => Cell::Missing,
    }
}

/// Each failed cell of each run, with its error: `size=2M
/// concurrency=16: failed in run 2: connection refused`.
fn failures(runs: &[RunRecord], group: &TableGroup) -> Vec<String> {
    let mut out = Vec::new();
    for (i, table) in group {
        for cell in table.cells.iter().flatten() {
            if let Cell::Failed { case } = cell {
                let case = &runs[*i].cases[*case];
                let value = |name: &str| case.params.get(name).map_or("", String::as_str);
                out.push(format!(
                    "{}={} {}={}: failed in {}: {}",
                    table.row,
                    value(&table.row),
                    table.column,
                    value(&table.column),
                    run_name(&runs[*i]),
                    case.error.as_deref().unwrap_or("no value")
                ));
            }
        }
    }
    out
}

/// The other parameters that tell the table from its workload's others,
/// as the first run has them (`copies=all` where it was given so).
fn params_of(table: &PivotTable) -> String {
    crate::report::format::params_text(&table.fixed_as_given)
}

//! Pivot tables ([`crate::analysis::pivot_grouping`]) as the articles
//! print them: the terminal text, the Markdown and the CSV, one title line
//! and one grid per table.

use super::format::{self, REPORT_WIDTH, markdown_cell};
use crate::analysis::Direction;
use crate::analysis::pivot_grouping::{Cell, PivotTable};

impl Cell {
    /// `600 ± 6`, `failed` or `-`.
    pub fn text(&self) -> String {
        match self {
            Cell::Value {
                mean,
                ci_low,
                ci_high,
                ..
            } => format::with_uncertainty(*mean, (ci_high - ci_low) / 2.0),
            Cell::Failed { .. } => "failed".to_string(),
            Cell::Missing => "-".to_string(),
        }
    }
}

impl PivotTable {
    /// `copies=1 time=0.1`, or empty.
    pub fn fixed_text(&self) -> String {
        crate::report::format::params_text(&self.fixed)
    }

    /// `crypto.speed · mb_per_sec (MB/s, higher is better) · copies=1`.
    pub fn title(&self) -> String {
        let (name, unit, direction) = &self.metric;
        let better = match direction {
            Direction::Higher => "higher",
            Direction::Lower => "lower",
        };
        let mut title = format!("{} · {name} ({unit}, {better} is better)", self.workload);
        if !self.fixed.is_empty() {
            title.push_str(&format!(" · {}", self.fixed_text()));
        }
        title
    }

    /// The corner cell: `algorithm ↓ block_size →`.
    pub fn corner(&self) -> String {
        format!("{} ↓ {} →", self.row, self.column)
    }
}

/// The tables as terminal text: a title line each, then the grid,
/// indented by two, its columns split into several grids where one would
/// be wider than [`REPORT_WIDTH`].
pub fn text(tables: &[PivotTable]) -> String {
    let mut out = String::new();
    for table in tables {
        out.push_str(&table.title());
        out.push_str(", mean ± 95% CI\n");
        out.push_str(&grid(table));
    }
    out
}

/// One table's grid (see [`text`]).
fn grid(table: &PivotTable) -> String {
    let corner = table.corner();
    let label_width = table
        .rows
        .iter()
        .map(|r| r.chars().count())
        .chain([corner.chars().count()])
        .max()
        .unwrap_or(0);
    let texts: Vec<Vec<String>> = table
        .cells
        .iter()
        .map(|row| row.iter().map(Cell::text).collect())
        .collect();
    let widths: Vec<usize> = (0..table.columns.len())
        .map(|c| {
            texts
                .iter()
                .map(|row| row[c].chars().count())
                .chain([table.columns[c].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    // Columns in chunks that fit the width, each chunk a grid of its own.
    let mut chunks: Vec<Vec<usize>> = vec![Vec::new()];
    let mut used = 2 + label_width;
    for (c, &w) in widths.iter().enumerate() {
        let last = chunks.last_mut().expect("one chunk at least");
        if !last.is_empty() && used + 2 + w > REPORT_WIDTH {
            chunks.push(vec![c]);
            used = 2 + label_width + 2 + w;
        } else {
            last.push(c);
            used += 2 + w;
        }
    }
    let mut out = String::new();
    for chunk in &chunks {
        let line = |label: &str, cells: &dyn Fn(usize) -> String| {
            let mut line = format!("  {label:<label_width$}");
            for &c in chunk {
                let width = widths[c];
                line.push_str(&format!("  {:>width$}", cells(c)));
            }
            line.push('\n');
            line
        };
        out.push_str(&line(&corner, &|c| table.columns[c].clone()));
        for (r, label) in table.rows.iter().enumerate() {
            out.push_str(&line(label, &|c| texts[r][c].clone()));
        }
    }
    out
}

/// The tables as Markdown: a bold title and a table each.
pub fn markdown(tables: &[PivotTable]) -> String {
    let mut out = String::new();
    for table in tables {
        out.push_str(&format!(
            "\n**{}**, mean ± 95% CI\n\n",
            markdown_cell(&table.title())
        ));
        out.push_str(&format!("| {} |", markdown_cell(&table.corner())));
        for column in &table.columns {
            out.push_str(&format!(" {} |", markdown_cell(column)));
        }
        out.push_str("\n|---|");
        out.push_str(&"---:|".repeat(table.columns.len()));
        out.push('\n');
        for (label, cells) in table.rows.iter().zip(&table.cells) {
            out.push_str(&format!("| {} |", markdown_cell(label)));
            for cell in cells {
                out.push_str(&format!(" {} |", cell.text()));
            }
            out.push('\n');
        }
    }
    out
}

/// The tables as CSV: per table a row per row value with the workload,
/// its other parameters, the metric, the unit, the row's value, and per
/// column value its mean, CI low and CI high (empty where the case failed
/// or is missing). Tables with the same columns share one header; a
/// table with other columns starts a new header after an empty line.
pub fn csv(tables: &[PivotTable]) -> anyhow::Result<String> {
    let mut out = String::new();
    let mut last_header: Option<Vec<String>> = None;
    let mut writer = csv::Writer::from_writer(Vec::new());
    for table in tables {
        let mut header: Vec<String> = ["workload", "parameters", "metric", "unit"]
            .map(String::from)
            .to_vec();
        header.push(table.row.clone());
        for column in &table.columns {
            let name = format!("{}={column}", table.column);
            header.extend([
                format!("{name} mean"),
                format!("{name} ci_low"),
                format!("{name} ci_high"),
            ]);
        }
        if last_header.as_ref() != Some(&header) {
            if last_header.is_some() {
                out.push_str(&String::from_utf8(writer.into_inner()?)?);
                out.push('\n');
                writer = csv::Writer::from_writer(Vec::new());
            }
            writer.write_record(&header)?;
            last_header = Some(header);
        }
        for (label, cells) in table.rows.iter().zip(&table.cells) {
            let mut record = vec![
                table.workload.clone(),
                table.fixed_text(),
                table.metric.0.clone(),
                table.metric.1.to_string(),
                label.clone(),
            ];
            for cell in cells {
                match cell {
                    Cell::Value {
                        mean,
                        ci_low,
                        ci_high,
                        ..
                    } => record.extend([mean, ci_low, ci_high].map(|v| v.to_string())),
                    _ => record.extend([String::new(), String::new(), String::new()]),
                }
            }
            writer.write_record(&record)?;
        }
    }
    out.push_str(&String::from_utf8(writer.into_inner()?)?);
    Ok(out)
}

#[cfg(test)]
mod tests;

//! The chart of a pivot table (`analysis::pivot_grouping`), as the articles
//! drew theirs: the column parameter along the x axis (its values evenly
//! spaced, as openssl speed's block sizes are), one line per row of the
//! table and run. A run keeps one colour for all its lines, so that runs
//! compare at a glance; the rows are told apart by their line's dashes,
//! their marker and their name at the end of the first run's line. The y
//! axis turns logarithmic where the means span more than
//! [`LOG_AXIS_SPAN`](super::charts::LOG_AXIS_SPAN); an interval reaching
//! below the axis is cut at its bottom.

use maud::Markup;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;

use super::charts::{
    Area, DrawResult, Y_LABELS, bounds, color, not_drawable, svg, tick_label, wants_log,
    y_label_area,
};
use crate::results::Unit;

/// One row of one run's table.
#[derive(Debug, Clone)]
pub struct PivotLine {
    /// Legend text (`run 2 · sha256`).
    pub label: String,
    /// The row's value, written at the line's end.
    pub row_label: String,
    /// Index of the run, for its colour.
    pub run: usize,
    /// Index of the row, for its dashes and marker.
    pub row: usize,
    /// (column index, mean, CI low, CI high) of the cells that have a
    /// value, leftmost first.
    pub points: Vec<(usize, f64, f64, f64)>,
}

/// One pivot table across runs.
#[derive(Debug, Clone)]
pub struct PivotChart {
    /// The column parameter, on the x axis.
    pub column: String,
    /// The column values, left to right.
    pub columns: Vec<String>,
    /// The metric's unit, on the y axis.
    pub unit: Unit,
    /// One line per row and run.
    pub lines: Vec<PivotLine>,
}

/// The chart as SVG, 760 × 360 pixels (or the note that stands in for it,
/// see [`not_drawable`]).
pub fn pivot_chart(chart: &PivotChart) -> anyhow::Result<Markup> {
    let values = || {
        chart
            .lines
            .iter()
            .flat_map(|l| l.points.iter().flat_map(|p| [p.1, p.2, p.3]))
    };
    if let Some(note) = not_drawable(values()) {
        return Ok(note);
    }
    // The means decide the axis: a wide interval (its low end below zero,
    // even) is cut at the axis' bottom rather than squashing the lines.
    let means = || {
        chart
            .lines
            .iter()
            .flat_map(|l| l.points.iter().map(|p| p.1))
    };
    let (low, high) = bounds(means()).unwrap_or((0.0, 1.0));
    let (_, top) = bounds(values()).unwrap_or((0.0, 1.0));
    let top = if top > 0.0 { top } else { 1.0 };
    let x = -0.4..(chart.columns.len().max(1) as f64 - 0.6);
    svg((760, 360), |area| {
        if wants_log(low, high) {
            draw(
                area,
                x,
                (low / 2.0..top * 1.5).log_scale(),
                low / 2.0,
                chart,
            )
        } else {
            let bottom = low.min(0.0);
            draw(area, x, bottom..top.max(high) * 1.1, bottom, chart)
        }
    })
}

fn draw<Y>(
    area: &Area,
    x: std::ops::Range<f64>,
    y: Y,
    bottom: f64,
    chart: &PivotChart,
) -> DrawResult
where
    Y: AsRangedCoord<Value = f64> + Clone,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let mut ctx = ChartBuilder::on(area)
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(y_label_area(&y, 60))
        .build_cartesian_2d(x, y)?;
    // Only whole positions are columns; the ticks between stay blank.
    let column = |v: &f64| {
        let i = v.round();
        if (v - i).abs() > 1e-6 || i < 0.0 {
            return String::new();
        }
        chart.columns.get(i as usize).cloned().unwrap_or_default()
    };
    let value = |v: &f64| tick_label(*v);
    ctx.configure_mesh()
        .x_labels(chart.columns.len() * 2 + 1)
        .x_label_formatter(&column)
        .disable_x_mesh()
        .y_labels(Y_LABELS)
        .y_label_formatter(&value)
        .x_desc(chart.column.as_str())
        .y_desc(chart.unit.as_str())
        .label_style(("sans-serif", 13))
        .draw()?;
    for line in &chart.lines {
        let c = color(line.run);
        let points: Vec<(f64, f64)> = line.points.iter().map(|p| (p.0 as f64, p.1)).collect();
        // Solid, dashed, dotted, long dashes: a row's pattern in every run.
        let (dash, gap) = [(0, 0), (8, 4), (2, 3), (14, 4)][line.row % 4];
        let style = c.stroke_width(2);
        if dash == 0 {
            ctx.draw_series(LineSeries::new(points.iter().copied(), style))?
        } else {
            ctx.draw_series(DashedLineSeries::new(
                points.iter().copied(),
                dash,
                gap,
                style,
            ))?
        }
        .label(line.label.as_str())
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], style));
        ctx.draw_series(line.points.iter().map(|p| {
            ErrorBar::new_vertical(p.0 as f64, p.2.max(bottom), p.1, p.3, c.stroke_width(1), 8)
        }))?;
        for &(px, py) in &points {
            let at = (px, py);
            match line.row % 4 {
                0 => ctx.draw_series(std::iter::once(Circle::new(at, 4, c.filled())))?,
                1 => ctx.draw_series(std::iter::once(TriangleMarker::new(at, 5, c.filled())))?,
                2 => ctx.draw_series(std::iter::once(Cross::new(at, 4, c.stroke_width(2))))?,
                _ => ctx.draw_series(std::iter::once(
                    EmptyElement::at(at) + Rectangle::new([(-3, -3), (3, 3)], c.filled()),
                ))?,
            };
        }
        // A row's name once, at the end of its first run's line.
        let first_of_row = chart.lines.iter().find(|l| l.row == line.row);
        if let Some(&last) = points
            .last()
            .filter(|_| first_of_row.is_some_and(|f| std::ptr::eq(f, line)))
        {
            ctx.draw_series(std::iter::once(
                EmptyElement::at(last)
                    + Text::new(
                        line.row_label.clone(),
                        (8, -16),
                        ("sans-serif", 12).into_font().color(&c),
                    ),
            ))?;
        }
    }
    ctx.configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK.mix(0.3))
        .label_font(("sans-serif", 12))
        .draw()?;
    Ok(())
}

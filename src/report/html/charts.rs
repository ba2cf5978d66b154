//! The report's SVG charts, drawn with plotters' SVG backend: a bar chart
//! per case across runs (95% CI error bars, every trial as a dot, disturbed
//! trials as crosses), scaling curves with the USL fit and its peak, and
//! the latency percentile spectrum of HTTP cases.
//!
//! Charts take plain data and return an `<svg>` element as text; plotters
//! escapes every label it writes. An axis becomes logarithmic when the
//! values on it span more than [`LOG_AXIS_SPAN`] (an ab-style sweep from
//! 1 to 500 connections, or a latency tail).

use std::error::Error;

use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;

use crate::report::format;
use crate::stats::UslFit;

/// Values spanning more than this factor get a logarithmic axis.
pub const LOG_AXIS_SPAN: f64 = 100.0;

/// The runs' colours, in run order (Tableau 10 without its red, which marks
/// disturbed trials).
const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(23, 190, 207),
];

/// Disturbed trials.
const DISTURBED: RGBColor = RGBColor(200, 0, 0);

/// The colour of run number `index` (0-based); also used for the HTML
/// legend.
pub fn color(index: usize) -> RGBColor {
    PALETTE[index % PALETTE.len()]
}

/// `#1F77B4`: the colour of run `index` for CSS (upper case, as plotters
/// writes it).
pub fn css_color(index: usize) -> String {
    let RGBColor(r, g, b) = color(index);
    format!("#{r:02X}{g:02X}{b:02X}")
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type DrawResult = Result<(), Box<dyn Error>>;

/// Draws into a new SVG of `size` pixels and returns its text.
fn svg(size: (u32, u32), draw: impl FnOnce(&Area) -> DrawResult) -> anyhow::Result<String> {
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, size).into_drawing_area();
        root.fill(&WHITE)
            .map_err(|e| anyhow::anyhow!("drawing a chart: {e}"))?;
        draw(&root).map_err(|e| anyhow::anyhow!("drawing a chart: {e}"))?;
        root.present()
            .map_err(|e| anyhow::anyhow!("drawing a chart: {e}"))?;
    }
    Ok(text)
}

/// Whether values from `low` to `high` (both positive) want a log axis.
fn wants_log(low: f64, high: f64) -> bool {
    low > 0.0 && high / low > LOG_AXIS_SPAN
}

/// The smallest and largest finite value.
fn bounds(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values
        .filter(|v| v.is_finite())
        .fold(None, |acc, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })
}

/// One trial's value and how it is marked.
#[derive(Debug, Clone)]
pub struct Trial {
    /// The value.
    pub value: f64,
    /// Flagged by the monitor (busy, steal, swap).
    pub disturbed: bool,
    /// Outside Tukey's fences.
    pub outlier: bool,
}

/// One bar: a run's mean of a case with its CI and trials.
#[derive(Debug, Clone)]
pub struct Bar {
    /// Under the bar (`run 2`).
    pub label: String,
    /// Index of the run, for its colour.
    pub run: usize,
    /// The mean.
    pub mean: f64,
    /// 95% CI, low end.
    pub ci_low: f64,
    /// 95% CI, high end.
    pub ci_high: f64,
    /// Every trial.
    pub trials: Vec<Trial>,
}

/// A case across runs.
#[derive(Debug, Clone)]
pub struct BarChart {
    /// The metric's unit, on the y axis.
    pub unit: String,
    /// The bars, in run order.
    pub bars: Vec<Bar>,
}

/// The bar chart as SVG, 360 × 240 pixels.
pub fn bar_chart(chart: &BarChart) -> anyhow::Result<String> {
    let values = chart.bars.iter().flat_map(|b| {
        [b.mean, b.ci_low, b.ci_high]
            .into_iter()
            .chain(b.trials.iter().map(|t| t.value))
    });
    let (low, high) = bounds(values).unwrap_or((0.0, 1.0));
    let high = if high > 0.0 { high } else { 1.0 };
    svg((360, 240), |area| {
        if wants_log(low, high) {
            let bottom = low / 2.0;
            draw_bars(area, (bottom..high * 2.0).log_scale(), bottom, chart)
        } else {
            let bottom = low.min(0.0);
            draw_bars(area, bottom..high * 1.1, bottom, chart)
        }
    })
}

fn draw_bars<Y>(area: &Area, y: Y, bottom: f64, chart: &BarChart) -> DrawResult
where
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let n = chart.bars.len();
    let labels: Vec<String> = chart.bars.iter().map(|b| b.label.clone()).collect();
    let mut ctx = ChartBuilder::on(area)
        .margin(8)
        .x_label_area_size(24)
        .y_label_area_size(56)
        .build_cartesian_2d(-0.5..(n as f64 - 0.5), y)?;
    let label_of = |x: &f64| {
        let i = x.round();
        if (x - i).abs() < 1e-6 && i >= 0.0 {
            labels.get(i as usize).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    };
    let y_label = |v: &f64| format::value(*v);
    ctx.configure_mesh()
        .disable_x_mesh()
        .x_labels(n.max(1) + 1)
        .x_label_formatter(&label_of)
        .y_label_formatter(&y_label)
        .y_desc(chart.unit.as_str())
        .label_style(("sans-serif", 13))
        .draw()?;
    for (i, bar) in chart.bars.iter().enumerate() {
        let x = i as f64;
        let fill = color(bar.run).mix(0.55).filled();
        ctx.draw_series(std::iter::once(Rectangle::new(
            [(x - 0.35, bottom), (x + 0.35, bar.mean)],
            fill,
        )))?;
        ctx.draw_series(std::iter::once(ErrorBar::new_vertical(
            x,
            bar.ci_low,
            bar.mean,
            bar.ci_high,
            BLACK.stroke_width(1),
            10,
        )))?;
        let k = bar.trials.len();
        for (j, trial) in bar.trials.iter().enumerate() {
            // Spread the dots across the bar so that equal values show.
            let dx = if k > 1 {
                (j as f64 / (k - 1) as f64 - 0.5) * 0.4
            } else {
                0.0
            };
            let at = (x + dx, trial.value);
            if trial.disturbed {
                ctx.draw_series(std::iter::once(Cross::new(
                    at,
                    4,
                    DISTURBED.stroke_width(2),
                )))?;
            } else if trial.outlier {
                ctx.draw_series(std::iter::once(Circle::new(at, 3, BLACK.stroke_width(1))))?;
            } else {
                ctx.draw_series(std::iter::once(Circle::new(at, 2, BLACK.filled())))?;
            }
        }
    }
    Ok(())
}

/// One run's sweep.
#[derive(Debug, Clone)]
pub struct ScalingLine {
    /// Legend text (`run 2`).
    pub label: String,
    /// Index of the run, for its colour.
    pub run: usize,
    /// (step, mean, CI low, CI high), smallest step first.
    pub steps: Vec<(f64, f64, f64, f64)>,
    /// The USL fit, drawn dashed with its peak.
    pub fit: Option<UslFit>,
}

/// Sweeps of one case across runs.
#[derive(Debug, Clone)]
pub struct ScalingChart {
    /// The parameter swept, on the x axis.
    pub param: String,
    /// The metric's unit, on the y axis.
    pub unit: String,
    /// One line per run that has the sweep.
    pub lines: Vec<ScalingLine>,
}

/// The scaling curves as SVG, 520 × 300 pixels.
pub fn scaling_chart(chart: &ScalingChart) -> anyhow::Result<String> {
    let (n_low, n_high) =
        bounds(chart.lines.iter().flat_map(|l| l.steps.iter().map(|s| s.0))).unwrap_or((1.0, 2.0));
    // Show a fitted peak up to four times past the last step.
    let peak_limit = n_high * 4.0;
    let n_end = chart
        .lines
        .iter()
        .filter_map(|l| l.fit.as_ref()?.peak.map(|p| p.n))
        .filter(|&n| n > n_high && n <= peak_limit)
        .fold(n_high, f64::max);
    let curves: Vec<Vec<(f64, f64)>> = chart
        .lines
        .iter()
        .map(|l| match &l.fit {
            Some(fit) => (0..=100)
                .map(|i| {
                    let n = n_low + (n_end - n_low) * f64::from(i) / 100.0;
                    (n, fit.predict(n))
                })
                .collect(),
            None => Vec::new(),
        })
        .collect();
    let values = chart
        .lines
        .iter()
        .flat_map(|l| l.steps.iter().flat_map(|s| [s.1, s.2, s.3]))
        .chain(curves.iter().flatten().map(|p| p.1));
    let (y_low, y_high) = bounds(values).unwrap_or((0.0, 1.0));
    let y_high = if y_high > 0.0 { y_high } else { 1.0 };
    let x_log = wants_log(n_low, n_end);
    let y_log = wants_log(y_low, y_high);
    let x_lin = (n_low - (n_end - n_low) * 0.05)..(n_end + (n_end - n_low) * 0.05);
    let x_logr = (n_low / 1.3..n_end * 1.3).log_scale();
    let y_lin = y_low.min(0.0)..y_high * 1.1;
    let y_logr = (y_low / 2.0..y_high * 2.0).log_scale();
    svg((520, 300), |area| match (x_log, y_log) {
        (false, false) => draw_scaling(area, x_lin, y_lin, chart, &curves, n_end),
        (true, false) => draw_scaling(area, x_logr, y_lin, chart, &curves, n_end),
        (false, true) => draw_scaling(area, x_lin, y_logr, chart, &curves, n_end),
        (true, true) => draw_scaling(area, x_logr, y_logr, chart, &curves, n_end),
    })
}

fn draw_scaling<X, Y>(
    area: &Area,
    x: X,
    y: Y,
    chart: &ScalingChart,
    curves: &[Vec<(f64, f64)>],
    n_end: f64,
) -> DrawResult
where
    X: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let mut ctx = ChartBuilder::on(area)
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(60)
        .build_cartesian_2d(x, y)?;
    let value = |v: &f64| format::value(*v);
    // Steps are whole numbers (threads, clients): label whole numbers only.
    let whole = chart
        .lines
        .iter()
        .flat_map(|l| &l.steps)
        .all(|s| s.0.fract() == 0.0);
    let step_label = |v: &f64| {
        if whole && (v - v.round()).abs() > 1e-9 {
            String::new()
        } else {
            format::value(*v)
        }
    };
    ctx.configure_mesh()
        .x_label_formatter(&step_label)
        .y_label_formatter(&value)
        .x_desc(chart.param.as_str())
        .y_desc(chart.unit.as_str())
        .label_style(("sans-serif", 13))
        .draw()?;
    for (line, curve) in chart.lines.iter().zip(curves) {
        let c = color(line.run);
        ctx.draw_series(LineSeries::new(
            line.steps.iter().map(|s| (s.0, s.1)),
            c.stroke_width(2),
        ))?
        .label(line.label.as_str())
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(2)));
        ctx.draw_series(
            line.steps
                .iter()
                .map(|s| ErrorBar::new_vertical(s.0, s.2, s.1, s.3, c.stroke_width(1), 8)),
        )?;
        ctx.draw_series(
            line.steps
                .iter()
                .map(|s| Circle::new((s.0, s.1), 3, c.filled())),
        )?;
        if let Some(fit) = &line.fit {
            ctx.draw_series(DashedLineSeries::new(
                curve.iter().copied(),
                6,
                4,
                c.stroke_width(1),
            ))?;
            if let Some(peak) = fit.peak.filter(|p| p.n <= n_end * 1.0001) {
                ctx.draw_series(std::iter::once(TriangleMarker::new(
                    (peak.n, peak.throughput),
                    7,
                    c.filled(),
                )))?;
                ctx.draw_series(std::iter::once(Text::new(
                    format!("peak {:.1}", peak.n),
                    (peak.n, peak.throughput),
                    ("sans-serif", 12).into_font().color(&c),
                )))?;
            }
        }
    }
    ctx.configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK.mix(0.3))
        .label_font(("sans-serif", 12))
        .draw()?;
    Ok(())
}

/// One run's latency percentiles: (nines, milliseconds) where nines =
/// -log10(1 - quantile): 1 is p90, 2 p99, 3 p99.9.
#[derive(Debug, Clone)]
pub struct LatencyLine {
    /// Legend text (`run 2`).
    pub label: String,
    /// Index of the run, for its colour.
    pub run: usize,
    /// The points, fewest nines first.
    pub points: Vec<(f64, f64)>,
}

/// Latency percentiles of one case across runs.
#[derive(Debug, Clone)]
pub struct LatencyChart {
    /// One line per run.
    pub lines: Vec<LatencyLine>,
}

/// The percentile spectrum as SVG, 520 × 300 pixels.
pub fn latency_chart(chart: &LatencyChart) -> anyhow::Result<String> {
    let (x_high, (low, high)) = (
        bounds(
            chart
                .lines
                .iter()
                .flat_map(|l| l.points.iter().map(|p| p.0)),
        )
        .map_or(5.0, |b| b.1),
        bounds(
            chart
                .lines
                .iter()
                .flat_map(|l| l.points.iter().map(|p| p.1)),
        )
        .unwrap_or((0.001, 1.0)),
    );
    let high = if high > 0.0 { high } else { 1.0 };
    svg((520, 300), |area| {
        if wants_log(low, high) {
            draw_latency(area, (low / 1.5..high * 1.5).log_scale(), x_high, chart)
        } else {
            draw_latency(area, 0.0..high * 1.1, x_high, chart)
        }
    })
}

fn draw_latency<Y>(area: &Area, y: Y, x_high: f64, chart: &LatencyChart) -> DrawResult
where
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let mut ctx = ChartBuilder::on(area)
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..x_high.max(1.0), y)?;
    let percentile = |nines: &f64| {
        let n = nines.round();
        if (nines - n).abs() > 1e-6 {
            return String::new();
        }
        match n as i32 {
            0 => "0%".into(),
            k => format!("{}%", 100.0 - 100.0 * 10f64.powi(-k)),
        }
    };
    let value = |v: &f64| format::value(*v);
    ctx.configure_mesh()
        .x_labels(x_high.max(1.0).ceil() as usize + 1)
        .x_label_formatter(&percentile)
        .y_label_formatter(&value)
        .x_desc("percentile")
        .y_desc("latency (ms)")
        .label_style(("sans-serif", 13))
        .draw()?;
    for line in &chart.lines {
        let c = color(line.run);
        ctx.draw_series(LineSeries::new(
            line.points.iter().copied(),
            c.stroke_width(2),
        ))?
        .label(line.label.as_str())
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(2)));
    }
    ctx.configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK.mix(0.3))
        .label_font(("sans-serif", 12))
        .draw()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bar(run: usize, mean: f64, disturbed: bool) -> Bar {
        Bar {
            label: format!("run {}", run + 1),
            run,
            mean,
            ci_low: mean * 0.95,
            ci_high: mean * 1.05,
            trials: vec![
                Trial {
                    value: mean * 0.97,
                    disturbed,
                    outlier: false,
                },
                Trial {
                    value: mean * 1.03,
                    disturbed: false,
                    outlier: true,
                },
            ],
        }
    }

    #[test]
    fn a_bar_chart_has_a_bar_an_error_bar_and_dots_per_run() {
        let svg = bar_chart(&BarChart {
            unit: "events/s".into(),
            bars: vec![bar(0, 800.0, false), bar(1, 1600.0, true)],
        })
        .unwrap();
        assert!(
            svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"),
            "{svg}"
        );
        // Two filled bars in the runs' colours.
        assert!(
            svg.contains(&css_color(0)) && svg.contains(&css_color(1)),
            "{svg}"
        );
        assert!(svg.contains("run 1") && svg.contains("run 2") && svg.contains("events/s"));
        // The disturbed trial is a cross in its own colour; the other three
        // trials are dots, beside the two error bars' mean marks.
        assert!(svg.contains("stroke=\"#C80000\""), "{svg}");
        assert_eq!(svg.matches("<circle").count(), 2 + 3, "{svg}");
    }

    #[test]
    fn values_spanning_more_than_100x_get_a_log_axis() {
        assert!(wants_log(1.0, 101.0));
        assert!(!wants_log(1.0, 100.0));
        assert!(!wants_log(0.0, 1e6));
        let linear = bar_chart(&BarChart {
            unit: "x".into(),
            bars: vec![bar(0, 50.0, false), bar(1, 100.0, false)],
        })
        .unwrap();
        let log = bar_chart(&BarChart {
            unit: "x".into(),
            bars: vec![bar(0, 5.0, false), bar(1, 5000.0, false)],
        })
        .unwrap();
        // A log axis labels powers of ten across the span; a linear one
        // starts at 0.
        assert!(
            log.contains(">\n10\n<") && log.contains(">\n1000\n<"),
            "{log}"
        );
        assert!(linear.contains(">\n0\n<"), "{linear}");
    }

    #[test]
    fn labels_are_escaped() {
        let svg = bar_chart(&BarChart {
            unit: "<script>alert(1)</script>".into(),
            bars: vec![bar(0, 1.0, false)],
        })
        .unwrap();
        assert!(!svg.contains("<script"), "{svg}");
        assert!(svg.contains("&lt;script&gt;"), "{svg}");
    }
}

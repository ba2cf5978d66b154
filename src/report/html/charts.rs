//! The report's SVG charts, drawn with plotters' SVG backend: a bar chart
//! per case across runs (95% CI error bars, every trial as a dot, disturbed
//! trials as crosses), scaling curves with the USL fit and its peak, and
//! the latency percentile spectrum of HTTP cases.
//!
//! Charts take plain data and return an `<svg>` element as markup
//! ([`plotters_svg`], the one place the report takes text as markup);
//! plotters escapes every label it writes. An axis becomes logarithmic when the
//! values on it span more than [`LOG_AXIS_SPAN`] (an ab-style sweep from
//! 1 to 500 connections, or a latency tail). A chart with a value outside
//! what `report::magnitude` allows is not drawn: a note stands in its
//! place, because plotters cannot lay out such an axis (its logarithmic
//! axis loops forever when the range reaches infinity or 0).
//!
//! The left margin is as wide as the widest tick label needs, so that a
//! six-digit rate does not run into the axis title.

use std::error::Error;

use maud::{Markup, PreEscaped, html};
use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, Ranged, ValueFormatter};
use plotters::prelude::*;

use crate::analysis::UslFit;
use crate::report::{format, magnitude};
use crate::results::Unit;

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

pub(super) type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
pub(super) type DrawResult = Result<(), Box<dyn Error>>;

/// Draws into a new SVG of `size` pixels and returns it as markup.
pub(super) fn svg(
    size: (u32, u32),
    draw: impl FnOnce(&Area) -> DrawResult,
) -> anyhow::Result<Markup> {
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, size).into_drawing_area();
        root.fill(&WHITE)
            .map_err(|e| anyhow::anyhow!("drawing a chart: {e}"))?;
        draw(&root).map_err(|e| anyhow::anyhow!("drawing a chart: {e}"))?;
        root.present()
            .map_err(|e| anyhow::anyhow!("drawing a chart: {e}"))?;
    }
    Ok(plotters_svg(text))
}

/// The SVG text plotters wrote, as markup to put in the page unescaped.
/// This is the report's one exception to escaping by construction, and
/// it is safe because plotters writes every element and attribute itself
/// from numbers and colours, and escapes each label it is given (`<`,
/// `>`, `&`, quotes; `labels_are_escaped` below holds it to that): the
/// text is markup already, which escaping again would show as tags.
/// Control characters in labels are left to the page's final
/// `visible::escape_lines`.
fn plotters_svg(text: String) -> Markup {
    PreEscaped(text)
}

/// Values spanning more than this factor stay on a linear axis: more
/// decades than a chart can label, and beyond `f64`'s range plotters'
/// logarithmic tick placement loops forever.
const MAX_LOG_AXIS_SPAN: f64 = 1e100;

/// Whether values from `low` to `high` (both positive) want a log axis.
pub(super) fn wants_log(low: f64, high: f64) -> bool {
    low > 0.0 && high / low > LOG_AXIS_SPAN && high / low <= MAX_LOG_AXIS_SPAN
}

/// The note that stands in for a chart whose values include `value`,
/// which no chart can show (see [`magnitude::is_plausible`]); `None` when
/// every value can be drawn.
pub fn not_drawable(values: impl IntoIterator<Item = f64>) -> Option<Markup> {
    let value = values.into_iter().find(|&v| !magnitude::is_plausible(v))?;
    Some(html! {
        p class="note" {
            "chart not drawn: it would show " (format!("{value:e}")) ", and a chart shows "
            (magnitude::ALLOWED)
        }
    })
}

/// A tick label: [`format::value`] where that stays short, else three
/// significant digits with an exponent (`1.25e9`), so that no label is
/// wider than its chart.
pub(super) fn tick_label(v: f64) -> String {
    let magnitude = v.abs();
    if magnitude == 0.0 || (1e-3..1e7).contains(&magnitude) {
        format::value(v)
    } else {
        let text = format!("{v:.2e}");
        // `1.50e9` → `1.5e9`, `1.00e9` → `1e9`.
        match text.split_once('e') {
            Some((mantissa, exponent)) if mantissa.contains('.') => format!(
                "{}e{exponent}",
                mantissa.trim_end_matches('0').trim_end_matches('.')
            ),
            _ => text,
        }
    }
}

/// How many tick labels the y axis gets: plotters' default for a mesh.
pub(super) const Y_LABELS: usize = 11;

/// The width of the y axis' label area: room for the rotated axis title,
/// the widest of the axis' tick labels and the tick marks; at least
/// `minimum`. A character is taken as 7 px: plotters writes the labels'
/// "13" as a 10.5 px font, whose digits are 0.64 em (6.7 px) in DejaVu
/// Sans, the widest common fallback.
pub(super) fn y_label_area<Y>(y: &Y, minimum: u32) -> u32
where
    Y: AsRangedCoord<Value = f64> + Clone,
{
    const TITLE: u32 = 22;
    const TICKS: u32 = 12;
    const CHAR: u32 = 7;
    let coord = Y::CoordDescType::from(y.clone());
    let widest = coord
        .key_points(Y_LABELS)
        .into_iter()
        .map(|v| tick_label(v).chars().count() as u32)
        .max()
        .unwrap_or(1);
    (TITLE + TICKS + widest * CHAR).max(minimum)
}

/// The smallest and largest finite value.
pub(super) fn bounds(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
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
    pub unit: Unit,
    /// The bars, in run order.
    pub bars: Vec<Bar>,
}

/// The bar chart as SVG, 360 × 240 pixels (or the note that stands in
/// for it, see [`not_drawable`]).
pub fn bar_chart(chart: &BarChart) -> anyhow::Result<Markup> {
    let values = || {
        chart.bars.iter().flat_map(|b| {
            [b.mean, b.ci_low, b.ci_high]
                .into_iter()
                .chain(b.trials.iter().map(|t| t.value))
        })
    };
    if let Some(note) = not_drawable(values()) {
        return Ok(note);
    }
    let (low, high) = bounds(values()).unwrap_or((0.0, 1.0));
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
    Y: AsRangedCoord<Value = f64> + Clone,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let n = chart.bars.len();
    let labels: Vec<String> = chart.bars.iter().map(|b| b.label.clone()).collect();
    let mut ctx = ChartBuilder::on(area)
        .margin(8)
        .x_label_area_size(24)
        .y_label_area_size(y_label_area(&y, 56))
        .build_cartesian_2d(-0.5..(n as f64 - 0.5), y)?;
    let label_of = |x: &f64| {
        let i = x.round();
        if (x - i).abs() < 1e-6 && i >= 0.0 {
            labels.get(i as usize).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    };
    let y_label = |v: &f64| tick_label(*v);
    ctx.configure_mesh()
        .disable_x_mesh()
        .x_labels(n.max(1) + 1)
        .x_label_formatter(&label_of)
        .y_labels(Y_LABELS)
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
    /// Steps whose case failed: a cross on the x axis each, so that a
    /// sweep that stops early does not look complete.
    pub failed: Vec<f64>,
    /// The USL fit, drawn dashed with its peak.
    pub fit: Option<UslFit>,
}

/// Sweeps of one case across runs.
#[derive(Debug, Clone)]
pub struct ScalingChart {
    /// The parameter swept, on the x axis.
    pub param: String,
    /// The metric's unit, on the y axis.
    pub unit: Unit,
    /// One line per run that has the sweep.
    pub lines: Vec<ScalingLine>,
}

/// The scaling curves as SVG, 520 × 300 pixels (or the note that stands
/// in for them, see [`not_drawable`]).
pub fn scaling_chart(chart: &ScalingChart) -> anyhow::Result<Markup> {
    let fits = chart.lines.iter().filter_map(|l| l.fit.as_ref());
    if let Some(note) = not_drawable(
        chart
            .lines
            .iter()
            .flat_map(|l| l.steps.iter().flat_map(|s| [s.0, s.1, s.2, s.3]))
            .chain(chart.lines.iter().flat_map(|l| l.failed.iter().copied()))
            .chain(fits.flat_map(|f| f.peak.iter().flat_map(|p| [p.n, p.throughput]))),
    ) {
        return Ok(note);
    }
    let (n_low, n_high) = bounds(
        chart
            .lines
            .iter()
            .flat_map(|l| l.steps.iter().map(|s| s.0).chain(l.failed.iter().copied())),
    )
    .unwrap_or((1.0, 2.0));
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
    if let Some(note) = not_drawable(curves.iter().flatten().map(|p| p.1)) {
        return Ok(note);
    }
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
    // Failed steps sit on the bottom of the plot.
    let floor = if y_log { y_low / 2.0 } else { y_low.min(0.0) };
    let scaling = Scaling {
        chart,
        curves: &curves,
        n_end,
        floor,
    };
    svg((520, 300), |area| match (x_log, y_log) {
        (false, false) => draw_scaling(area, x_lin, y_lin, &scaling),
        (true, false) => draw_scaling(area, x_logr, y_lin, &scaling),
        (false, true) => draw_scaling(area, x_lin, y_logr, &scaling),
        (true, true) => draw_scaling(area, x_logr, y_logr, &scaling),
    })
}

/// What `draw_scaling` draws besides its axes.
struct Scaling<'a> {
    chart: &'a ScalingChart,
    /// Each line's USL curve (empty without a fit).
    curves: &'a [Vec<(f64, f64)>],
    /// The last step shown.
    n_end: f64,
    /// The bottom of the y axis, where failed steps are marked.
    floor: f64,
}

fn draw_scaling<X, Y>(area: &Area, x: X, y: Y, scaling: &Scaling) -> DrawResult
where
    X: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y: AsRangedCoord<Value = f64> + Clone,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let Scaling {
        chart,
        curves,
        n_end,
        floor,
    } = *scaling;
    let mut ctx = ChartBuilder::on(area)
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(y_label_area(&y, 60))
        .build_cartesian_2d(x, y)?;
    let value = |v: &f64| tick_label(*v);
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
            tick_label(*v)
        }
    };
    ctx.configure_mesh()
        .x_label_formatter(&step_label)
        .y_labels(Y_LABELS)
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
        for &n in &line.failed {
            // A cross on the axis, its word above it.
            ctx.draw_series(std::iter::once(
                EmptyElement::at((n, floor))
                    + Cross::new((0, 0), 6, DISTURBED.stroke_width(2))
                    + Text::new(
                        "failed",
                        (-14, -24),
                        ("sans-serif", 12).into_font().color(&DISTURBED),
                    ),
            ))?;
        }
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
    // Failed steps are marked along the bottom: the legend goes up then.
    let failures = chart.lines.iter().any(|l| !l.failed.is_empty());
    ctx.configure_series_labels()
        .position(if failures {
            SeriesLabelPosition::UpperLeft
        } else {
            SeriesLabelPosition::LowerRight
        })
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

/// The percentile spectrum as SVG, 520 × 300 pixels (or the note that
/// stands in for it, see [`not_drawable`]).
pub fn latency_chart(chart: &LatencyChart) -> anyhow::Result<Markup> {
    if let Some(note) = not_drawable(
        chart
            .lines
            .iter()
            .flat_map(|l| l.points.iter().flat_map(|p| [p.0, p.1])),
    ) {
        return Ok(note);
    }
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
    Y: AsRangedCoord<Value = f64> + Clone,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let mut ctx = ChartBuilder::on(area)
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(y_label_area(&y, 60))
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
    let value = |v: &f64| tick_label(*v);
    ctx.configure_mesh()
        .x_labels(x_high.max(1.0).ceil() as usize + 1)
        .x_label_formatter(&percentile)
        .y_labels(Y_LABELS)
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
        .unwrap()
        .into_string();
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
        assert!(wants_log(1e-50, 1e50) && !wants_log(1e-51, 1e50));
        let linear = bar_chart(&BarChart {
            unit: "x".into(),
            bars: vec![bar(0, 50.0, false), bar(1, 100.0, false)],
        })
        .unwrap()
        .into_string();
        let log = bar_chart(&BarChart {
            unit: "x".into(),
            bars: vec![bar(0, 5.0, false), bar(1, 5000.0, false)],
        })
        .unwrap()
        .into_string();
        // A log axis labels powers of ten across the span; a linear one
        // starts at 0.
        assert!(
            log.contains(">\n10\n<") && log.contains(">\n1000\n<"),
            "{log}"
        );
        assert!(linear.contains(">\n0\n<"), "{linear}");
    }

    /// Runs `draw` on a thread and waits a minute at most, so that a chart
    /// that loops forever fails its test instead of hanging the suite.
    fn within_a_minute(draw: impl FnOnce() -> String + Send + 'static) -> String {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(draw());
        });
        rx.recv_timeout(std::time::Duration::from_secs(60))
            .expect("the chart was drawn within a minute")
    }

    fn two_bars(a: f64, b: f64) -> BarChart {
        BarChart {
            unit: "x".into(),
            bars: vec![bar(0, a, false), bar(1, b, false)],
        }
    }

    #[test]
    fn values_no_axis_can_hold_give_a_note_instead_of_a_hang() {
        for value in [1e308, f64::MAX, 1e-307, 5e-324, f64::INFINITY, f64::NAN] {
            let shown =
                within_a_minute(move || bar_chart(&two_bars(value, 1.0)).unwrap().into_string());
            assert!(
                shown.starts_with("<p class=\"note\">chart not drawn: it would show ")
                    && shown.contains("between 1e-300 and 1e300"),
                "{value}: {shown}"
            );
            let scaling = within_a_minute(move || {
                scaling_chart(&ScalingChart {
                    param: "threads".into(),
                    unit: "x".into(),
                    lines: vec![ScalingLine {
                        label: "run 1".into(),
                        run: 0,
                        steps: vec![(1.0, 1.0, 1.0, 1.0), (2.0, value, value, value)],
                        failed: Vec::new(),
                        fit: None,
                    }],
                })
                .unwrap()
                .into_string()
            });
            assert!(
                scaling.starts_with("<p class=\"note\">"),
                "{value}: {scaling}"
            );
            let latency = within_a_minute(move || {
                latency_chart(&LatencyChart {
                    lines: vec![LatencyLine {
                        label: "run 1".into(),
                        run: 0,
                        points: vec![(0.0, 1.0), (1.0, value)],
                    }],
                })
                .unwrap()
                .into_string()
            });
            assert!(
                latency.starts_with("<p class=\"note\">"),
                "{value}: {latency}"
            );
        }
        // Up to the bounds, on linear and logarithmic axes, charts are
        // drawn, with tick labels that stay short.
        for (a, b) in [
            (2e-300, 1.0),
            (1.0, 9e299),
            (2e-300, 9e299),
            (-9e299, 9e299),
        ] {
            let svg = within_a_minute(move || bar_chart(&two_bars(a, b)).unwrap().into_string());
            assert!(svg.starts_with("<svg"), "{a} {b}: {svg}");
            assert!(
                texts(&svg).iter().all(|t| t.text.chars().count() < 12),
                "{a} {b}: {svg}"
            );
        }
    }

    #[test]
    fn long_numbers_tick_with_an_exponent() {
        assert_eq!(tick_label(900_000.0), "900000");
        assert_eq!(tick_label(0.0025), "0.0025");
        assert_eq!(tick_label(12_500_000.0), "1.25e7");
        assert_eq!(tick_label(1e300), "1e300");
        assert_eq!(tick_label(-2e-5), "-2e-5");
        assert_eq!(tick_label(0.0), "0");
    }

    /// A `<text>` element of plotters' SVG: where it is anchored, how, and
    /// what it says.
    struct SvgText {
        x: f64,
        anchor: String,
        rotated: bool,
        font_size: f64,
        text: String,
    }

    fn texts(svg: &str) -> Vec<SvgText> {
        svg.split("<text ")
            .skip(1)
            .map(|element| {
                let (attributes, rest) = element.split_once('>').unwrap();
                let attribute = |name: &str| {
                    attributes
                        .split(&format!("{name}=\""))
                        .nth(1)
                        .and_then(|v| v.split('"').next())
                        .unwrap_or_default()
                        .to_string()
                };
                SvgText {
                    x: attribute("x").parse().unwrap(),
                    anchor: attribute("text-anchor"),
                    rotated: attributes.contains("rotate("),
                    font_size: attribute("font-size").parse().unwrap(),
                    text: rest.split("</text>").next().unwrap().trim().to_string(),
                }
            })
            .collect()
    }

    /// Asserts that no y tick label of `svg` reaches into the rotated axis
    /// title left of it, taking a digit as 0.64 em (DejaVu Sans).
    fn assert_y_labels_clear_the_title(svg: &str) {
        let texts = texts(svg);
        let title = texts.iter().find(|t| t.rotated).expect("a y axis title");
        let title_right = title.x + title.font_size;
        let labels: Vec<&SvgText> = texts
            .iter()
            .filter(|t| t.anchor == "end" && !t.text.is_empty())
            .collect();
        assert!(labels.len() >= 3, "{svg}");
        for label in labels {
            let left = label.x - label.text.chars().count() as f64 * 0.64 * label.font_size;
            assert!(
                left > title_right,
                "tick label {} starts at {left:.0} px, in the axis title (to {title_right:.0} px)",
                label.text
            );
        }
    }

    #[test]
    fn the_y_axis_title_clears_six_and_seven_digit_tick_labels() {
        let rates = BarChart {
            unit: "req/s".into(),
            bars: vec![bar(0, 450_000.0, false), bar(1, 820_000.0, false)],
        };
        assert_y_labels_clear_the_title(&bar_chart(&rates).unwrap().into_string());
        let scaling = ScalingChart {
            param: "concurrency".into(),
            unit: "req/s".into(),
            lines: vec![ScalingLine {
                label: "run 1".into(),
                run: 0,
                steps: vec![
                    (1.0, 150_000.0, 140_000.0, 160_000.0),
                    (8.0, 900_000.0, 880_000.0, 920_000.0),
                ],
                failed: Vec::new(),
                fit: None,
            }],
        };
        assert_y_labels_clear_the_title(&scaling_chart(&scaling).unwrap().into_string());
    }

    #[test]
    fn a_failed_step_is_marked_on_the_scaling_axis() {
        let chart = |failed: Vec<f64>| {
            scaling_chart(&ScalingChart {
                param: "threads".into(),
                unit: "events/s".into(),
                lines: vec![ScalingLine {
                    label: "run 1".into(),
                    run: 0,
                    steps: vec![(1.0, 800.0, 790.0, 810.0), (2.0, 1590.0, 1580.0, 1600.0)],
                    failed,
                    fit: None,
                }],
            })
            .unwrap()
            .into_string()
        };
        let svg = chart(vec![4.0]);
        let failed = texts(&svg)
            .into_iter()
            .filter(|t| t.text == "failed")
            .count();
        assert_eq!(failed, 1, "{svg}");
        // The x axis reaches the failed step.
        assert!(texts(&svg).iter().any(|t| t.text == "4"), "{svg}");
        assert!(!chart(Vec::new()).contains(">\nfailed\n<"));
    }

    #[test]
    fn labels_are_escaped() {
        let svg = bar_chart(&BarChart {
            unit: "<script>alert(1)</script>".into(),
            bars: vec![bar(0, 1.0, false)],
        })
        .unwrap()
        .into_string();
        assert!(!svg.contains("<script"), "{svg}");
        assert!(svg.contains("&lt;script&gt;"), "{svg}");
    }
}

//! The report's history section (`sledge report --history`): per case, the
//! host's runs of it over time as a line of points with their 95% CIs,
//! each segment's median between change points, and a dashed line at each
//! change point with what changed there.
//!
//! The SVG is built here from numbers and the store's text (escaped, as
//! everywhere in the page), so the section stands apart from the rest of
//! the page's charts, which plotters draws.

use maud::{Markup, html};

use crate::analysis::change_points::{CaseHistory, History};
use crate::results::case_label;

/// The chart's size in SVG units.
const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 220.0;

/// Margins: left for the value labels, bottom for the run labels.
const LEFT: f64 = 64.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 30.0;

/// The history section for `histories` (one per host and workload);
/// empty when there is none.
pub fn section(histories: &[History]) -> Markup {
    if histories.is_empty() {
        return html! {};
    }
    html! {
        section id="history" {
            "\n" h2 { "History" } "\n"
            p class="note" {
                "Every stored run of each case on its host, oldest first. Change points \
                 (dashed) by E-Divisive means with Welch's t-test between their sides at p < "
                (crate::analysis::MAX_P_VALUE) ", at least " (crate::analysis::MIN_SIDE)
                " runs on each side; the horizontal lines are the medians between them."
            }
            "\n"
            @for history in histories {
                @for case in &history.cases {
                    (figure(&history.host, case))
                }
            }
        }
        "\n"
    }
}

/// One case's figure: its title, its chart and its change points.
fn figure(host: &str, case: &CaseHistory) -> Markup {
    html! {
        figure class="wide" {
            figcaption {
                (case_label(&case.workload, &case.params)) " on " (host) " "
                span class="metric" { (case.metric) " (" (case.unit.as_str()) ")" }
            }
            "\n" (chart(case)) "\n"
            @if !case.change_points.is_empty() {
                ul {
                    "\n"
                    @for change in &case.change_points {
                        @let facts: Vec<String> = change
                            .differences
                            .iter()
                            .map(|d| format!("{}: {} → {}", d.what, d.before, d.after))
                            .collect();
                        li {
                            "run " (change.run) ": "
                            (crate::report::format::change(change.ratio, change.verdict))
                            (format!(
                                " (median ×{}, p = {:.1e})",
                                crate::report::format::ratio(change.ratio),
                                change.p_value
                            ))
                            @if facts.is_empty() {
                                "; nothing in the inventory differs from the run before"
                            } @else {
                                "; " (facts.join("; "))
                            }
                        }
                        "\n"
                    }
                }
                "\n"
            }
        }
        "\n"
    }
}

/// A coordinate as the chart writes it: one decimal.
fn at(v: f64) -> String {
    format!("{v:.1}")
}

/// The SVG chart of one case's series.
pub fn chart(case: &CaseHistory) -> Markup {
    let runs = &case.runs;
    let finite = |v: f64| v.is_finite().then_some(v);
    let low = runs
        .iter()
        .filter_map(|p| finite(p.ci_low).or(finite(p.mean)))
        .fold(f64::INFINITY, f64::min);
    let high = runs
        .iter()
        .filter_map(|p| finite(p.ci_high).or(finite(p.mean)))
        .fold(f64::NEG_INFINITY, f64::max);
    let empty = runs.is_empty() || !low.is_finite() || !high.is_finite();
    // A flat series still gets an axis: 1% either side.
    let (low, high) = if high > low {
        let pad = (high - low) * 0.05;
        (low - pad, high + pad)
    } else {
        (
            low - low.abs() * 0.01 - 1e-9,
            high + high.abs() * 0.01 + 1e-9,
        )
    };
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let x = |i: usize| {
        if runs.len() == 1 {
            LEFT + plot_w / 2.0
        } else {
            LEFT + plot_w * i as f64 / (runs.len() - 1) as f64
        }
    };
    let y = |v: f64| TOP + plot_h * (high - v) / (high - low);
    let fmt = crate::report::format::value;
    // The segments' medians between change points: (first, last, median).
    let mut bounds: Vec<usize> = vec![0];
    bounds.extend(case.change_points.iter().map(|c| c.index));
    bounds.push(runs.len());
    let medians: Vec<(usize, usize, f64)> = if empty {
        Vec::new()
    } else {
        bounds
            .windows(2)
            .map(|pair| {
                let mut values: Vec<f64> = runs[pair[0]..pair[1]].iter().map(|p| p.mean).collect();
                values.sort_unstable_by(f64::total_cmp);
                let mid = values.len() / 2;
                let median = if values.len() % 2 == 1 {
                    values[mid]
                } else {
                    (values[mid - 1] + values[mid]) / 2.0
                };
                (pair[0], pair[1] - 1, median)
            })
            .collect()
    };
    let points: Vec<String> = runs
        .iter()
        .enumerate()
        .map(|(i, p)| format!("{:.1},{:.1}", x(i), y(p.mean)))
        .collect();
    html! {
        svg xmlns="http://www.w3.org/2000/svg" viewBox=(format!("0 0 {WIDTH} {HEIGHT}"))
            width=(WIDTH) height=(HEIGHT) role="img" {
            @if !empty {
                rect x=(LEFT) y=(TOP) width=(plot_w) height=(plot_h) fill="none" stroke="#ccc" {}
                @for v in [high, (high + low) / 2.0, low] {
                    text x=(at(LEFT - 4.0)) y=(at(y(v) + 4.0)) font-size="11" text-anchor="end" {
                        (fmt(v))
                    }
                }
                @for (i, point) in [(0, runs.first()), (runs.len() - 1, runs.last())] {
                    @if let Some(point) = point {
                        text x=(at(x(i))) y=(at(HEIGHT - 10.0)) font-size="11"
                            text-anchor=(if i == 0 { "start" } else { "end" }) {
                            "run " (point.run)
                        }
                    }
                }
                @for &(first, last, median) in &medians {
                    line x1=(at(x(first))) y1=(at(y(median))) x2=(at(x(last))) y2=(at(y(median)))
                        stroke="#888" stroke-width="2" {}
                }
                @for change in &case.change_points {
                    @let between = at((x(change.index - 1) + x(change.index)) / 2.0);
                    line x1=(between) y1=(TOP) x2=(between) y2=(at(TOP + plot_h))
                        stroke="#c00" stroke-dasharray="4 3" {}
                }
                polyline points=(points.join(" ")) fill="none" stroke="#1f77b4" stroke-width="1" {}
                @for (i, p) in runs.iter().enumerate() {
                    @if p.ci_low.is_finite() && p.ci_high.is_finite() {
                        line x1=(at(x(i))) y1=(at(y(p.ci_high))) x2=(at(x(i))) y2=(at(y(p.ci_low)))
                            stroke="#1f77b4" stroke-opacity="0.5" {}
                    }
                    circle cx=(at(x(i))) cy=(at(y(p.mean))) r="2.5"
                        fill=(if p.disturbed.is_empty() { "#1f77b4" } else { "#c80000" }) {
                        title { "run " (p.run) " · " (p.started) " · " (fmt(p.mean)) }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::Direction;
    use crate::analysis::change_points::{FactChange, HistoryChange, HistoryPoint};

    fn point(run: i64, mean: f64) -> HistoryPoint {
        HistoryPoint {
            run,
            started: format!("2026-11-{run:02}T00:00:00Z"),
            mean,
            ci_low: mean - 1.0,
            ci_high: mean + 1.0,
            workload_version: 1,
            disturbed: Vec::new(),
            imported: false,
        }
    }

    fn case() -> CaseHistory {
        CaseHistory {
            workload: "cpu.primes".into(),
            params: [("threads".to_string(), "<1>".to_string())].into(),
            metric: "events_per_sec".into(),
            unit: "events/s".into(),
            direction: Direction::Higher,
            runs: vec![
                point(1, 100.0),
                point(2, 100.0),
                point(3, 90.0),
                point(4, 90.0),
            ],
            change_points: vec![HistoryChange {
                run: 3,
                run_before: 2,
                started: "2026-11-03T00:00:00Z".into(),
                index: 2,
                runs_before: 2,
                runs_after: 2,
                median_before: 100.0,
                median_after: 90.0,
                ratio: 0.9,
                verdict: "slower",
                p_value: 1e-5,
                differences: vec![FactChange {
                    what: "kernel".into(),
                    before: "6.1".into(),
                    after: "6.2<x>".into(),
                }],
            }],
        }
    }

    #[test]
    fn the_chart_has_a_point_per_run_a_median_per_segment_and_the_change() {
        let svg = chart(&case()).into_string();
        assert_eq!(svg.matches("<circle").count(), 4);
        // Two medians and one dashed change line.
        assert_eq!(svg.matches("stroke=\"#888\"").count(), 2);
        assert_eq!(svg.matches("stroke-dasharray").count(), 1);
        // Halfway between runs 2 and 3 (x of index 1 and 2).
        let plot_w = WIDTH - LEFT - RIGHT;
        let at = LEFT + plot_w * 1.5 / 3.0;
        assert!(svg.contains(&format!("x1=\"{at:.1}\"")), "{svg}");
    }

    #[test]
    fn text_from_the_store_is_escaped() {
        let history = History {
            host: "h<b>".into(),
            workload: "cpu.primes".into(),
            max_p_value: 0.001,
            min_runs_each_side: 3,
            cases: vec![case()],
        };
        let html = section(&[history]).into_string();
        assert!(html.contains("threads=&lt;1&gt; on h&lt;b&gt;"), "{html}");
        assert!(html.contains("kernel: 6.1 → 6.2&lt;x&gt;"), "{html}");
        assert!(!html.contains("<b>") && !html.contains("<x>"));
        assert_eq!(section(&[]).into_string(), "");
    }
}

//! `sledge history` as text: per case of a host's history
//! ([`crate::analysis::change_points`]) a sparkline, the change points
//! with what changed at each, and the runs as a table.

use std::fmt::Write as _;

use crate::analysis::change_points::{CaseHistory, History};
use crate::analysis::{Direction, MIN_SIDE};
use crate::visible;

/// The eight heights of a terminal sparkline.
const SPARKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// The mark a sparkline puts before the first run after a change point.
const CHANGE_MARK: char = '│';

/// `values` as a sparkline from their minimum to their maximum, with
/// [`CHANGE_MARK`] before each index in `changes`.
pub fn sparkline(values: &[f64], changes: &[usize]) -> String {
    let low = values.iter().copied().fold(f64::INFINITY, f64::min);
    let high = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut out = String::new();
    for (i, v) in values.iter().enumerate() {
        if changes.contains(&i) {
            out.push(CHANGE_MARK);
        }
        let level = if high > low {
            (((v - low) / (high - low)) * (SPARKS.len() - 1) as f64).round() as usize
        } else {
            SPARKS.len() / 2
        };
        out.push(SPARKS[level.min(SPARKS.len() - 1)]);
    }
    out
}

/// The history as text for a terminal: per case a sparkline, the change
/// points with what changed, and the runs as a table. Text from the store
/// is escaped ([`visible`]).
pub fn render(history: &History) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "history of {} on host {} · change points: E-Divisive means, Welch's t-test p < {}, at least {} runs each side",
        history.workload, history.host, history.max_p_value, history.min_runs_each_side
    );
    for case in &history.cases {
        out.push('\n');
        render_case(&mut out, case);
    }
    visible::escape_lines(&out).into_owned()
}

/// One case of [`render`].
fn render_case(out: &mut String, case: &CaseHistory) {
    let better = match case.direction {
        Direction::Higher => "higher",
        Direction::Lower => "lower",
    };
    let _ = writeln!(
        out,
        "{} · {} ({}, {better} is better)",
        crate::results::case_label(&case.workload, &case.params),
        case.metric,
        case.unit
    );
    let values: Vec<f64> = case.runs.iter().map(|p| p.mean).collect();
    let indices: Vec<usize> = case.change_points.iter().map(|c| c.index).collect();
    let _ = writeln!(
        out,
        "  {}  {}, oldest first{}",
        sparkline(&values, &indices),
        super::format::count(values.len(), "run", "runs"),
        if indices.is_empty() {
            String::new()
        } else {
            format!("; {CHANGE_MARK} a change point")
        }
    );
    if case.change_points.is_empty() {
        let _ = writeln!(
            out,
            "  no change point{}",
            if values.len() < 2 * MIN_SIDE {
                format!(" (one needs at least {} runs)", 2 * MIN_SIDE)
            } else {
                String::new()
            }
        );
    }
    for change in &case.change_points {
        let _ = writeln!(
            out,
            "  change at run {} ({}): {}, median {} → {} (×{}; p = {:.1e}; {} runs before, {} after)",
            change.run,
            change.started,
            super::format::change(change.ratio, change.verdict),
            super::format::value(change.median_before),
            super::format::value(change.median_after),
            super::format::ratio(change.ratio),
            change.p_value,
            change.runs_before,
            change.runs_after
        );
        if change.differences.is_empty() {
            let _ = writeln!(
                out,
                "    nothing in the inventory differs between run {} and run {}",
                change.run_before, change.run
            );
        } else {
            let _ = writeln!(out, "    what differs from run {}:", change.run_before);
            for d in &change.differences {
                let _ = writeln!(out, "      {}: {} → {}", d.what, d.before, d.after);
            }
        }
    }
    let _ = writeln!(
        out,
        "  {:>5}  {:<20}  {:>18}  flags",
        "run", "started", case.metric
    );
    for (i, point) in case.runs.iter().enumerate() {
        if indices.contains(&i) {
            let _ = writeln!(out, "  {}", "─".repeat(50));
        }
        let mut flags = point.disturbed.clone();
        if point.imported {
            flags.push("imported".to_string());
        }
        let row = format!(
            "  {:>5}  {:<20}  {:>18}  {}",
            point.run,
            point.started,
            super::format::with_uncertainty(point.mean, (point.ci_high - point.ci_low) / 2.0),
            flags.join(", ")
        );
        let _ = writeln!(out, "{}", row.trim_end());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sparkline_spans_the_values_and_marks_the_change() {
        assert_eq!(sparkline(&[1.0, 8.0, 4.5], &[]), "▁█▅");
        assert_eq!(sparkline(&[5.0, 5.0], &[1]), "▅│▅");
    }
}

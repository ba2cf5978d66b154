//! The scorecard: the default view of `sledge run` and `sledge show`, a
//! run on one screen (at most [`MAX_LINES`] lines of at most [`WIDTH`]
//! columns, whatever the profile; only the line of an error is kept
//! whole, however long).
//!
//! One row per workload, a family's workloads together: the headline
//! (the first metric) of the workload's headline case with its 95% CI,
//! the one-CPU to all-CPUs scaling where the run measured both steps of a
//! sweep that counts CPUs, how many cases the workload ran, and how many
//! of them are flagged (disturbed trials, an interval wider than the
//! precision target, a failure). A workload with more cases gets a
//! second row: how many more, over which parameters, and the range of
//! their headlines. The run's warnings and errors follow, each folded
//! into one line however many cases share it. The per-case table is
//! `--full` (`summary.rs`), every metric `--metrics all` (`run_table.rs`).
//!
//! The headline case of a workload is its first one-CPU/all-CPUs pair
//! when it has one (the articles' "1 core vs all cores"), else its first
//! case that has a value: for the `quick` profile, which runs one case or
//! one pair per workload, that is every case.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::format;
use super::run_table::value_with_ci;
use super::summary::{is_disturbance_warning, missed_target};
use crate::analysis::scaling_fit::{self, Step, Sweep, headline};
use crate::analysis::varying::varying_params;
use crate::results::{CaseRecord, MetricRecord, RunRecord, Unit};
use crate::visible::Escaped;

/// The most lines the scorecard prints: one screen.
pub const MAX_LINES: usize = 50;

/// The widest line it prints (the text reports' width).
pub const WIDTH: usize = format::REPORT_WIDTH;

/// The most workloads a folded warning names; past them it counts them,
/// so that the warning's own text keeps its room on the line.
const MAX_WORKLOADS_NAMED: usize = 3;

/// The longest case label a folded warning shows; a longer one (a
/// workload with many varying parameters) is named by its workload.
const MAX_LABEL: usize = 40;

/// How the line of a case's error begins.
const ERROR_PREFIX: &str = "error: ";

/// Columns between two columns of the table.
const GAP: &str = "  ";

/// Renders the scorecard of `run`.
pub fn render(run: &Escaped<RunRecord>) -> String {
    let rows = rows(run);
    let table = table_lines(&rows, run.cpus.len());
    let head = head_lines(run);
    let tail = tail_lines(run);
    let footer = format!(
        "every case: `sledge show {} --full`; every metric: `--metrics all`",
        run.id
    );
    let lines = fit_to_screen(head, table, tail, footer);
    let mut out = String::new();
    for line in lines {
        // An error stays whole on its line, for grep and bug reports:
        // the one line the width does not bound.
        if line.starts_with(ERROR_PREFIX) {
            out.push_str(&line);
        } else {
            out.push_str(&clip(&line));
        }
        out.push('\n');
    }
    out
}

/// One workload's row (and the line under it about its other cases).
#[derive(Debug, Clone)]
struct Row {
    /// Workload id.
    workload: String,
    /// The headline case's value ± CI, or `a → b` for a one-CPU/all-CPUs
    /// pair; `failed` when no case has a value.
    value: String,
    /// The headline's name.
    metric: String,
    /// Its unit.
    unit: Unit,
    /// `1.99× 99%`: the all-CPUs step's speed-up over one CPU and its
    /// parallel efficiency, when the row is a pair.
    scaling: String,
    /// How many cases the workload ran.
    cases: usize,
    /// Counts of flagged cases: `1 wide, 2 disturbed`.
    flags: String,
    /// The workload's other cases, in words, when it has any.
    more: Option<String>,
}

/// The rows, workloads grouped by family in the order each family and
/// workload first ran.
fn rows(run: &RunRecord) -> Vec<Row> {
    let sweeps = scaling_fit::find(run);
    workloads_by_family(run)
        .into_iter()
        .map(|(workload, indexes)| row(run, workload, &indexes, &sweeps))
        .collect()
}

/// The row of `workload`, whose cases are `indexes`.
fn row(run: &RunRecord, workload: &str, indexes: &[usize], sweeps: &[Sweep]) -> Row {
    let cases: Vec<&CaseRecord> = indexes.iter().map(|&i| &run.cases[i]).collect();
    let pair = cpu_pair(sweeps, workload, run.cpus.len());
    let shown: Vec<usize> = match pair {
        Some((one, all)) => vec![one.case, all.case],
        None => indexes
            .iter()
            .copied()
            .find(|&i| headline(&run.cases[i]).is_some())
            .into_iter()
            .collect(),
    };
    // The headline of the case shown (the all-CPUs step of a pair).
    let shown_metric = shown.last().and_then(|&i| headline(&run.cases[i]));
    let value = match (pair, shown_metric) {
        (Some((one, _)), Some(all)) => {
            let one = headline(&run.cases[one.case]).expect("a step has a value");
            format!("{} → {}", value_with_ci(one), value_with_ci(all))
        }
        (None, Some(metric)) => value_with_ci(metric),
        (_, None) => "failed".to_string(),
    };
    let scaling = pair
        .and_then(|(_, all)| all.speedup)
        .map_or(String::new(), |s| {
            format!(
                "{}× {}%",
                super::format::compact(s.speedup, 2),
                super::format::compact(s.efficiency * 100.0, 0)
            )
        });
    let others: Vec<&CaseRecord> = indexes
        .iter()
        .filter(|i| !shown.contains(i))
        .map(|&i| &run.cases[i])
        .collect();
    let more = (!others.is_empty() && shown_metric.is_some())
        .then(|| more_text(&others, &varying_params(&cases), shown_metric));
    Row {
        workload: workload.to_string(),
        value,
        metric: shown_metric.map_or(String::new(), |m| m.name.clone()),
        unit: shown_metric.map_or(Unit::of(""), |m| m.unit.clone()),
        scaling,
        cases: cases.len(),
        flags: flag_counts(&cases),
        more,
    }
}

/// The indexes of each workload's cases; the workloads of a family
/// (`cpu` of `cpu.primes`) together, families and the workloads in each
/// in the order they first ran.
fn workloads_by_family(run: &RunRecord) -> Vec<(&str, Vec<usize>)> {
    let mut workloads: Vec<(&str, Vec<usize>)> = Vec::new();
    let mut position: HashMap<&str, usize> = HashMap::new();
    for (i, case) in run.cases.iter().enumerate() {
        let at = *position.entry(case.workload.as_str()).or_insert_with(|| {
            workloads.push((case.workload.as_str(), Vec::new()));
            workloads.len() - 1
        });
        workloads[at].1.push(i);
    }
    let mut families: Vec<&str> = Vec::new();
    for (workload, _) in &workloads {
        let family = family(workload);
        if !families.contains(&family) {
            families.push(family);
        }
    }
    // A stable sort keeps the workloads of a family in the order they ran.
    workloads.sort_by_key(|(workload, _)| {
        families
            .iter()
            .position(|f| *f == family(workload))
            .unwrap_or(0)
    });
    workloads
}

/// A workload's family: its id up to the first dot.
fn family(workload: &str) -> &str {
    workload.split('.').next().unwrap_or(workload)
}

/// The one-CPU and all-CPUs steps of `workload`'s first sweep over a
/// CPU count (threads, copies, jobs, cpus) that has both; a run on one CPU has
/// none. The all-CPUs step's speed-up is against one CPU, since that is
/// the sweep's smallest step.
fn cpu_pair<'a>(sweeps: &'a [Sweep], workload: &str, cpus: usize) -> Option<(&'a Step, &'a Step)> {
    if cpus < 2 {
        return None;
    }
    sweeps
        .iter()
        .filter(|s| s.workload == workload && s.has_efficiency())
        .find_map(|sweep| {
            let one = sweep.steps.first().filter(|s| s.n == 1.0)?;
            let all = sweep.steps.iter().find(|s| s.n == cpus as f64)?;
            Some((one, all))
        })
}

/// `+ 28 more over algorithm, block_size: 45 ± 1 to 9800 ± 120`: how
/// many other cases, the parameters the workload varies, and the lowest
/// and highest of the other cases' headlines that are the same metric as
/// `reference` (the headline case's); then how many failed or report
/// another metric.
fn more_text(
    others: &[&CaseRecord],
    varying: &[String],
    reference: Option<&MetricRecord>,
) -> String {
    let mut text = format!("+ {} more", others.len());
    if !varying.is_empty() {
        let _ = write!(text, " over {}", varying.join(", "));
    }
    let same: Vec<&MetricRecord> = others
        .iter()
        .filter_map(|c| headline(c))
        .filter(|m| reference.is_some_and(|r| r.name == m.name && r.unit == m.unit))
        .collect();
    let lowest = same
        .iter()
        .min_by(|a, b| a.summary.mean.total_cmp(&b.summary.mean));
    let highest = same
        .iter()
        .max_by(|a, b| a.summary.mean.total_cmp(&b.summary.mean));
    let mut parts = Vec::new();
    match (lowest, highest) {
        (Some(low), Some(high)) if value_with_ci(low) != value_with_ci(high) => {
            parts.push(format!("{} to {}", value_with_ci(low), value_with_ci(high)))
        }
        (Some(one), _) => parts.push(value_with_ci(one)),
        _ => {}
    }
    let failed = others.iter().filter(|c| c.error.is_some()).count();
    if failed > 0 {
        parts.push(format!("{failed} failed"));
    }
    let other_metric = others
        .iter()
        .filter(|c| c.error.is_none())
        .count()
        .saturating_sub(same.len());
    if other_metric > 0 {
        parts.push(format!("{other_metric} with another headline"));
    }
    if !parts.is_empty() {
        let _ = write!(text, ": {}", parts.join("; "));
    }
    text
}

/// How many of `cases` ended wider than the precision target, had
/// disturbed trials among those used, or failed: `1 wide, 2 disturbed`
/// (empty when none did).
fn flag_counts(cases: &[&CaseRecord]) -> String {
    let wide = cases.iter().filter(|c| missed_target(c)).count();
    let disturbed = cases
        .iter()
        .filter(|c| !c.disturbances().is_empty())
        .count();
    let failed = cases.iter().filter(|c| c.error.is_some()).count();
    [(wide, "wide"), (disturbed, "disturbed"), (failed, "failed")]
        .into_iter()
        .filter(|(count, _)| *count > 0)
        .map(|(count, what)| format!("{count} {what}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The table: a title row, then per workload its row and, when it has
/// other cases, the line about them under the headline column. Each line
/// comes with whether it may give way to a shorter screen (the lines
/// about other cases may).
///
/// The metric names are left out when a row with its flags would be
/// wider than [`WIDTH`] with them (long names, values with many digits,
/// many kinds of flags). A row's flags go at the end of its line when
/// they fit, else on a line of their own under it.
fn table_lines(rows: &[Row], cpus: usize) -> Vec<(String, bool)> {
    let with_metric = columns(rows, cpus, true);
    let flags = rows
        .iter()
        .map(|r| r.flags.chars().count())
        .max()
        .filter(|&widest| widest > 0)
        .map_or(0, |widest| GAP.len() + widest);
    let (titles, cells) = if aligned_width(&with_metric.0, &with_metric.1) + flags <= WIDTH {
        with_metric
    } else {
        columns(rows, cpus, false)
    };
    let widths = column_widths(&titles, &cells);
    let align = |line: &[String]| -> String {
        line.iter()
            .zip(&widths)
            .zip(&titles)
            .map(|((cell, &width), (_, right))| {
                if *right {
                    format!("{cell:>width$}")
                } else {
                    format!("{cell:<width$}")
                }
            })
            .collect::<Vec<_>>()
            .join(GAP)
    };
    let title_cells: Vec<String> = titles.iter().map(|(t, _)| t.clone()).collect();
    let flags_at = aligned_width(&titles, &cells) + GAP.len();
    let inline = |flags: &str| !flags.is_empty() && flags_at + flags.chars().count() <= WIDTH;
    let second_at = widths[0] + GAP.len();
    let mut title = align(&title_cells);
    if rows.iter().any(|r| inline(&r.flags)) {
        title.push_str(GAP);
        title.push_str("flags");
    }
    let mut lines = vec![(title.trim_end().to_string(), false)];
    for (row, line) in rows.iter().zip(&cells) {
        let mut text = align(line);
        if inline(&row.flags) {
            text.push_str(GAP);
            text.push_str(&row.flags);
        }
        lines.push((text.trim_end().to_string(), false));
        if !row.flags.is_empty() && !inline(&row.flags) {
            let indent = " ".repeat(second_at);
            lines.push((format!("{indent}flags: {}", row.flags), false));
        }
        if let Some(more) = &row.more {
            lines.push((format!("{}{more}", " ".repeat(second_at)), true));
        }
    }
    lines
}

/// The table's titles (each with whether its column is right-aligned)
/// and cells, without the flags: workload, metric (when `with_metric`),
/// headline ± CI, unit, the scaling (when any row has it), cases.
#[allow(clippy::type_complexity)]
fn columns(
    rows: &[Row],
    cpus: usize,
    with_metric: bool,
) -> (Vec<(String, bool)>, Vec<Vec<String>>) {
    let scaling = rows.iter().any(|r| !r.scaling.is_empty());
    let mut titles = vec![("workload".to_string(), false)];
    if with_metric {
        titles.push(("headline".to_string(), false));
    }
    titles.push(("mean ± 95% CI".to_string(), true));
    titles.push((String::new(), false));
    if scaling {
        titles.push((format!("1 → {cpus} CPUs"), true));
    }
    titles.push(("cases".to_string(), true));
    let cells = rows
        .iter()
        .map(|row| {
            let mut line = vec![row.workload.clone()];
            if with_metric {
                line.push(row.metric.clone());
            }
            line.extend([row.value.clone(), row.unit.to_string()]);
            if scaling {
                line.push(row.scaling.clone());
            }
            line.push(row.cases.to_string());
            line
        })
        .collect();
    (titles, cells)
}

/// The width of the table of `titles` and `cells` aligned in columns,
/// [`GAP`] between them.
fn aligned_width(titles: &[(String, bool)], cells: &[Vec<String>]) -> usize {
    let text: usize = column_widths(titles, cells).iter().sum();
    text + GAP.len() * titles.len().saturating_sub(1)
}

/// Each column's width: its widest cell, the title included.
fn column_widths(titles: &[(String, bool)], cells: &[Vec<String>]) -> Vec<usize> {
    (0..titles.len())
        .map(|c| {
            std::iter::once(&titles[c].0)
                .chain(cells.iter().map(|line| &line[c]))
                .map(|cell| cell.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect()
}

/// The run in one line (id, profile, status, host and the CPUs used,
/// when and how long, sledge's version), its notes on a second when it
/// has any, and a blank line. A line too wide loses sledge's version,
/// then as much of the host name as it must.
fn head_lines(run: &RunRecord) -> Vec<String> {
    let mut when = readable_time(&run.started);
    if let Some(took) = run.finished.as_deref().and_then(|f| took(&run.started, f)) {
        let _ = write!(when, ", {took}");
    }
    let host = if run.host.hostname.is_empty() {
        "unknown host"
    } else {
        &run.host.hostname
    };
    let line = |host: &str, version: bool| {
        let mut line = format!(
            "run {} · profile {} · {} · {host} ({} CPUs) · {when}",
            run.id,
            ellipsize(&run.profile, 20),
            run.status.as_str(),
            run.cpus.len(),
        );
        if version {
            let _ = write!(line, " · sledge {}", run.sledge_version);
        }
        line
    };
    let mut first = line(host, true);
    if first.chars().count() > WIDTH {
        first = line(host, false);
    }
    let over = first.chars().count().saturating_sub(WIDTH);
    if over > 0 {
        let keep = host.chars().count().saturating_sub(over).max(8);
        first = line(&ellipsize(host, keep), false);
    }
    let mut lines = vec![first];
    if !run.notes.is_empty() {
        lines.push(format!(
            "notes: {}",
            crate::results::shown_notes(&run.notes).join(" · ")
        ));
    }
    lines.push(String::new());
    lines
}

/// `2026-03-01 10:00 UTC` from RFC 3339; the text itself when it is not.
fn readable_time(rfc3339: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(rfc3339)
        .map(|t| {
            t.with_timezone(&chrono::Utc)
                .format("%Y-%m-%d %H:%M UTC")
                .to_string()
        })
        .unwrap_or_else(|_| rfc3339.to_string())
}

/// How long the run took: `41 s`, `2 min 41 s`, `1 h 05 min`.
fn took(started: &str, finished: &str) -> Option<String> {
    let start = chrono::DateTime::parse_from_rfc3339(started).ok()?;
    let end = chrono::DateTime::parse_from_rfc3339(finished).ok()?;
    let secs = (end - start).num_seconds();
    Some(match secs {
        ..0 => return None,
        0..60 => format!("{secs} s"),
        60..3600 if secs % 60 == 0 => format!("{} min", secs / 60),
        60..3600 => format!("{} min {} s", secs / 60, secs % 60),
        _ => format!("{} h {:02} min", secs / 3600, secs % 3600 / 60),
    })
}

/// What follows the table: a blank line, the lines of the sections the
/// run's workloads add (UnixBench's index when the run has UnixBench
/// cases), what the flags that appear mean, and the errors and warnings,
/// each distinct text on one line. The second element marks the lines
/// that may give way to a shorter screen.
fn tail_lines(run: &Escaped<RunRecord>) -> Vec<(String, bool)> {
    let mut lines = vec![(String::new(), false)];
    for line in super::run_sections::lines(run) {
        lines.push((line, false));
    }
    let mut meanings = Vec::new();
    if run.cases.iter().any(missed_target) {
        meanings.push("wide: CI missed the precision target");
    }
    if run.cases.iter().any(|c| !c.disturbances().is_empty()) {
        meanings.push("disturbed: trials beside other load, steal or swap");
    }
    if !meanings.is_empty() {
        lines.push((format!("flags: {}", meanings.join("; ")), false));
    }
    for line in folded_problems(run) {
        lines.push((line, true));
    }
    lines
}

/// The errors of the cases, then their warnings, then the run's: one line
/// per distinct text, naming the case when one case has it and the
/// number of cases and their workloads when several do. The warnings the
/// flags count (disturbed trials, a missed precision target) and a
/// workload's notes (`note: `) are left to `--full`.
fn folded_problems(run: &RunRecord) -> Vec<String> {
    let mut errors: Vec<(&str, Vec<&CaseRecord>)> = Vec::new();
    let mut warnings: Vec<(&str, Vec<&CaseRecord>)> = Vec::new();
    for case in &run.cases {
        if let Some(error) = &case.error {
            add_folded(&mut errors, error, case);
        }
        for warning in &case.warnings {
            if is_disturbance_warning(warning)
                || warning.starts_with(crate::engine::runner::PRECISION_WARNING_PREFIX)
                || warning.starts_with(super::summary::CASE_NOTE_PREFIX)
            {
                continue;
            }
            add_folded(&mut warnings, warning, case);
        }
    }
    // A case is named by its workload and the parameters that tell it
    // from the workload's other cases, as `--full` names it.
    let varying: HashMap<&str, Vec<String>> = workloads_by_family(run)
        .into_iter()
        .map(|(workload, indexes)| {
            let cases: Vec<&CaseRecord> = indexes.iter().map(|&i| &run.cases[i]).collect();
            (workload, varying_params(&cases))
        })
        .collect();
    let label = |case: &CaseRecord| {
        let mut label = case.workload.clone();
        for name in varying.get(case.workload.as_str()).into_iter().flatten() {
            if let Some(value) = case.params.get(name) {
                let _ = write!(label, " {name}={value}");
            }
        }
        label
    };
    let cases_of = |cases: &[&CaseRecord]| match cases {
        [one] => {
            let label = label(one);
            if label.chars().count() <= MAX_LABEL {
                label
            } else {
                format!("1 case of {}", one.workload)
            }
        }
        many => {
            let mut workloads: Vec<&str> = many.iter().map(|c| c.workload.as_str()).collect();
            workloads.sort_unstable();
            workloads.dedup();
            if workloads.len() <= MAX_WORKLOADS_NAMED {
                format!("{} cases of {}", many.len(), workloads.join(", "))
            } else {
                format!("{} cases of {} workloads", many.len(), workloads.len())
            }
        }
    };
    let mut lines = Vec::new();
    for (text, cases) in &errors {
        lines.push(format!("{ERROR_PREFIX}{}: {text}", cases_of(cases)));
    }
    for (text, cases) in &warnings {
        lines.push(format!("warning: {}: {text}", cases_of(cases)));
    }
    for warning in &run.warnings {
        lines.push(format!("warning: {warning}"));
    }
    lines
}

/// Adds `case` to the entry of `text` in `list`, or a new entry.
fn add_folded<'a>(
    list: &mut Vec<(&'a str, Vec<&'a CaseRecord>)>,
    text: &'a str,
    case: &'a CaseRecord,
) {
    match list.iter_mut().find(|(t, _)| *t == text) {
        Some((_, cases)) => cases.push(case),
        None => list.push((text, vec![case])),
    }
}

/// The lines of the screen, at most [`MAX_LINES`]: head, table, tail and
/// footer. When they are more, the lines about a workload's other cases
/// go first, then the errors and warnings that do not fit (one line says
/// how many), then the workloads that do not fit (one line says how
/// many); the head, the title row and the footer always stay.
fn fit_to_screen(
    head: Vec<String>,
    table: Vec<(String, bool)>,
    tail: Vec<(String, bool)>,
    footer: String,
) -> Vec<String> {
    let count = |table: &[(String, bool)], tail: &[(String, bool)]| {
        head.len() + table.len() + tail.len() + 1
    };
    let mut table = table;
    let mut tail = tail;
    if count(&table, &tail) > MAX_LINES {
        table.retain(|(_, optional)| !optional);
    }
    if count(&table, &tail) > MAX_LINES {
        let problems = tail.iter().filter(|(_, optional)| *optional).count();
        let over = count(&table, &tail) - MAX_LINES;
        // One line is needed to say how many were left out.
        let keep = problems.saturating_sub(over + 1);
        let left_out = problems - keep;
        let mut kept = 0;
        tail.retain(|(_, optional)| {
            if !optional {
                return true;
            }
            kept += 1;
            kept <= keep
        });
        if left_out > 0 {
            tail.push((
                format!("… {left_out} more errors and warnings: `--full` shows them"),
                false,
            ));
        }
    }
    if count(&table, &tail) > MAX_LINES {
        let over = count(&table, &tail) - MAX_LINES;
        let rows = table.len() - 1;
        let keep = rows.saturating_sub(over + 1);
        table.truncate(1 + keep);
        table.push((
            format!("… {} more workloads: `--full` shows them", rows - keep),
            false,
        ));
    }
    head.into_iter()
        .chain(table.into_iter().map(|(line, _)| line))
        .chain(tail.into_iter().map(|(line, _)| line))
        .chain(std::iter::once(footer))
        .collect()
}

/// `text` cut to [`WIDTH`] columns, with `…` where it was cut.
fn clip(text: &str) -> String {
    ellipsize(text, WIDTH)
}

/// `text` cut to `width` characters, its last one `…` when it was cut.
fn ellipsize(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::Direction;
    use crate::engine::runner::PRECISION_WARNING_PREFIX;
    use crate::report::fixtures::{case, demo_run, disturb, metric, run};

    fn text_of(run: RunRecord) -> String {
        render(&Escaped::new(run))
    }

    fn assert_fits_one_screen(text: &str) {
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines.len() <= MAX_LINES, "{} lines:\n{text}", lines.len());
        let widest = lines.iter().map(|l| l.chars().count()).max().unwrap_or(0);
        assert!(widest <= WIDTH, "{widest} columns:\n{text}");
    }

    #[test]
    fn the_demo_run_on_one_screen() {
        let text = text_of(demo_run(1, "alpha", 1.0));
        assert_fits_one_screen(&text);
        insta::assert_snapshot!(text);
    }

    /// A run with what a real quick run prints under its table: a case
    /// wider than the target, a warning three cases share, a run warning,
    /// a note (left to `--full`) and UnixBench's index.
    #[test]
    fn warnings_fold_into_one_line_each() {
        let higher = Direction::Higher;
        let mut cases = vec![
            case(
                "cpu.primes",
                &[("threads", "1")],
                metric("events_per_sec", "events/s", higher, &[800.0, 790.0, 810.0]),
            ),
            case(
                "unixbench.dhrystone",
                &[("copies", "1")],
                metric("lps", "lps", higher, &[3.0e7, 3.1e7, 2.9e7]),
            ),
        ];
        for clients in ["1", "2", "4"] {
            let mut c = case(
                "fileserver",
                &[("clients", clients)],
                metric("mb_per_sec", "MB/s", higher, &[300.0, 310.0, 200.0]),
            );
            c.warnings
                .push("the data set (64 MiB) is smaller than RAM (8 GiB)".to_string());
            cases.push(c);
        }
        cases[0].warnings.push(format!(
            "{PRECISION_WARNING_PREFIX}±4.1% after 5 rounds (its time budget, 30 s), target ±3%: \
             between-round variance; 9 rounds would reach it"
        ));
        cases[0]
            .warnings
            .push("note: built with cc: gcc 12".to_string());
        disturb(&mut cases[2], 1);
        let mut r = run(4, "beta", 2, cases);
        r.warnings
            .push("the host was busy at the start: load average 3.1".to_string());
        let text = text_of(r);
        assert_fits_one_screen(&text);
        insta::assert_snapshot!(text);
    }

    /// hackbench's `cpus=1,all`, the articles' one core against all:
    /// the scaling column has its speed-up and parallel efficiency.
    #[test]
    fn hackbench_on_one_cpu_and_all_shows_its_scaling() {
        let hackbench = |cpus: &str, seconds: f64| {
            case(
                "sched.hackbench",
                &[("cpus", cpus)],
                metric("seconds", "s", Direction::Lower, &[seconds; 3]),
            )
        };
        let text = text_of(run(
            1,
            "alpha",
            2,
            vec![hackbench("1", 1.8), hackbench("2", 1.0)],
        ));
        let row = text
            .lines()
            .find(|l| l.starts_with("sched.hackbench"))
            .unwrap_or_else(|| panic!("no hackbench row:\n{text}"));
        assert!(row.contains("1.80× 90%"), "{row}");
    }

    /// Every built-in profile's cases, with made-up values (one metric
    /// name and unit per workload, some cases flagged, failed or with a
    /// warning), fit one screen and every workload keeps its row.
    #[test]
    fn every_profile_fits_one_screen() {
        for cpus in [2, 64] {
            for profile in crate::suite::profiles::all() {
                let plan = crate::suite::plan(&[profile.name.to_string()], &[], cpus).unwrap();
                let mut cases: Vec<CaseRecord> = Vec::new();
                for (i, planned) in plan.cases.iter().enumerate() {
                    let params = planned.params.to_strings();
                    let params: Vec<(&str, &str)> = params
                        .iter()
                        .map(|(k, v)| (k.as_str(), v.as_str()))
                        .collect();
                    let value = 1000.0 + 37.0 * i as f64;
                    let mut c = case(
                        planned.workload.id(),
                        &params,
                        metric(
                            "requests_per_second_all",
                            "requests/s",
                            Direction::Higher,
                            &[value * 0.99, value, value * 1.01],
                        ),
                    );
                    match i % 7 {
                        1 => disturb(&mut c, 1),
                        2 => c
                            .warnings
                            .push(format!("{PRECISION_WARNING_PREFIX}±12% after 3 rounds")),
                        3 => c
                            .warnings
                            .push(format!("a warning of {} kind {}", c.workload, i % 3)),
                        5 if i % 2 == 1 => {
                            c.metrics.clear();
                            c.error = Some("it failed".to_string());
                        }
                        _ => {}
                    }
                    cases.push(c);
                }
                let mut r = run(9, "a-host-with-a-rather-long-name.example.org", cpus, cases);
                r.profile = profile.name.to_string();
                let workloads: Vec<String> = {
                    let mut w: Vec<String> = r.cases.iter().map(|c| c.workload.clone()).collect();
                    w.sort();
                    w.dedup();
                    w
                };
                let text = text_of(r);
                assert_fits_one_screen(&text);
                for workload in &workloads {
                    assert!(
                        text.lines().any(|l| l.starts_with(&format!("{workload} "))),
                        "{} on {cpus} CPUs: no row for {workload}:\n{text}",
                        profile.name
                    );
                }
                assert!(!text.contains("more workloads"), "{text}");
                // Only the host name is cut, to keep the run's line short,
                // and warnings past the screen are counted.
                let cut: Vec<&str> = text
                    .lines()
                    .skip(1)
                    .filter(|l| {
                        l.contains('…')
                            && !l.ends_with("more errors and warnings: `--full` shows them")
                    })
                    .collect();
                assert!(
                    cut.is_empty(),
                    "{}: lines cut: {cut:?}\n{text}",
                    profile.name
                );
            }
        }
    }

    /// A run far larger than a screen keeps the head, the title row, as
    /// many workloads as fit and the footer, and says what it left out.
    #[test]
    fn a_run_larger_than_a_screen_says_what_it_left_out() {
        let mut cases = Vec::new();
        for w in 0..80 {
            for threads in ["1", "2", "3"] {
                let mut c = case(
                    &format!("family{}.workload{w}", w % 5),
                    &[("threads", threads)],
                    metric(
                        "ops_per_sec",
                        "ops/s",
                        Direction::Higher,
                        &[10.0, 11.0, 12.0],
                    ),
                );
                c.warnings.push(format!("warning number {w}"));
                cases.push(c);
            }
        }
        let text = text_of(run(2, "big", 2, cases));
        assert_fits_one_screen(&text);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), MAX_LINES, "{text}");
        assert!(
            lines[0].starts_with("run 2 · profile quick · complete · big (2 CPUs) · "),
            "{text}"
        );
        assert!(lines[2].starts_with("workload"), "{text}");
        assert!(!text.contains("+ 1 more"), "{text}");
        assert!(
            text.contains("… 80 more errors and warnings: `--full` shows them"),
            "{text}"
        );
        let shown = lines.iter().filter(|l| l.starts_with("family")).count();
        assert!(
            text.contains(&format!(
                "… {} more workloads: `--full` shows them",
                80 - shown
            )),
            "{text}"
        );
        assert!(lines[MAX_LINES - 1].starts_with("every case: `sledge show 2 --full`"));
    }

    #[test]
    fn the_families_workloads_stay_together() {
        let higher = Direction::Higher;
        let one = |w: &str| case(w, &[], metric("x", "u", higher, &[1.0, 2.0]));
        let r = run(
            1,
            "h",
            1,
            vec![
                one("cpu.primes"),
                one("memory.stream"),
                one("cpu.mutex"),
                one("memory.latency"),
            ],
        );
        let order: Vec<&str> = workloads_by_family(&r)
            .into_iter()
            .map(|(w, _)| w)
            .collect();
        assert_eq!(
            order,
            ["cpu.primes", "cpu.mutex", "memory.stream", "memory.latency"]
        );
    }

    #[test]
    fn the_time_a_run_took_reads_as_people_write_it() {
        let took = |a, b| took(a, b);
        assert_eq!(
            took("2026-03-01T10:00:00Z", "2026-03-01T10:00:41Z").as_deref(),
            Some("41 s")
        );
        assert_eq!(
            took("2026-03-01T10:00:00Z", "2026-03-01T10:02:41Z").as_deref(),
            Some("2 min 41 s")
        );
        assert_eq!(
            took("2026-03-01T10:00:00Z", "2026-03-01T10:03:00Z").as_deref(),
            Some("3 min")
        );
        assert_eq!(
            took("2026-03-01T10:00:00Z", "2026-03-01T11:05:00Z").as_deref(),
            Some("1 h 05 min")
        );
        assert_eq!(took("2026-03-01T10:00:00Z", "2026-03-01T09:00:00Z"), None);
        assert_eq!(took("yesterday", "2026-03-01T09:00:00Z"), None);
        assert_eq!(
            readable_time("2026-03-01T11:00:00+01:00"),
            "2026-03-01 10:00 UTC"
        );
        assert_eq!(readable_time("not a time"), "not a time");
    }
}

//! The per-case summary of a run, `sledge run --full` and `sledge show
//! --full`: one line per case with its headline metric (the first metric
//! the case reports), grouped by workload.
//!
//! A workload's section names its headline metric once, shows only the
//! parameters that vary between its cases as columns, and lists the ones
//! that are the same for all cases but not at their defaults on one `set:`
//! line; defaults are left out (`sledge workloads` lists them). Sweeps over
//! threads, copies, clients or concurrency get speed-up and efficiency
//! columns against their smallest step, and the Universal Scalability Law
//! fit when they have four or more steps. The engine's "N of M trials
//! disturbed" warnings are folded into the flags column and one legend
//! line. A sweep over two parameters is also shown as a table, one down
//! and one across (`pivot.rs`). `--metrics all` prints every metric
//! instead (`run_table.rs`).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::pivot;
use super::run_table::header;
use super::sweeps;
use crate::analysis::pivot_grouping::{self, PivotChoice};
use crate::analysis::scaling_fit::{self, Sweep, headline};
use crate::analysis::varying::varying_params;
use crate::analysis::{Direction, SpeedUp};
use crate::engine::runner::PRECISION_WARNING_PREFIX;
use crate::monitor::{OTHER_CPU_THRESHOLD_PCT, STEAL_THRESHOLD_PCT};
use crate::results::{CaseRecord, RunRecord};
use crate::visible::Escaped;

/// Each workload's default parameters, canonical text, as cases store them
/// (`threads=all` already resolved for the run's CPUs). A workload missing
/// here (say, from a newer sledge) is shown with its varying parameters
/// only.
pub use crate::suite::defaults::Defaults;

/// Lines of the summary are wrapped before this many columns.
const WIDTH: usize = 100;
/// How a case's warning that is only a note begins (see
/// `workloads::build::toolchain_notes`).
pub const CASE_NOTE_PREFIX: &str = "note: ";

/// Renders the run's header, a section per workload, errors, warnings and
/// the flags legend.
pub fn render(run: &Escaped<RunRecord>, defaults: &Defaults) -> String {
    render_pivoted(run, defaults, &PivotChoice::Natural)
}

/// [`render`], each workload's section followed by its pivot tables
/// (`report::pivot`) as `choice` makes them.
pub fn render_pivoted(
    run: &Escaped<RunRecord>,
    defaults: &Defaults,
    choice: &PivotChoice,
) -> String {
    let sweeps = scaling_fit::find(run);
    let mut out = header(run);
    let sections = sections(run, &sweeps, defaults);
    let mut tables = pivot_grouping::tables(run, choice);
    for section in &sections {
        out.push('\n');
        out.push_str(&section_text(section));
        let (own, rest): (Vec<_>, Vec<_>) = tables
            .into_iter()
            .partition(|t| t.workload == section.workload);
        tables = rest;
        out.push_str(&pivot::text(&own));
    }
    out.push('\n');
    let varying: HashMap<&str, &[String]> = sections
        .iter()
        .map(|s| (s.workload.as_str(), s.varying.as_slice()))
        .collect();
    for case in &run.cases {
        let label = short_label(case, varying.get(case.workload.as_str()).copied());
        // An error stays on one line, whole, for grep and bug reports.
        if let Some(error) = &case.error {
            out.push_str(&format!("error: {label}: {error}\n"));
        }
        for warning in case.warnings.iter().filter(|w| !is_disturbance_warning(w)) {
            // A workload's note about the case (the toolchain a build
            // used) is not a warning.
            match warning.strip_prefix(CASE_NOTE_PREFIX) {
                Some(note) => out.push_str(&wrap_text("note: ", &format!("{label}: {note}"))),
                None => out.push_str(&wrap_text("warning: ", &format!("{label}: {warning}"))),
            }
        }
    }
    for warning in &run.warnings {
        out.push_str(&wrap_text("warning: ", warning));
    }
    if sweeps
        .iter()
        .any(|s| s.steps.iter().any(|step| step.speedup.is_some()))
    {
        out.push_str(
            "speed-up: against the sweep's smallest step; eff.: speed-up / step ratio (threads, copies, jobs)\n",
        );
    }
    if let Some(legend) = legend(run) {
        out.push_str(&legend);
    }
    out
}

/// The case as the summary's rows tell it from its workload's other cases:
/// the workload and the parameters that vary between them (`varying`,
/// from its section), as in `http.static concurrency=100`.
fn short_label(case: &CaseRecord, varying: Option<&[String]>) -> String {
    let mut label = case.workload.clone();
    for name in varying.unwrap_or_default() {
        if let Some(value) = case.params.get(name) {
            label.push_str(&format!(" {name}={value}"));
        }
    }
    label
}

/// The indexes of each workload's cases, workloads in the order their
/// first case ran.
fn cases_by_workload(run: &RunRecord) -> Vec<(&str, Vec<usize>)> {
    let mut order: Vec<(&str, Vec<usize>)> = Vec::new();
    let mut position: HashMap<&str, usize> = HashMap::new();
    for (i, case) in run.cases.iter().enumerate() {
        let at = *position.entry(case.workload.as_str()).or_insert_with(|| {
            order.push((case.workload.as_str(), Vec::new()));
            order.len() - 1
        });
        order[at].1.push(i);
    }
    order
}

/// Parameters the same in every case but not at their default, `k=v`.
pub fn set_params(
    cases: &[&CaseRecord],
    varying: &[String],
    defaults: Option<&BTreeMap<String, String>>,
) -> Vec<String> {
    let Some(first) = cases.first() else {
        return Vec::new();
    };
    let varying: BTreeSet<&String> = varying.iter().collect();
    first
        .params
        .iter()
        .filter(|(k, _)| !varying.contains(k))
        .filter(|(k, v)| defaults.is_some_and(|d| d.get(*k) != Some(*v)))
        .map(|(k, v)| format!("{k}={v}"))
        .collect()
}

/// One workload's part of the summary, as data: the terminal table and
/// the HTML report render it each their own way.
#[derive(Debug, Clone)]
pub struct Section {
    /// Workload id.
    pub workload: String,
    /// The headline shared by every case: name, unit, direction; `None`
    /// when the cases differ (then a `metric` column names it per row).
    pub headline: Option<(String, String, Direction)>,
    /// `k=v` parameters the same everywhere but not at their defaults.
    pub set: Vec<String>,
    /// The parameters that vary between the cases (the first columns).
    pub varying: Vec<String>,
    /// Column titles, flags last.
    pub columns: Vec<String>,
    /// Whether each column holds numbers (right-aligned).
    pub numeric: Vec<bool>,
    /// One row per case: a cell per column.
    pub rows: Vec<Vec<String>>,
    /// Index in the run of each row's case.
    pub cases: Vec<usize>,
    /// One line per USL fit of the workload's sweeps.
    pub fits: Vec<String>,
}

/// The summary's sections, one per workload in the order they ran.
pub fn sections(run: &RunRecord, sweeps: &[Sweep], defaults: &Defaults) -> Vec<Section> {
    let mut sweeps_of: HashMap<&str, Vec<&Sweep>> = HashMap::new();
    for sweep in sweeps {
        sweeps_of.entry(&sweep.workload).or_default().push(sweep);
    }
    cases_by_workload(run)
        .into_iter()
        .map(|(w, indexes)| {
            let own_sweeps = sweeps_of.remove(w).unwrap_or_default();
            section(run, w, indexes, &own_sweeps, defaults.get(w))
        })
        .collect()
}

/// The section of `workload`, whose cases are `indexes` and sweeps
/// `own_sweeps`.
fn section(
    run: &RunRecord,
    workload: &str,
    indexes: Vec<usize>,
    own_sweeps: &[&Sweep],
    defaults: Option<&BTreeMap<String, String>>,
) -> Section {
    let cases: Vec<&CaseRecord> = indexes.iter().map(|&i| &run.cases[i]).collect();
    let varying = varying_params(&cases);
    let set = set_params(&cases, &varying, defaults);
    // Per case its speed-up, and whether its sweep counts CPUs (else no
    // efficiency is shown).
    let speedups: HashMap<usize, (SpeedUp, bool)> = own_sweeps
        .iter()
        .flat_map(|s| s.steps.iter().map(move |step| (s.has_efficiency(), step)))
        .filter_map(|(cpus, step)| Some((step.case, (step.speedup?, cpus))))
        .collect();
    let scaling = !speedups.is_empty();

    // One headline for the section when every case has the same one.
    let names: BTreeSet<&str> = cases
        .iter()
        .filter_map(|c| headline(c).map(|m| m.name.as_str()))
        .collect();
    let shared = (names.len() == 1)
        .then(|| cases.iter().find_map(|c| headline(c)))
        .flatten();

    let mut columns: Vec<String> = varying.clone();
    // A parameter column holds numbers when all its values are numbers.
    let mut numeric: Vec<bool> = varying
        .iter()
        .map(|name| {
            cases
                .iter()
                .all(|c| c.params.get(name).is_some_and(|v| v.parse::<f64>().is_ok()))
        })
        .collect();
    let metric_column = shared.is_none() && !names.is_empty();
    if metric_column {
        columns.push("metric".into());
        numeric.push(false);
    }
    columns.extend(["mean ± 95% CI", "n"].map(String::from));
    numeric.extend([true, true]);
    if scaling {
        columns.extend(["speed-up", "eff."].map(String::from));
        numeric.extend([true, true]);
    }
    columns.push("flags".into());
    numeric.push(false);

    let mut rows = Vec::with_capacity(cases.len());
    for (&index, case) in indexes.iter().zip(&cases) {
        let mut row: Vec<String> = varying
            .iter()
            .map(|name| case.params.get(name).cloned().unwrap_or_default())
            .collect();
        let metric = headline(case);
        if metric_column {
            row.push(metric.map_or(String::new(), |m| format!("{} ({})", m.name, m.unit)));
        }
        match metric {
            Some(m) => {
                row.push(super::run_table::value_with_ci(m));
                row.push(m.summary.n.to_string());
            }
            None => row.extend(["-".to_string(), "0".to_string()]),
        }
        if scaling {
            match speedups.get(&index) {
                Some((s, counts_cpus)) => {
                    row.push(format!("{:.2}×", s.speedup));
                    row.push(if *counts_cpus {
                        format!("{:.0}%", s.efficiency * 100.0)
                    } else {
                        String::new()
                    });
                }
                None => row.extend([String::new(), String::new()]),
            }
        }
        row.push(flags(case));
        rows.push(row);
    }
    let fits = own_sweeps
        .iter()
        .filter_map(|sweep| {
            let fit = sweep.usl.as_ref()?;
            let which = sweep.distinguishing(&varying);
            let line = sweeps::usl_line(fit, &sweep.param, sweep.unit.as_str());
            Some(if which.is_empty() {
                line
            } else {
                format!("{which}: {line}")
            })
        })
        .collect();
    Section {
        workload: workload.to_string(),
        headline: shared.map(|m| (m.name.clone(), m.unit.to_string(), m.direction)),
        set,
        varying,
        columns,
        numeric,
        rows,
        cases: indexes,
        fits,
    }
}

/// A section as terminal text: a title line, the `set:` line, the aligned
/// table (flags last, wrapped under their column when a row would be too
/// wide) and the USL lines.
fn section_text(section: &Section) -> String {
    let mut out = match &section.headline {
        Some((name, unit, direction)) => format!(
            "{} · {name} ({unit}, {} is better)\n",
            section.workload,
            better(*direction)
        ),
        None => format!("{}\n", section.workload),
    };
    if !section.set.is_empty() {
        out.push_str(&wrap("  set: ", &section.set));
    }
    let last = section.columns.len() - 1;
    let table: Vec<Vec<(String, bool)>> = std::iter::once(&section.columns)
        .chain(&section.rows)
        .map(|row| {
            row[..last]
                .iter()
                .zip(&section.numeric)
                .map(|(cell, &numeric)| (cell.clone(), numeric))
                .collect()
        })
        .collect();
    let body = align(&table);
    let flags_at = 2 + body.first().map_or(0, |l| l.chars().count()) + 2;
    let flags = std::iter::once(&section.columns)
        .chain(&section.rows)
        .map(|row| &row[last]);
    for (line, flags) in body.iter().zip(flags) {
        let line = format!("  {line}");
        if flags.is_empty() {
            out.push_str(line.trim_end());
            out.push('\n');
        } else if flags_at + flags.chars().count() <= WIDTH || flags_at + 20 > WIDTH {
            out.push_str(&format!("{line}  {flags}\n"));
        } else {
            out.push_str(&wrap_text(&format!("{line}  "), flags));
        }
    }
    for fit in &section.fits {
        out.push_str(&wrap_text("  ", fit));
    }
    out
}

fn better(direction: Direction) -> &'static str {
    match direction {
        Direction::Higher => "higher",
        Direction::Lower => "lower",
    }
}

/// The headline's outliers, the disturbed trials, and failure.
pub fn flags(case: &CaseRecord) -> String {
    let mut flags = Vec::new();
    if let Some(m) = headline(case) {
        let outliers = m.outliers.iter().filter(|&&o| o).count();
        if outliers > 0 {
            flags.push(format!(
                "{outliers} outlier{}",
                if outliers > 1 { "s" } else { "" }
            ));
        }
    }
    for (kind, count) in case.disturbances() {
        flags.push(format!("{kind} {count}/{}", case.used_trials()));
    }
    let replaced = case.replaced_trials();
    if replaced > 0 {
        flags.push(format!("{replaced} replaced"));
    }
    if case.error.is_some() {
        flags.push("failed".to_string());
    }
    if missed_target(case) {
        flags.push("wide".to_string());
    }
    flags.join(", ")
}

/// Whether the case ended wider than its run's precision target (the
/// engine's warning, shown under the table, says why).
pub fn missed_target(case: &CaseRecord) -> bool {
    case.warnings
        .iter()
        .any(|w| w.starts_with(PRECISION_WARNING_PREFIX))
}

/// The engine's warning about disturbed trials, which the flags column
/// already shows (`engine/runner.rs`, `disturbance_warning`).
pub fn is_disturbance_warning(warning: &str) -> bool {
    warning.contains(" trials disturbed (")
        && warning.ends_with("treat this case's numbers with care")
}

/// What the flags mean, for the kinds that appear in the run.
fn legend(run: &RunRecord) -> Option<String> {
    let kinds: BTreeSet<&'static str> = run
        .cases
        .iter()
        .flat_map(|c| c.disturbances())
        .map(|(kind, _)| kind)
        .collect();
    let outliers = run
        .cases
        .iter()
        .any(|c| headline(c).is_some_and(|m| m.outliers.iter().any(|&o| o)));
    let replaced = run.cases.iter().any(|c| c.replaced_trials() > 0);
    let wide = run.cases.iter().any(missed_target);
    if kinds.is_empty() && !outliers && !replaced && !wide {
        return None;
    }
    let mut parts = Vec::new();
    for kind in kinds {
        parts.push(match kind {
            "busy" => format!(
                "busy k/n: k of the n trials used ran while other processes used more than {OTHER_CPU_THRESHOLD_PCT}% of a CPU"
            ),
            "steal" => format!(
                "steal k/n: the hypervisor took more than {STEAL_THRESHOLD_PCT}% of the CPU time in k trials"
            ),
            "swap" => "swap k/n: pages were swapped in k trials".to_string(),
            other => format!("{other} k/n: k trials disturbed"),
        });
    }
    if outliers {
        parts.push("outlier: a trial outside Tukey's fences (kept, not dropped)".into());
    }
    if replaced {
        parts.push(
            "k replaced: k disturbed trials were each replaced by another trial of their round (kept in the record, left out of the numbers)"
                .into(),
        );
    }
    if wide {
        parts.push(
            "wide: the interval is wider than the run's precision target (the warning below says why and what would reach it)"
                .into(),
        );
    }
    let mut text = wrap_text("flags: ", &parts.join("; "));
    text.push_str("treat flagged cases with care; `--metrics all` shows every metric\n");
    Some(text)
}

/// `prefix` and `text` wrapped at spaces before [`WIDTH`] columns.
fn wrap_text(prefix: &str, text: &str) -> String {
    wrap(
        prefix,
        &text.split(' ').map(String::from).collect::<Vec<_>>(),
    )
}

/// `prefix` and the words, wrapped before [`WIDTH`] columns, continued
/// lines indented like the first.
fn wrap(prefix: &str, words: &[String]) -> String {
    let indent = " ".repeat(prefix.chars().count());
    let mut out = String::new();
    let mut line = prefix.to_string();
    let mut empty = true;
    for word in words {
        if !empty && line.chars().count() + 1 + word.chars().count() > WIDTH {
            out.push_str(&line);
            out.push('\n');
            line = indent.clone();
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    out.push_str(&line);
    out.push('\n');
    out
}

/// Pads cells to their column's width (right-aligned when the flag says
/// so), two spaces between columns; every line has the same width.
fn align(rows: &[Vec<(String, bool)>]) -> Vec<String> {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|(text, _)| text.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    rows.iter()
        .map(|row| {
            let cells: Vec<String> = row
                .iter()
                .zip(&widths)
                .map(|((text, right), &width)| {
                    if *right {
                        format!("{text:>width$}")
                    } else {
                        format!("{text:<width$}")
                    }
                })
                .collect();
            cells.join("  ")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::demo_run;

    #[test]
    fn a_cases_note_is_not_shown_as_a_warning() {
        let mut run = demo_run(1, "a", 1.0);
        run.cases[0].warnings = vec![
            "note: built with cc: gcc 12".to_string(),
            "the data set is small".to_string(),
        ];
        let text = render(&Escaped::new(run.clone()), &defaults());
        let note = text.lines().find(|l| l.contains("built with")).unwrap();
        assert!(note.starts_with("note: cpu.primes"), "{note}");
        assert!(note.ends_with(": built with cc: gcc 12"), "{note}");
        let warning = text.lines().find(|l| l.contains("data set")).unwrap();
        assert!(warning.starts_with("warning: cpu.primes"), "{warning}");
    }

    fn defaults() -> Defaults {
        BTreeMap::from([
            (
                "cpu.primes".to_string(),
                BTreeMap::from([
                    ("max_prime".to_string(), "10000".to_string()),
                    ("threads".to_string(), "1".to_string()),
                    ("time".to_string(), "10".to_string()),
                ]),
            ),
            (
                "http.static".to_string(),
                BTreeMap::from([("size".to_string(), "1".to_string())]),
            ),
        ])
    }

    #[test]
    fn one_line_per_case_with_only_the_parameters_that_matter() {
        let text = render(&Escaped::new(demo_run(1, "alpha", 1.0)), &defaults());
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("run 1 · profile quick"), "{text}");
        // Sections and their set-away-from-default parameters.
        assert!(
            text.contains(
                "\ncpu.primes · events_per_sec (events/s, higher is better)\n  set: time=0.5\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("\nmemory.latency · ns_per_load (ns, lower is better)\n"),
            "{text}"
        );
        // max_prime is at its default and the same everywhere: not shown;
        // an unknown workload's constant parameters are not shown either.
        assert!(!text.contains("max_prime"), "{text}");
        assert!(!text.contains("block_size"), "{text}");
        // The threads sweep: speed-up, efficiency and the USL.
        let header = lines
            .iter()
            .find(|l| l.trim_start().starts_with("threads"))
            .unwrap();
        assert_eq!(
            header.split_whitespace().collect::<Vec<_>>(),
            [
                "threads", "mean", "±", "95%", "CI", "n", "speed-up", "eff.", "flags"
            ]
        );
        let two = lines
            .iter()
            .find(|l| l.trim_start().starts_with("2 "))
            .unwrap();
        assert!(two.contains("1.99×") && two.contains("99%"), "{two}");
        assert!(text.contains("  USL λ="), "{text}");
        assert!(lines.iter().any(|l| l.contains("busy 2/3")), "{text}");
        // Two sweeps in crypto: no USL (two steps), speed-up per algorithm.
        let md5 = lines.iter().filter(|l| l.contains("md5")).count();
        assert_eq!(md5, 2, "{text}");
        // The failed case: a row, and its error below.
        assert!(
            text.contains("\nfileio\n  mean ± 95% CI  n  flags\n              -  0  failed\n"),
            "{text}"
        );
        assert!(
            text.contains("\nspeed-up: against the sweep's smallest step"),
            "{text}"
        );
        assert!(
            text.contains("error: fileio: no space left on device"),
            "{text}"
        );
        // The disturbance warning is folded into the flags and the legend.
        assert!(!text.contains("trials disturbed"), "{text}");
        assert!(
            text.contains("flags: busy k/n: k of the n trials used ran while other"),
            "{text}"
        );
        // One line per case plus headers: 15 cases here.
        let case_rows = lines
            .iter()
            .filter(|l| l.starts_with("  ") && !l.starts_with("  set:") && !l.starts_with("  USL"))
            .count();
        assert_eq!(case_rows, 15 + 5, "15 cases and 5 column headers: {text}");
        let widest = lines.iter().map(|l| l.chars().count()).max().unwrap();
        assert!(widest <= WIDTH, "{widest} columns: {text}");
    }

    #[test]
    fn cases_with_different_headlines_name_their_metric() {
        let mut run = demo_run(1, "alpha", 1.0);
        run.cases[1].metrics[0].name = "other_per_sec".into();
        let text = render(&Escaped::new(run.clone()), &Defaults::new());
        assert!(text.contains("\ncpu.primes\n"), "{text}");
        assert!(text.contains("other_per_sec (events/s)"), "{text}");
    }

    #[test]
    fn wrapping_keeps_lines_within_the_width() {
        let words: Vec<String> = (0..40).map(|i| format!("param{i}=value{i}")).collect();
        let text = wrap("  set: ", &words);
        assert!(text.lines().count() > 3);
        assert!(text.lines().all(|l| l.chars().count() <= WIDTH), "{text}");
        assert!(
            text.lines().skip(1).all(|l| l.starts_with("       p")),
            "{text}"
        );
    }
}

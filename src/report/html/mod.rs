//! `sledge report`: one self-contained HTML file for one or more runs, to
//! mail or attach to a ticket.
//!
//! Everything is inside the file: the style sheet is inline, the charts are
//! inline SVG drawn by plotters, there is no script and no font, image or
//! link to fetch (a Content-Security-Policy of `default-src 'none'` says
//! so to the browser), and it reads the same with JavaScript off.
//!
//! The markup is written with maud's `html!`, which escapes every value
//! put into the page, so that a string from a store or an imported file
//! (host names, parameters, warnings, command lines) cannot be added
//! unescaped by forgetting to. Two things go in as they are, each in one
//! place with its reason: the style sheet ([`style_sheet`]) and the SVG
//! that plotters draws (`charts::plotters_svg`). The `"\n"` literals keep
//! the page's lines: one table row, list item or figure part a line, so
//! the page reads as text too. The finished page goes through
//! [`visible::escape_lines`], so that control characters and bidi
//! overrides from a run (in text or in a chart's labels) show as `\x1b` or
//! `\u{202e}`, as in the terminal.
//!
//! The page: the hosts side by side with the facts that differ marked; a
//! comparison of each run against the first (`analysis::verdicts`); charts
//! per workload (a pivot table and its chart per sweep over two
//! parameters, a bar chart per other case across runs with 95% CIs and
//! every trial, scaling curves with the USL fit for sweeps, the latency
//! percentile spectrum of HTTP cases); the one-screen summary of each run.
//! What it shows is decided in `analysis::report_view`: this module draws
//! that view and computes nothing of its own.
//! Failures stay visible: a failed case keeps its figure, saying where it
//! failed, and a sweep with failed steps marks them and is called partial.

mod charts;
mod fleet_outliers;
mod history_chart;
mod pivot_chart;
mod pivot_figures;
mod run_names;

use std::collections::BTreeMap;

use maud::{DOCTYPE, Markup, PreEscaped, html};

use super::summary::{self, Defaults};
use super::sweeps;
use super::{format, run_table};
use crate::analysis::matched_across_runs::{CaseKey, SweepGroup};
use crate::analysis::report_view::{ChartedCase, ReportView, WorkloadCharts};
use crate::analysis::scaling_fit::{self, Sweep};
use crate::analysis::verdicts::{CaseComparison, JudgedOn, MetricComparison, RunComparison};
use crate::analysis::{Verdict, VerdictBasis};
use crate::probe::human_bytes;
use crate::results::{CaseRecord, RunRecord, Unit};
use crate::visible;
use charts::{Bar, BarChart, LatencyChart, LatencyLine, ScalingChart, ScalingLine, Trial};
use run_names::{run_heading, run_name};

/// The style sheet, inline in every report.
const STYLE: &str = include_str!("page.css");

/// The style sheet as markup. It goes in unescaped because it is
/// sledge's own, fixed when sledge is built, and because the inside of a
/// `<style>` element is not decoded by the browser: escaped, its quoted
/// font names would reach the CSS parser as `&quot;`.
fn style_sheet() -> Markup {
    PreEscaped(STYLE.to_string())
}

/// The page of `view` (built by `analysis::report_view::report_view`,
/// with the pivot tables of `sledge report --pivot` and the history
/// section of `--history` when asked for); `generated` is the time of the
/// report (RFC 3339).
pub fn render(view: &ReportView, generated: &str) -> anyhow::Result<String> {
    let runs = view.runs;
    let ids: Vec<String> = runs.iter().map(|r| r.id.to_string()).collect();
    let plural = if runs.len() == 1 { "" } else { "s" };
    let comparisons: Vec<Markup> = view.comparisons.iter().map(comparison).collect();
    let charts = charts_section(view)?;
    let empty = Defaults::new();
    let page = html! {
        (DOCTYPE) "\n"
        html lang="en" {
            "\n"
            head {
                "\n"
                meta charset="utf-8"; "\n"
                meta http-equiv="Content-Security-Policy"
                    content="default-src 'none'; style-src 'unsafe-inline'"; "\n"
                meta name="viewport" content="width=device-width, initial-scale=1"; "\n"
                title { "sledge report: run" (plural) " " (ids.join(", ")) } "\n"
                style { "\n" (style_sheet()) } "\n"
            }
            "\n"
            body {
                "\n"
                h1 { "sledge report" } "\n"
                p class="meta" {
                    (runs.len()) " run" (plural) " · made by sledge " (env!("CARGO_PKG_VERSION"))
                    " at " (generated)
                }
                "\n"
                nav {
                    a href="#hosts" { "Hosts" } " · " a href="#comparison" { "Comparison" } " · "
                    a href="#charts" { "Charts" } " · " a href="#summary" { "Summary per run" }
                }
                "\n"
                (hosts(runs))
                section id="comparison" {
                    "\n" h2 { "Comparison" } "\n"
                    @if runs.len() < 2 {
                        p {
                            "One run: nothing to compare. Give more runs to compare them with \
                             the first."
                        }
                        "\n"
                    }
                    @for c in &comparisons { (c) }
                }
                "\n"
                (fleet_outliers::section(&view.fleet_outliers))
                (charts)
                (history_chart::section(view.histories))
                section id="summary" {
                    "\n" h2 { "Summary per run" } "\n"
                    @for (i, run) in runs.iter().enumerate() {
                        (run_summary(i, run, &view.sweeps[i], view.defaults.get(i).unwrap_or(&empty)))
                    }
                }
                "\n"
                (legend())
            }
            "\n"
        }
        "\n"
    };
    // A control character or bidi override from a run (in the text or a
    // chart's labels) is shown as `\x1b` or `\u{202e}`, as in the terminal;
    // the page itself holds none but line breaks.
    let page = page.into_string();
    Ok(visible::escape_lines(&page).into_owned())
}

/// What the marks mean, at the end of the page.
fn legend() -> Markup {
    html! {
        footer {
            "\n"
            p {
                b { "Reading the charts." } " Bars are means with their 95% confidence intervals; \
                dots are the trials (● counted, ○ outlier by Tukey's fences, "
                span class="disturbed" { "✕" }
                " disturbed: the monitor saw other processes, steal or swapping during it). A \
                logarithmic axis is used where the values span more than 100×. Scaling curves: \
                solid lines join the means per step, dashed lines are the Universal Scalability \
                Law fitted to every trial, ▲ marks its predicted peak. Latency spectra come from \
                the stored HdrHistograms of all counted trials."
            }
            "\n"
        }
        "\n"
    }
}

/// Facts about a run's host and the run itself, one per row.
fn host_facts(run: &RunRecord) -> Vec<(String, String)> {
    let host = &run.host;
    let mut facts: Vec<(String, String)> = host
        .display_lines()
        .into_iter()
        .map(|(key, value)| match key.as_str() {
            // Clones of one image share a host name; a fleet run also
            // says which host `--hosts` named.
            "Host" => match run.fleet_host() {
                Some(fleet_host) => (key, format!("{value} (fleet host {fleet_host})")),
                None => (key, value),
            },
            // Only the sizes: available memory and free space change
            // from run to run and would mark every pair of runs.
            "Memory" => (key, human_bytes(host.memory.total_bytes)),
            "Filesystem" => (
                key,
                host.filesystem.as_ref().map_or("unavailable".into(), |fs| {
                    format!("{} on {} ({})", fs.fs_type, fs.source, fs.mount_point)
                }),
            ),
            _ => (key, value),
        })
        .collect();
    facts.insert(2, ("CPUs used".into(), run.cpus.len().to_string()));
    facts.extend([
        ("sledge".into(), run.sledge_version.clone()),
        ("Profile".into(), run.profile.clone()),
        ("Started".into(), run.started.clone()),
        ("Status".into(), run.status.as_str().to_string()),
        ("Command line".into(), run.command_line.clone()),
        ("UUID".into(), run.uuid.clone()),
    ]);
    facts
}

/// Facts that name each run and so always differ.
const ALWAYS_DIFFERENT: &[&str] = &["Started", "UUID"];

/// The hosts side by side; rows whose values differ are marked.
fn hosts(runs: &[RunRecord]) -> Markup {
    let facts: Vec<Vec<(String, String)>> = runs.iter().map(host_facts).collect();
    html! {
        section id="hosts" {
            "\n" h2 { "Hosts" } "\n"
            table class="hosts" {
                "\n"
                thead {
                    tr {
                        th {}
                        th { "fact" }
                        @for (i, run) in runs.iter().enumerate() { th { (run_heading(i, run)) } }
                    }
                }
                "\n"
                tbody {
                    "\n"
                    @for (row, (key, _)) in facts[0].iter().enumerate() {
                        @let values: Vec<&str> = facts.iter().map(|f| f[row].1.as_str()).collect();
                        @let differs = runs.len() > 1
                            && !ALWAYS_DIFFERENT.contains(&key.as_str())
                            && values.iter().any(|v| *v != values[0]);
                        tr class=[differs.then_some("differs")] {
                            td class="mark" { @if differs { "≠" } }
                            th { (key) }
                            @for value in &values { td { (value) } }
                        }
                        "\n"
                    }
                }
                "\n"
            }
            "\n"
            @if runs.len() > 1 {
                p class="note" { "≠ marks the facts that differ between the runs." } "\n"
            }
        }
        "\n"
    }
}

/// One candidate against the baseline: what `analysis::verdicts` returns,
/// one row per matched case with its headline metric (the first one
/// compared); `sledge compare` shows every metric.
fn comparison(c: &RunComparison) -> Markup {
    let s = &c.summary;
    let geo = match (s.geometric_mean, s.geometric_mean_ci) {
        (Some(g), Some((lo, hi))) => {
            format!(
                "geometric mean of the headline ratios (above 1: candidate better) {g:.3} [{lo:.3}, {hi:.3}]; "
            )
        }
        _ => String::new(),
    };
    let blind = if s.no_difference > 0 {
        format!(
            " ({} could not have seen a {} change)",
            s.could_not_detect,
            format::percent_given(s.detect)
        )
    } else {
        String::new()
    };
    let unflagged = if s.judged_on_unflagged > 0 {
        format!(
            "; {} judged on unflagged trials only",
            s.judged_on_unflagged
        )
    } else {
        String::new()
    };
    html! {
        h3 { "run " (c.candidate) " against run " (c.baseline) " (baseline)" } "\n"
        @if !c.host_differences.is_empty() {
            ul class="differences" {
                "\n"
                @for d in &c.host_differences {
                    li { (d.what) ": " (d.baseline) " → " (d.candidate) } "\n"
                }
            }
            "\n"
        }
        table class="comparison" {
            "\n"
            thead {
                tr {
                    th { "workload" } th { "parameters" } th { "metric" } th { "baseline" }
                    th { "candidate" } th { "ratio [95% CI]" } th { "verdict" } th { "basis" }
                }
            }
            "\n"
            tbody {
                "\n"
                @for case in &c.cases {
                    @if let Some(m) = case.metrics.first() {
                        @let row = judged(case, m);
                        tr {
                            td { (case.workload) }
                            td { (case.params) }
                            td { (m.name) " (" (m.unit.as_str()) ")" }
                            td class="num" { (format::value(m.baseline_mean)) }
                            td class="num" { (format::value(m.candidate_mean)) }
                            td class="num" { (row.ratio) }
                            td class=(row.class) { (row.verdict) }
                            td { (row.basis) }
                        }
                        "\n"
                    }
                }
            }
            "\n"
        }
        "\n"
        p class="note" {
            (geo) (s.faster) " faster, " (s.slower) " slower, " (s.no_difference) " no difference"
            (blind) ", " (s.not_judged) " not judged" (unflagged)
        }
        "\n"
        @for line in &c.unmatched {
            p class="note" { "unmatched: " (line) } "\n"
        }
    }
}

/// A comparison row's judgement of its headline metric, as the table
/// shows it.
struct Judged {
    /// The ratio with its 95% CI, or `-`.
    ratio: String,
    /// What was concluded, or why nothing was.
    verdict: String,
    /// The verdict cell's class: `faster`, `slower` or `same`.
    class: &'static str,
    /// What the verdict rests on.
    basis: String,
}

/// How the comparison of metric `m` of `case` reads in its row.
fn judged(case: &CaseComparison, m: &MetricComparison) -> Judged {
    let Some(cmp) = &m.comparison else {
        return Judged {
            ratio: "-".into(),
            verdict: m
                .not_compared
                .clone()
                .unwrap_or_else(|| "no samples".into()),
            class: "same",
            basis: String::new(),
        };
    };
    let (verdict, class) = match m.verdict() {
        Some(Verdict::Faster) => ("faster".to_string(), "faster"),
        Some(Verdict::Slower) => ("slower".to_string(), "slower"),
        Some(Verdict::NoDifference) => (
            match m.no_difference_within {
                Some(w) => format!("no significant difference, within {}", format::within(w)),
                None => "no significant difference".to_string(),
            },
            "same",
        ),
        None => (not_judged(case, m), "same"),
    };
    let basis = match cmp.basis {
        VerdictBasis::Paired => format!("{} paired rounds", m.paired_rounds),
        VerdictBasis::History => format!(
            "history of {} runs",
            m.baseline_history_runs.max(m.candidate_history_runs)
        ),
        VerdictBasis::Rounds => "rounds".to_string(),
        VerdictBasis::Trials => "trials (weak)".to_string(),
    };
    let basis = if cmp.history_suspect {
        format!(
            "{basis}; history suspect (runs scatter by more than {})",
            super::format::percent(crate::analysis::MAX_RUN_NOISE_SD_LOG.exp() - 1.0)
        )
    } else {
        basis
    };
    let basis = if m.judged && m.judged_on == JudgedOn::Unflagged {
        format!(
            "{basis}; judged on unflagged trials ({} left out)",
            case.disturbed_sides("baseline", "candidate").join("; ")
        )
    } else {
        basis
    };
    Judged {
        ratio: format!(
            "{:.3} [{:.3}, {:.3}]",
            cmp.ratio, cmp.ratio_ci_low, cmp.ratio_ci_high
        ),
        verdict,
        class,
        basis,
    }
}

/// Why a metric was not judged: which side's trials were disturbed, and
/// which kept too few without them.
fn not_judged(case: &CaseComparison, m: &MetricComparison) -> String {
    let mut sides = case.disturbed_sides("baseline", "candidate");
    sides.extend(m.not_judged.clone());
    format!("not judged: {}", sides.join("; "))
}

/// Charts per workload: a pivot table and its chart per sweep over two
/// parameters, a bar chart per other case, scaling curves per sweep,
/// latency spectra for HTTP cases.
fn charts_section(view: &ReportView) -> anyhow::Result<Markup> {
    let runs = view.runs;
    let mut parts: Vec<Markup> = Vec::new();
    for workload_charts in &view.workloads {
        let WorkloadCharts {
            workload,
            varying,
            pivots: tables,
            cases,
            sweeps: groups,
        } = workload_charts;
        let mut pivots = Vec::new();
        for group in tables {
            pivots.push(pivot_figures::figure(runs, group)?);
        }
        // A pivot table's chart stands for its cases' bar charts.
        let mut bars = Vec::new();
        for case in cases.iter().filter(|case| !case.in_pivot) {
            bars.push(case_figure(
                runs,
                workload,
                &case.key,
                &case.cases,
                varying,
            )?);
        }
        let scaling = scaling_figures(runs, &view.sweeps, groups)?;
        let latency: Vec<Markup> = cases
            .iter()
            .filter_map(|case| latency_figure(runs, case, varying).transpose())
            .collect::<anyhow::Result<_>>()?;
        parts.push(html! {
            h3 id=(format!("w-{workload}")) { (workload) } "\n"
            @for pivot in &pivots { (pivot) }
            div class="grid" {
                "\n"
                @for bar in &bars { (bar) }
            }
            "\n"
            (scaling)
            @for figure in &latency { (figure) }
        });
    }
    Ok(html! {
        section id="charts" {
            "\n" h2 { "Charts" } "\n"
            @for part in &parts { (part) }
        }
        "\n"
    })
}

/// One case across runs: its bar chart, and which runs it failed in (a
/// case that failed everywhere is a figure with only that note).
fn case_figure(
    runs: &[RunRecord],
    workload: &str,
    key: &CaseKey,
    cases: &[(usize, &CaseRecord)],
    varying: &[String],
) -> anyhow::Result<Markup> {
    let chart = bar_data(runs, cases);
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|&(i, case)| {
            let error = case.error.as_ref()?;
            Some(format!("failed in {}: {error}", run_name(&runs[i])))
        })
        .collect();
    if chart.is_none() && failures.is_empty() {
        return Ok(html! {});
    }
    let title = case_title(runs, key, cases, varying);
    let metric = cases.iter().find_map(|(_, c)| scaling_fit::headline(c));
    let svg = chart.as_ref().map(charts::bar_chart).transpose()?;
    Ok(html! {
        figure class="case" {
            figcaption {
                (if title.is_empty() { workload } else { &title }) " "
                span class="metric" {
                    @if let Some(m) = metric { (m.name) " (" (m.unit.as_str()) ")" }
                }
            }
            "\n"
            @if let Some(svg) = svg { (svg) "\n" }
            @for failure in &failures { p class="note failed" { (failure) } "\n" }
        }
        "\n"
    })
}

/// A case's chart title: the parameters that tell it from its workload's
/// other cases, with a per-CPU count that the key reads as `all` given as
/// the count each run resolved it to, as the scaling axis shows it
/// (`threads=2`; `threads=all (2 in run 1, 8 in run 2)` when runs differ).
fn case_title(
    runs: &[RunRecord],
    key: &CaseKey,
    cases: &[(usize, &CaseRecord)],
    varying: &[String],
) -> String {
    key.2
        .iter()
        .filter(|(k, _)| varying.contains(k))
        .map(|(k, v)| {
            if v != "all" {
                return format!("{k}={v}");
            }
            let resolved: Vec<(usize, &str)> = cases
                .iter()
                .filter_map(|&(i, case)| Some((i, case.params.get(k)?.as_str())))
                .collect();
            let mut values: Vec<&str> = resolved.iter().map(|r| r.1).collect();
            values.sort_unstable();
            values.dedup();
            match values.as_slice() {
                [one] => format!("{k}={one}"),
                _ => format!(
                    "{k}=all ({})",
                    resolved
                        .iter()
                        .map(|(i, value)| format!("{value} in {}", run_name(&runs[*i])))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The bars of one case across the runs that have it with a headline.
fn bar_data(runs: &[RunRecord], cases: &[(usize, &CaseRecord)]) -> Option<BarChart> {
    let mut unit = Unit::of("");
    let bars: Vec<Bar> = cases
        .iter()
        .filter_map(|&(i, case)| {
            let m = scaling_fit::headline(case)?;
            unit = m.unit.clone();
            Some(Bar {
                label: run_name(&runs[i]),
                run: i,
                mean: m.summary.mean,
                ci_low: m.summary.ci_low,
                ci_high: m.summary.ci_high,
                trials: m
                    .samples
                    .iter()
                    .enumerate()
                    .map(|(t, &value)| Trial {
                        value,
                        disturbed: case
                            .trials
                            .get(t)
                            .is_some_and(|trial| !trial.health.flags.is_empty()),
                        outlier: m.outliers.get(t).copied().unwrap_or(false),
                    })
                    .collect(),
            })
        })
        .collect();
    (!bars.is_empty()).then_some(BarChart { unit, bars })
}

/// Scaling curves of one workload: one chart per sweep (matched across
/// runs by parameter and fixed parameters), one line per run;
/// `all_sweeps` are the runs' sweeps the groups' members index.
fn scaling_figures(
    runs: &[RunRecord],
    all_sweeps: &[Vec<Sweep>],
    groups: &[SweepGroup],
) -> anyhow::Result<Markup> {
    let varying: Vec<String> = {
        let fixed: Vec<&BTreeMap<String, String>> = groups.iter().map(|g| &g.key.1).collect();
        let names: std::collections::BTreeSet<&String> =
            fixed.iter().flat_map(|f| f.keys()).collect();
        names
            .into_iter()
            .filter(|n| fixed.iter().any(|f| f.get(*n) != fixed[0].get(*n)))
            .cloned()
            .collect()
    };
    let mut figures = Vec::new();
    for SweepGroup { key, members } in groups {
        let members: Vec<(usize, &Sweep)> = members
            .iter()
            .map(|&(i, s)| (i, &all_sweeps[i][s]))
            .collect();
        let first = members[0].1;
        let lines: Vec<ScalingLine> = members
            .iter()
            .map(|&(i, sweep)| ScalingLine {
                label: run_name(&runs[i]),
                run: i,
                steps: sweep
                    .steps
                    .iter()
                    .filter_map(|step| {
                        let m = scaling_fit::headline(&runs[i].cases[step.case])?;
                        Some((step.n, m.summary.mean, m.summary.ci_low, m.summary.ci_high))
                    })
                    .collect(),
                failed: sweep.failed.iter().map(|f| f.n).collect(),
                fit: sweep.usl.clone(),
            })
            .collect();
        let svg = charts::scaling_chart(&ScalingChart {
            param: first.param.clone(),
            unit: first.unit.clone(),
            lines,
        })?;
        let which = crate::report::format::params_text(
            &key.1
                .iter()
                .filter(|(k, _)| varying.contains(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        );
        figures.push(html! {
            figure class="wide" {
                figcaption {
                    "scaling over " (first.param) " "
                    @if !which.is_empty() { "· " (which) " " }
                    span class="metric" { (first.metric) " (" (first.unit) ")" }
                }
                "\n" (svg) "\n"
                table class="scaling" {
                    thead {
                        tr {
                            th { "run" } th { "steps" } th { "speed-up at the last step" }
                            th { "USL" }
                        }
                    }
                    tbody {
                        "\n"
                        @for &(i, sweep) in &members {
                            tr {
                                td { (run_heading(i, &runs[i])) }
                                td class="num" { (steps_text(sweep)) }
                                td class="num" { (last_speedup_text(sweep)) }
                                td {
                                    @match &sweep.usl {
                                        Some(fit) => (sweeps::usl_line(fit, &sweep.param, sweep.unit.as_str())),
                                        None => { "needs " (crate::analysis::MIN_USL_STEPS) " steps" }
                                    }
                                }
                            }
                            "\n"
                        }
                    }
                }
                "\n"
            }
            "\n"
        });
    }
    Ok(html! { @for figure in &figures { (figure) } })
}

/// A sweep's steps, smallest first, failed ones marked: `1, 2, 4 (failed)`.
fn steps_text(sweep: &Sweep) -> String {
    let mut steps: Vec<(f64, bool)> = sweep.steps.iter().map(|s| (s.n, false)).collect();
    steps.extend(sweep.failed.iter().map(|f| (f.n, true)));
    steps.sort_by(|a, b| a.0.total_cmp(&b.0));
    steps
        .iter()
        .map(|&(n, failed)| {
            if failed {
                format!("{} (failed)", format::value(n))
            } else {
                format::value(n)
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The speed-up at the last measured step. When steps failed, the sweep
/// is partial and says so, with the step it got to: its efficiency is not
/// that of the sweep that was asked for.
fn last_speedup_text(sweep: &Sweep) -> String {
    let Some(last) = sweep.steps.last() else {
        return "-".into();
    };
    let speedup = last.speedup.map(|s| {
        if sweep.has_efficiency() {
            format!(
                "{:.2}× ({:.0}% efficiency)",
                s.speedup,
                s.efficiency * 100.0
            )
        } else {
            format!("{:.2}×", s.speedup)
        }
    });
    if sweep.failed.is_empty() {
        return speedup.unwrap_or_else(|| "-".into());
    }
    let failed: Vec<String> = sweep.failed.iter().map(|f| format::value(f.n)).collect();
    format!(
        "partial: {} at {}={}; {}={} failed",
        speedup.as_deref().unwrap_or("-"),
        sweep.param,
        format::value(last.n),
        sweep.param,
        failed.join(", ")
    )
}

/// The latency percentile spectrum of one HTTP case across runs, from the
/// stored histograms; `None` when no run has one.
fn latency_figure(
    runs: &[RunRecord],
    case: &ChartedCase,
    varying: &[String],
) -> anyhow::Result<Option<Markup>> {
    let lines: Vec<LatencyLine> = case
        .spectra
        .iter()
        .map(|(i, points)| LatencyLine {
            label: run_name(&runs[*i]),
            run: *i,
            points: points.clone(),
        })
        .collect();
    if lines.is_empty() {
        return Ok(None);
    }
    let title = crate::report::format::params_text(
        &case
            .key
            .2
            .iter()
            .filter(|(k, _)| varying.contains(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    );
    let svg = charts::latency_chart(&LatencyChart { lines })?;
    Ok(Some(html! {
        figure class="wide" {
            figcaption { "latency percentiles " (title) span class="metric" { "ms" } }
            "\n" (svg) "\n"
        }
        "\n"
    }))
}

/// One run's summary tables (the terminal summary as HTML).
fn run_summary(index: usize, run: &RunRecord, sweeps: &[Sweep], defaults: &Defaults) -> Markup {
    let mut notes = Vec::new();
    for case in &run.cases {
        if let Some(error) = &case.error {
            notes.push(format!("error: {}: {error}", case.label()));
        }
        for warning in case
            .warnings
            .iter()
            .filter(|w| !summary::is_disturbance_warning(w))
        {
            notes.push(format!("warning: {}: {warning}", case.label()));
        }
    }
    notes.extend(run.warnings.iter().map(|w| format!("warning: {w}")));
    html! {
        h3 { (run_heading(index, run)) } "\n"
        p class="meta" { (run_table::header(run).trim_end()) } "\n"
        @for section in summary::sections(run, sweeps, defaults) {
            h4 {
                (section.workload)
                @if let Some((name, unit, direction)) = &section.headline {
                    " · " (name) " (" (unit) ", "
                    (match direction {
                        crate::analysis::Direction::Higher => "higher",
                        crate::analysis::Direction::Lower => "lower",
                    })
                    " is better)"
                }
            }
            "\n"
            @if !section.set.is_empty() {
                p class="set" { "set: " (section.set.join(" ")) } "\n"
            }
            table class="summary" {
                thead { tr { @for column in &section.columns { th { (column) } } } }
                tbody {
                    "\n"
                    @for row in &section.rows {
                        tr {
                            @for (cell, numeric) in row.iter().zip(&section.numeric) {
                                td class=[numeric.then_some("num")] { (cell) }
                            }
                        }
                        "\n"
                    }
                }
            }
            "\n"
            @for fit in &section.fits { p class="fit" { (fit) } "\n" }
        }
        @if !notes.is_empty() {
            ul class="warnings" {
                "\n"
                @for note in &notes { li { (note) } "\n" }
            }
            "\n"
        }
    }
}

#[cfg(test)]
mod tests;

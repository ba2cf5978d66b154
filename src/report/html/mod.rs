//! `sledge report`: one self-contained HTML file for one or more runs, to
//! mail or attach to a ticket.
//!
//! Everything is inside the file: the style sheet is inline, the charts are
//! inline SVG drawn by plotters, there is no script and no font, image or
//! link to fetch (a Content-Security-Policy of `default-src 'none'` says
//! so to the browser), and it reads the same with JavaScript off. Every
//! string that comes from a store or an imported file (host names,
//! parameters, warnings, command lines) goes through [`escape`]; the
//! finished page goes through [`visible::escape_lines`], so that control
//! characters and bidi overrides from a run (in text or in a chart's
//! labels) show as `\x1b` or `\u{202e}`, as in the terminal.
//!
//! The page: the hosts side by side with the facts that differ marked; a
//! comparison of each run against the first (`report::compare`); charts
//! per workload (a pivot table and its chart per sweep over two
//! parameters, a bar chart per other case across runs with 95% CIs and
//! every trial, scaling curves with the USL fit for sweeps, the latency
//! percentile spectrum of HTTP cases); the one-screen summary of each run.
//! Failures stay visible: a failed case keeps its figure, saying where it
//! failed, and a sweep with failed steps marks them and is called partial.

mod charts;
mod fleet_outliers;
mod history_chart;
mod pivot_chart;
mod pivot_figures;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;

use hdrhistogram::Histogram;
use hdrhistogram::serialization::Deserializer;

use super::compare::{
    CaseComparison, CompareOptions, JudgedOn, MetricComparison, NoiseHistory, RunComparison,
    compare_runs,
};
use super::pivot::PivotChoice;
use super::summary::{self, Defaults};
use super::sweeps::{self, Sweep};
use super::{format, run_table};
use crate::probe::human_bytes;
use crate::results::{CaseRecord, RunRecord};
use crate::stats::{Verdict, VerdictBasis};
use crate::visible;
use charts::{Bar, BarChart, LatencyChart, LatencyLine, ScalingChart, ScalingLine, Trial};

/// The style sheet, inline in every report.
const STYLE: &str = include_str!("page.css");

/// Escapes text for HTML element content and quoted attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            other => out.push(other),
        }
    }
    out
}

/// The report of `runs` (the first is the baseline of the comparisons);
/// `defaults[i]` are the default parameters for run `i`'s summary;
/// `generated` is the time of the report (RFC 3339).
pub fn render(
    runs: &[RunRecord],
    defaults: &[Defaults],
    generated: &str,
    noise: &dyn NoiseHistory,
) -> anyhow::Result<String> {
    render_with(runs, defaults, generated, noise, &PivotChoice::Natural, &[])
}

/// [`render`], with the pivot tables (and their charts) that `choice`
/// makes (`sledge report --pivot`) and a history section
/// (`sledge report --history`): each case's runs on its host over time,
/// with their change points.
pub fn render_with(
    runs: &[RunRecord],
    defaults: &[Defaults],
    generated: &str,
    noise: &dyn NoiseHistory,
    choice: &PivotChoice,
    histories: &[super::history::History],
) -> anyhow::Result<String> {
    let ids: Vec<String> = runs.iter().map(|r| r.id.to_string()).collect();
    let mut page = String::new();
    writeln!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>sledge report: run{} {}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>",
        if runs.len() == 1 { "" } else { "s" },
        escape(&ids.join(", "))
    )?;
    writeln!(
        page,
        "<h1>sledge report</h1>\n<p class=\"meta\">{} run{} · made by sledge {} at {}</p>",
        runs.len(),
        if runs.len() == 1 { "" } else { "s" },
        env!("CARGO_PKG_VERSION"),
        escape(generated)
    )?;
    page.push_str(
        "<nav><a href=\"#hosts\">Hosts</a> · <a href=\"#comparison\">Comparison</a> · \
         <a href=\"#charts\">Charts</a> · <a href=\"#summary\">Summary per run</a></nav>\n",
    );
    page.push_str(&hosts(runs));
    page.push_str("<section id=\"comparison\">\n<h2>Comparison</h2>\n");
    if runs.len() < 2 {
        page.push_str(
            "<p>One run: nothing to compare. Give more runs to compare them with the first.</p>\n",
        );
    }
    for candidate in runs.iter().skip(1) {
        page.push_str(&comparison(&compare_runs(
            &runs[0],
            candidate,
            noise,
            CompareOptions::default(),
        )));
    }
    page.push_str("</section>\n");
    page.push_str(&fleet_outliers::section(
        &crate::report::fleet_outliers::fleet_outliers(runs),
    ));
    let all_sweeps: Vec<Vec<Sweep>> = runs.iter().map(sweeps::find).collect();
    page.push_str(&charts_section(runs, &all_sweeps, choice)?);
    page.push_str(&history_chart::section(histories));
    page.push_str("<section id=\"summary\">\n<h2>Summary per run</h2>\n");
    for (i, run) in runs.iter().enumerate() {
        let empty = Defaults::new();
        let defaults = defaults.get(i).unwrap_or(&empty);
        page.push_str(&run_summary(i, run, &all_sweeps[i], defaults));
    }
    page.push_str("</section>\n");
    page.push_str(LEGEND);
    page.push_str("</body>\n</html>\n");
    // A control character or bidi override from a run (in the text or a
    // chart's labels) is shown as `\x1b` or `\u{202e}`, as in the terminal;
    // the page itself holds none but line breaks.
    Ok(visible::escape_lines(&page).into_owned())
}

/// What the marks mean, at the end of the page.
const LEGEND: &str = "<footer>\n<p><b>Reading the charts.</b> Bars are means with their 95% \
confidence intervals; dots are the trials (● counted, ○ outlier by Tukey's fences, \
<span class=\"disturbed\">✕</span> disturbed: the monitor saw other processes, steal or \
swapping during it). A logarithmic axis is used where the values span more than 100×. \
Scaling curves: solid lines join the means per step, dashed lines are the Universal \
Scalability Law fitted to every trial, ▲ marks its predicted peak. Latency spectra come \
from the stored HdrHistograms of all counted trials.</p>\n</footer>\n";

/// `run 3`: how a run is named in tables and charts.
fn run_name(run: &RunRecord) -> String {
    format!("run {}", run.id)
}

/// A coloured square and the run's name.
fn run_heading(index: usize, run: &RunRecord) -> String {
    format!(
        "<span class=\"swatch\" style=\"background:{}\"></span>{}",
        charts::css_color(index),
        escape(&run_name(run))
    )
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
fn hosts(runs: &[RunRecord]) -> String {
    let facts: Vec<Vec<(String, String)>> = runs.iter().map(host_facts).collect();
    let mut out = String::from(
        "<section id=\"hosts\">\n<h2>Hosts</h2>\n<table class=\"hosts\">\n<thead><tr><th></th><th>fact</th>",
    );
    for (i, run) in runs.iter().enumerate() {
        let _ = write!(out, "<th>{}</th>", run_heading(i, run));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for (row, (key, _)) in facts[0].iter().enumerate() {
        let values: Vec<&str> = facts.iter().map(|f| f[row].1.as_str()).collect();
        let differs = runs.len() > 1
            && !ALWAYS_DIFFERENT.contains(&key.as_str())
            && values.iter().any(|v| *v != values[0]);
        let _ = write!(
            out,
            "<tr{}><td class=\"mark\">{}</td><th>{}</th>",
            if differs { " class=\"differs\"" } else { "" },
            if differs { "≠" } else { "" },
            escape(key)
        );
        for value in values {
            let _ = write!(out, "<td>{}</td>", escape(value));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
    if runs.len() > 1 {
        out.push_str("<p class=\"note\">≠ marks the facts that differ between the runs.</p>\n");
    }
    out.push_str("</section>\n");
    out
}

/// One candidate against the baseline: what `report::compare` returns,
/// one row per matched case with its headline metric (the first one
/// compared); `sledge compare` shows every metric.
fn comparison(c: &RunComparison) -> String {
    let mut out = format!(
        "<h3>run {} against run {} (baseline)</h3>\n",
        c.candidate, c.baseline
    );
    if !c.host_differences.is_empty() {
        out.push_str("<ul class=\"differences\">\n");
        for d in &c.host_differences {
            let _ = writeln!(
                out,
                "<li>{}: {} → {}</li>",
                escape(&d.what),
                escape(&d.baseline),
                escape(&d.candidate)
            );
        }
        out.push_str("</ul>\n");
    }
    out.push_str(
        "<table class=\"comparison\">\n<thead><tr><th>workload</th><th>parameters</th><th>metric</th>\
         <th>baseline</th><th>candidate</th><th>ratio [95% CI]</th><th>verdict</th><th>basis</th></tr></thead>\n<tbody>\n",
    );
    for case in &c.cases {
        let Some(m) = case.metrics.first() else {
            continue;
        };
        let (ratio, verdict, class, basis) = match &m.comparison {
            Some(cmp) => {
                let (verdict, class) = match m.verdict() {
                    Some(Verdict::Faster) => ("faster".to_string(), "faster"),
                    Some(Verdict::Slower) => ("slower".to_string(), "slower"),
                    Some(Verdict::NoDifference) => (
                        match m.no_difference_within {
                            Some(w) => {
                                format!("no significant difference, within {}", format::within(w))
                            }
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
                        super::format::percent(crate::stats::MAX_RUN_NOISE_SD_LOG.exp() - 1.0)
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
                (
                    format!(
                        "{:.3} [{:.3}, {:.3}]",
                        cmp.ratio, cmp.ratio_ci_low, cmp.ratio_ci_high
                    ),
                    verdict,
                    class,
                    basis,
                )
            }
            None => (
                "-".into(),
                m.not_compared
                    .clone()
                    .unwrap_or_else(|| "no samples".into()),
                "same",
                String::new(),
            ),
        };
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{} ({})</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td class=\"{class}\">{}</td><td>{}</td></tr>",
            escape(&case.workload),
            escape(&case.params),
            escape(&m.name),
            escape(&m.unit),
            format::value(m.baseline_mean),
            format::value(m.candidate_mean),
            ratio,
            escape(&verdict),
            escape(&basis),
        );
    }
    out.push_str("</tbody>\n</table>\n");
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
    let _ = writeln!(
        out,
        "<p class=\"note\">{geo}{} faster, {} slower, {} no difference{blind}, {} not judged{unflagged}</p>",
        s.faster, s.slower, s.no_difference, s.not_judged
    );
    for line in &c.unmatched {
        let _ = writeln!(out, "<p class=\"note\">unmatched: {}</p>", escape(line));
    }
    out
}

/// Why a metric was not judged: which side's trials were disturbed, and
/// which kept too few without them.
fn not_judged(case: &CaseComparison, m: &MetricComparison) -> String {
    let mut sides = case.disturbed_sides("baseline", "candidate");
    sides.extend(m.not_judged.clone());
    format!("not judged: {}", sides.join("; "))
}

/// The key cases are matched on across runs: workload, version and
/// parameters, with a parameter given as `all` read as `all` (the rule of
/// `report::compare`).
fn case_key(case: &CaseRecord, run: &RunRecord) -> (String, u32, BTreeMap<String, String>) {
    (
        case.workload.clone(),
        case.workload_version,
        all_cpus_as_all(&case.params, case, run),
    )
}

/// `params` (of `case` of `run`, or a part of them) with each one given as
/// `all` read as `all`.
fn all_cpus_as_all(
    params: &BTreeMap<String, String>,
    case: &CaseRecord,
    run: &RunRecord,
) -> BTreeMap<String, String> {
    params
        .iter()
        .map(|(k, v)| {
            let all = super::compare::reads_all(case, run, k, v);
            (k.clone(), if all { "all".into() } else { v.clone() })
        })
        .collect()
}

/// The key cases are matched on in the charts, and their cases per run.
type ChartKey = (String, u32, BTreeMap<String, String>);

/// Charts per workload: a bar chart per case, scaling curves per sweep,
/// latency spectra for HTTP cases. Cases are grouped once, by key and by
/// workload, so the section takes time in proportion to the cases.
fn charts_section(
    runs: &[RunRecord],
    all_sweeps: &[Vec<Sweep>],
    choice: &PivotChoice,
) -> anyhow::Result<String> {
    let mut out = String::from("<section id=\"charts\">\n<h2>Charts</h2>\n");
    let mut pivot_groups = pivot_figures::group_tables(runs, choice);
    // Each key with (run index, case) per run that has it, keys in
    // first-seen order; each workload's keys, workloads in first-seen order.
    let mut matched: Vec<(ChartKey, Vec<(usize, &CaseRecord)>)> = Vec::new();
    let mut key_index: HashMap<ChartKey, usize> = HashMap::new();
    let mut workloads: Vec<(&str, Vec<usize>)> = Vec::new();
    let mut workload_index: HashMap<&str, usize> = HashMap::new();
    for (i, run) in runs.iter().enumerate() {
        for case in &run.cases {
            let key = case_key(case, run);
            if let Some(&k) = key_index.get(&key) {
                matched[k].1.push((i, case));
                continue;
            }
            let w = *workload_index
                .entry(case.workload.as_str())
                .or_insert_with(|| {
                    workloads.push((case.workload.as_str(), Vec::new()));
                    workloads.len() - 1
                });
            workloads[w].1.push(matched.len());
            key_index.insert(key.clone(), matched.len());
            matched.push((key, vec![(i, case)]));
        }
    }
    let mut sweep_groups = group_sweeps(runs, all_sweeps);
    for (workload, keys) in workloads {
        let _ = writeln!(out, "<h3 id=\"w-{0}\">{0}</h3>", escape(workload));
        // Which parameters tell this workload's cases apart.
        let varying: Vec<String> = {
            let cases: Vec<&CaseRecord> = keys
                .iter()
                .flat_map(|&k| matched[k].1.iter().map(|p| p.1))
                .collect();
            summary::varying_params(&cases)
        };
        // A pivot table's chart stands for its cases' bar charts.
        let tables = pivot_groups.remove(workload).unwrap_or_default();
        let mut charted: HashSet<*const CaseRecord> = HashSet::new();
        for group in &tables {
            out.push_str(&pivot_figures::figure(runs, group)?);
            charted.extend(pivot_figures::cases(group).map(|(i, c)| &runs[i].cases[c] as *const _));
        }
        out.push_str("<div class=\"grid\">\n");
        for &k in &keys {
            let (key, cases) = &matched[k];
            if cases
                .iter()
                .all(|&(_, case)| charted.contains(&(case as *const _)))
            {
                continue;
            }
            out.push_str(&case_figure(runs, workload, key, cases, &varying)?);
        }
        out.push_str("</div>\n");
        let groups = sweep_groups.remove(workload).unwrap_or_default();
        out.push_str(&scaling_figures(runs, &groups)?);
        if workload.starts_with("http.") {
            for &k in &keys {
                let (key, cases) = &matched[k];
                if let Some(figure) = latency_figure(runs, cases, &key.2, &varying)? {
                    out.push_str(&figure);
                }
            }
        }
    }
    out.push_str("</section>\n");
    Ok(out)
}

/// One case across runs: its bar chart, and which runs it failed in (a
/// case that failed everywhere is a figure with only that note).
fn case_figure(
    runs: &[RunRecord],
    workload: &str,
    key: &ChartKey,
    cases: &[(usize, &CaseRecord)],
    varying: &[String],
) -> anyhow::Result<String> {
    let chart = bar_data(runs, cases);
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|&(i, case)| {
            let error = case.error.as_ref()?;
            Some(format!("failed in {}: {error}", run_name(&runs[i])))
        })
        .collect();
    if chart.is_none() && failures.is_empty() {
        return Ok(String::new());
    }
    let title = case_title(runs, key, cases, varying);
    let metric = cases.iter().find_map(|(_, c)| sweeps::headline(c));
    let mut figure = format!(
        "<figure class=\"case\"><figcaption>{} <span class=\"metric\">{}</span></figcaption>\n",
        escape(if title.is_empty() { workload } else { &title }),
        escape(&metric.map_or(String::new(), |m| format!("{} ({})", m.name, m.unit))),
    );
    if let Some(chart) = chart {
        figure.push_str(&charts::bar_chart(&chart)?);
        figure.push('\n');
    }
    for failure in failures {
        let _ = writeln!(figure, "<p class=\"note failed\">{}</p>", escape(&failure));
    }
    figure.push_str("</figure>\n");
    Ok(figure)
}

/// A case's chart title: the parameters that tell it from its workload's
/// other cases, with a per-CPU count that the key reads as `all` given as
/// the count each run resolved it to, as the scaling axis shows it
/// (`threads=2`; `threads=all (2 in run 1, 8 in run 2)` when runs differ).
fn case_title(
    runs: &[RunRecord],
    key: &ChartKey,
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
    let mut unit = String::new();
    let bars: Vec<Bar> = cases
        .iter()
        .filter_map(|&(i, case)| {
            let m = sweeps::headline(case)?;
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

/// Sweeps matched across runs: by parameter and fixed parameters.
type SweepKey = (String, BTreeMap<String, String>);

/// One sweep across runs: its key and (run index, sweep) per run.
type SweepGroup<'a> = (SweepKey, Vec<(usize, &'a Sweep)>);

/// Every workload's sweeps matched across runs, in first-seen order.
fn group_sweeps<'a>(
    runs: &[RunRecord],
    all_sweeps: &'a [Vec<Sweep>],
) -> HashMap<&'a str, Vec<SweepGroup<'a>>> {
    let mut groups: HashMap<&str, Vec<SweepGroup>> = HashMap::new();
    let mut index: HashMap<(&str, SweepKey), usize> = HashMap::new();
    for (i, sweeps) in all_sweeps.iter().enumerate() {
        for sweep in sweeps {
            // The fixed parameters are those of every step's case.
            let Some(step) = sweep.steps.first() else {
                continue;
            };
            let case = &runs[i].cases[step.case];
            let key = (
                sweep.param.clone(),
                all_cpus_as_all(&sweep.fixed, case, &runs[i]),
            );
            let own = groups.entry(&sweep.workload).or_default();
            let at = *index
                .entry((sweep.workload.as_str(), key.clone()))
                .or_insert_with(|| {
                    own.push((key, Vec::new()));
                    own.len() - 1
                });
            own[at].1.push((i, sweep));
        }
    }
    groups
}

/// Scaling curves of one workload: one chart per sweep (matched across
/// runs by parameter and fixed parameters), one line per run.
fn scaling_figures(runs: &[RunRecord], groups: &[SweepGroup]) -> anyhow::Result<String> {
    let varying: Vec<String> = {
        let fixed: Vec<&BTreeMap<String, String>> = groups.iter().map(|g| &g.0.1).collect();
        let names: std::collections::BTreeSet<&String> =
            fixed.iter().flat_map(|f| f.keys()).collect();
        names
            .into_iter()
            .filter(|n| fixed.iter().any(|f| f.get(*n) != fixed[0].get(*n)))
            .cloned()
            .collect()
    };
    let mut out = String::new();
    for (key, members) in groups {
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
                        let m = sweeps::headline(&runs[i].cases[step.case])?;
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
        let _ = write!(
            out,
            "<figure class=\"wide\"><figcaption>scaling over {} {}<span class=\"metric\">{} ({})</span></figcaption>\n{svg}\n",
            escape(&first.param),
            if which.is_empty() {
                String::new()
            } else {
                format!("· {} ", escape(&which))
            },
            escape(&first.metric),
            escape(&first.unit)
        );
        out.push_str("<table class=\"scaling\"><thead><tr><th>run</th><th>steps</th><th>speed-up at the last step</th><th>USL</th></tr></thead><tbody>\n");
        for &(i, sweep) in members {
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
                run_heading(i, &runs[i]),
                escape(&steps_text(sweep)),
                escape(&last_speedup_text(sweep)),
                sweep.usl.as_ref().map_or_else(
                    || format!("needs {} steps", crate::stats::MIN_USL_STEPS),
                    |fit| escape(&sweeps::usl_line(fit, &sweep.param, &sweep.unit))
                ),
            );
        }
        out.push_str("</tbody></table>\n</figure>\n");
    }
    Ok(out)
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
    cases: &[(usize, &CaseRecord)],
    params: &BTreeMap<String, String>,
    varying: &[String],
) -> anyhow::Result<Option<String>> {
    let lines: Vec<LatencyLine> = cases
        .iter()
        .filter_map(|&(i, case)| {
            Some(LatencyLine {
                label: run_name(&runs[i]),
                run: i,
                points: percentile_spectrum(case.latency_histogram.as_deref()?)?,
            })
        })
        .collect();
    if lines.is_empty() {
        return Ok(None);
    }
    let title = crate::report::format::params_text(
        &params
            .iter()
            .filter(|(k, _)| varying.contains(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    );
    Ok(Some(format!(
        "<figure class=\"wide\"><figcaption>latency percentiles {}<span class=\"metric\">ms</span></figcaption>\n{}\n</figure>\n",
        escape(&title),
        charts::latency_chart(&LatencyChart { lines })?
    )))
}

/// (nines, milliseconds) from a serialized histogram of nanoseconds: every
/// quarter of a nine from p0 up to what the sample count supports (p99.9
/// needs about 1000 values), at most p99.999.
fn percentile_spectrum(bytes: &[u8]) -> Option<Vec<(f64, f64)>> {
    let histogram: Histogram<u64> = Deserializer::new().deserialize(&mut &bytes[..]).ok()?;
    if histogram.is_empty() {
        return None;
    }
    let max_nines = (histogram.len() as f64).log10().min(5.0);
    let points = (0..=20)
        .map(|k| f64::from(k) / 4.0)
        .filter(|&nines| nines <= max_nines)
        .map(|nines| {
            let quantile = 1.0 - 10f64.powf(-nines);
            (nines, histogram.value_at_quantile(quantile) as f64 / 1e6)
        })
        .collect();
    Some(points)
}

/// One run's summary tables (the terminal summary as HTML).
fn run_summary(index: usize, run: &RunRecord, sweeps: &[Sweep], defaults: &Defaults) -> String {
    let mut out = format!(
        "<h3>{}</h3>\n<p class=\"meta\">{}</p>\n",
        run_heading(index, run),
        escape(run_table::header(run).trim_end())
    );
    for section in summary::sections(run, sweeps, defaults) {
        let title = match &section.headline {
            Some((name, unit, direction)) => format!(
                "{} · {name} ({unit}, {} is better)",
                section.workload,
                match direction {
                    crate::stats::Direction::Higher => "higher",
                    crate::stats::Direction::Lower => "lower",
                }
            ),
            None => section.workload.clone(),
        };
        let _ = writeln!(out, "<h4>{}</h4>", escape(&title));
        if !section.set.is_empty() {
            let _ = writeln!(
                out,
                "<p class=\"set\">set: {}</p>",
                escape(&section.set.join(" "))
            );
        }
        out.push_str("<table class=\"summary\"><thead><tr>");
        for column in &section.columns {
            let _ = write!(out, "<th>{}</th>", escape(column));
        }
        out.push_str("</tr></thead><tbody>\n");
        for row in &section.rows {
            out.push_str("<tr>");
            for (cell, numeric) in row.iter().zip(&section.numeric) {
                let _ = write!(
                    out,
                    "<td{}>{}</td>",
                    if *numeric { " class=\"num\"" } else { "" },
                    escape(cell)
                );
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody></table>\n");
        for fit in &section.fits {
            let _ = writeln!(out, "<p class=\"fit\">{}</p>", escape(fit));
        }
    }
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
    if !notes.is_empty() {
        out.push_str("<ul class=\"warnings\">\n");
        for note in notes {
            let _ = writeln!(out, "<li>{}</li>", escape(&note));
        }
        out.push_str("</ul>\n");
    }
    out
}

#[cfg(test)]
mod tests;

//! Side-by-side comparison of two runs: cases matched by workload, version
//! and parameters; per metric the ratio, its CI and a verdict.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, CellAlignment, Color, ContentArrangement, Table};
use serde::Serialize;

use super::format;
use crate::results::{CaseRecord, RunRecord};
use crate::stats::{self, Comparison, Direction, NOISE_THRESHOLD, SIGNIFICANCE_LEVEL, Verdict};

/// The comparison of a candidate run against a baseline run.
#[derive(Debug, Clone, Serialize)]
pub struct RunComparison {
    /// The baseline run's id.
    pub baseline: i64,
    /// The candidate run's id.
    pub candidate: i64,
    /// Host facts that differ between the two runs (what, baseline, candidate).
    pub host_differences: Vec<(String, String, String)>,
    /// Cases present in both runs.
    pub cases: Vec<CaseComparison>,
    /// Cases present in only one run, or at different workload versions.
    pub unmatched: Vec<String>,
}

/// One case present in both runs.
#[derive(Debug, Clone, Serialize)]
pub struct CaseComparison {
    /// Workload id.
    pub workload: String,
    /// Parameters as `k=v k=v`.
    pub params: String,
    /// One entry per metric present in both.
    pub metrics: Vec<MetricComparison>,
}

/// One metric of a matched case.
#[derive(Debug, Clone, Serialize)]
pub struct MetricComparison {
    /// Metric name.
    pub name: String,
    /// Unit.
    pub unit: String,
    /// Which way is better.
    pub direction: Direction,
    /// Baseline mean.
    pub baseline_mean: f64,
    /// Candidate mean.
    pub candidate_mean: f64,
    /// Ratio candidate / baseline with its CI, p-value and verdict; absent
    /// when a side has no usable samples.
    pub comparison: Option<Comparison>,
}

/// Compares `candidate` against `baseline`.
pub fn compare_runs(baseline: &RunRecord, candidate: &RunRecord) -> RunComparison {
    let mut cases = Vec::new();
    let mut unmatched = Vec::new();
    for a in &baseline.cases {
        match candidate
            .cases
            .iter()
            .find(|b| b.workload == a.workload && b.params == a.params)
        {
            Some(b) if b.workload_version != a.workload_version => unmatched.push(format!(
                "{}: workload version {} in run {} but {} in run {}; not comparable",
                a.label(),
                a.workload_version,
                baseline.id,
                b.workload_version,
                candidate.id
            )),
            Some(b) => cases.push(compare_case(a, b)),
            None => unmatched.push(format!("{}: only in run {}", a.label(), baseline.id)),
        }
    }
    for b in &candidate.cases {
        if !baseline
            .cases
            .iter()
            .any(|a| a.workload == b.workload && a.params == b.params)
        {
            unmatched.push(format!("{}: only in run {}", b.label(), candidate.id));
        }
    }
    RunComparison {
        baseline: baseline.id,
        candidate: candidate.id,
        host_differences: host_differences(baseline, candidate),
        cases,
        unmatched,
    }
}

fn compare_case(a: &CaseRecord, b: &CaseRecord) -> CaseComparison {
    let metrics = a
        .metrics
        .iter()
        .filter_map(|ma| {
            let mb = b.metrics.iter().find(|m| m.name == ma.name)?;
            Some(MetricComparison {
                name: ma.name.clone(),
                unit: ma.unit.clone(),
                direction: ma.direction,
                baseline_mean: ma.summary.mean,
                candidate_mean: mb.summary.mean,
                comparison: stats::compare(&ma.samples, &mb.samples, ma.direction),
            })
        })
        .collect();
    CaseComparison {
        workload: a.workload.clone(),
        params: a.params_text(),
        metrics,
    }
}

fn host_differences(a: &RunRecord, b: &RunRecord) -> Vec<(String, String, String)> {
    let facts = |r: &RunRecord| {
        vec![
            ("host".to_string(), r.host.hostname.clone()),
            ("CPU".to_string(), r.host.cpu.model.clone()),
            ("CPUs used".to_string(), r.cpus.len().to_string()),
            ("kernel".to_string(), r.host.os.kernel.clone()),
            ("sledge".to_string(), r.sledge_version.clone()),
        ]
    };
    facts(a)
        .into_iter()
        .zip(facts(b))
        .filter(|((_, x), (_, y))| x != y)
        .map(|((name, x), (_, y))| (name, x, y))
        .collect()
}

/// The comparison as a terminal table with a legend.
pub fn render(c: &RunComparison) -> String {
    let mut out = format!(
        "baseline: run {} · candidate: run {} · ratio = candidate / baseline\n",
        c.baseline, c.candidate
    );
    for (what, a, b) in &c.host_differences {
        out.push_str(&format!("differs: {what}: {a} → {b}\n"));
    }
    let mut table = Table::new();
    table
        .load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(vec![
            "workload",
            "parameters",
            "metric",
            "baseline",
            "candidate",
            "ratio [95% CI]",
            "p",
            "verdict",
        ]);
    for case in &c.cases {
        for (i, m) in case.metrics.iter().enumerate() {
            let (ratio, p, verdict) = match &m.comparison {
                Some(cmp) => (
                    format!(
                        "{:.3} [{:.3}, {:.3}]",
                        cmp.ratio, cmp.ratio_ci_low, cmp.ratio_ci_high
                    ),
                    format!("{:.3}", cmp.p_value),
                    verdict_cell(cmp.verdict, m.direction),
                ),
                None => ("-".into(), "-".into(), Cell::new("no samples")),
            };
            table.add_row(vec![
                Cell::new(if i == 0 { case.workload.as_str() } else { "" }),
                Cell::new(if i == 0 {
                    case.params.clone()
                } else {
                    String::new()
                }),
                Cell::new(format!("{} ({})", m.name, m.unit)),
                Cell::new(format::value(m.baseline_mean)).set_alignment(CellAlignment::Right),
                Cell::new(format::value(m.candidate_mean)).set_alignment(CellAlignment::Right),
                Cell::new(ratio).set_alignment(CellAlignment::Right),
                Cell::new(p).set_alignment(CellAlignment::Right),
                verdict,
            ]);
        }
    }
    out.push_str(&table.to_string());
    out.push('\n');
    for line in &c.unmatched {
        out.push_str(&format!("unmatched: {line}\n"));
    }
    out.push_str(&format!(
        "verdict: Welch's t-test at the {} level, and a difference above {} of the mean; otherwise \"no significant difference\".\n",
        format::percent(SIGNIFICANCE_LEVEL),
        format::percent(NOISE_THRESHOLD)
    ));
    out
}

fn verdict_cell(verdict: Verdict, direction: Direction) -> Cell {
    let better = match direction {
        Direction::Higher => "higher",
        Direction::Lower => "lower",
    };
    match verdict {
        Verdict::Faster => Cell::new(format!("faster ({better} is better)")).fg(Color::Green),
        Verdict::Slower => Cell::new(format!("slower ({better} is better)")).fg(Color::Red),
        Verdict::NoDifference => Cell::new("no significant difference"),
    }
}

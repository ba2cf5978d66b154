//! Side-by-side comparison of two runs: cases matched by workload, version
//! and parameters; per metric the ratio, its CI and a verdict.

use std::collections::BTreeMap;

use comfy_table::{Cell, CellAlignment, Color};
use serde::Serialize;

use super::format;
use super::listing::new_table;
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

/// Parameters whose value `all` (one per CPU) is resolved to a number at
/// run time; see [`match_key`].
const PER_CPU_PARAMS: &[&str] = &["threads", "copies"];

/// The parameters a case is matched on: as stored, except that a per-CPU
/// parameter equal to the run's CPU count reads `all`. So `threads=all` on
/// a 2-CPU VM matches `threads=all` on an 8-CPU box ("one core vs all
/// cores" across machines), while explicit counts still match exactly.
fn match_key(case: &CaseRecord, run: &RunRecord) -> (String, BTreeMap<String, String>) {
    let cpus = run.cpus.len().to_string();
    let params = case
        .params
        .iter()
        .map(|(k, v)| {
            let all = run.cpus.len() > 1 && PER_CPU_PARAMS.contains(&k.as_str()) && *v == cpus;
            (k.clone(), if all { "all".to_string() } else { v.clone() })
        })
        .collect();
    (case.workload.clone(), params)
}

/// Compares `candidate` against `baseline`.
pub fn compare_runs(baseline: &RunRecord, candidate: &RunRecord) -> RunComparison {
    let mut cases = Vec::new();
    let mut unmatched = Vec::new();
    let candidate_keys: Vec<_> = candidate
        .cases
        .iter()
        .map(|c| match_key(c, candidate))
        .collect();
    let baseline_keys: Vec<_> = baseline
        .cases
        .iter()
        .map(|c| match_key(c, baseline))
        .collect();
    for (a, key) in baseline.cases.iter().zip(&baseline_keys) {
        match candidate_keys
            .iter()
            .position(|k| k == key)
            .map(|i| &candidate.cases[i])
        {
            Some(b) if b.workload_version != a.workload_version => unmatched.push(format!(
                "{}: workload version {} in run {} but {} in run {}; not comparable",
                a.label(),
                a.workload_version,
                baseline.id,
                b.workload_version,
                candidate.id
            )),
            Some(b) if a.error.is_some() || b.error.is_some() => unmatched.push(format!(
                "{}: failed in run {}; not compared",
                a.label(),
                if a.error.is_some() {
                    baseline.id
                } else {
                    candidate.id
                }
            )),
            Some(b) => cases.push(compare_case(a, b, &key.1)),
            None => unmatched.push(format!("{}: only in run {}", a.label(), baseline.id)),
        }
    }
    for (b, key) in candidate.cases.iter().zip(&candidate_keys) {
        if !baseline_keys.contains(key) {
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

fn compare_case(a: &CaseRecord, b: &CaseRecord, key: &BTreeMap<String, String>) -> CaseComparison {
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
        params: key
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" "),
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
    let mut table = new_table(vec![
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{MetricRecord, RunStatus};

    fn case(threads: &str, samples: &[f64]) -> CaseRecord {
        CaseRecord {
            workload: "cpu.primes".into(),
            workload_version: 1,
            params: [("threads".to_string(), threads.to_string())].into(),
            warnings: vec![],
            error: None,
            trials: vec![],
            metrics: vec![MetricRecord {
                name: "events_per_sec".into(),
                unit: "events/s".into(),
                direction: Direction::Higher,
                summary: stats::summarize(samples).unwrap(),
                samples: samples.to_vec(),
                outliers: vec![false; samples.len()],
            }],
            latency_histogram: None,
        }
    }

    fn run(id: i64, cpus: usize, cases: Vec<CaseRecord>) -> RunRecord {
        RunRecord {
            id,
            uuid: String::new(),
            started: String::new(),
            finished: None,
            sledge_version: "0".into(),
            profile: "quick".into(),
            command_line: String::new(),
            status: RunStatus::Complete,
            cpus: (0..cpus).collect(),
            warnings: vec![],
            host: Default::default(),
            cases,
        }
    }

    #[test]
    fn all_cpu_cases_match_across_hosts_with_different_cpu_counts() {
        let vm = run(
            1,
            2,
            vec![
                case("1", &[100.0, 101.0, 99.0]),
                case("2", &[200.0, 202.0, 198.0]),
            ],
        );
        let host = run(
            2,
            8,
            vec![
                case("1", &[120.0, 121.0, 119.0]),
                case("8", &[800.0, 808.0, 792.0]),
            ],
        );
        let cmp = compare_runs(&vm, &host);
        assert!(cmp.unmatched.is_empty(), "{:?}", cmp.unmatched);
        assert_eq!(cmp.cases.len(), 2);
        assert_eq!(cmp.cases[1].params, "threads=all");
        let all_cores = cmp.cases[1].metrics[0].comparison.as_ref().unwrap();
        assert!((all_cores.ratio - 4.0).abs() < 1e-9);
        assert_eq!(all_cores.verdict, Verdict::Faster);
        assert_eq!(cmp.host_differences[0].0, "CPUs used");
    }

    #[test]
    fn failed_and_missing_cases_are_listed_not_compared() {
        let mut failed = case("1", &[1.0, 1.0]);
        failed.error = Some("boom".into());
        let a = run(1, 2, vec![failed, case("3", &[1.0, 1.0])]);
        let b = run(2, 2, vec![case("1", &[1.0, 1.0])]);
        let cmp = compare_runs(&a, &b);
        assert!(cmp.cases.is_empty());
        assert_eq!(cmp.unmatched.len(), 2);
        assert!(cmp.unmatched[0].contains("failed in run 1"));
        assert!(cmp.unmatched[1].contains("only in run 1"));
    }
}

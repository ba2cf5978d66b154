//! Scaling sweeps found in a run: cases of one workload that differ only in
//! a parallelism parameter (threads, copies, clients, concurrency, jobs). The
//! terminal summary and the HTML report show them as scaling blocks: the
//! headline per step, speed-up against the smallest step, parallel
//! efficiency, and the Universal Scalability Law fitted to the per-trial
//! values when there are enough steps.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::results::{CaseRecord, RunRecord};
use crate::stats::{self, Direction, SpeedUp, UslFit};

/// Parameters that set how much runs in parallel, in the order they are
/// looked for.
pub const SCALING_PARAMS: &[&str] = &["threads", "copies", "clients", "concurrency", "jobs"];

/// The unit of a headline that is the wall time of a fixed amount of work
/// (a build, a hackbench run): its speed-up is the smallest step's time
/// over the step's, as for a kernel compile's `-j1` against `-jN`.
pub const FIXED_WORK_TIME_UNIT: &str = "s";

/// A case's headline metric: its first, by the convention of
/// `Case::trial` (the metric a reader wants per case; the engine's
/// repetition rule also follows it).
pub fn headline(case: &CaseRecord) -> Option<&crate::results::MetricRecord> {
    case.metrics.first()
}

/// One step of a sweep.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    /// The parallelism (the parameter's value).
    pub n: f64,
    /// Index of the case in the run.
    pub case: usize,
    /// The headline's mean.
    pub mean: f64,
    /// Speed-up and efficiency against the sweep's smallest step; `None`
    /// for a lower-is-better headline other than the time of a fixed
    /// amount of work (a latency's ratio is not a speed-up; see
    /// [`FIXED_WORK_TIME_UNIT`]) or unusable values.
    pub speedup: Option<SpeedUp>,
}

/// Cases of one workload that differ only in one parallelism parameter.
#[derive(Debug, Clone, Serialize)]
pub struct Sweep {
    /// Workload id.
    pub workload: String,
    /// The parameter swept (`threads`).
    pub param: String,
    /// The other parameters, shared by every step.
    pub fixed: BTreeMap<String, String>,
    /// The headline metric's name and unit.
    pub metric: String,
    /// Its unit.
    pub unit: String,
    /// Which way is better.
    pub direction: Direction,
    /// The steps, smallest first.
    pub steps: Vec<Step>,
    /// The USL fitted to the per-trial values (throughputs with at least
    /// [`stats::MIN_USL_STEPS`] steps only).
    pub usl: Option<UslFit>,
}

impl Sweep {
    /// The fixed parameters that tell this sweep from the workload's other
    /// sweeps, as `k=v k=v` (empty when there is one sweep).
    pub fn distinguishing(&self, varying: &[String]) -> String {
        self.fixed
            .iter()
            .filter(|(k, _)| varying.contains(k))
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Every sweep of the run, in the order of their first case. A case
/// belongs to at most one sweep (the first parameter of [`SCALING_PARAMS`]
/// that varies); failed cases and cases without metrics belong to none.
pub fn find(run: &RunRecord) -> Vec<Sweep> {
    let mut sweeps: Vec<Sweep> = Vec::new();
    let mut taken = vec![false; run.cases.len()];
    for (i, case) in run.cases.iter().enumerate() {
        if taken[i] || case.error.is_some() {
            continue;
        }
        let Some(metric) = headline(case) else {
            continue;
        };
        for param in SCALING_PARAMS {
            if !case.params.contains_key(*param) {
                continue;
            }
            let fixed = without(&case.params, param);
            let members: Vec<usize> = (i..run.cases.len())
                .filter(|&j| {
                    let other = &run.cases[j];
                    !taken[j]
                        && other.error.is_none()
                        && other.workload == case.workload
                        && other.workload_version == case.workload_version
                        && headline(other).is_some_and(|m| m.name == metric.name)
                        && without(&other.params, param) == fixed
                })
                .collect();
            let mut steps: Vec<Step> = members
                .iter()
                .filter_map(|&j| {
                    let n: f64 = run.cases[j].params.get(*param)?.parse().ok()?;
                    Some(Step {
                        n,
                        case: j,
                        mean: headline(&run.cases[j])?.summary.mean,
                        speedup: None,
                    })
                })
                .collect();
            steps.sort_by(|a, b| a.n.total_cmp(&b.n));
            steps.dedup_by(|a, b| a.n == b.n);
            if steps.len() < 2 {
                continue;
            }
            for step in &steps {
                taken[step.case] = true;
            }
            sweeps.push(sweep(run, case, param, fixed, metric, steps));
            break;
        }
    }
    sweeps
}

fn sweep(
    run: &RunRecord,
    first: &CaseRecord,
    param: &str,
    fixed: BTreeMap<String, String>,
    metric: &crate::results::MetricRecord,
    mut steps: Vec<Step>,
) -> Sweep {
    let throughput = metric.direction == Direction::Higher;
    let fixed_work_time =
        metric.direction == Direction::Lower && metric.unit == FIXED_WORK_TIME_UNIT;
    let (base_n, base_x) = (steps[0].n, steps[0].mean);
    if throughput {
        for step in &mut steps {
            step.speedup = stats::speedup(base_n, base_x, step.n, step.mean);
        }
    } else if fixed_work_time && base_x > 0.0 {
        // A time is the inverse of a rate: t₁/tₙ is the speed-up.
        for step in &mut steps {
            step.speedup = stats::speedup(base_n, 1.0 / base_x, step.n, 1.0 / step.mean);
        }
    }
    let usl = if throughput && steps.len() >= stats::MIN_USL_STEPS {
        let points: Vec<(f64, f64)> = steps
            .iter()
            .flat_map(|step| {
                headline(&run.cases[step.case])
                    .map(|m| m.samples.iter().map(|&x| (step.n, x)).collect::<Vec<_>>())
                    .unwrap_or_default()
            })
            .collect();
        stats::fit_usl(&points)
    } else {
        None
    };
    Sweep {
        workload: first.workload.clone(),
        param: param.to_string(),
        fixed,
        metric: metric.name.clone(),
        unit: metric.unit.clone(),
        direction: metric.direction,
        steps,
        usl,
    }
}

fn without(params: &BTreeMap<String, String>, name: &str) -> BTreeMap<String, String> {
    params
        .iter()
        .filter(|(k, _)| k.as_str() != name)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The fit in one line: `USL λ=812 σ=0.012 κ=0.0031 R²=0.97 · peak 17.8
/// threads at 12400 events/s`, with what makes it doubtful.
pub fn usl_line(fit: &UslFit, param: &str, unit: &str) -> String {
    use super::format::value;
    let mut line = format!(
        "USL λ={} σ={} κ={} R²={:.3}",
        value(fit.lambda),
        significant(fit.sigma),
        significant(fit.kappa),
        fit.r_squared
    );
    match &fit.peak {
        Some(peak) => {
            line.push_str(&format!(
                " · peak {:.1} {param} at {} {unit}",
                peak.n,
                value(peak.throughput)
            ));
        }
        None if fit.sigma >= 1.0 => line.push_str(" · no gain from parallelism (σ at its bound 1)"),
        None => line.push_str(" · no peak (no coherency cost: approaches λ/σ)"),
    }
    if fit.poor_fit {
        line.push_str(&format!(
            " · poor fit (R² < {}): do not rely on it",
            stats::POOR_FIT_R_SQUARED
        ));
    }
    line
}

/// Three significant digits without an exponent for values from 1e-4 up,
/// else scientific: `0.0123`, `0.000104`, `2.1e-7`.
fn significant(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 1e-4 {
        let decimals = (2 - v.abs().log10().floor() as i32).max(0) as usize;
        format!("{v:.decimals$}")
    } else {
        format!("{v:.1e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::demo_run;

    #[test]
    fn sweeps_are_found_per_parallelism_parameter_with_speedups() {
        let run = demo_run(1, "a", 1.0);
        let sweeps = find(&run);
        let summary: Vec<(&str, &str, usize)> = sweeps
            .iter()
            .map(|s| (s.workload.as_str(), s.param.as_str(), s.steps.len()))
            .collect();
        assert_eq!(
            summary,
            vec![
                ("cpu.primes", "threads", 4),
                ("crypto.speed", "copies", 2),
                ("crypto.speed", "copies", 2),
                ("http.static", "concurrency", 3),
            ]
        );
        let primes = &sweeps[0];
        let two = primes.steps[1].speedup.unwrap();
        assert!((two.speedup - 1591.667 / 801.0).abs() < 1e-3, "{two:?}");
        assert!((two.efficiency - two.speedup / 2.0).abs() < 1e-12);
        assert_eq!(primes.steps[0].speedup.unwrap().speedup, 1.0);
        let fit = primes.usl.as_ref().expect("4 steps: a USL fit");
        assert_eq!(fit.points, 12);
        assert!(fit.peak.is_some_and(|p| p.n > 2.0 && p.n < 4.0), "{fit:?}");
        // Two steps: speed-up, no fit.
        assert!(sweeps[1].usl.is_none());
        assert_eq!(sweeps[1].fixed["algorithm"], "md5");
        assert_eq!(
            sweeps[2].distinguishing(&["algorithm".to_string()]),
            "algorithm=aes-256-cbc"
        );
        let line = usl_line(fit, "threads", "events/s");
        assert!(line.starts_with("USL λ="), "{line}");
        assert!(
            line.contains("peak") && line.contains("threads at"),
            "{line}"
        );
    }

    #[test]
    fn lower_is_better_and_failed_cases_get_no_speedup() {
        let mut run = demo_run(1, "a", 1.0);
        // memory.latency varies `size`, not a parallelism parameter.
        assert!(find(&run).iter().all(|s| s.workload != "memory.latency"));
        // A time metric swept over threads: steps, but no speed-up or fit.
        for case in &mut run.cases[..4] {
            case.metrics[0].direction = Direction::Lower;
        }
        let sweeps = find(&run);
        assert_eq!(sweeps[0].steps.len(), 4);
        assert!(sweeps[0].steps.iter().all(|s| s.speedup.is_none()));
        assert!(sweeps[0].usl.is_none());
        // A failed step leaves the others.
        run.cases[1].error = Some("boom".into());
        assert_eq!(find(&run)[0].steps.len(), 3);
    }

    #[test]
    fn the_time_of_a_fixed_amount_of_work_gets_a_speedup_without_a_fit() {
        let mut run = demo_run(1, "a", 1.0);
        // cpu.primes' four thread steps, as if they were build times in
        // seconds: the speed-up is t₁/tₙ.
        for case in &mut run.cases[..4] {
            case.metrics[0].direction = Direction::Lower;
            case.metrics[0].unit = FIXED_WORK_TIME_UNIT.to_string();
        }
        let sweeps = find(&run);
        let steps = &sweeps[0].steps;
        let two = steps[1].speedup.expect("a speed-up for a time");
        let expected = steps[0].mean / steps[1].mean;
        assert!((two.speedup - expected).abs() < 1e-12, "{two:?}");
        assert!((two.efficiency - expected / 2.0).abs() < 1e-12);
        assert_eq!(steps[0].speedup.unwrap().speedup, 1.0);
        // A time is not a throughput: no scalability fit.
        assert!(sweeps[0].usl.is_none());
    }

    #[test]
    fn a_fit_without_a_peak_says_why() {
        let mut fit = UslFit {
            lambda: 1000.0,
            sigma: 1.0,
            kappa: 0.0165,
            r_squared: 0.05,
            peak: None,
            points: 60,
            steps: 6,
            poor_fit: true,
        };
        let line = usl_line(&fit, "threads", "events/s");
        assert!(line.contains("no gain from parallelism"), "{line}");
        assert!(
            line.ends_with("poor fit (R² < 0.9): do not rely on it"),
            "{line}"
        );
        fit.sigma = 0.1;
        fit.kappa = 0.0;
        let line = usl_line(&fit, "threads", "events/s");
        assert!(line.contains("no peak (no coherency cost"), "{line}");
    }

    #[test]
    fn small_coefficients_keep_three_significant_digits() {
        assert_eq!(significant(0.02773), "0.0277");
        assert_eq!(significant(0.0001044), "0.000104");
        assert_eq!(significant(2.1e-7), "2.1e-7");
        assert_eq!(significant(0.0), "0");
        assert_eq!(significant(0.5), "0.500");
    }
}

//! Scaling sweeps found in a run: cases of one workload that differ only in
//! a parallelism parameter (threads, copies, clients, concurrency, jobs,
//! cpus). Per sweep the headline per step, speed-up against the smallest
//! step, parallel efficiency, and the Universal Scalability Law fitted to
//! the per-trial values when there are enough steps; the terminal summary
//! and the HTML report show them as scaling blocks (`report::sweeps`). A step whose case failed is kept
//! apart as a failed step, so that a sweep that stopped early is seen to.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap, VecDeque};

use serde::Serialize;

use crate::results::{CaseRecord, MetricRecord, RunRecord, Unit};
use crate::stats::{self, Direction, SpeedUp, UslFit};

/// Parameters that set how much runs in parallel, in the order they are
/// looked for. `cpus` is the number of CPUs a fixed set of tasks may run
/// on (`sched.hackbench cpus=1,all`, the articles' one core against all).
pub const SCALING_PARAMS: &[&str] = &[
    "threads",
    "copies",
    "clients",
    "concurrency",
    "jobs",
    "cpus",
];

/// The scaling parameters that count CPUs kept busy, for which parallel
/// efficiency (speed-up over the step's multiple) means something. A
/// count of connections or clients is load, not CPUs: 100 connections
/// served 8× faster than 1 is not "8% efficient". A count of CPUs given
/// to the same work is the plainest case of all.
pub const CPU_COUNT_PARAMS: &[&str] = &["threads", "copies", "jobs", "cpus"];

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
    pub unit: Unit,
    /// Which way is better.
    pub direction: Direction,
    /// The steps, smallest first.
    pub steps: Vec<Step>,
    /// The USL fitted to the per-trial values (throughputs with at least
    /// [`stats::MIN_USL_STEPS`] steps only).
    pub usl: Option<UslFit>,
    /// Steps whose case failed (no value, so not in `steps`), smallest
    /// first: a sweep with any is partial, and its speed-ups say nothing
    /// about them.
    pub failed: Vec<FailedStep>,
}

impl Sweep {
    /// Whether its steps' parallel efficiency means something: the
    /// parameter counts CPUs ([`CPU_COUNT_PARAMS`]).
    pub fn has_efficiency(&self) -> bool {
        CPU_COUNT_PARAMS.contains(&self.param.as_str())
    }
}

/// A step of a sweep whose case failed.
#[derive(Debug, Clone, Serialize)]
pub struct FailedStep {
    /// The parallelism (the parameter's value).
    pub n: f64,
    /// Index of the case in the run.
    pub case: usize,
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
/// that varies); a step is a case whose parameter is a finite number.
/// Cases without metrics belong to none; a failed case of a sweep's
/// workload and fixed parameters is one of its [`failed`](Sweep::failed)
/// steps.
///
/// The cases that can form a sweep are grouped once (per parameter, by
/// workload, version, headline and the other parameters), so finding the
/// sweeps takes time in proportion to the run's cases, however many there
/// are: each step is taken once, and a group found to hold fewer than two
/// steps is never looked at again (cases are only ever taken out of a
/// group, so it cannot grow back).
pub fn find(run: &RunRecord) -> Vec<Sweep> {
    let mut groups: Vec<HashMap<GroupKey, Candidates>> =
        SCALING_PARAMS.iter().map(|_| HashMap::new()).collect();
    let mut failed: Vec<HashMap<FailedKey, Vec<FailedStep>>> =
        SCALING_PARAMS.iter().map(|_| HashMap::new()).collect();
    for (j, case) in run.cases.iter().enumerate() {
        for (p, param) in SCALING_PARAMS.iter().enumerate() {
            let Some(n) = step_value(case, param) else {
                continue;
            };
            if case.error.is_some() {
                let key = (
                    case.workload.clone(),
                    case.workload_version,
                    without(&case.params, param),
                );
                failed[p]
                    .entry(key)
                    .or_default()
                    .push(FailedStep { n, case: j });
            } else if let Some(metric) = headline(case) {
                groups[p]
                    .entry(group_key(case, param, metric))
                    .or_default()
                    .by_value
                    .entry(StepValue(n))
                    .or_default()
                    .push_back(j);
            }
        }
    }

    let mut sweeps: Vec<Sweep> = Vec::new();
    let mut taken = vec![false; run.cases.len()];
    for (i, case) in run.cases.iter().enumerate() {
        if taken[i] || case.error.is_some() {
            continue;
        }
        let Some(metric) = headline(case) else {
            continue;
        };
        for (p, param) in SCALING_PARAMS.iter().enumerate() {
            if !case.params.contains_key(*param) {
                continue;
            }
            let Some(group) = groups[p].get_mut(&group_key(case, param, metric)) else {
                continue;
            };
            let steps = group.take_steps(run, &taken);
            if steps.len() < 2 {
                continue;
            }
            for step in &steps {
                taken[step.case] = true;
            }
            let fixed = without(&case.params, param);
            // The workload's failed cases at these fixed parameters belong
            // to this sweep (the first one), unless a measured step has
            // their value; steps are sorted by value.
            let mut failed_steps = failed[p]
                .remove(&(case.workload.clone(), case.workload_version, fixed.clone()))
                .unwrap_or_default();
            failed_steps.retain(|f| {
                !taken[f.case] && steps.binary_search_by(|s| s.n.total_cmp(&f.n)).is_err()
            });
            failed_steps.sort_by(|a, b| a.n.total_cmp(&b.n));
            failed_steps.dedup_by(|a, b| a.n == b.n);
            for step in &failed_steps {
                taken[step.case] = true;
            }
            let mut sweep = sweep(run, case, param, fixed, metric, steps);
            sweep.failed = failed_steps;
            sweeps.push(sweep);
            break;
        }
    }
    sweeps
}

/// What the steps of one sweep share: workload, version, headline name
/// and every parameter but the swept one.
type GroupKey = (String, u32, String, BTreeMap<String, String>);

/// What a failed step shares with its sweep: workload, version and every
/// parameter but the swept one (a failed case has no headline).
type FailedKey = (String, u32, BTreeMap<String, String>);

fn group_key(case: &CaseRecord, param: &str, metric: &MetricRecord) -> GroupKey {
    (
        case.workload.clone(),
        case.workload_version,
        metric.name.clone(),
        without(&case.params, param),
    )
}

/// The parameter's value as a step: a finite number (`-0` reads as 0).
fn step_value(case: &CaseRecord, param: &str) -> Option<f64> {
    let n: f64 = case.params.get(param)?.parse().ok()?;
    n.is_finite().then_some(n + 0.0)
}

/// A step value with a total order, for the map of a group's values.
#[derive(Debug, Clone, Copy, PartialEq)]
struct StepValue(f64);

impl Eq for StepValue {}

impl PartialOrd for StepValue {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for StepValue {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// The cases of one group that no sweep has taken yet.
#[derive(Debug, Default)]
struct Candidates {
    /// Per step value, its cases in run order (taken ones are dropped
    /// from the front as they are met).
    by_value: BTreeMap<StepValue, VecDeque<usize>>,
    /// Found to hold fewer than two steps: it never will again.
    exhausted: bool,
}

impl Candidates {
    /// The steps of the group's next sweep, smallest first: for each
    /// value, its first case not yet `taken`. Fewer than two steps marks
    /// the group exhausted.
    fn take_steps(&mut self, run: &RunRecord, taken: &[bool]) -> Vec<Step> {
        if self.exhausted {
            return Vec::new();
        }
        let mut steps = Vec::new();
        for (value, cases) in self.by_value.iter_mut() {
            while cases.front().is_some_and(|&j| taken[j]) {
                cases.pop_front();
            }
            if let Some(&j) = cases.front() {
                steps.push(Step {
                    n: value.0,
                    case: j,
                    mean: headline(&run.cases[j]).map_or(f64::NAN, |m| m.summary.mean),
                    speedup: None,
                });
            }
        }
        self.by_value.retain(|_, cases| !cases.is_empty());
        if steps.len() < 2 {
            self.exhausted = true;
        }
        steps
    }
}

fn sweep(
    run: &RunRecord,
    first: &CaseRecord,
    param: &str,
    fixed: BTreeMap<String, String>,
    metric: &MetricRecord,
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
        failed: Vec::new(),
    }
}

fn without(params: &BTreeMap<String, String>, name: &str) -> BTreeMap<String, String> {
    params
        .iter()
        .filter(|(k, _)| k.as_str() != name)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
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
        // A failed step leaves the others, and is the sweep's failed step.
        run.cases[1].error = Some("boom".into());
        run.cases[1].metrics.clear();
        let sweep = &find(&run)[0];
        assert_eq!(sweep.steps.len(), 3);
        let failed: Vec<(f64, usize)> = sweep.failed.iter().map(|f| (f.n, f.case)).collect();
        assert_eq!(failed, [(2.0, 1)]);
    }

    #[test]
    fn repeated_steps_make_sweeps_in_run_order_each_case_in_one() {
        use crate::report::fixtures::{case, metric, run};
        let primes = |threads: &str, max_prime: &str| {
            case(
                "cpu.primes",
                &[("max_prime", max_prime), ("threads", threads)],
                metric("events_per_sec", "events/s", Direction::Higher, &[1.0]),
            )
        };
        // Two passes over threads 1 and 2 at one max_prime, interleaved
        // with another max_prime, a lone step, and a step that is no
        // number.
        let run = run(
            1,
            "a",
            2,
            vec![
                primes("1", "10"),
                primes("1", "20"),
                primes("2", "10"),
                primes("1", "10"),
                primes("2", "20"),
                primes("x", "10"),
                primes("2", "10"),
                primes("8", "30"),
            ],
        );
        let found: Vec<(String, Vec<usize>)> = find(&run)
            .iter()
            .map(|s| {
                (
                    s.fixed["max_prime"].clone(),
                    s.steps.iter().map(|st| st.case).collect(),
                )
            })
            .collect();
        assert_eq!(
            found,
            [
                ("10".to_string(), vec![0, 2]),
                ("20".to_string(), vec![1, 4]),
                ("10".to_string(), vec![3, 6]),
            ]
        );
    }

    #[test]
    fn the_time_of_a_fixed_amount_of_work_gets_a_speedup_without_a_fit() {
        let mut run = demo_run(1, "a", 1.0);
        // cpu.primes' four thread steps, as if they were build times in
        // seconds: the speed-up is t₁/tₙ.
        for case in &mut run.cases[..4] {
            case.metrics[0].direction = Direction::Lower;
            case.metrics[0].unit = FIXED_WORK_TIME_UNIT.into();
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
    fn hackbench_on_one_cpu_and_all_is_a_sweep_with_an_efficiency() {
        use crate::report::fixtures::{case, metric, run};
        // `sched.hackbench cpus=1,all` on 2 CPUs: 1.8 s on one, 1.0 s on both.
        let hackbench = |cpus: &str, seconds: f64| {
            case(
                "sched.hackbench",
                &[("cpus", cpus), ("groups", "10"), ("ipc", "socket")],
                metric("seconds", "s", Direction::Lower, &[seconds; 3]),
            )
        };
        let run = run(1, "a", 2, vec![hackbench("1", 1.8), hackbench("2", 1.0)]);
        let sweeps = find(&run);
        assert_eq!(sweeps.len(), 1);
        let sweep = &sweeps[0];
        assert_eq!(sweep.param, "cpus");
        assert!(sweep.has_efficiency());
        let all = sweep.steps[1].speedup.expect("a fixed amount of work");
        assert!((all.speedup - 1.8).abs() < 1e-9, "{all:?}");
        assert!((all.efficiency - 0.9).abs() < 1e-9, "{all:?}");
    }
}

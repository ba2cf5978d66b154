//! Runs a plan of cases under two settings, A and B, in interleaved
//! rounds (`sledge ab`).
//!
//! **Why interleave.** Two runs minutes apart compare the host's drift as
//! much as the settings: a neighbour's job, a thermal limit or the hour's
//! turbo budget moves one run and not the other. Here every round of a
//! case runs A and B back to back, in an order drawn at random each time
//! (recorded in each side's [`RoundRecord::order`](crate::results::RoundRecord):
//! the side that ran first has the even number), or, in duet mode, both
//! at the same time on two disjoint CPU sets that swap every round
//! (Bulej et al., "Duet Benchmarking", ICPE 2020). The pair of round
//! means then shares its moment, and the comparison is judged on the
//! per-round ratios ([`stats::compare_paired`](crate::stats::compare_paired)).
//!
//! **When to stop.** The rule is the one `run_plan` applies to a single
//! side, with the paired ratio's interval as the precision: every case
//! gets `min_rounds` pairs; after that a case gets another pair while the
//! ratio's 95% CI is wider than `ci_target` (on the log scale) and its
//! budget allows, the widest first when the run has a budget. The rule
//! looks only at the interval's width, never at where the ratio lies, so
//! stopping cannot favour a verdict: a fixed-width sequential interval
//! (Chow and Robbins, 1965), whose coverage stays near 95% once a few
//! pairs have fixed the spread; the A/A checks in the closing notes
//! measure the false alarms it gives.

use super::context::TrialContext;
use super::executor::{RoundExecutor, RoundOutcome};
use super::methodology::Methodology;
use super::planner::{History, Shuffler};
use super::progress::{Progress, Silent};
use super::round::{Round, RoundRequest};
use super::runner::CaseState;
use super::shared_pool::SharedPool;
use super::workload::{CaseEnv, PlannedCase};
use crate::results::{CaseRecord, RunStatus};
use crate::stats;

/// One side of an A/B plan.
pub struct AbSide<'a> {
    /// Runs one round of one case under this side's setting (applies the
    /// setting first).
    pub executor: &'a dyn RoundExecutor,
    /// The CPUs this side's rounds run on, the user's stop request.
    pub ctx: &'a TrialContext,
}

/// Everything an A/B plan runs with besides its cases.
pub struct AbSetup<'a> {
    /// What workloads may know about the run.
    pub env: &'a CaseEnv,
    /// The repetition rule; its budgets count both sides' time.
    pub method: &'a Methodology,
    /// A, then B.
    pub sides: [AbSide<'a>; 2],
    /// For duet mode: the two disjoint CPU sets A and B run on at the
    /// same time, A on the first in even rounds and on the second in odd
    /// ones; `None` to run the sides one after the other.
    pub duet: Option<[Vec<usize>; 2]>,
    /// Per case (in plan order), whether it may run in duet mode.
    pub duet_cases: Vec<bool>,
    /// Earlier runs of the same cases, for planning trials per round.
    pub history: &'a dyn History,
    /// Where progress goes.
    pub progress: &'a dyn Progress,
    /// Seed of the order shuffles and of the A/B order draws.
    pub seed: u64,
}

/// What an A/B plan produced.
#[derive(Debug)]
pub struct AbOutcome {
    /// Complete, partial (cancelled) or failed (a case failed on a side).
    pub status: RunStatus,
    /// Per side, the cases that ran at least one round, in plan order.
    pub records: [Vec<CaseRecord>; 2],
}

/// A case's two sides so far.
struct PairState {
    sides: [CaseState; 2],
}

impl PairState {
    fn rounds_done(&self) -> u32 {
        self.sides[0].rounds_done.min(self.sides[1].rounds_done)
    }

    fn failed(&self) -> bool {
        self.sides.iter().any(|s| s.failed)
    }

    fn seconds(&self) -> f64 {
        self.sides.iter().map(|s| s.seconds).sum()
    }

    fn mean_pair_seconds(&self) -> f64 {
        self.sides.iter().map(CaseState::mean_round_seconds).sum()
    }

    /// The 95% CI half-width of the paired ratio of the primary metric,
    /// log scale (infinite before two pairs).
    fn half_width(&self) -> f64 {
        let [a, b] = [&self.sides[0], &self.sides[1]].map(primary_round_means);
        let (a, b): (Vec<f64>, Vec<f64>) = a
            .iter()
            .enumerate()
            .filter_map(|(round, x)| Some(((*x)?, (*b.get(round)?)?)))
            .unzip();
        stats::paired_half_width(&a, &b).unwrap_or(f64::INFINITY)
    }

    fn wants_more(&self, method: &Methodology) -> bool {
        let rounds = self.rounds_done();
        if self.failed() || rounds >= method.max_rounds {
            return false;
        }
        if rounds < method.min_rounds {
            return true;
        }
        self.half_width() > method.ci_target
            && self.seconds() + self.mean_pair_seconds() <= method.case_budget.as_secs_f64()
    }
}

/// Per round, the mean of the primary metric over the trials the
/// statistics use (`None` for a round without one).
fn primary_round_means(state: &CaseState) -> Vec<Option<f64>> {
    let mut sums = vec![(0.0, 0usize); state.rounds_done as usize];
    for (round, trial) in &state.trials {
        if trial.replaced {
            continue;
        }
        if let (Some(slot), Some(metric)) = (sums.get_mut(*round as usize), trial.metrics.first()) {
            slot.0 += metric.value;
            slot.1 += 1;
        }
    }
    sums.into_iter()
        .map(|(sum, n)| (n > 0).then(|| sum / n as f64))
        .collect()
}

/// Runs every case of `plan` under both sides in interleaved rounds and
/// passes each side's record of a case to `on_case` (side 0 for A, 1 for
/// B, and the case's position in the plan) after each of its rounds. A
/// case that fails on either side gets no further rounds; a cancellation
/// stops the plan, keeping every finished pair (a pair cut in half by it
/// keeps its finished side); an error from `on_case` stops it and is
/// returned.
pub fn run_ab_plan(
    plan: &[PlannedCase],
    setup: &AbSetup,
    on_case: &mut dyn FnMut(usize, usize, &CaseRecord) -> anyhow::Result<()>,
) -> anyhow::Result<AbOutcome> {
    let method = setup.method;
    let mut states: Vec<PairState> = plan
        .iter()
        .map(|p| PairState {
            sides: [0, 1].map(|_| CaseState::planned(p, method, setup.history)),
        })
        .collect();
    let mut shuffler = Shuffler::new(setup.seed);
    let mut cancelled = false;
    // Data the rounds share: one copy for both sides, which take turns on
    // it, but one per side for cases run as a duet, whose sides run at
    // once and would otherwise write to the same tables.
    let mut shared = [SharedPool::default(), SharedPool::default()];

    'rounds: for round in 0..method.max_rounds {
        let mut active: Vec<usize> = (0..plan.len())
            .filter(|&i| states[i].rounds_done() == round && states[i].wants_more(method))
            .collect();
        if round >= method.min_rounds {
            let spent = states.iter().map(PairState::seconds).sum();
            active = within_budget(active, &states, method, spent);
        }
        if active.is_empty() {
            break;
        }
        for pool in &mut shared {
            pool.keep_only(active.iter().map(|&i| &plan[i]));
        }
        shuffler.shuffle(&mut active);
        setup.progress.round_started(round, active.len());
        for (order, &i) in active.iter().enumerate() {
            if setup.ctx_cancelled() {
                cancelled = true;
                break 'rounds;
            }
            setup
                .progress
                .case_started(order, active.len(), &plan[i].label());
            let duet = setup.duet.as_ref().filter(|_| setup.duet_cases[i]);
            let outcomes = match shared_for_sides(&mut shared, &plan[i], setup, duet.is_some()) {
                Err(failed) => vec![failed],
                Ok(found) => match duet {
                    Some(sets) => run_duet(
                        &plan[i],
                        &states[i],
                        setup,
                        sets,
                        round,
                        order as u32,
                        &found,
                    ),
                    None => run_in_turn(
                        &plan[i],
                        &states[i],
                        setup,
                        &mut shuffler,
                        order as u32,
                        &found,
                    ),
                },
            };
            for (side, outcome, side_order) in outcomes {
                if outcome.cancelled {
                    cancelled = true;
                }
                if outcome.cancelled || setup.ctx_cancelled() {
                    continue;
                }
                let state = &mut states[i].sides[side];
                state.absorb(side_order, outcome);
                setup.progress.case_finished(&state.record);
                on_case(side, i, &state.record)?;
            }
            if cancelled || setup.ctx_cancelled() {
                cancelled = true;
                break 'rounds;
            }
        }
    }

    // What the rounds shared goes now, whatever ended the plan (an error
    // from `on_case` drops the pools, which removes it too).
    for pool in &mut shared {
        pool.release_all();
    }
    let failed = states.iter().any(PairState::failed);
    let mut records: [Vec<CaseRecord>; 2] = [Vec::new(), Vec::new()];
    for state in states {
        for (side, case) in state.sides.into_iter().enumerate() {
            if case.rounds_done > 0 {
                records[side].push(case.record);
            }
        }
    }
    let status = if cancelled {
        RunStatus::Partial
    } else if failed {
        RunStatus::Failed
    } else {
        RunStatus::Complete
    };
    Ok(AbOutcome { status, records })
}

impl AbSetup<'_> {
    fn ctx_cancelled(&self) -> bool {
        self.sides.iter().any(|s| s.ctx.cancel.is_cancelled())
    }
}

/// Where each side's round finds the data `planned` shares (see
/// [`SharedPool`]): from one pool for both sides, or from each side's own
/// for a duet. `Err` is the side whose preparation failed or was
/// cancelled, with that outcome, its place in the round 0.
fn shared_for_sides(
    pools: &mut [SharedPool; 2],
    planned: &PlannedCase,
    setup: &AbSetup,
    duet: bool,
) -> Result<[Option<String>; 2], (usize, RoundOutcome, u32)> {
    let mut found = [None, None];
    for side in 0..2 {
        let pool = &mut pools[if duet { side } else { 0 }];
        found[side] = pool
            .ensure(planned, setup.env, setup.sides[side].ctx)
            .map_err(|outcome| (side, outcome, 0))?;
    }
    Ok(found)
}

/// One round of a case, A and B one after the other in a random order;
/// per side its outcome and its place in the round (`2 · order` for the
/// side that ran first, one more for the other). The second side does not
/// start once the first was cancelled.
fn run_in_turn(
    planned: &PlannedCase,
    state: &PairState,
    setup: &AbSetup,
    shuffler: &mut Shuffler,
    order: u32,
    shared: &[Option<String>; 2],
) -> Vec<(usize, RoundOutcome, u32)> {
    let mut sides = [0usize, 1];
    shuffler.shuffle(&mut sides);
    let mut outcomes = Vec::with_capacity(2);
    for (place, side) in sides.into_iter().enumerate() {
        let this = &setup.sides[side];
        let request = RoundRequest {
            shared: shared[side].clone(),
            ..state.sides[side].request(setup.method)
        };
        let outcome = this.executor.run_round(&Round {
            planned,
            request: &request,
            env: setup.env,
            ctx: this.ctx,
            progress: setup.progress,
        });
        let stop = outcome.cancelled || this.ctx.cancel.is_cancelled();
        outcomes.push((side, outcome, 2 * order + place as u32));
        if stop {
            break;
        }
    }
    outcomes
}

/// One round of a case in duet mode: A and B at the same time, each on
/// one of `sets` (swapped from round to round); both get the same place
/// in the round. Progress of the trials is not shown (two at once).
fn run_duet(
    planned: &PlannedCase,
    state: &PairState,
    setup: &AbSetup,
    sets: &[Vec<usize>; 2],
    round: u32,
    order: u32,
    shared: &[Option<String>; 2],
) -> Vec<(usize, RoundOutcome, u32)> {
    let swap = round % 2 == 1;
    let contexts: Vec<TrialContext> = (0..2)
        .map(|side| TrialContext {
            cpus: sets[side ^ usize::from(swap)].clone(),
            ..setup.sides[side].ctx.clone()
        })
        .collect();
    let env: Vec<CaseEnv> = contexts
        .iter()
        .map(|ctx| CaseEnv {
            cpus: ctx.cpus.clone(),
            ..setup.env.clone()
        })
        .collect();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..2)
            .map(|side| {
                let request = RoundRequest {
                    shared: shared[side].clone(),
                    ..state.sides[side].request(setup.method)
                };
                let (ctx, env) = (&contexts[side], &env[side]);
                let executor = setup.sides[side].executor;
                scope.spawn(move || {
                    executor.run_round(&Round {
                        planned,
                        request: &request,
                        env,
                        ctx,
                        progress: &Silent,
                    })
                })
            })
            .collect();
        handles
            .into_iter()
            .enumerate()
            .map(|(side, handle)| {
                let outcome = handle.join().unwrap_or_else(|_| RoundOutcome {
                    error: Some("the round's thread panicked".to_string()),
                    ..RoundOutcome::default()
                });
                (side, outcome, 2 * order)
            })
            .collect()
    })
}

/// The cases that get another pair of rounds when the run has a budget:
/// widest paired interval first, as many as the time left allows at each
/// case's mean time per pair.
fn within_budget(
    mut active: Vec<usize>,
    states: &[PairState],
    method: &Methodology,
    elapsed: f64,
) -> Vec<usize> {
    let Some(budget) = method.run_budget else {
        return active;
    };
    let mut left = budget.as_secs_f64() - elapsed;
    // Each width once: it is recomputed from the trials.
    let widths: Vec<f64> = states.iter().map(PairState::half_width).collect();
    active.sort_by(|&a, &b| widths[b].total_cmp(&widths[a]));
    active.retain(|&i| {
        let cost = states[i].mean_pair_seconds();
        if cost <= left {
            left -= cost;
            true
        } else {
            false
        }
    });
    active
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;
    use crate::engine::test_fixtures::{
        n_param, one_cpu_env, planned, rounds_of_one_trial, run_on_one_cpu,
    };
    use crate::engine::{
        CancelToken, Case, InProcess, Metric, ParamSet, ParamSpec, ScriptedMonitor, TrialOutput,
        Workload,
    };
    use crate::stats::{Direction, Verdict};

    /// A host that speeds up by `drift` (a share) with every trial any
    /// side runs, with a deterministic ±1% scatter.
    struct Drifting {
        drift: f64,
        ticks: Arc<AtomicU32>,
    }

    impl Workload for Drifting {
        fn id(&self) -> &'static str {
            "test.drifting"
        }
        fn version(&self) -> u32 {
            1
        }
        fn summary(&self) -> &'static str {
            "a host that drifts, for A/B tests"
        }
        fn params(&self) -> Vec<ParamSpec> {
            n_param()
        }
        fn build(&self, _p: &ParamSet, _env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
            Ok(Box::new(DriftingCase {
                drift: self.drift,
                ticks: self.ticks.clone(),
            }))
        }
    }

    struct DriftingCase {
        drift: f64,
        ticks: Arc<AtomicU32>,
    }

    impl Case for DriftingCase {
        fn prepare(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
            Ok(())
        }
        fn trial(&mut self, _ctx: &TrialContext) -> anyhow::Result<TrialOutput> {
            let tick = self.ticks.fetch_add(1, Ordering::SeqCst);
            let scatter = [0.0, 0.01, -0.01, 0.005, -0.005][tick as usize % 5];
            let value = 100.0 * (1.0 + self.drift * f64::from(tick)) * (1.0 + scatter);
            Ok(TrialOutput {
                metrics: vec![Metric::higher("value", "u", value)],
                latency_ns: None,
            })
        }
        fn cleanup(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
            Ok(())
        }
    }

    /// A setting that makes every value `factor` times what the host gives.
    struct Scaled<'a> {
        inner: &'a dyn RoundExecutor,
        factor: f64,
        rounds: AtomicU32,
    }

    impl RoundExecutor for Scaled<'_> {
        fn run_round(&self, round: &Round<'_>) -> RoundOutcome {
            self.rounds.fetch_add(1, Ordering::SeqCst);
            let mut outcome = self.inner.run_round(round);
            for trial in &mut outcome.trials {
                for metric in &mut trial.metrics {
                    metric.value *= self.factor;
                }
            }
            outcome
        }
    }

    /// The setup of a plan of one case, both sides on `ctx`, in duet on
    /// `duet`'s CPU sets when given.
    fn one_case_setup<'a>(
        method: &'a Methodology,
        executors: [&'a dyn RoundExecutor; 2],
        ctx: &'a TrialContext,
        duet: Option<[Vec<usize>; 2]>,
        seed: u64,
    ) -> AbSetup<'a> {
        let duet_cases = vec![duet.is_some()];
        AbSetup {
            env: Box::leak(Box::new(one_cpu_env())),
            method,
            sides: executors.map(|executor| AbSide { executor, ctx }),
            duet,
            duet_cases,
            history: &crate::engine::NoHistory,
            progress: &Silent,
            seed,
        }
    }

    fn round_means(record: &CaseRecord) -> Vec<f64> {
        record.metrics[0]
            .levels
            .as_ref()
            .unwrap()
            .round_means
            .clone()
    }

    #[test]
    fn interleaving_finds_a_slowdown_that_back_to_back_runs_miss() {
        // The host speeds up 1.5% per trial; B is 10% slower than A.
        let drifting: &'static Drifting = Box::leak(Box::new(Drifting {
            drift: 0.015,
            ticks: Arc::new(AtomicU32::new(0)),
        }));
        let plan = [planned(drifting)];
        let monitor = ScriptedMonitor::quiet();
        let inner = InProcess { monitor: &monitor };
        let a = Scaled {
            inner: &inner,
            factor: 1.0,
            rounds: AtomicU32::new(0),
        };
        let b = Scaled {
            inner: &inner,
            factor: 0.9,
            rounds: AtomicU32::new(0),
        };
        let ctx = TrialContext::new(vec![0], CancelToken::new());
        let m = rounds_of_one_trial(8);

        // Back to back: all of A, then all of B, as two runs would.
        let side_run =
            |executor: &dyn RoundExecutor| run_on_one_cpu(&plan, &m, executor, 1).records.remove(0);
        let first = side_run(&a);
        let second = side_run(&b);
        let apart = stats::compare(
            &round_means(&first),
            &round_means(&second),
            Direction::Higher,
        )
        .unwrap();
        assert_ne!(apart.verdict, Verdict::Slower, "{apart:?}");
        assert!(apart.ratio > 0.95, "{apart:?}");

        // Interleaved: the same drift, the same effect.
        let setup = one_case_setup(&m, [&a, &b], &ctx, None, 3);
        let mut handed = [0, 0];
        let outcome = run_ab_plan(&plan, &setup, &mut |side, position, record| {
            assert_eq!(position, 0);
            handed[side] += 1;
            assert_eq!(record.rounds.len(), handed[side]);
            Ok(())
        })
        .unwrap();
        assert_eq!(outcome.status, RunStatus::Complete);
        assert_eq!(handed, [8, 8]);
        let [sa, sb] = &outcome.records;
        let paired = stats::compare_paired(
            &round_means(&sa[0]),
            &round_means(&sb[0]),
            Direction::Higher,
        )
        .unwrap();
        assert_eq!(paired.verdict, Verdict::Slower, "{paired:?}");
        assert!(
            paired.ratio_ci_low < 0.9 && 0.9 < paired.ratio_ci_high,
            "{paired:?}"
        );

        // Each round ran A and B once, in a recorded random order: one
        // side even, the other odd, both orders seen.
        let mut a_first = 0;
        for (ra, rb) in sa[0].rounds.iter().zip(&sb[0].rounds) {
            assert_eq!(ra.order / 2, rb.order / 2);
            assert_ne!(ra.order % 2, rb.order % 2);
            a_first += usize::from(ra.order % 2 == 0);
        }
        assert!((1..8).contains(&a_first), "A first in {a_first} of 8");
    }

    #[test]
    fn a_pair_gets_more_rounds_while_its_ratio_is_wide_and_stops_when_tight() {
        let quiet: &'static Drifting = Box::leak(Box::new(Drifting {
            drift: 0.0,
            ticks: Arc::new(AtomicU32::new(0)),
        }));
        let plan = [planned(quiet)];
        let monitor = ScriptedMonitor::quiet();
        let inner = InProcess { monitor: &monitor };
        let ctx = TrialContext::new(vec![0], CancelToken::new());
        let run = |target: f64| {
            let sides = [1.0, 1.0].map(|factor| Scaled {
                inner: &inner,
                factor,
                rounds: AtomicU32::new(0),
            });
            let m = Methodology {
                min_rounds: 3,
                max_rounds: 12,
                ci_target: target,
                ..rounds_of_one_trial(3)
            };
            let setup = one_case_setup(&m, [&sides[0], &sides[1]], &ctx, None, 5);
            run_ab_plan(&plan, &setup, &mut |_, _, _| Ok(())).unwrap();
            sides.map(|s| s.rounds.load(Ordering::SeqCst))
        };
        // The ±1% scatter gives a paired interval of a few percent: a 50%
        // target is met at once, a 0.01% one never.
        assert_eq!(run(0.5), [3, 3]);
        assert_eq!(run(0.0001), [12, 12]);
    }

    #[test]
    fn duet_runs_both_sides_at_once_on_swapped_cpu_sets() {
        let quiet: &'static Drifting = Box::leak(Box::new(Drifting {
            drift: 0.0,
            ticks: Arc::new(AtomicU32::new(0)),
        }));
        let plan = [planned(quiet)];

        /// Remembers the CPUs each round was given.
        struct Cpus<'a> {
            inner: &'a dyn RoundExecutor,
            seen: std::sync::Mutex<Vec<Vec<usize>>>,
        }
        impl RoundExecutor for Cpus<'_> {
            fn run_round(&self, round: &Round<'_>) -> RoundOutcome {
                assert_eq!(round.env.cpus, round.ctx.cpus);
                self.seen.lock().unwrap().push(round.ctx.cpus.clone());
                self.inner.run_round(round)
            }
        }
        let monitor = ScriptedMonitor::quiet();
        let inner = InProcess { monitor: &monitor };
        let sides = [0, 1].map(|_| Cpus {
            inner: &inner,
            seen: Default::default(),
        });
        let ctx = TrialContext::new(vec![0, 1], CancelToken::new());
        let m = rounds_of_one_trial(4);
        let setup = one_case_setup(
            &m,
            [&sides[0], &sides[1]],
            &ctx,
            Some([vec![0], vec![1]]),
            5,
        );
        let outcome = run_ab_plan(&plan, &setup, &mut |_, _, _| Ok(())).unwrap();
        assert_eq!(outcome.status, RunStatus::Complete);
        let a = sides[0].seen.lock().unwrap().clone();
        let b = sides[1].seen.lock().unwrap().clone();
        assert_eq!(a, [vec![0], vec![1], vec![0], vec![1]]);
        assert_eq!(b, [vec![1], vec![0], vec![1], vec![0]]);
        // Both sides share each round's place: they ran at the same time.
        for (ra, rb) in outcome.records[0][0]
            .rounds
            .iter()
            .zip(&outcome.records[1][0].rounds)
        {
            assert_eq!(ra.order, rb.order);
        }
    }

    #[test]
    fn a_cancelled_ab_plan_keeps_finished_pairs_and_is_partial() {
        let quiet: &'static Drifting = Box::leak(Box::new(Drifting {
            drift: 0.0,
            ticks: Arc::new(AtomicU32::new(0)),
        }));
        let plan = [planned(quiet)];
        let monitor = ScriptedMonitor::quiet();
        let inner = InProcess { monitor: &monitor };
        let cancel = CancelToken::new();
        /// Cancels the run during its third round.
        struct CancelAt<'a> {
            inner: &'a dyn RoundExecutor,
            cancel: CancelToken,
            calls: AtomicU32,
        }
        impl RoundExecutor for CancelAt<'_> {
            fn run_round(&self, round: &Round<'_>) -> RoundOutcome {
                if self.calls.fetch_add(1, Ordering::SeqCst) == 4 {
                    self.cancel.cancel();
                    return RoundOutcome {
                        cancelled: true,
                        ..RoundOutcome::default()
                    };
                }
                self.inner.run_round(round)
            }
        }
        let executor = CancelAt {
            inner: &inner,
            cancel: cancel.clone(),
            calls: AtomicU32::new(0),
        };
        let ctx = TrialContext::new(vec![0], cancel);
        let m = rounds_of_one_trial(5);
        let setup = one_case_setup(&m, [&executor, &executor], &ctx, None, 5);
        let outcome = run_ab_plan(&plan, &setup, &mut |_, _, _| Ok(())).unwrap();
        assert_eq!(outcome.status, RunStatus::Partial);
        assert_eq!(outcome.records[0][0].rounds.len(), 2);
        assert_eq!(outcome.records[1][0].rounds.len(), 2);
    }
}

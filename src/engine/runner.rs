//! Runs a plan of cases in rounds, handing each case to the caller after
//! every round so that it can be stored at once.
//!
//! **Why rounds.** The trials of one process share its memory placement,
//! its threads' placement, its files' layout and the minute it ran in; on
//! shared and virtual machines those differ more between processes than
//! the trials differ among themselves, so a case measured in one go has a
//! confidence interval far too narrow for comparing runs. So every case is
//! measured in several rounds, each a fresh start (a fresh process when run
//! from the command line), and one round is a pass over all the run's
//! cases in a freshly shuffled order, so that a drift in the host (a
//! neighbour's job, a thermal limit) is spread over every case instead of
//! lining up with one. A case's CI then comes from its round means
//! (`stats::summarize_rounds`).
//!
//! **Spending the time.** Every case gets `min_rounds` rounds. After that,
//! a case gets another round while its CI is wider than the target and its
//! budget allows. When the run has a budget, the time goes where it buys a
//! decision (`within_run_budget`): first to the cases still wider than
//! ±10% that more rounds can bring under it, then to the cases that can
//! reach the target, and what is left to the widest of the rest; a case
//! that the rounds its budget allows cannot bring to the target stops
//! taking time from those that can. A case left wider than the target
//! says so, and why, in a warning ([`PRECISION_WARNING_PREFIX`]). Trials
//! per round come from the variance components earlier runs measured
//! (`planner.rs`).

use super::context::TrialContext;
use super::executor::{InProcess, RoundExecutor, RoundOutcome, TrialResult};
use super::methodology::Methodology;
use super::planner::{History, NoHistory, Shuffler, trials_per_round};
use super::precision::{percent, rounds_to_reach};
use super::progress::Progress;
use super::record;
use super::round::{Round, RoundRequest};
use super::shared_pool::SharedPool;
use super::trial_monitor::ProcMonitor;
use super::workload::{CaseEnv, PlannedCase};
use crate::results::{CaseRecord, RoundRecord, RunStatus};

/// Everything a plan runs with besides its cases.
pub struct RunSetup<'a> {
    /// What workloads may know about the run.
    pub env: &'a CaseEnv,
    /// The repetition rule.
    pub method: &'a Methodology,
    /// CPUs and the user's stop request.
    pub ctx: &'a TrialContext,
    /// Runs one round of one case.
    pub executor: &'a dyn RoundExecutor,
    /// Earlier runs of the same cases, for planning.
    pub history: &'a dyn History,
    /// Where progress goes.
    pub progress: &'a dyn Progress,
    /// Seed of the order shuffles.
    pub seed: u64,
}

/// What a whole plan produced.
#[derive(Debug)]
pub struct PlanOutcome {
    /// Complete, partial (cancelled) or failed (a case failed).
    pub status: RunStatus,
    /// The cases that ran at least one round, in plan order, each with
    /// every round it finished.
    pub records: Vec<CaseRecord>,
}

/// A case's measurements so far (also one side's of a case in
/// `ab_runner.rs`).
pub(super) struct CaseState {
    pub(super) record: CaseRecord,
    pub(super) trials: Vec<(u32, TrialResult)>,
    trials_per_round: u32,
    pub(super) rounds_done: u32,
    pub(super) seconds: f64,
    pub(super) failed: bool,
}

impl CaseState {
    fn new(planned: &PlannedCase, setup: &RunSetup) -> Self {
        Self::planned(planned, setup.method, setup.history)
    }

    /// A case with nothing measured yet, its trials per round planned from
    /// `history`.
    pub(super) fn planned(
        planned: &PlannedCase,
        method: &Methodology,
        history: &dyn History,
    ) -> Self {
        let trials_per_round = if method.single_round() {
            method.min_trials
        } else {
            let hint = history.hint(planned);
            trials_per_round(hint.as_ref(), method.min_trials, method.max_trials)
        };
        CaseState {
            record: CaseRecord {
                workload: planned.workload.id().to_string(),
                workload_version: planned.workload.version(),
                params: planned.params.to_strings(),
                given_as_all: Some(planned.params.given_as_all()),
                warnings: Vec::new(),
                error: None,
                rounds: Vec::new(),
                trials: Vec::new(),
                metrics: Vec::new(),
                latency_histogram: None,
                values: Some(planned.params.clone()),
            },
            trials: Vec::new(),
            trials_per_round,
            rounds_done: 0,
            seconds: 0.0,
            failed: false,
        }
    }

    /// Relative CI half-width of the primary metric (infinite when unknown).
    fn relative_ci(&self) -> f64 {
        self.record
            .metrics
            .first()
            .map_or(f64::INFINITY, |m| m.summary.relative_ci_half_width())
    }

    pub(super) fn mean_round_seconds(&self) -> f64 {
        self.seconds / self.rounds_done.max(1) as f64
    }

    /// Relative standard deviation of the primary metric's round means
    /// (`None` before two rounds).
    fn round_sd(&self) -> Option<f64> {
        let metric = self.record.metrics.first()?;
        let means = &metric.levels.as_ref()?.round_means;
        relative_sd(means)
    }

    /// The most rounds this case can still get: its maximum, and the
    /// rounds its time budget allows at its mean round time.
    fn reachable_rounds(&self, method: &Methodology) -> u32 {
        let left = method.case_budget.as_secs_f64() - self.seconds;
        let affordable = (left / self.mean_round_seconds().max(1e-9))
            .floor()
            .max(0.0);
        method
            .max_rounds
            .min(self.rounds_done.saturating_add(affordable.min(1e6) as u32))
    }

    /// Whether rounds within reach can bring the interval within
    /// `target`, judging by the scatter of the round means so far.
    fn can_reach(&self, target: f64, method: &Methodology) -> bool {
        self.round_sd()
            .is_some_and(|sd| rounds_to_reach(sd, target, self.reachable_rounds(method)).is_some())
    }

    /// Whether the case wants another round (budgets aside from the run's).
    fn wants_more(&self, method: &Methodology) -> bool {
        if self.failed || self.rounds_done >= method.max_rounds {
            return false;
        }
        if self.rounds_done < method.min_rounds {
            return true;
        }
        self.relative_ci() > method.ci_target
            && self.seconds + self.mean_round_seconds() <= method.case_budget.as_secs_f64()
    }

    pub(super) fn request(&self, method: &Methodology) -> RoundRequest {
        let (min_trials, max_trials) = if method.single_round() {
            (method.min_trials, method.max_trials)
        } else {
            (self.trials_per_round, self.trials_per_round)
        };
        RoundRequest {
            round: self.rounds_done,
            warmup_trials: method.warmup_trials,
            min_trials,
            max_trials,
            ci_target: method.ci_target,
            budget: method.case_budget,
            max_replacements: max_trials,
            shared: None,
        }
    }

    /// Takes a finished (or failed) round in.
    pub(super) fn absorb(&mut self, order: u32, outcome: RoundOutcome) {
        let round = self.rounds_done;
        self.rounds_done += 1;
        self.seconds += outcome.seconds;
        self.record.rounds.push(RoundRecord {
            round,
            order,
            seconds: outcome.seconds,
        });
        for warning in outcome.warnings {
            if !self.record.warnings.contains(&warning) {
                self.record.warnings.push(warning);
            }
        }
        self.trials
            .extend(outcome.trials.into_iter().map(|t| (round, t)));
        if let Some(error) = outcome.error {
            self.failed = true;
            self.record.error = Some(if self.rounds_done > 1 {
                format!("round {}: {error}", round + 1)
            } else {
                error
            });
        }
        record::rebuild(&mut self.record, &self.trials);
    }
}

/// Runs every case of `plan` in rounds and passes each case's record to
/// `on_case` (with the case's position in the plan) after each of its
/// rounds. A failing case gets no further rounds but does not stop the
/// plan; a cancellation does, keeping every finished round. An error from
/// `on_case` (the store) stops the plan and is returned.
pub fn run_plan(
    plan: &[PlannedCase],
    setup: &RunSetup,
    on_case: &mut dyn FnMut(usize, &CaseRecord) -> anyhow::Result<()>,
) -> anyhow::Result<PlanOutcome> {
    let method = setup.method;
    let mut states: Vec<CaseState> = plan.iter().map(|p| CaseState::new(p, setup)).collect();
    let mut shuffler = Shuffler::new(setup.seed);
    let mut cancelled = false;
    let mut shared = SharedPool::default();

    'rounds: for round in 0..method.max_rounds {
        let mut active: Vec<usize> = (0..plan.len())
            .filter(|&i| states[i].rounds_done == round && states[i].wants_more(method))
            .collect();
        if round >= method.min_rounds {
            // Rounds run one after another, so the run's time so far is
            // the sum of its rounds' times.
            let spent = states.iter().map(|s| s.seconds).sum();
            active = within_run_budget(active, &states, method, spent);
        }
        if active.is_empty() {
            break;
        }
        // A case left out of this round has had its last: data that only
        // such cases shared goes before the round.
        shared.keep_only(active.iter().map(|&i| &plan[i]));
        shuffler.shuffle(&mut active);
        setup.progress.round_started(round, active.len());
        for (order, &i) in active.iter().enumerate() {
            if setup.ctx.cancel.is_cancelled() {
                cancelled = true;
                break 'rounds;
            }
            let state = &mut states[i];
            setup
                .progress
                .case_started(order, active.len(), &plan[i].label());
            let outcome = match shared.ensure(&plan[i], setup.env, setup.ctx) {
                Err(failed) => failed,
                Ok(found) => setup.executor.run_round(&Round {
                    planned: &plan[i],
                    request: &RoundRequest {
                        shared: found,
                        ..state.request(method)
                    },
                    env: setup.env,
                    ctx: setup.ctx,
                    progress: setup.progress,
                }),
            };
            if outcome.cancelled || setup.ctx.cancel.is_cancelled() {
                // The round in flight is dropped; finished rounds stay.
                cancelled = true;
                break 'rounds;
            }
            state.absorb(order as u32, outcome);
            setup.progress.case_finished(&state.record);
            on_case(i, &state.record)?;
        }
    }

    // What the cases' rounds shared goes now, whatever ended the plan
    // (an error from `on_case` drops the pool, which removes it too).
    shared.release_all();
    if !cancelled {
        // The warning comes after the case's last round was handed over:
        // hand the case over again so that it is stored with it.
        for (i, state) in states.iter_mut().enumerate() {
            if state.note_missed_target(method) {
                on_case(i, &state.record)?;
            }
        }
    }
    let failed = states.iter().any(|s| s.failed);
    let records = states
        .into_iter()
        .filter(|s| s.rounds_done > 0)
        .map(|s| s.record)
        .collect();
    let status = if cancelled {
        RunStatus::Partial
    } else if failed {
        RunStatus::Failed
    } else {
        RunStatus::Complete
    };
    Ok(PlanOutcome { status, records })
}

/// The width past which a number decides nothing: a case wider than
/// this gets extra rounds before any case is tightened further.
pub const WIDE: f64 = 0.10;

/// The cases that get an extra round when the run has a budget, as many
/// as the time left allows at each case's mean round time, in this order:
/// the cases wider than [`WIDE`] that the rounds within their reach can
/// bring under it, then the cases that can reach the target, then the
/// rest; widest first within each.
fn within_run_budget(
    mut active: Vec<usize>,
    states: &[CaseState],
    method: &Methodology,
    elapsed: f64,
) -> Vec<usize> {
    let Some(budget) = method.run_budget else {
        return active;
    };
    let mut left = budget.as_secs_f64() - elapsed;
    let tier = |i: usize| {
        let state = &states[i];
        if state.relative_ci() > WIDE && state.can_reach(WIDE, method) {
            0
        } else if state.can_reach(method.ci_target, method) {
            1
        } else {
            2
        }
    };
    active.sort_by(|&a, &b| {
        tier(a)
            .cmp(&tier(b))
            .then(states[b].relative_ci().total_cmp(&states[a].relative_ci()))
    });
    active.retain(|&i| {
        let cost = states[i].mean_round_seconds();
        if cost <= left {
            left -= cost;
            true
        } else {
            false
        }
    });
    active
}

/// Relative standard deviation of `values` (`None` below two values or
/// with a mean of 0).
fn relative_sd(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    if mean == 0.0 || !mean.is_finite() {
        return None;
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    Some(var.sqrt() / mean.abs())
}

/// How a warning that a case missed the precision target begins.
pub const PRECISION_WARNING_PREFIX: &str = "wider than the target: ";

/// The most rounds the warning's estimate of what would reach the target
/// considers.
const ROUNDS_CONSIDERED: u32 = 1000;

impl CaseState {
    /// Adds the warning that the case ended wider than the target: how
    /// wide, what stopped it, which level of variance is too large, and
    /// how many rounds would have reached the target. Whether it did.
    fn note_missed_target(&mut self, method: &Methodology) -> bool {
        let ci = self.relative_ci();
        if self.failed || self.rounds_done < 2 || !ci.is_finite() || ci <= method.ci_target {
            return false;
        }
        let Some(round_sd) = self.round_sd() else {
            return false;
        };
        let stopped = if method.single_round() {
            String::new()
        } else if self.rounds_done >= method.max_rounds {
            format!(" (the most rounds, {})", method.max_rounds)
        } else if self.seconds + self.mean_round_seconds() > method.case_budget.as_secs_f64() {
            format!(
                " (its time budget, {:.0} s)",
                method.case_budget.as_secs_f64()
            )
        } else {
            " (the run's time budget)".to_string()
        };
        let levels = self
            .record
            .metrics
            .first()
            .and_then(|m| Some((m.levels.as_ref()?, m.summary.mean.abs())));
        let cause = match levels {
            Some((levels, mean)) if mean > 0.0 => {
                let between = levels.between_round_sd.unwrap_or(0.0) / mean;
                let within = levels.within_round_sd.map(|sd| sd / mean);
                let per_round = f64::from(self.trials_per_round.max(1)).sqrt();
                match within {
                    Some(within) if within / per_round > between => format!(
                        "the trials within a round scatter by {} (between rounds {}): longer or more trials per round would help",
                        percent(within),
                        percent(between)
                    ),
                    Some(within) => format!(
                        "the rounds differ by {} beyond their trials' scatter of {} (each round is a fresh process at its own moment of the host)",
                        percent(between),
                        percent(within)
                    ),
                    None => format!("the rounds differ by {}", percent(round_sd)),
                }
            }
            _ => format!("the rounds differ by {}", percent(round_sd)),
        };
        let needed = match rounds_to_reach(round_sd, method.ci_target, ROUNDS_CONSIDERED) {
            Some(n) => format!("about {n} rounds would reach it"),
            None => format!("more than {ROUNDS_CONSIDERED} rounds would be needed"),
        };
        let warning = format!(
            "{PRECISION_WARNING_PREFIX}±{} after {} rounds{stopped}, target ±{}: {cause}; {needed}",
            percent(ci),
            self.rounds_done,
            percent(method.ci_target),
        );
        self.record.warnings.push(warning);
        true
    }
}

/// How a single case ended (see [`run_case`]).
#[derive(Debug)]
pub enum CaseOutcome {
    /// Every round ran.
    Finished(CaseRecord),
    /// The case failed; the record carries the error and the trials that
    /// finished before it.
    Failed(CaseRecord),
    /// The user cancelled before the case's first round finished.
    Cancelled,
}

/// Runs one case in this process under `method`, watching the host with
/// the real monitor: what a workload's own tests use.
pub fn run_case(
    planned: &PlannedCase,
    env: &CaseEnv,
    method: &Methodology,
    ctx: &TrialContext,
    progress: &dyn Progress,
) -> CaseOutcome {
    let executor = InProcess {
        monitor: &ProcMonitor,
    };
    let setup = RunSetup {
        env,
        method,
        ctx,
        executor: &executor,
        history: &NoHistory,
        progress,
        seed: 0,
    };
    let plan = std::slice::from_ref(planned);
    let outcome = run_plan(plan, &setup, &mut |_, _| Ok(()))
        .expect("a callback that never fails cannot stop the plan");
    match outcome.records.into_iter().next() {
        Some(record) if record.error.is_some() => CaseOutcome::Failed(record),
        Some(record) if outcome.status != RunStatus::Partial => CaseOutcome::Finished(record),
        _ => CaseOutcome::Cancelled,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use super::*;
    use crate::engine::context::{CancelToken, Cancelled};
    use crate::engine::params::{ParamSet, ParamSpec};
    use crate::engine::progress::Silent;
    use crate::engine::test_fixtures::{n_param, one_cpu_env, planned, run_on_one_cpu};
    use crate::engine::trial_monitor::ScriptedMonitor;
    use crate::engine::workload::{Case, Metric, TrialOutput, Workload};
    use crate::monitor::Disturbance;

    /// What the scripted case returns on each trial call of a round (its
    /// warm-up included): `values[round][call]`, the last value of the
    /// round repeating, the last round repeating.
    #[derive(Clone)]
    enum Script {
        Rounds(Vec<Vec<f64>>),
        /// Fail on this (round, call).
        FailAt(u32, u32),
        /// Cancel the token on this (round, call) and report it.
        CancelAt(u32, u32, CancelToken),
        /// Panic on this (round, call).
        PanicAt(u32, u32),
        /// Sleep this long on every call, returning these values in turn
        /// over the whole case.
        Sleep(Duration, Vec<f64>),
    }

    #[derive(Default)]
    struct Calls {
        build: AtomicU32,
        prepare: AtomicU32,
        trial: AtomicU32,
        cleanup: AtomicU32,
        /// The order in which cases started rounds, by case name.
        order: Mutex<Vec<String>>,
    }

    struct Scripted {
        name: &'static str,
        script: Script,
        calls: Arc<Calls>,
        fail_prepare: bool,
    }

    impl Workload for Scripted {
        fn id(&self) -> &'static str {
            self.name
        }
        fn version(&self) -> u32 {
            1
        }
        fn summary(&self) -> &'static str {
            "a scripted workload for engine tests"
        }
        fn params(&self) -> Vec<ParamSpec> {
            n_param()
        }
        fn build(&self, _p: &ParamSet, _env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
            self.calls.build.fetch_add(1, Ordering::SeqCst);
            self.calls.order.lock().unwrap().push(self.name.to_string());
            Ok(Box::new(ScriptedCase {
                script: self.script.clone(),
                calls: self.calls.clone(),
                fail_prepare: self.fail_prepare,
                call: 0,
            }))
        }
    }

    struct ScriptedCase {
        script: Script,
        calls: Arc<Calls>,
        fail_prepare: bool,
        /// Trial calls in this round (this case instance).
        call: u32,
    }

    impl Case for ScriptedCase {
        fn prepare(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
            self.calls.prepare.fetch_add(1, Ordering::SeqCst);
            if self.fail_prepare {
                anyhow::bail!("prepare exploded");
            }
            Ok(())
        }
        fn trial(&mut self, ctx: &TrialContext) -> anyhow::Result<TrialOutput> {
            let total = self.calls.trial.fetch_add(1, Ordering::SeqCst);
            let (round, call) = (ctx.round, self.call);
            self.call += 1;
            let value = match &self.script {
                Script::Rounds(rounds) => {
                    let r = &rounds[(round as usize).min(rounds.len() - 1)];
                    r[(call as usize).min(r.len() - 1)]
                }
                Script::FailAt(r, c) if (round, call) == (*r, *c) => {
                    anyhow::bail!("round {round} call {call} exploded")
                }
                Script::CancelAt(r, c, token) if (round, call) == (*r, *c) => {
                    token.cancel();
                    return Err(Cancelled.into());
                }
                Script::PanicAt(r, c) if (round, call) == (*r, *c) => {
                    panic!("round {round} call {call} panicked")
                }
                Script::FailAt(..) | Script::CancelAt(..) | Script::PanicAt(..) => 100.0,
                Script::Sleep(d, v) => {
                    std::thread::sleep(*d);
                    v[(total as usize).min(v.len() - 1)]
                }
            };
            Ok(TrialOutput {
                metrics: vec![
                    Metric::higher("value", "u", value),
                    Metric::lower("double", "u", 2.0 * value),
                ],
                latency_ns: None,
            })
        }
        fn cleanup(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
            self.calls.cleanup.fetch_add(1, Ordering::SeqCst);
            Ok(())
        }
        fn warnings(&self) -> Vec<String> {
            // What the trials showed: how many ran in this round.
            vec![format!("{} calls this round", self.call)]
        }
    }

    fn leak(name: &'static str, script: Script) -> (&'static Scripted, Arc<Calls>) {
        leak_with(name, script, false)
    }

    fn leak_with(
        name: &'static str,
        script: Script,
        fail_prepare: bool,
    ) -> (&'static Scripted, Arc<Calls>) {
        let calls = Arc::new(Calls::default());
        let w = Box::leak(Box::new(Scripted {
            name,
            script,
            calls: calls.clone(),
            fail_prepare,
        }));
        (w, calls)
    }

    /// Three rounds of two trials after one warm-up: the defaults with no
    /// history.
    fn default_method() -> Methodology {
        Methodology::default()
    }

    /// Runs `plan` in this process with a scripted monitor; returns the
    /// outcome and every (position, rounds so far) `on_case` saw.
    fn run_with(
        plan: &[PlannedCase],
        method: &Methodology,
        cancel: CancelToken,
        monitor: &ScriptedMonitor,
    ) -> (PlanOutcome, Vec<(usize, usize)>) {
        let ctx = TrialContext::new(vec![0], cancel);
        let executor = InProcess { monitor };
        let setup = RunSetup {
            env: &one_cpu_env(),
            method,
            ctx: &ctx,
            executor: &executor,
            history: &NoHistory,
            progress: &Silent,
            seed: 7,
        };
        let mut seen = Vec::new();
        let outcome = run_plan(plan, &setup, &mut |i, r| {
            seen.push((i, r.rounds.len()));
            Ok(())
        })
        .unwrap();
        (outcome, seen)
    }

    fn run_quiet(plan: &[PlannedCase], method: &Methodology) -> PlanOutcome {
        run_with(plan, method, CancelToken::new(), &ScriptedMonitor::quiet()).0
    }

    #[test]
    fn every_case_gets_three_rounds_of_two_trials_after_a_warm_up_each() {
        // Round means 100, 104, 96 with trials ±1 around them; the warm-up
        // (first call of each round, value 1) is not counted.
        let (w, calls) = leak(
            "test.a",
            Script::Rounds(vec![
                vec![1.0, 99.0, 101.0],
                vec![1.0, 103.0, 105.0],
                vec![1.0, 95.0, 97.0],
            ]),
        );
        let method = Methodology {
            max_rounds: 3,
            ..default_method()
        };
        let outcome = run_quiet(&[planned(w)], &method);
        assert_eq!(outcome.status, RunStatus::Complete);
        let record = &outcome.records[0];
        assert_eq!(calls.build.load(Ordering::SeqCst), 3);
        assert_eq!(calls.cleanup.load(Ordering::SeqCst), 3);
        assert_eq!(calls.trial.load(Ordering::SeqCst), 9);
        assert_eq!(record.rounds.len(), 3);
        let rounds: Vec<u32> = record.trials.iter().map(|t| t.round).collect();
        assert_eq!(rounds, vec![0, 0, 1, 1, 2, 2]);
        let metric = &record.metrics[0];
        assert_eq!(metric.samples, vec![99.0, 101.0, 103.0, 105.0, 95.0, 97.0]);
        // The CI comes from the round means (100, 104, 96): s = 4, t(2).
        let (expected, levels) = crate::stats::summarize_rounds(&[
            vec![99.0, 101.0],
            vec![103.0, 105.0],
            vec![95.0, 97.0],
        ])
        .unwrap();
        assert_eq!(metric.summary, expected);
        assert_eq!(metric.levels.as_ref(), Some(&levels));
        assert_eq!(levels.ci_basis, crate::stats::CiBasis::Rounds);
        assert_eq!(levels.round_means, vec![100.0, 104.0, 96.0]);
        // Every metric gets the same treatment.
        assert_eq!(record.metrics[1].summary.mean, 200.0);
        // Each round's warning is kept once; the case ended wider than
        // the 2% target (±9.9% from 3 rounds), and says so last.
        assert_eq!(record.warnings[0], "3 calls this round");
        assert_eq!(record.warnings.len(), 2);
        assert!(record.warnings[1].starts_with(PRECISION_WARNING_PREFIX));
    }

    #[test]
    fn the_order_of_cases_is_shuffled_between_rounds() {
        let names = [
            "test.o0", "test.o1", "test.o2", "test.o3", "test.o4", "test.o5",
        ];
        let calls = Arc::new(Calls::default());
        let plan: Vec<PlannedCase> = names
            .iter()
            .map(|name| {
                let w = Box::leak(Box::new(Scripted {
                    name,
                    script: Script::Rounds(vec![vec![100.0]]),
                    calls: calls.clone(),
                    fail_prepare: false,
                }));
                planned(w)
            })
            .collect();
        let method = Methodology {
            max_rounds: 3,
            ..default_method()
        };
        let outcome = run_quiet(&plan, &method);
        let order = calls.order.lock().unwrap().clone();
        assert_eq!(order.len(), 18);
        let rounds: Vec<&[String]> = order.chunks(6).collect();
        // Every round holds every case once, and not all in the same order.
        for round in &rounds {
            let mut sorted = round.to_vec();
            sorted.sort();
            assert_eq!(sorted, names.to_vec());
        }
        assert!(
            rounds[0] != rounds[1] || rounds[1] != rounds[2],
            "{order:?}"
        );
        // The records come back in plan order, with each round's position.
        let ids: Vec<&str> = outcome
            .records
            .iter()
            .map(|r| r.workload.as_str())
            .collect();
        assert_eq!(ids, names.to_vec());
        for (round, chunk) in rounds.iter().enumerate() {
            for (order, name) in chunk.iter().enumerate() {
                let record = outcome
                    .records
                    .iter()
                    .find(|r| &r.workload == name)
                    .unwrap();
                assert_eq!(record.rounds[round].order, order as u32);
            }
        }
    }

    #[test]
    fn a_noisy_case_gets_more_rounds_until_its_ci_is_tight() {
        // Round means 90, 110, 100, then 100 for ever: after 3 rounds the
        // CI is ±25%; each further round of 100 tightens it. The steady
        // case stops at the minimum.
        let noisy = Script::Rounds(vec![
            vec![0.0, 90.0, 90.0],
            vec![0.0, 110.0, 110.0],
            vec![0.0, 100.0, 100.0],
        ]);
        let (w, calls) = leak("test.noisy", noisy);
        let (steady, steady_calls) = leak("test.steady", Script::Rounds(vec![vec![0.0, 100.0]]));
        let method = Methodology {
            max_rounds: 10,
            ..default_method()
        };
        let outcome = run_quiet(&[planned(w), planned(steady)], &method);
        assert_eq!(steady_calls.build.load(Ordering::SeqCst), 3);
        let rounds = calls.build.load(Ordering::SeqCst);
        assert!(rounds > 3, "{rounds}");
        let summary = &outcome.records[0].metrics[0].summary;
        if rounds < 10 {
            assert!(summary.relative_ci_half_width() <= 0.02, "{summary:?}");
        }
        // Rounds 4.. are all 100, so the mean drifts toward it.
        assert!(summary.mean > 99.0 && summary.mean <= 100.0);
    }

    #[test]
    fn extra_rounds_stop_at_the_maximum_and_at_the_case_budget() {
        let alternating: Vec<Vec<f64>> = (0..20)
            .map(|i| vec![0.0, if i % 2 == 0 { 50.0 } else { 150.0 }])
            .collect();
        let (w, calls) = leak("test.capped", Script::Rounds(alternating.clone()));
        let method = Methodology {
            max_rounds: 5,
            ..default_method()
        };
        run_quiet(&[planned(w)], &method);
        assert_eq!(calls.build.load(Ordering::SeqCst), 5);

        // 20 ms per call, 3 calls per round: a 200 ms budget allows the
        // three mandatory rounds (180 ms) and no more.
        let values: Vec<f64> = (0..60)
            .map(|i| if i % 2 == 0 { 50.0 } else { 150.0 })
            .collect();
        let (slow, slow_calls) = leak(
            "test.budget",
            Script::Sleep(Duration::from_millis(20), values),
        );
        let method = Methodology {
            case_budget: Duration::from_millis(200),
            ..default_method()
        };
        run_quiet(&[planned(slow)], &method);
        assert_eq!(slow_calls.build.load(Ordering::SeqCst), 3);
    }

    /// Rounds that take the time they say: each round of a case returns
    /// the next of its values as its one trial, and `seconds` as its
    /// duration.
    struct TimedRounds {
        values: std::collections::HashMap<&'static str, Vec<f64>>,
        seconds: f64,
        rounds: Mutex<std::collections::HashMap<String, usize>>,
    }

    impl RoundExecutor for TimedRounds {
        fn run_round(&self, round: &Round<'_>) -> RoundOutcome {
            let id = round.planned.workload.id();
            let mut rounds = self.rounds.lock().unwrap();
            let n = rounds.entry(id.to_string()).or_default();
            let values = &self.values[id];
            let value = values[*n % values.len()];
            *n += 1;
            RoundOutcome {
                trials: vec![TrialResult {
                    metrics: vec![Metric::higher("value", "u", value)],
                    histogram: None,
                    seconds: self.seconds,
                    health: Default::default(),
                    replaced: false,
                }],
                seconds: self.seconds,
                ..RoundOutcome::default()
            }
        }
    }

    #[test]
    fn the_run_budget_gives_extra_rounds_to_the_widest_interval_first() {
        // Two cases that both want more rounds, 1 s per round: 6 s of
        // mandatory rounds, and a 7.5 s run budget leaves room for one
        // extra round, which goes to the noisier case (neither can reach
        // ±10% in the rounds allowed, so width alone decides).
        let (wide, _) = leak("test.wide", Script::Rounds(vec![vec![0.0]]));
        let (narrow, _) = leak("test.narrow", Script::Rounds(vec![vec![0.0]]));
        let executor = TimedRounds {
            values: [
                ("test.wide", vec![60.0, 140.0, 100.0]),
                ("test.narrow", vec![80.0, 120.0, 100.0]),
            ]
            .into(),
            seconds: 1.0,
            rounds: Mutex::new(Default::default()),
        };
        let method = Methodology {
            run_budget: Some(Duration::from_secs_f64(7.5)),
            ..default_method()
        };
        let outcome = run_on_one_cpu(&[planned(wide), planned(narrow)], &method, &executor, 1);
        assert_eq!(outcome.records[0].rounds.len(), 4);
        assert_eq!(outcome.records[1].rounds.len(), 3);
        // Without a run budget both get rounds up to their case budget.
        let executor = TimedRounds {
            values: executor.values.clone(),
            seconds: 1.0,
            rounds: Mutex::new(Default::default()),
        };
        let method = Methodology {
            case_budget: Duration::from_secs(5),
            ..default_method()
        };
        let outcome = run_on_one_cpu(&[planned(wide), planned(narrow)], &method, &executor, 1);
        assert_eq!(outcome.records[0].rounds.len(), 5);
        assert_eq!(outcome.records[1].rounds.len(), 5);
    }

    #[test]
    fn the_run_budget_goes_first_to_wide_cases_that_can_be_brought_under_ten_percent() {
        // Three cases, 1 s a round, 9 s of mandatory rounds and an 11 s
        // run budget: two extra rounds. `hopeless` (round means 50% apart:
        // no 10 rounds bring it under ±10%) is the widest, but the rounds
        // go to `wide` (±25%, under ±10% within 7 rounds) and `close`
        // (±5%, at ±3% within 5 rounds).
        let (hopeless, _) = leak("test.hopeless", Script::Rounds(vec![vec![0.0]]));
        let (wide, _) = leak("test.wide10", Script::Rounds(vec![vec![0.0]]));
        let (close, _) = leak("test.close", Script::Rounds(vec![vec![0.0]]));
        let executor = TimedRounds {
            values: [
                ("test.hopeless", vec![50.0, 150.0, 100.0]),
                ("test.wide10", vec![90.0, 110.0, 100.0]),
                ("test.close", vec![98.0, 102.0, 100.0]),
            ]
            .into(),
            seconds: 1.0,
            rounds: Mutex::new(Default::default()),
        };
        let method = Methodology {
            min_rounds: 3,
            max_rounds: 10,
            ci_target: 0.03,
            case_budget: Duration::from_secs(100),
            run_budget: Some(Duration::from_secs(11)),
            ..default_method()
        };
        let ctx = TrialContext::new(vec![0], CancelToken::new());
        let setup = RunSetup {
            env: &one_cpu_env(),
            method: &method,
            ctx: &ctx,
            executor: &executor,
            history: &NoHistory,
            progress: &Silent,
            seed: 1,
        };
        // What was handed over for storage last, per case.
        let mut stored: Vec<Option<CaseRecord>> = vec![None; 3];
        let outcome = run_plan(
            &[planned(hopeless), planned(wide), planned(close)],
            &setup,
            &mut |i, record| {
                stored[i] = Some(record.clone());
                Ok(())
            },
        )
        .unwrap();
        let rounds: Vec<usize> = outcome.records.iter().map(|r| r.rounds.len()).collect();
        assert_eq!(rounds, vec![3, 4, 4]);
        // The case left wide says how wide, what stopped it, which level
        // of variance is too large and what would reach the target.
        let warning = outcome.records[0]
            .warnings
            .iter()
            .find(|w| w.starts_with(PRECISION_WARNING_PREFIX))
            .expect("a precision warning");
        assert_eq!(
            warning,
            "wider than the target: ±124% after 3 rounds (the run's time budget), target ±3.0%: the rounds differ by 50%; more than 1000 rounds would be needed"
        );
        // ... and the store gets it too: the case is handed over again.
        assert_eq!(
            stored[0].as_ref().unwrap().warnings,
            outcome.records[0].warnings
        );
    }

    #[test]
    fn a_case_at_its_most_rounds_says_so_and_one_within_target_says_nothing() {
        // Round means alternate 95 and 105 (sd 5.3%): after 4 rounds the
        // CI is ±8.4%, the most rounds allowed; ±3% would take 15.
        let (noisy, _) = leak("test.alternating", Script::Rounds(vec![vec![0.0]]));
        let (steady, _) = leak("test.steady4", Script::Rounds(vec![vec![0.0]]));
        let executor = TimedRounds {
            values: [
                ("test.alternating", vec![95.0, 105.0]),
                ("test.steady4", vec![100.0]),
            ]
            .into(),
            seconds: 0.1,
            rounds: Mutex::new(Default::default()),
        };
        let method = Methodology {
            min_rounds: 4,
            max_rounds: 4,
            ci_target: 0.03,
            ..default_method()
        };
        let outcome = run_on_one_cpu(&[planned(noisy), planned(steady)], &method, &executor, 1);
        let warnings = &outcome.records[0].warnings;
        assert_eq!(
            warnings.last().unwrap(),
            "wider than the target: ±9.2% after 4 rounds (the most rounds, 4), target ±3.0%: the rounds differ by 5.8%; about 17 rounds would reach it"
        );
        assert!(
            !outcome.records[1]
                .warnings
                .iter()
                .any(|w| w.starts_with(PRECISION_WARNING_PREFIX))
        );
    }

    #[test]
    fn a_disturbed_trial_is_replaced_kept_and_left_out() {
        // The monitor flags the second counted trial (value 500): another
        // trial replaces it, and the statistics never see 500.
        let (w, calls) = leak(
            "test.flagged",
            Script::Rounds(vec![vec![0.0, 100.0, 500.0, 102.0], vec![0.0, 98.0, 100.0]]),
        );
        let monitor = ScriptedMonitor::new(vec![vec![], vec![Disturbance::BusyHost]]);
        let method = Methodology {
            max_rounds: 3,
            ..default_method()
        };
        let (outcome, _) = run_with(&[planned(w)], &method, CancelToken::new(), &monitor);
        let record = &outcome.records[0];
        // Round 0 ran 1 warm-up + 3 counted calls; rounds 1 and 2 ran 3.
        assert_eq!(calls.trial.load(Ordering::SeqCst), 4 + 3 + 3);
        assert_eq!(record.trials.len(), 7);
        assert!(record.trials[1].replaced);
        assert_eq!(record.trials[1].health.flags, vec![Disturbance::BusyHost]);
        assert_eq!(record.replaced_trials(), 1);
        assert_eq!(record.used_trials(), 6);
        assert!(record.disturbances().is_empty());
        let metric = &record.metrics[0];
        assert_eq!(metric.samples[1], 500.0);
        assert_eq!(metric.summary.n, 6);
        assert_eq!(metric.summary.max, 102.0);
        assert_eq!(
            metric.levels.as_ref().unwrap().round_means,
            vec![101.0, 99.0, 99.0]
        );
    }

    #[test]
    fn a_host_busy_for_longer_than_a_trial_gets_one_replacement_not_more() {
        // Every trial busy: each round replaces its first trial, keeps the
        // next (flagged right after a flagged one), replaces the third and
        // keeps the fourth: 1 warm-up + 4 calls per round.
        let (w, calls) = leak("test.busy", Script::Rounds(vec![vec![100.0]]));
        let monitor = ScriptedMonitor::new(vec![vec![Disturbance::BusyHost]; 100]);
        let method = Methodology {
            max_rounds: 3,
            ..default_method()
        };
        let (outcome, _) = run_with(&[planned(w)], &method, CancelToken::new(), &monitor);
        let record = &outcome.records[0];
        assert_eq!(calls.trial.load(Ordering::SeqCst), 3 * 5);
        let replaced: Vec<bool> = record.trials.iter().map(|t| t.replaced).collect();
        assert_eq!(&replaced[..4], &[true, false, true, false]);
        assert_eq!(record.replaced_trials(), 6);
        assert_eq!(record.disturbances(), vec![("busy", 6)]);
        assert!(
            record
                .warnings
                .iter()
                .any(|w| w.starts_with("6 of 6 trials disturbed (busy)")),
            "{:?}",
            record.warnings
        );
    }

    #[test]
    fn a_failure_in_a_later_round_keeps_the_earlier_rounds() {
        // Round 1 fails on its first counted trial (call 1).
        let (w, calls) = leak("test.fails", Script::FailAt(1, 1));
        let (good, _) = leak("test.good", Script::Rounds(vec![vec![0.0, 100.0]]));
        let method = Methodology {
            max_rounds: 3,
            ..default_method()
        };
        let (outcome, _) = run_with(
            &[planned(w), planned(good)],
            &method,
            CancelToken::new(),
            &ScriptedMonitor::quiet(),
        );
        assert_eq!(outcome.status, RunStatus::Failed);
        let failed = &outcome.records[0];
        assert_eq!(failed.rounds.len(), 2);
        assert!(
            failed
                .error
                .as_deref()
                .unwrap()
                .contains("round 2: round 1 call 1 exploded")
        );
        // Round 0's two trials are kept; no third round was started.
        assert_eq!(failed.metrics[0].samples, vec![100.0, 100.0]);
        assert_eq!(calls.build.load(Ordering::SeqCst), 2);
        assert_eq!(calls.cleanup.load(Ordering::SeqCst), 2);
        // The other case is not affected.
        assert!(outcome.records[1].error.is_none());
        assert_eq!(outcome.records[1].rounds.len(), 3);
    }

    #[test]
    fn cleanup_runs_after_a_failing_prepare() {
        let (w, calls) = leak_with("test.prep", Script::Rounds(vec![vec![1.0]]), true);
        let outcome = run_quiet(&[planned(w)], &default_method());
        let record = &outcome.records[0];
        assert!(
            record
                .error
                .as_deref()
                .unwrap()
                .contains("prepare exploded")
        );
        assert_eq!(calls.trial.load(Ordering::SeqCst), 0);
        assert_eq!(calls.cleanup.load(Ordering::SeqCst), 1);
        assert_eq!(outcome.status, RunStatus::Failed);
    }

    #[test]
    fn a_cancelled_plan_keeps_every_finished_round_and_is_partial() {
        // Case "late" cancels in its second round: every case keeps its
        // first round, the round in flight is dropped, nothing more runs.
        let cancel = CancelToken::new();
        let (done, _) = leak("test.done", Script::Rounds(vec![vec![100.0]]));
        let (late, late_calls) = leak("test.late", Script::CancelAt(1, 1, cancel.clone()));
        let (w, calls) = leak("test.other", Script::Rounds(vec![vec![100.0]]));
        let plan = vec![planned(done), planned(late), planned(w)];
        let (outcome, seen) = run_with(&plan, &default_method(), cancel, &ScriptedMonitor::quiet());
        assert_eq!(outcome.status, RunStatus::Partial);
        assert_eq!(outcome.records.len(), 3);
        let late_record = outcome
            .records
            .iter()
            .find(|r| r.workload == "test.late")
            .unwrap();
        assert_eq!(late_record.rounds.len(), 1);
        assert_eq!(late_record.metrics[0].samples, vec![100.0, 100.0]);
        // The interrupted round still cleaned up.
        assert_eq!(
            late_calls.cleanup.load(Ordering::SeqCst),
            late_calls.build.load(Ordering::SeqCst)
        );
        assert!(calls.build.load(Ordering::SeqCst) <= 2);
        // Every finished round was handed over for storage.
        assert!(seen.iter().filter(|(_, rounds)| *rounds == 1).count() == 3);
    }

    #[test]
    fn a_panicking_trial_still_gets_cleanup_and_a_clear_error() {
        let (w, calls) = leak("test.panics", Script::PanicAt(0, 1));
        let outcome = run_quiet(&[planned(w)], &default_method());
        let record = &outcome.records[0];
        assert!(
            record
                .error
                .as_deref()
                .unwrap()
                .contains("the workload panicked: round 0 call 1 panicked")
        );
        assert_eq!(calls.cleanup.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn non_finite_metrics_fail_the_case() {
        let (w, calls) = leak("test.nan", Script::Rounds(vec![vec![f64::NAN]]));
        let outcome = run_quiet(&[planned(w)], &default_method());
        assert!(
            outcome.records[0]
                .error
                .as_deref()
                .unwrap()
                .contains("not a finite number")
        );
        assert_eq!(calls.cleanup.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn one_round_keeps_the_trials_until_the_ci_is_tight() {
        // The single-round rule: after 3 counted trials the CI half-width
        // is 5% of the mean, after 4 it is 2.6%, after 5 it is 1.75%.
        let mut values = vec![0.0, 98.0, 102.0, 100.0];
        values.extend(std::iter::repeat_n(100.0, 20));
        let (w, _) = leak("test.single", Script::Rounds(vec![values]));
        let method = Methodology {
            min_rounds: 1,
            max_rounds: 1,
            min_trials: 3,
            max_trials: 10,
            ..default_method()
        };
        let outcome = run_quiet(&[planned(w)], &method);
        let metric = &outcome.records[0].metrics[0];
        assert_eq!(metric.summary.n, 5);
        assert_eq!(
            metric.levels.as_ref().unwrap().ci_basis,
            crate::stats::CiBasis::Trials
        );
        assert!(metric.summary.relative_ci_half_width() <= 0.02);
    }

    #[test]
    fn run_case_reports_a_finished_or_failed_case() {
        let (w, _) = leak("test.run_case", Script::Rounds(vec![vec![100.0]]));
        let ctx = TrialContext::new(vec![0], CancelToken::new());
        match run_case(
            &planned(w),
            &one_cpu_env(),
            &default_method(),
            &ctx,
            &Silent,
        ) {
            CaseOutcome::Finished(record) => assert_eq!(record.rounds.len(), 3),
            other => panic!("{other:?}"),
        }
        let (bad, _) = leak("test.run_case_bad", Script::FailAt(0, 0));
        assert!(matches!(
            run_case(
                &planned(bad),
                &one_cpu_env(),
                &default_method(),
                &ctx,
                &Silent
            ),
            CaseOutcome::Failed(_)
        ));
    }
}

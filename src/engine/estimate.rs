//! What a run will cost and buy, before it starts: per case the trials
//! per round, the rounds, the time and the precision it is expected to
//! reach, and the whole run's wall time, by the same rules the runner
//! spends time with (`runner.rs`, `planner.rs`).
//!
//! Where this host has measured a case before (`History`), its costs and
//! variance components come from there; otherwise the trial length comes
//! from the workload (`Workload::trial_seconds`, its `time` parameter) or
//! [`DEFAULT_TRIAL_SECONDS`], the untimed work around the trials from the
//! workload too (`Workload::untimed_work`: a source to unpack, a build to
//! configure before each trial), and the precision is unknown: the rounds are
//! then planned for a scatter of [`PRIOR_ROUND_SD`] between rounds, the
//! middle of what cases show on shared hosts, so that the time is about
//! right even when the precision cannot be said.

use super::methodology::Methodology;
use super::planner::{History, VarianceHint, trials_per_round};
use super::precision::{Detectable, half_width_at, rounds_to_detect, rounds_to_reach};
use super::workload::{CaseEnv, PlannedCase};

/// The trial length assumed for a workload that cannot say and has no
/// history here, seconds.
pub const DEFAULT_TRIAL_SECONDS: f64 = 1.0;

/// What a round costs beyond its trials without history: starting a
/// fresh process, building and preparing the case, cleaning up (about
/// 0.1 s measured on a 2-vCPU guest for cases without files or servers).
pub const DEFAULT_ROUND_START_SECONDS: f64 = 0.15;

/// The relative scatter of round means assumed for planning a case with
/// no history.
pub const PRIOR_ROUND_SD: f64 = 0.05;

/// What a run costs before its first round: probing the host, the idle
/// check (1 s), building every case once to check it, seconds.
pub const RUN_START_SECONDS: f64 = 2.0;

/// The most rounds per side a detectable-effect figure considers.
pub const DETECT_MAX_ROUNDS: u32 = 200;

/// The plan of one case.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseEstimate {
    /// The case as a user would type it.
    pub label: String,
    /// Earlier runs of the case on this host the figures rest on (0: the
    /// workload's defaults).
    pub history_runs: usize,
    /// Neither history nor the workload knows how long a trial runs:
    /// [`DEFAULT_TRIAL_SECONDS`] stands in, and the time may be far off.
    pub guessed: bool,
    /// Counted trials per round.
    pub trials_per_round: u32,
    /// One round's wall time, seconds.
    pub round_seconds: f64,
    /// Untimed work done once, in the case's first round, beyond
    /// `round_seconds` (a source unpacked into a cache), seconds.
    pub once_seconds: f64,
    /// Rounds planned.
    pub rounds: u32,
    /// The case's wall time (its rounds and `once_seconds`), seconds.
    pub seconds: f64,
    /// Relative scatter of its round means, from history.
    pub round_sd: Option<f64>,
    /// Relative 95% CI half-width expected after the planned rounds, from
    /// history.
    pub expected_ci: Option<f64>,
    /// Rounds per side for a comparison to detect the effect asked for.
    pub detect: Option<Detectable>,
}

impl CaseEstimate {
    /// Whether the case is expected to end within the target (`None`
    /// without history).
    pub fn reaches(&self, target: f64) -> Option<bool> {
        self.expected_ci.map(|ci| ci <= target)
    }

    /// Wall time of both sides of a comparison that detects the effect
    /// asked for, seconds.
    pub fn detect_seconds(&self) -> Option<f64> {
        match self.detect {
            Some(Detectable::Rounds(r)) => Some(2.0 * f64::from(r) * self.round_seconds),
            _ => None,
        }
    }
}

/// The plan of a whole run.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanEstimate {
    /// Per case, in plan order.
    pub cases: Vec<CaseEstimate>,
    /// The run's wall time, seconds.
    pub seconds: f64,
    /// Whether the run's time budget cuts the extra rounds the cases
    /// would want.
    pub budget_bound: bool,
}

impl PlanEstimate {
    /// The cases whose figures rest on this host's history.
    pub fn with_history(&self) -> usize {
        self.cases.iter().filter(|c| c.history_runs > 0).count()
    }

    /// The cases whose trial length is a guess.
    pub fn guessed(&self) -> usize {
        self.cases.iter().filter(|c| c.guessed).count()
    }
}

/// Plans `plan` under `method` on the host `env` describes, with what
/// `history` knows; with `detect` (a share, 0.05 for 5%), also the rounds
/// a comparison needs to find a change that large.
pub fn estimate(
    plan: &[PlannedCase],
    method: &Methodology,
    env: &CaseEnv,
    history: &dyn History,
    detect: Option<f64>,
) -> PlanEstimate {
    let mut cases: Vec<CaseEstimate> = plan
        .iter()
        .map(|planned| case_estimate(planned, method, env, history.hint(planned).as_ref(), detect))
        .collect();
    let mandatory: f64 = cases
        .iter()
        .map(|c| f64::from(c.rounds.min(method.min_rounds)) * c.round_seconds)
        .sum();
    let extra: f64 = cases
        .iter()
        .map(|c| f64::from(c.rounds.saturating_sub(method.min_rounds)) * c.round_seconds)
        .sum();
    let mut budget_bound = false;
    if let Some(budget) = method.run_budget {
        let allowed = (budget.as_secs_f64() - mandatory).max(0.0);
        if extra > allowed {
            // The runner hands the extra rounds out a round at a time to
            // the cases that want them; here, each case keeps the same
            // share of its wish.
            budget_bound = true;
            let share = allowed / extra;
            for case in &mut cases {
                let wished = case.rounds.saturating_sub(method.min_rounds);
                let kept = (f64::from(wished) * share).round() as u32;
                case.rounds = case.rounds.min(method.min_rounds) + kept;
                case.seconds = f64::from(case.rounds) * case.round_seconds + case.once_seconds;
                case.expected_ci = case.round_sd.map(|sd| ci_at(sd, case.rounds, method));
            }
        }
    }
    let seconds = RUN_START_SECONDS + cases.iter().map(|c| c.seconds).sum::<f64>();
    PlanEstimate {
        cases,
        seconds,
        budget_bound,
    }
}

fn case_estimate(
    planned: &PlannedCase,
    method: &Methodology,
    env: &CaseEnv,
    hint: Option<&VarianceHint>,
    detect: Option<f64>,
) -> CaseEstimate {
    let single = method.single_round();
    let trials = if single {
        method.min_trials
    } else {
        trials_per_round(hint, method.min_trials, method.max_trials)
    };
    let said = planned.workload.trial_seconds(&planned.params, env);
    // Whether the once-only work is still to do is the workload's to say
    // (a source already in the cache needs no unpack), history or not.
    let untimed = planned.workload.untimed_work(&planned.params, env);
    let round_seconds = match hint {
        Some(h) => h.round_overhead_seconds + f64::from(trials) * h.trial_seconds,
        None => {
            let trial = said.unwrap_or(DEFAULT_TRIAL_SECONDS) + untimed.per_trial_seconds;
            // A case that warms up by itself gets no warm-up trials from
            // the runner (`Case::warms_up_itself`); building one only
            // checks and describes, so asking it costs nothing.
            let warmups = match planned.workload.build(&planned.params, env) {
                Ok(case) if case.warms_up_itself() => 0,
                _ => method.warmup_trials,
            };
            DEFAULT_ROUND_START_SECONDS + f64::from(warmups + trials) * trial
        }
    };
    let round_sd = hint.map(|h| h.round_sd(trials));
    let rounds = if single {
        1
    } else {
        let sd = round_sd.unwrap_or(PRIOR_ROUND_SD);
        let wanted =
            rounds_to_reach(sd, method.ci_target, method.max_rounds).unwrap_or(method.max_rounds);
        let affordable = (method.case_budget.as_secs_f64() / round_seconds.max(1e-9)).floor();
        let affordable = affordable.min(f64::from(method.max_rounds)) as u32;
        wanted.min(affordable).max(method.min_rounds)
    };
    let detect = detect.zip(round_sd).map(|(effect, sd)| {
        let run_sd = hint.and_then(|h| h.run_sd).unwrap_or(0.0);
        rounds_to_detect(sd, run_sd, effect, DETECT_MAX_ROUNDS)
    });
    CaseEstimate {
        label: planned.short_label(),
        history_runs: hint.map_or(0, |h| h.runs),
        guessed: hint.is_none() && said.is_none(),
        trials_per_round: trials,
        round_seconds,
        once_seconds: untimed.once_seconds,
        rounds,
        seconds: f64::from(rounds) * round_seconds + untimed.once_seconds,
        round_sd,
        expected_ci: round_sd.map(|sd| ci_at(sd, rounds, method)),
        detect,
    }
}

/// The relative half-width expected after `rounds` rounds (with a single
/// round, its trials' scatter stands in: the rounds' is unknown).
fn ci_at(round_sd: f64, rounds: u32, method: &Methodology) -> f64 {
    if method.single_round() {
        half_width_at(round_sd, method.min_trials)
    } else {
        half_width_at(round_sd, rounds)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::time::Duration;

    use super::*;
    use crate::engine::params::{ParamKind, ParamRole, ParamSet, ParamSpec, ParamValue};
    use crate::engine::workload::{Case, CaseEnv, UntimedWork, Workload};

    /// A workload whose trials last its `time` parameter; with `true`,
    /// its cases warm up by themselves.
    struct Timed(&'static str, bool);

    /// A case that is only ever asked whether it warms up by itself.
    struct SelfWarming;

    impl Case for SelfWarming {
        fn trial(
            &mut self,
            _ctx: &crate::engine::TrialContext,
        ) -> anyhow::Result<crate::engine::TrialOutput> {
            unreachable!("a plan never runs a case")
        }
        fn warms_up_itself(&self) -> bool {
            true
        }
    }

    impl Workload for Timed {
        fn id(&self) -> &'static str {
            self.0
        }
        fn version(&self) -> u32 {
            1
        }
        fn summary(&self) -> &'static str {
            "a workload for plan tests"
        }
        fn params(&self) -> Vec<ParamSpec> {
            vec![ParamSpec {
                name: "time",
                role: ParamRole::TrialTime,
                help: "",
                kind: ParamKind::Seconds {
                    min: 0.0,
                    max: 100.0,
                },
                default: "1",
            }]
        }
        fn build(&self, _p: &ParamSet, _env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
            if self.1 {
                return Ok(Box::new(SelfWarming));
            }
            anyhow::bail!("a case that cannot be built here is planned with warm-ups")
        }
    }

    /// A workload of 20 s trials that unpacks its source (60 s) before
    /// its first round and configures (10 s) before every trial, as a
    /// kernel build does.
    struct Unpacking;

    impl Workload for Unpacking {
        fn id(&self) -> &'static str {
            "test.unpacking"
        }
        fn version(&self) -> u32 {
            1
        }
        fn summary(&self) -> &'static str {
            "a workload with untimed work for plan tests"
        }
        fn params(&self) -> Vec<ParamSpec> {
            Vec::new()
        }
        fn build(&self, _p: &ParamSet, _env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
            anyhow::bail!("a plan never runs a case")
        }
        fn trial_seconds(&self, _p: &ParamSet, _env: &CaseEnv) -> Option<f64> {
            Some(20.0)
        }
        fn untimed_work(&self, _p: &ParamSet, _env: &CaseEnv) -> UntimedWork {
            UntimedWork {
                once_seconds: 60.0,
                per_trial_seconds: 10.0,
            }
        }
    }

    static UNPACKING: Unpacking = Unpacking;

    static FAST: Timed = Timed("test.fast", false);
    static NOISY: Timed = Timed("test.noisy", false);
    static NEW: Timed = Timed("test.new", false);
    static WARMS_ITSELF: Timed = Timed("test.warm", true);

    fn planned(workload: &'static Timed, time: f64) -> PlannedCase {
        let values = [("time".to_string(), ParamValue::Seconds(time))].into();
        PlannedCase {
            workload,
            params: ParamSet::from_values(values),
        }
    }

    struct Hints(HashMap<&'static str, VarianceHint>);

    impl History for Hints {
        fn hint(&self, case: &PlannedCase) -> Option<VarianceHint> {
            self.0.get(case.workload.id()).cloned()
        }
    }

    fn hint(between: f64, within: f64, trial: f64, overhead: f64) -> VarianceHint {
        VarianceHint {
            between_round_sd: between,
            within_round_sd: within,
            trial_seconds: trial,
            round_overhead_seconds: overhead,
            run_sd: None,
            runs: 4,
        }
    }

    fn env() -> CaseEnv {
        CaseEnv {
            cpus: vec![0, 1],
            total_cache_bytes: 0,
            memory_bytes: 1 << 30,
        }
    }

    fn method() -> Methodology {
        Methodology {
            min_rounds: 4,
            max_rounds: 30,
            min_trials: 1,
            max_trials: 1,
            ci_target: 0.03,
            case_budget: Duration::from_secs(60),
            run_budget: None,
            ..Methodology::default()
        }
    }

    #[test]
    fn history_sets_the_rounds_the_time_and_the_precision() {
        // Round means scatter by √(1.5² + 1²)% = 1.80%: 4 rounds give
        // 3.182 · 1.80 / 2 = 2.87% ≤ 3%, so the minimum suffices. A round
        // is 0.1 s of start and one 0.5 s trial.
        let history = Hints([("test.fast", hint(0.015, 0.01, 0.5, 0.1))].into());
        let plan = estimate(&[planned(&FAST, 0.5)], &method(), &env(), &history, None);
        let case = &plan.cases[0];
        assert_eq!((case.rounds, case.trials_per_round), (4, 1));
        assert!((case.round_seconds - 0.6).abs() < 1e-12);
        assert!((case.seconds - 2.4).abs() < 1e-12);
        assert!(
            (case.expected_ci.unwrap() - 0.028_68).abs() < 1e-4,
            "{case:?}"
        );
        assert_eq!(case.reaches(0.03), Some(true));
        assert!((plan.seconds - (RUN_START_SECONDS + 2.4)).abs() < 1e-12);
        assert_eq!(plan.with_history(), 1);
    }

    #[test]
    fn a_noisy_case_gets_the_rounds_its_target_needs_within_its_caps() {
        // Scatter 5%: ±3% takes 14 rounds (2.160 · 5 / √14 = 2.89%).
        let history = Hints([("test.noisy", hint(0.05, 0.0, 0.5, 0.5))].into());
        let plan = estimate(&[planned(&NOISY, 0.5)], &method(), &env(), &history, None);
        assert_eq!(plan.cases[0].rounds, 14);
        assert!((plan.cases[0].seconds - 14.0).abs() < 1e-12);
        // A 10 s case budget affords 10 rounds of 1 s.
        let capped = Methodology {
            case_budget: Duration::from_secs(10),
            ..method()
        };
        let plan = estimate(&[planned(&NOISY, 0.5)], &capped, &env(), &history, None);
        assert_eq!(plan.cases[0].rounds, 10);
        assert_eq!(plan.cases[0].reaches(0.03), Some(false));
    }

    #[test]
    fn without_history_the_workloads_trial_length_and_the_prior_plan_it() {
        // 0.15 s start + (1 warm-up + 1 trial) · 0.25 s = 0.65 s a round;
        // the prior 5% scatter wants 14 rounds.
        let plan = estimate(
            &[planned(&NEW, 0.25)],
            &method(),
            &env(),
            &Hints(HashMap::new()),
            None,
        );
        let case = &plan.cases[0];
        assert_eq!(case.history_runs, 0);
        assert!((case.round_seconds - 0.65).abs() < 1e-12);
        // Without the runner's warm-up trial: 0.15 s and one 0.25 s trial.
        let warm = estimate(
            &[planned(&WARMS_ITSELF, 0.25)],
            &method(),
            &env(),
            &Hints(HashMap::new()),
            None,
        );
        assert!((warm.cases[0].round_seconds - 0.4).abs() < 1e-12);
        assert_eq!(case.rounds, 14);
        assert_eq!(case.expected_ci, None);
        assert_eq!(case.reaches(0.03), None);
    }

    #[test]
    fn untimed_work_is_planned_once_and_with_every_trial() {
        let case = PlannedCase {
            workload: &UNPACKING,
            params: ParamSet::from_values(Default::default()),
        };
        let three_rounds = Methodology {
            min_rounds: 3,
            max_rounds: 3,
            ..method()
        };
        let plan = estimate(
            std::slice::from_ref(&case),
            &three_rounds,
            &env(),
            &Hints(HashMap::new()),
            None,
        );
        let planned = &plan.cases[0];
        // 0.15 s start + (1 warm-up + 1 trial) · (20 s + 10 s of config).
        assert!((planned.round_seconds - 60.15).abs() < 1e-9, "{planned:?}");
        assert_eq!(planned.rounds, 3);
        // Three rounds and the unpack before the first.
        assert!((planned.seconds - (3.0 * 60.15 + 60.0)).abs() < 1e-9);
        assert!((plan.seconds - (RUN_START_SECONDS + 240.45)).abs() < 1e-9);
        // With history the rounds' stored times hold the configuring; an
        // unpack still to do is still added.
        let history = Hints([("test.unpacking", hint(0.01, 0.0, 25.0, 40.0))].into());
        let plan = estimate(
            std::slice::from_ref(&case),
            &three_rounds,
            &env(),
            &history,
            None,
        );
        let planned = &plan.cases[0];
        assert!((planned.round_seconds - 65.0).abs() < 1e-9, "{planned:?}");
        assert!((planned.seconds - (3.0 * 65.0 + 60.0)).abs() < 1e-9);
    }

    #[test]
    fn the_run_budget_shares_out_the_extra_rounds() {
        // Two cases of 1 s rounds wanting 14 rounds each: 8 s of mandatory
        // rounds, 20 s of extra ones, a 18 s budget allows 10 of them: each
        // case keeps half its 10 extra rounds.
        let history = Hints(
            [
                ("test.noisy", hint(0.05, 0.0, 0.5, 0.5)),
                ("test.fast", hint(0.05, 0.0, 0.5, 0.5)),
            ]
            .into(),
        );
        let budgeted = Methodology {
            run_budget: Some(Duration::from_secs(18)),
            ..method()
        };
        let plan = estimate(
            &[planned(&NOISY, 0.5), planned(&FAST, 0.5)],
            &budgeted,
            &env(),
            &history,
            None,
        );
        assert!(plan.budget_bound);
        assert_eq!(plan.cases[0].rounds, 9);
        assert_eq!(plan.cases[1].rounds, 9);
        assert!((plan.seconds - (RUN_START_SECONDS + 18.0)).abs() < 1e-9);
    }

    #[test]
    fn detect_gives_rounds_per_side_or_the_run_to_run_limit() {
        let mut quiet = hint(0.03, 0.0, 0.5, 0.5);
        let history = Hints([("test.fast", quiet.clone())].into());
        let plan = estimate(
            &[planned(&FAST, 0.5)],
            &method(),
            &env(),
            &history,
            Some(0.05),
        );
        assert_eq!(plan.cases[0].detect, Some(Detectable::Rounds(9)));
        assert!((plan.cases[0].detect_seconds().unwrap() - 18.0).abs() < 1e-9);
        quiet.run_sd = Some(0.02);
        let history = Hints([("test.fast", quiet)].into());
        let plan = estimate(
            &[planned(&FAST, 0.5)],
            &method(),
            &env(),
            &history,
            Some(0.05),
        );
        assert_eq!(plan.cases[0].detect, Some(Detectable::RunToRun(0.02)));
        assert_eq!(plan.cases[0].detect_seconds(), None);
        // No history: nothing to say.
        let plan = estimate(
            &[planned(&NEW, 0.5)],
            &method(),
            &env(),
            &Hints(HashMap::new()),
            Some(0.05),
        );
        assert_eq!(plan.cases[0].detect, None);
    }
}

//! What the engine's tests build the same way: a case of a test workload
//! with its defaults, the one-CPU run it runs in, the plain repetition
//! rule the rounds tests count on, and a plan run with nothing else
//! around it.
//!
//! The single-side tests (`runner.rs`), the A/B tests (`ab_runner.rs`) and
//! the shared-data tests (`shared_tests.rs`) each drive their own scripted
//! workload, but through the same fixtures; kept here, a change to what a
//! case or a run needs is made once for all of them.

use super::context::{CancelToken, TrialContext};
use super::executor::RoundExecutor;
use super::methodology::Methodology;
use super::params::{ParamKind, ParamRole, ParamSet, ParamSpec, resolve_cases};
use super::planner::NoHistory;
use super::progress::Silent;
use super::runner::{PlanOutcome, RunSetup, run_plan};
use super::workload::{CaseEnv, PlannedCase, Workload};

/// The case of `workload` with every parameter at its default, planned
/// for one CPU.
pub(super) fn planned(workload: &'static dyn Workload) -> PlannedCase {
    PlannedCase {
        workload,
        params: one_case(workload, &[], 1),
    }
}

/// The first case `assignments` (one value each, the rest at their
/// defaults) make of `workload` on `cpus` CPUs, as a plan holds it: what
/// the workloads' and the suite's tests build their cases from.
pub(crate) fn one_case(
    workload: &dyn Workload,
    assignments: &[(&str, &str)],
    cpus: usize,
) -> ParamSet {
    let assignments = assignments
        .iter()
        .map(|(name, value)| (name.to_string(), vec![value.to_string()]))
        .collect();
    resolve_cases(workload.id(), &workload.params(), &assignments, cpus)
        .unwrap_or_else(|e| panic!("{}: {e}", workload.id()))
        .remove(0)
}

/// A run on CPU 0 that knows nothing of the host's caches or memory.
pub(super) fn one_cpu_env() -> CaseEnv {
    CaseEnv {
        cpus: vec![0],
        total_cache_bytes: 0,
        memory_bytes: 0,
    }
}

/// The one parameter a scripted test workload takes: `n`, an integer
/// 0..=9 that is 1 unless a test sweeps it. It only gives the case a
/// parameter to be planned and stored with.
pub(super) fn n_param() -> Vec<ParamSpec> {
    vec![ParamSpec {
        name: "n",
        role: ParamRole::Other,
        help: "",
        kind: ParamKind::Int { min: 0, max: 9 },
        default: "1",
    }]
}

/// Exactly `rounds` rounds of one counted trial each, with no warm-up:
/// each round's mean is its one trial, so a test scripts round means
/// directly.
pub(super) fn rounds_of_one_trial(rounds: u32) -> Methodology {
    Methodology {
        warmup_trials: 0,
        min_rounds: rounds,
        max_rounds: rounds,
        min_trials: 1,
        max_trials: 1,
        ..Methodology::default()
    }
}

/// Runs `plan` with `executor` on CPU 0 ([`one_cpu_env`]), with no
/// history to plan from, no progress shown and no cancellation, the case
/// order shuffled from `seed`.
pub(super) fn run_on_one_cpu(
    plan: &[PlannedCase],
    method: &Methodology,
    executor: &dyn RoundExecutor,
    seed: u64,
) -> PlanOutcome {
    let ctx = TrialContext::new(vec![0], CancelToken::new());
    let setup = RunSetup {
        env: &one_cpu_env(),
        method,
        ctx: &ctx,
        executor,
        history: &NoHistory,
        progress: &Silent,
        seed,
    };
    run_plan(plan, &setup, &mut |_, _| Ok(()))
        .expect("a callback that never fails cannot stop the plan")
}

//! The engine's warm-up trials, run before each round's counted trials,
//! are left out for a case whose trials warm themselves up (STREAM's
//! discarded first pass), and run for every other case.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use super::context::TrialContext;
use super::executor::InProcess;
use super::methodology::Methodology;
use super::params::{ParamSet, ParamSpec};
use super::test_fixtures::{planned, run_on_one_cpu};
use super::trial_monitor::ScriptedMonitor;
use super::workload::{Case, CaseEnv, Metric, TrialOutput, Workload};
use crate::results::RunStatus;

/// Counts every trial its cases run, warm-up or counted.
struct CountsTrials {
    warms_up_itself: bool,
    trials: Arc<AtomicU32>,
}

impl Workload for CountsTrials {
    fn id(&self) -> &'static str {
        "test.counts_trials"
    }
    fn version(&self) -> u32 {
        1
    }
    fn summary(&self) -> &'static str {
        "a workload that counts the trials it is asked for"
    }
    fn params(&self) -> Vec<ParamSpec> {
        Vec::new()
    }
    fn build(&self, _p: &ParamSet, _env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        Ok(Box::new(CountingCase {
            warms_up_itself: self.warms_up_itself,
            trials: Arc::clone(&self.trials),
        }))
    }
}

struct CountingCase {
    warms_up_itself: bool,
    trials: Arc<AtomicU32>,
}

impl Case for CountingCase {
    fn trial(&mut self, _ctx: &TrialContext) -> anyhow::Result<TrialOutput> {
        self.trials.fetch_add(1, Ordering::SeqCst);
        Ok(TrialOutput {
            metrics: vec![Metric::higher("events_per_sec", "events/s", 1000.0)],
            latency_ns: None,
        })
    }
    fn warms_up_itself(&self) -> bool {
        self.warms_up_itself
    }
}

/// Trials run for 3 rounds of 2 counted trials after 1 warm-up trial.
fn trials_run(warms_up_itself: bool) -> u32 {
    let trials = Arc::new(AtomicU32::new(0));
    let workload: &'static CountsTrials = Box::leak(Box::new(CountsTrials {
        warms_up_itself,
        trials: Arc::clone(&trials),
    }));
    let monitor = ScriptedMonitor::quiet();
    let method = Methodology {
        warmup_trials: 1,
        min_rounds: 3,
        max_rounds: 3,
        min_trials: 2,
        max_trials: 2,
        ..Methodology::default()
    };
    let executor = InProcess { monitor: &monitor };
    let outcome = run_on_one_cpu(&[planned(workload)], &method, &executor, 7);
    assert_eq!(outcome.status, RunStatus::Complete);
    assert_eq!(outcome.records[0].trials.len(), 6, "3 rounds of 2 counted");
    trials.load(Ordering::SeqCst)
}

#[test]
fn each_round_warms_up_first() {
    assert_eq!(trials_run(false), 3 * (1 + 2));
}

#[test]
fn a_case_that_warms_itself_up_gets_no_warm_up_trial() {
    assert_eq!(trials_run(true), 3 * 2);
}

//! Data cases share between their rounds (`shared_data.rs`): made
//! once per key before the first round needing it, told to every round
//! of every case with that key, removed once no case still to run needs
//! it and at the end of the plan, in `run_plan` and in `run_ab_plan`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use super::ab_runner::{AbSetup, AbSide, run_ab_plan};
use super::context::{CancelToken, TrialContext};
use super::executor::InProcess;
use super::params::{ParamKind, ParamRole, ParamSet, ParamSpec, resolve_cases};
use super::planner::NoHistory;
use super::progress::Silent;
use super::shared_data::SharedPreparation;
use super::test_fixtures::{one_cpu_env, rounds_of_one_trial, run_on_one_cpu};
use super::trial_monitor::ScriptedMonitor;
use super::workload::{Case, CaseEnv, Metric, PlannedCase, TrialOutput, Workload};
use crate::results::RunStatus;

/// What happened, in order: `made K`, `round K` (a round told of K, or
/// `round -` told of nothing), `removed K`.
type Journal = Arc<Mutex<Vec<String>>>;

/// Cases with a `data` parameter share the data it names; `data=own`
/// prepares its own in each round, `data=fails` fails to prepare it, and
/// a case with `n=bad` fails its trial.
struct Shares {
    journal: Journal,
}

impl Workload for Shares {
    fn id(&self) -> &'static str {
        "test.shares"
    }
    fn version(&self) -> u32 {
        1
    }
    fn summary(&self) -> &'static str {
        "a workload whose cases share data between rounds"
    }
    fn params(&self) -> Vec<ParamSpec> {
        ["data", "n"]
            .map(|name| ParamSpec {
                name,
                role: ParamRole::Other,
                help: "a name",
                kind: ParamKind::Text,
                default: "x",
            })
            .to_vec()
    }
    fn build(&self, p: &ParamSet, _env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        Ok(Box::new(SharesCase {
            journal: Arc::clone(&self.journal),
            bad: p.to_raw_strings()["n"] == "bad",
        }))
    }
    fn shared_key(&self, p: &ParamSet) -> Option<String> {
        let data = p.to_raw_strings()["data"].clone();
        (data != "own").then_some(data)
    }
    fn prepare_shared(
        &self,
        p: &ParamSet,
        _env: &CaseEnv,
        _ctx: &TrialContext,
    ) -> anyhow::Result<Box<dyn SharedPreparation>> {
        let data = p.to_raw_strings()["data"].clone();
        anyhow::ensure!(data != "fails", "cannot make {data}");
        self.journal.lock().unwrap().push(format!("made {data}"));
        Ok(Box::new(Made {
            data,
            journal: Arc::clone(&self.journal),
        }))
    }
}

struct Made {
    data: String,
    journal: Journal,
}

impl SharedPreparation for Made {
    fn for_rounds(&self) -> String {
        self.data.clone()
    }
    fn release(self: Box<Self>) -> anyhow::Result<()> {
        self.journal
            .lock()
            .unwrap()
            .push(format!("removed {}", self.data));
        Ok(())
    }
}

struct SharesCase {
    journal: Journal,
    bad: bool,
}

impl Case for SharesCase {
    fn prepare(&mut self, ctx: &TrialContext) -> anyhow::Result<()> {
        let told = ctx.shared.as_deref().unwrap_or("-");
        self.journal.lock().unwrap().push(format!("round {told}"));
        Ok(())
    }
    fn trial(&mut self, _ctx: &TrialContext) -> anyhow::Result<TrialOutput> {
        anyhow::ensure!(!self.bad, "a bad trial");
        Ok(TrialOutput {
            metrics: vec![Metric::higher("events_per_sec", "events/s", 1000.0)],
            latency_ns: None,
        })
    }
}

/// The cases of `test.shares` with these values, and the journal.
fn plan(assignments: &[(&str, &[&str])]) -> (Vec<PlannedCase>, Journal) {
    let journal = Journal::default();
    let workload: &'static Shares = Box::leak(Box::new(Shares {
        journal: Arc::clone(&journal),
    }));
    let assignments: BTreeMap<String, Vec<String>> = assignments
        .iter()
        .map(|(name, values)| {
            (
                name.to_string(),
                values.iter().map(|v| v.to_string()).collect(),
            )
        })
        .collect();
    let cases = resolve_cases(workload.id(), &workload.params(), &assignments, 1)
        .unwrap()
        .into_iter()
        .map(|params| PlannedCase { workload, params })
        .collect();
    (cases, journal)
}

fn count(journal: &Journal, line: &str) -> usize {
    journal
        .lock()
        .unwrap()
        .iter()
        .filter(|l| *l == line)
        .count()
}

fn run(cases: &[PlannedCase], rounds: u32) -> RunStatus {
    let monitor = ScriptedMonitor::quiet();
    let executor = InProcess { monitor: &monitor };
    run_on_one_cpu(cases, &rounds_of_one_trial(rounds), &executor, 7).status
}

#[test]
fn cases_naming_the_same_data_share_one_copy_for_all_their_rounds() {
    let (cases, journal) = plan(&[("data", &["a", "b", "own"]), ("n", &["1", "2"])]);
    assert_eq!(run(&cases, 3), RunStatus::Complete);
    for data in ["a", "b"] {
        assert_eq!(count(&journal, &format!("made {data}")), 1, "{journal:?}");
        assert_eq!(count(&journal, &format!("removed {data}")), 1);
        // Two cases, three rounds each.
        assert_eq!(count(&journal, &format!("round {data}")), 6);
    }
    assert_eq!(count(&journal, "round -"), 6, "own data: told nothing");
    // Made before its first round, removed after its last.
    let lines = journal.lock().unwrap().clone();
    let at = |line: &str| lines.iter().position(|l| l == line).unwrap();
    let last = |line: &str| lines.iter().rposition(|l| l == line).unwrap();
    assert!(at("made a") < at("round a") && last("round a") < at("removed a"));
}

#[test]
fn data_goes_once_no_case_still_to_run_needs_it() {
    // A failed case gets no further rounds: its data goes before the
    // next round, while the other case's stays for it.
    let (cases, journal) = plan(&[("data", &["a"]), ("n", &["1"])]);
    let (failing, _) = plan(&[("data", &["b"]), ("n", &["bad"])]);
    let failing = PlannedCase {
        workload: cases[0].workload,
        params: failing[0].params.clone(),
    };
    let first = PlannedCase {
        workload: cases[0].workload,
        params: cases[0].params.clone(),
    };
    assert_eq!(run(&[first, failing], 3), RunStatus::Failed);
    let lines = journal.lock().unwrap().clone();
    assert_eq!(count(&journal, "round a"), 3, "{lines:?}");
    assert_eq!(count(&journal, "round b"), 1, "{lines:?}");
    let at = |line: &str| lines.iter().position(|l| l == line).unwrap();
    let last = |line: &str| lines.iter().rposition(|l| l == line).unwrap();
    assert!(at("removed b") < last("round a"), "{lines:?}");
    assert!(last("round a") < at("removed a"), "{lines:?}");

    // Data that cannot be made fails the round that needed it.
    let (cases, journal) = plan(&[("data", &["fails"])]);
    assert_eq!(run(&cases, 3), RunStatus::Failed);
    assert!(journal.lock().unwrap().is_empty(), "{journal:?}");
}

#[test]
fn both_sides_of_ab_share_one_copy() {
    let (cases, journal) = plan(&[("data", &["a"])]);
    let monitor = ScriptedMonitor::quiet();
    let executor = InProcess { monitor: &monitor };
    let ctx = TrialContext::new(vec![0], CancelToken::new());
    let env = one_cpu_env();
    let method = rounds_of_one_trial(2);
    let side = || AbSide {
        executor: &executor,
        ctx: &ctx,
    };
    let setup = AbSetup {
        env: &env,
        method: &method,
        sides: [side(), side()],
        history: &NoHistory,
        progress: &Silent,
        seed: 7,
        duet: None,
        duet_cases: vec![false],
    };
    let outcome = run_ab_plan(&cases, &setup, &mut |_, _, _| Ok(())).unwrap();
    assert_eq!(outcome.status, RunStatus::Complete);
    assert_eq!(count(&journal, "made a"), 1, "{journal:?}");
    assert_eq!(count(&journal, "round a"), 4, "two sides, two rounds");
    assert_eq!(count(&journal, "removed a"), 1);
}

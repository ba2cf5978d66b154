//! The hardware figures end to end through the engine, on a fixture tree
//! that a scripted workload changes as real hardware would while it runs:
//! a throttle counter that rises flags (and replaces) a trial, a clock
//! that sags more than 5% below the case's best flags a trial once the
//! case's trials are put together, and the energy gives a per-joule metric
//! next to the headline. `compare` then judges the case on its unflagged
//! trials, or withholds the verdict when too few are left.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use super::context::{CancelToken, TrialContext};
use super::executor::InProcess;
use super::methodology::Methodology;
use super::params::{ParamSet, ParamSpec};
use super::planner::NoHistory;
use super::progress::Silent;
use super::runner::{RunSetup, run_plan};
use super::trial_monitor::ScriptedMonitor;
use super::workload::PlannedCase;
use super::workload::{Case, CaseEnv, Metric, TrialOutput, Workload};
use crate::monitor::fixture_tests::{fixture_copy, set};
use crate::monitor::{ClockSource, Disturbance, Sensors};
use crate::results::{RunRecord, RunStatus};

/// A workload standing in for a CPU benchmark on the fixture's machine:
/// 1000 events/s every trial, 5 J into package 0 and 1 J into its DRAM,
/// and the clock and throttle counter `hardware(round, call)` says.
struct OnHardware {
    root: PathBuf,
    calls: AtomicU32,
}

/// What the "hardware" does during call `call` (0 is the warm-up) of
/// round `round`: the cores' clock in kHz, and whether a core crosses its
/// thermal limit.
fn hardware(round: u32, call: u32) -> (u64, bool) {
    match (round, call) {
        // Round 1's first counted trial overheats: the counter rises.
        (1, 1) => (3_200_000, true),
        // Round 2's first counted trial runs 10% slow (a power limit), its
        // second 1.6% slow (noise, not throttling).
        (2, 1) => (2_880_000, false),
        (2, 2) => (3_150_000, false),
        _ => (3_200_000, false),
    }
}

const CPUFREQ: [&str; 2] = [
    "sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq",
    "sys/devices/system/cpu/cpu1/cpufreq/scaling_cur_freq",
];
const THROTTLE: &str = "sys/devices/system/cpu/cpu1/thermal_throttle/core_throttle_count";
const PACKAGE: &str = "sys/class/powercap/intel-rapl:0/energy_uj";
const DRAM: &str = "sys/class/powercap/intel-rapl:0:2/energy_uj";

fn add(root: &Path, path: &str, delta: u64) {
    let now: u64 = std::fs::read_to_string(root.join(path))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    set(root, path, &(now + delta).to_string());
}

impl Workload for OnHardware {
    fn id(&self) -> &'static str {
        "test.on_hardware"
    }
    fn version(&self) -> u32 {
        1
    }
    fn summary(&self) -> &'static str {
        "a workload that drives a fixture tree's sensors"
    }
    fn params(&self) -> Vec<ParamSpec> {
        Vec::new()
    }
    fn build(&self, _p: &ParamSet, _env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Ok(Box::new(OnHardwareCase {
            root: self.root.clone(),
            call: 0,
        }))
    }
}

struct OnHardwareCase {
    root: PathBuf,
    call: u32,
}

impl Case for OnHardwareCase {
    fn trial(&mut self, ctx: &TrialContext) -> anyhow::Result<TrialOutput> {
        let (khz, overheat) = hardware(ctx.round, self.call);
        self.call += 1;
        for path in CPUFREQ {
            set(&self.root, path, &khz.to_string());
        }
        if overheat {
            add(&self.root, THROTTLE, 1);
        }
        add(&self.root, PACKAGE, 5_000_000);
        add(&self.root, DRAM, 1_000_000);
        std::thread::sleep(std::time::Duration::from_millis(20));
        Ok(TrialOutput {
            metrics: vec![
                Metric::higher("events_per_sec", "events/s", 1000.0),
                Metric::higher("events", "events", 20.0),
            ],
            latency_ns: None,
        })
    }
}

#[test]
fn throttled_trials_are_flagged_and_energy_gives_a_per_joule_metric() {
    let tree = fixture_copy("cpufreq-throttle");
    let root = tree.path().to_path_buf();
    let sensors = Sensors::discover(&root);
    assert_eq!(sensors.energy_zones(), ["package-0", "dram"]);
    let workload: &'static OnHardware = Box::leak(Box::new(OnHardware {
        root: root.clone(),
        calls: AtomicU32::new(0),
    }));
    let planned = PlannedCase {
        workload,
        params: super::params::resolve_cases(workload.id(), &[], &Default::default(), 2)
            .unwrap()
            .remove(0),
    };
    let monitor = ScriptedMonitor::quiet().with_sensors(sensors);
    let executor = InProcess { monitor: &monitor };
    let method = Methodology {
        warmup_trials: 1,
        min_rounds: 3,
        max_rounds: 3,
        min_trials: 2,
        max_trials: 2,
        ..Methodology::default()
    };
    let ctx = TrialContext::new(vec![0, 1], CancelToken::new());
    let env = CaseEnv {
        cpus: vec![0, 1],
        total_cache_bytes: 0,
        memory_bytes: 0,
    };
    let setup = RunSetup {
        env: &env,
        method: &method,
        ctx: &ctx,
        executor: &executor,
        history: &NoHistory,
        progress: &Silent,
        seed: 7,
    };
    let outcome = run_plan(std::slice::from_ref(&planned), &setup, &mut |_, _| Ok(())).unwrap();
    assert_eq!(outcome.status, RunStatus::Complete);
    let record = &outcome.records[0];
    assert_eq!(workload.calls.load(Ordering::SeqCst), 3);

    // Round 0: two clean trials. Round 1: the overheated trial is flagged
    // by the monitor and replaced, two clean ones follow. Round 2: the
    // slow trial is flagged when the record is rebuilt, and kept.
    let flags: Vec<(bool, bool)> = record
        .trials
        .iter()
        .map(|t| (t.replaced, t.health.flags.contains(&Disturbance::Throttled)))
        .collect();
    assert_eq!(
        flags,
        [
            (false, false),
            (false, false),
            (true, true),
            (false, false),
            (false, false),
            (false, true),
            (false, false),
        ]
    );
    assert_eq!(record.trials[2].health.throttle_events, Some(1));
    assert_eq!(record.trials[5].health.throttle_events, Some(0));
    // The samples' mean, weighted by time: 2880 up to rounding.
    let clock = record.trials[5].health.clock_mhz.unwrap();
    assert!((clock - 2880.0).abs() < 1e-6, "{clock}");
    assert_eq!(
        record.trials[5].health.clock_source,
        Some(ClockSource::Cpufreq)
    );
    assert_eq!(record.disturbances(), vec![("throttled", 1)]);
    assert!(
        record
            .warnings
            .iter()
            .any(|w| w.starts_with("1 of 6 trials disturbed (throttled)")),
        "{:?}",
        record.warnings
    );

    // The per-joule metric sits next to the headline: 1000 events/s at
    // the trial's mean power, 6 J over its duration.
    assert_eq!(record.metrics[0].name, "events_per_sec");
    let per_joule = &record.metrics[1];
    assert_eq!(
        (per_joule.name.as_str(), per_joule.unit.as_str()),
        ("events_per_joule", "events/J")
    );
    for (trial, value) in record.trials.iter().zip(&per_joule.samples) {
        let joules = trial.health.energy_joules.unwrap();
        assert!((joules - 6.0).abs() < 1e-9, "{joules}");
        let watts = trial.health.power_watts.unwrap();
        assert!(
            (value - 1000.0 / watts).abs() < 1e-9 * value,
            "{value} at {watts} W"
        );
        // rate × seconds / joules, with the seconds the energy covers.
        assert!((value - 1000.0 * trial.health.seconds / joules).abs() < 1e-6 * value);
    }
    assert_eq!(per_joule.summary.n, 6);
    assert_eq!(record.metrics[2].name, "events");

    // compare treats `throttled` as any flag: the flagged trial is left
    // out, and since every round keeps an unflagged trial, the case is
    // judged on those.
    let run = |id: i64, cases| RunRecord {
        id,
        uuid: String::new(),
        started: String::new(),
        finished: None,
        sledge_version: "0".into(),
        profile: "custom".into(),
        command_line: String::new(),
        status: RunStatus::Complete,
        cpus: vec![0, 1],
        notes: Vec::new(),
        warnings: Vec::new(),
        host: Default::default(),
        cases,
    };
    let mut clean = record.clone();
    for trial in &mut clean.trials {
        trial.health.flags.clear();
    }
    let cmp = crate::analysis::verdicts::compare_runs(
        &run(1, vec![clean.clone()]),
        &run(2, vec![record.clone()]),
        &crate::analysis::verdicts::NoNoiseHistory,
        Default::default(),
    );
    let case = &cmp.cases[0];
    assert_eq!(case.candidate_disturbed, ["throttled 1/6"]);
    let unflagged = crate::analysis::verdicts::JudgedOn::Unflagged;
    assert!(
        case.metrics
            .iter()
            .all(|m| m.judged && m.judged_on == unflagged)
    );
    assert_eq!(
        (cmp.summary.not_judged, cmp.summary.judged_on_unflagged),
        (0, 1)
    );
    // With round 2's other trial throttled too, two rounds are left: the
    // verdict is withheld.
    let mut worse = record.clone();
    worse.trials[6].health.flags = vec![Disturbance::Throttled];
    let cmp = crate::analysis::verdicts::compare_runs(
        &run(1, vec![clean]),
        &run(2, vec![worse]),
        &crate::analysis::verdicts::NoNoiseHistory,
        Default::default(),
    );
    let case = &cmp.cases[0];
    assert_eq!(case.candidate_disturbed, ["throttled 2/6"]);
    assert!(case.metrics.iter().all(|m| !m.judged));
    assert_eq!(cmp.summary.not_judged, 1);
}

//! Executes a planned run: probe the host, check it is idle, run every
//! case, store each one as it finishes, and mark how the run ended. The CLI
//! only wires flags to this; tests call it directly.

use std::time::Duration;

use super::fallback::Fallback;
use super::plan::{CUSTOM_PROFILE, Plan};
use super::planning_history::StoreHistory;
use crate::engine::{
    self, CancelToken, CaseEnv, Methodology, PlannedCase, Progress, RoundExecutor, RunSetup,
    TrialContext,
};
use crate::probe::HostInfo;
use crate::results::{CaseRecord, RunRecord, RunStatus};
use crate::store::Store;
use crate::{monitor, probe};

/// A run that stopped because its store failed midway (a full disk, a
/// lost file): the cases stored before are in the store under `run_id`.
#[derive(Debug, thiserror::Error)]
#[error("run {run_id} stopped: its store failed")]
pub struct StoreFailedMidRun {
    /// The run's id in the store.
    pub run_id: i64,
}

/// How long the idle check before a run samples the host.
pub const IDLE_CHECK_WINDOW: Duration = Duration::from_secs(1);

/// Choices about a run that are not part of its plan.
pub struct RunOptions {
    /// The CPUs the run may use (already applied to the process).
    pub cpus: Vec<usize>,
    /// The repetition rule.
    pub methodology: Methodology,
    /// Sample the host for other busy processes before starting.
    pub idle_check: bool,
    /// The command line, recorded with the run.
    pub command_line: String,
    /// Free notes stored with the run (`--note`).
    pub notes: Vec<String>,
}

/// Runs `plan` and stores it in `store`; returns the stored run as loaded
/// back. Each round of each case runs through `executor` (a fresh process
/// per round from the command line). A case that cannot even be built
/// here stops the run before anything is measured or stored
/// ([`super::preflight::CaseCannotRun`]). A case that fails while running does not
/// stop the run (its status becomes `failed`); a cancellation stops it
/// (status `partial`). Every case is saved after each of its rounds, so a crash
/// loses at most the round in flight.
pub fn execute(
    plan: &Plan,
    options: RunOptions,
    store: &mut Store,
    executor: &dyn RoundExecutor,
    cancel: &CancelToken,
    progress: &dyn Progress,
) -> anyhow::Result<RunRecord> {
    let (mut host, env) = probe_host(&options.cpus)?;
    let (cases, warnings) = runnable_cases(plan, &env, options.idle_check)?;
    // The database servers the cases load, with their settings, as part
    // of the host: what `compare` names when they differ.
    for case in &plan.cases {
        if let Some((server, settings)) = case.workload.server_settings(&case.params) {
            host.databases.insert(server, settings);
        }
    }

    let ctx = TrialContext::new(options.cpus.clone(), cancel.clone());
    let run = new_run(
        plan,
        host,
        options.cpus,
        options.command_line,
        options.notes,
        warnings,
    );
    let history = StoreHistory::load(store, &run.host_key(), &cases);
    progress.planned(&engine::estimate::estimate(
        &cases,
        &options.methodology,
        &env,
        &history,
        None,
    ));
    let run_id = store.begin_run(&run)?;

    let setup = RunSetup {
        env: &env,
        method: &options.methodology,
        ctx: &ctx,
        executor,
        history: &history,
        progress,
        seed: shuffle_seed(),
    };
    let mut case_ids: Vec<Option<i64>> = vec![None; cases.len()];
    // A store on a server can be lost midway; the run then goes on into a
    // local file, which needs every case measured so far.
    let remote = store.location().is_remote();
    let mut latest: Vec<Option<CaseRecord>> = vec![None; cases.len()];
    let mut fallback: Option<Fallback> = None;
    let outcome = engine::run_plan(&cases, &setup, &mut |position, case| {
        if remote {
            latest[position] = Some(case.clone());
        }
        if let Some(fallback) = fallback.as_mut() {
            return fallback.save(position, case);
        }
        match store.save_case(run_id, Some(position), case_ids[position], case) {
            Ok(id) => {
                case_ids[position] = Some(id);
                Ok(())
            }
            Err(lost) if remote => {
                fallback = Some(start_fallback(&run, store, &lost, &latest)?);
                Ok(())
            }
            Err(err) => Err(err.into()),
        }
    });
    let status = match outcome {
        Ok(outcome) => outcome.status,
        Err(err) => {
            // The store failed midway: mark the run failed with the reason
            // (left `running`, it would read `abandoned` once this process
            // exits, as if it had been killed), and say which run holds
            // what was stored.
            let mut warnings = run.warnings.clone();
            warnings.push(format!("failed: the store failed midway: {err:#}"));
            if let Err(marking) = store.finish_run(run_id, RunStatus::Failed, &now(), &warnings) {
                crate::say!(
                    "warning: run {run_id} could not be marked failed either ({marking}); it stays `running` in the store and reads `abandoned` once this sledge has exited"
                );
            }
            return Err(err.context(StoreFailedMidRun { run_id }));
        }
    };
    if fallback.is_none()
        && remote
        && let Err(lost) = store.finish_run(run_id, status, &now(), &run.warnings)
    {
        fallback = Some(start_fallback(&run, store, &lost, &latest)?);
    }
    if let Some(fallback) = fallback {
        // Best effort: the server may be back, and then says how it ended.
        let _ = store.finish_run(run_id, RunStatus::Failed, &now(), &run.warnings);
        return Err(fallback.finish(status, &now(), &run.warnings)?.into());
    }
    if !remote {
        store.finish_run(run_id, status, &now(), &run.warnings)?;
    }
    Ok(store.load_run(run_id)?)
}

/// The host inventory, taken from the working directory, and what the
/// run's workloads may know of it on `cpus`.
pub fn probe_host(cpus: &[usize]) -> anyhow::Result<(HostInfo, CaseEnv)> {
    let cwd = std::env::current_dir()?;
    let host = probe::probe(&cwd);
    let env = CaseEnv {
        cpus: cpus.to_vec(),
        total_cache_bytes: host.total_cache_bytes(),
        memory_bytes: host.memory.total_bytes,
    };
    Ok((host, env))
}

/// A run of `plan` about to start on `host`, not yet stored.
pub(super) fn new_run(
    plan: &Plan,
    host: HostInfo,
    cpus: Vec<usize>,
    command_line: String,
    notes: Vec<String>,
    warnings: Vec<String>,
) -> RunRecord {
    RunRecord {
        id: 0,
        uuid: crate::results::new_run_uuid(),
        started: now(),
        finished: None,
        sledge_version: env!("CARGO_PKG_VERSION").to_string(),
        profile: plan.profile.clone(),
        command_line,
        status: RunStatus::Running,
        cpus,
        // A battery file's name, hash and text go with every run of it.
        notes: notes.into_iter().chain(plan.notes()).collect(),
        warnings,
        host,
        cases: Vec::new(),
    }
}

/// The cases of `plan` this host can run, and the run's warnings so far:
/// a profile's case that this host lacks a tool for is left out and said
/// (a workload the user named must run, or the run is refused with
/// [`super::preflight::CaseCannotRun`]); a busy host (when `idle_check`); the
/// sensors this host lacks.
pub(super) fn runnable_cases(
    plan: &Plan,
    env: &CaseEnv,
    idle_check: bool,
) -> anyhow::Result<(Vec<PlannedCase>, Vec<String>)> {
    let (cases, mut warnings) = cases_this_host_runs(plan, env)?;
    for warning in &warnings {
        crate::say!("warning: {warning}");
    }
    if idle_check && let Some(warning) = monitor::idle_check(IDLE_CHECK_WINDOW).warning {
        crate::say!("warning: {warning}");
        warnings.push(warning);
    }
    // Once per run, not per trial: what the hardware monitor cannot see
    // here (on most VMs: clock, throttling, temperature and energy).
    if let Some(warning) = engine::host_sensors().not_available_warning() {
        warnings.push(warning);
    }
    Ok((cases, warnings))
}

/// The cases of `plan` this host can run, and a line for each case of a
/// profile left out because the host lacks something it needs (a
/// profile is a menu for any host; a case asked for by name is refused
/// instead). What `run` runs and what `plan` prices.
pub fn cases_this_host_runs(
    plan: &Plan,
    env: &CaseEnv,
) -> Result<(Vec<PlannedCase>, Vec<String>), super::preflight::CaseCannotRun> {
    // A built-in profile is a menu for any host: what this host lacks is
    // left out. A battery file is the user's own list: all of it runs, or
    // the run is refused naming what is missing.
    let from_profile = plan.profile != CUSTOM_PROFILE && plan.batteries.is_empty();
    let skipped = super::preflight::check_cases_skipping(&plan.cases, env, from_profile)?;
    let warnings = skipped
        .iter()
        .map(|(index, reason)| format!("skipped {}: {reason}", plan.cases[*index].short_label()))
        .collect();
    let cases: Vec<PlannedCase> = plan
        .cases
        .iter()
        .enumerate()
        .filter(|(index, _)| !skipped.iter().any(|(s, _)| s == index))
        .map(|(_, case)| PlannedCase {
            workload: case.workload,
            params: case.params.clone(),
        })
        .collect();
    Ok((cases, warnings))
}

/// Opens the fallback file of `run` after `store` was lost, saying so at
/// once (the run goes on for a while).
fn start_fallback(
    run: &RunRecord,
    store: &Store,
    lost: &crate::store::StoreError,
    cases: &[Option<CaseRecord>],
) -> anyhow::Result<Fallback> {
    let fallback = Fallback::start(run, store.path(), lost, cases)?;
    crate::say!(
        "warning: {lost}; the run goes on into the local fallback file {}",
        fallback.file().display()
    );
    Ok(fallback)
}

/// A seed for the order shuffles that differs from run to run.
pub(super) fn shuffle_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    nanos ^ (u64::from(std::process::id()) << 32)
}

/// The current time, RFC 3339 in UTC with seconds.
pub(super) fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{InProcess, ScriptedMonitor, Silent};

    fn options() -> RunOptions {
        RunOptions {
            cpus: vec![0],
            methodology: Methodology {
                warmup_trials: 0,
                min_rounds: 2,
                max_rounds: 2,
                min_trials: 2,
                max_trials: 2,
                ..Methodology::default()
            },
            idle_check: false,
            command_line: "test".to_string(),
            notes: vec!["price=2400EUR".to_string()],
        }
    }

    #[test]
    fn a_run_is_stored_complete_with_its_cases() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("r.db")).unwrap();
        let plan = super::super::plan(
            &["cpu.primes".to_string()],
            &[
                "max_prime=1000".to_string(),
                "time=0.02".to_string(),
                "threads=1,2".to_string(),
            ],
            2,
        )
        .unwrap();
        let monitor = ScriptedMonitor::quiet();
        let executor = InProcess { monitor: &monitor };
        let run = execute(
            &plan,
            options(),
            &mut store,
            &executor,
            &CancelToken::new(),
            &Silent,
        )
        .unwrap();
        assert_eq!(run.status, RunStatus::Complete);
        assert_eq!(run.cases.len(), 2);
        assert!(run.finished.is_some());
        // Two rounds of two trials, in plan order whatever the shuffle did.
        assert_eq!(run.cases[0].metrics[0].summary.n, 4);
        assert_eq!(run.cases[0].rounds.len(), 2);
        assert_eq!(run.cases[0].params["threads"], "1");
        assert_eq!(run.cases[1].params["threads"], "2");
        assert_eq!(store.list_runs().unwrap().len(), 1);
        assert_eq!(run.notes, ["price=2400EUR"]);
        // What the hardware monitor cannot read here is said once, in the
        // run's warnings, whatever the number of trials.
        let unavailable = crate::engine::host_sensors().not_available_warning();
        let said: Vec<&String> = run
            .warnings
            .iter()
            .filter(|w| w.contains("not available on this host"))
            .collect();
        assert_eq!(
            said.len(),
            usize::from(unavailable.is_some()),
            "{:?}",
            run.warnings
        );
    }

    #[test]
    fn a_cancelled_run_is_stored_partial() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("r.db")).unwrap();
        let plan =
            super::super::plan(&["cpu.primes".to_string()], &["time=0.02".to_string()], 1).unwrap();
        let cancel = CancelToken::new();
        cancel.cancel();
        let monitor = ScriptedMonitor::quiet();
        let executor = InProcess { monitor: &monitor };
        let run = execute(&plan, options(), &mut store, &executor, &cancel, &Silent).unwrap();
        assert_eq!(run.status, RunStatus::Partial);
        assert!(run.cases.is_empty());
    }
}

//! Executes a planned run: probe the host, check it is idle, run every
//! case, store each one as it finishes, and mark how the run ended. The CLI
//! only wires flags to this; tests call it directly.

use std::time::Duration;

use super::plan::Plan;
use crate::engine::{self, CancelToken, CaseEnv, Methodology, Progress, TrialContext};
use crate::results::{RunRecord, RunStatus};
use crate::store::Store;
use crate::{monitor, probe};

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
}

/// Runs `plan` and stores it in `store`; returns the stored run as loaded
/// back. A case that cannot even be built here stops the run before
/// anything is measured or stored ([`super::CaseCannotRun`]). A case that
/// fails while running does not stop the run (its status becomes
/// `failed`); a cancellation stops it (status `partial`). Every finished
/// case is in the store before the next one starts.
pub fn execute(
    plan: &Plan,
    options: RunOptions,
    store: &mut Store,
    cancel: &CancelToken,
    progress: &dyn Progress,
) -> anyhow::Result<RunRecord> {
    let cwd = std::env::current_dir()?;
    let host = probe::probe(&cwd);
    let env = CaseEnv {
        cpus: options.cpus.clone(),
        total_cache_bytes: host.total_cache_bytes(),
        memory_bytes: host.memory.total_bytes,
    };
    super::preflight::check_cases(&plan.cases, &env)?;

    let mut warnings = Vec::new();
    if options.idle_check
        && let Some(warning) = monitor::idle_check(IDLE_CHECK_WINDOW).warning
    {
        eprintln!("warning: {warning}");
        warnings.push(warning);
    }

    let ctx = TrialContext {
        cpus: options.cpus.clone(),
        cancel: cancel.clone(),
    };
    let run = RunRecord {
        id: 0,
        started: now(),
        finished: None,
        sledge_version: env!("CARGO_PKG_VERSION").to_string(),
        profile: plan.profile.clone(),
        command_line: options.command_line,
        status: RunStatus::Running,
        cpus: options.cpus,
        warnings,
        host,
        cases: Vec::new(),
    };
    let run_id = store.begin_run(&run)?;

    let outcome = engine::run_plan(
        &plan.cases,
        &env,
        &options.methodology,
        &ctx,
        progress,
        &mut |case| Ok(store.add_case(run_id, case).map(|_| ())?),
    );
    let status = match outcome {
        Ok(outcome) => outcome.status,
        Err(err) => {
            // The store failed midway: mark the run failed if it still can.
            let _ = store.finish_run(run_id, RunStatus::Failed, &now(), &run.warnings);
            return Err(err);
        }
    };
    store.finish_run(run_id, status, &now(), &run.warnings)?;
    Ok(store.load_run(run_id)?)
}

/// The current time, RFC 3339 in UTC with seconds.
fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Silent;

    fn options() -> RunOptions {
        RunOptions {
            cpus: vec![0],
            methodology: Methodology {
                warmup_trials: 0,
                min_trials: 2,
                max_trials: 2,
                ..Methodology::default()
            },
            idle_check: false,
            command_line: "test".to_string(),
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
        let run = execute(&plan, options(), &mut store, &CancelToken::new(), &Silent).unwrap();
        assert_eq!(run.status, RunStatus::Complete);
        assert_eq!(run.cases.len(), 2);
        assert!(run.finished.is_some());
        assert_eq!(run.cases[0].metrics[0].summary.n, 2);
        assert_eq!(store.list_runs().unwrap().len(), 1);
    }

    #[test]
    fn a_cancelled_run_is_stored_partial() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("r.db")).unwrap();
        let plan =
            super::super::plan(&["cpu.primes".to_string()], &["time=0.02".to_string()], 1).unwrap();
        let cancel = CancelToken::new();
        cancel.cancel();
        let run = execute(&plan, options(), &mut store, &cancel, &Silent).unwrap();
        assert_eq!(run.status, RunStatus::Partial);
        assert!(run.cases.is_empty());
    }
}

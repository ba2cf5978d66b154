//! `sledge run`: plan, probe, idle check, run, store, print.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::output::{ExitStatus, UsageError, print};
use super::progress_bar::ProgressBars;
use crate::engine::{self, CaseEnv, Methodology, Progress, Silent, TrialContext};
use crate::results::{RunRecord, RunStatus};
use crate::store::Store;
use crate::{monitor, probe, report, suite};

/// Options of `sledge run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Profiles, workloads or families to run [default: quick]
    #[arg(value_name = "PROFILE|WORKLOAD")]
    targets: Vec<String>,
    /// Set a parameter: `name=value`, or `name=v1,v2,...` to sweep it.
    /// Applies to every selected workload that has the parameter.
    #[arg(short, long = "param", value_name = "NAME=VALUE")]
    params: Vec<String>,
    /// Restrict the run to the first N CPUs this process may use (pins the
    /// process, so every worker thread stays on them).
    #[arg(long, value_name = "N")]
    cpus: Option<usize>,
    /// Print the stored run as JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Warm-up trials per case, not counted [default: 1]
    #[arg(long, value_name = "N")]
    warmup: Option<u32>,
    /// Counted trials at least [default: 3]
    #[arg(long, value_name = "N")]
    min_trials: Option<u32>,
    /// Counted trials at most [default: 10, quick profile 5]
    #[arg(long, value_name = "N")]
    max_trials: Option<u32>,
    /// Stop adding trials once the 95% CI half-width is within this share
    /// of the mean [default: 0.02]
    #[arg(long, value_name = "SHARE")]
    ci_target: Option<f64>,
    /// Time budget per case in seconds; no new trial starts past it once
    /// the minimum is reached [default: 120, quick profile 8]
    #[arg(long, value_name = "SECONDS")]
    budget: Option<f64>,
    /// Skip the one-second check for other busy processes before the run.
    #[arg(long)]
    no_idle_check: bool,
}

impl RunArgs {
    fn methodology(&self, base: Methodology) -> anyhow::Result<Methodology> {
        let mut m = base;
        if let Some(v) = self.warmup {
            m.warmup_trials = v;
        }
        if let Some(v) = self.min_trials {
            m.min_trials = v;
            m.max_trials = m.max_trials.max(v);
        }
        if let Some(v) = self.max_trials {
            m.max_trials = v;
        }
        if let Some(v) = self.ci_target {
            m.ci_target = v;
        }
        if let Some(v) = self.budget {
            if !(v.is_finite() && v > 0.0) {
                return Err(UsageError(format!(
                    "--budget {v}: expected a positive number of seconds"
                ))
                .into());
            }
            m.case_budget = Duration::from_secs_f64(v);
        }
        m.validate().map_err(|e| UsageError(e.to_string()))?;
        Ok(m)
    }
}

/// Runs the plan and stores every finished case as it ends.
pub fn execute(args: RunArgs, store_path: Option<PathBuf>) -> anyhow::Result<ExitStatus> {
    let cpus =
        engine::affinity::restrict_to(args.cpus).map_err(|e| UsageError(format!("{e:#}")))?;
    let plan = suite::plan(&args.targets, &args.params, cpus.len())
        .map_err(|e| UsageError(e.to_string()))?;
    let methodology = args.methodology(plan.methodology.clone())?;

    let mut store = Store::open(&store_path.unwrap_or_else(Store::default_path))?;
    let cwd = std::env::current_dir()?;
    let host = probe::probe(&cwd);

    let mut warnings = Vec::new();
    if !args.no_idle_check {
        let idle = monitor::idle_check(Duration::from_secs(1));
        if let Some(warning) = idle.warning {
            eprintln!("warning: {warning}");
            warnings.push(warning);
        }
    }

    let cancel = engine::CancelToken::new();
    install_interrupt_handler(&cancel);
    let ctx = TrialContext {
        cpus: cpus.clone(),
        cancel,
    };
    let env = CaseEnv {
        cpus: cpus.clone(),
        total_cache_bytes: host.total_cache_bytes(),
        memory_bytes: host.memory.total_bytes,
    };

    let mut run = RunRecord {
        id: 0,
        started: now(),
        finished: None,
        sledge_version: env!("CARGO_PKG_VERSION").to_string(),
        profile: plan.profile.clone(),
        command_line: std::env::args().collect::<Vec<_>>().join(" "),
        status: RunStatus::Running,
        cpus,
        warnings,
        host,
        cases: Vec::new(),
    };
    run.id = store.begin_run(&run)?;

    let bars;
    let progress: &dyn Progress = if std::io::stderr().is_terminal() {
        bars = ProgressBars::new(plan.cases.len());
        &bars
    } else {
        &Silent
    };
    let run_id = run.id;
    let outcome = engine::run_plan(
        &plan.cases,
        &env,
        &methodology,
        &ctx,
        progress,
        &mut |case| {
            store.add_case(run_id, case)?;
            Ok(())
        },
    );
    let (status, cases) = match outcome {
        Ok(outcome) => (outcome.status, outcome.records),
        Err(err) => {
            // The store failed midway: mark the run failed if we still can.
            let _ = store.finish_run(run_id, RunStatus::Failed, &now(), &run.warnings);
            return Err(err);
        }
    };
    run.status = status;
    run.cases = cases;
    run.finished = Some(now());
    store.finish_run(
        run_id,
        status,
        run.finished.as_deref().unwrap_or_default(),
        &run.warnings,
    )?;

    let stored = store.load_run(run_id)?;
    if args.json {
        print(&report::export::json(&stored)?)?;
    } else {
        print(&report::run_table::render(&stored))?;
        eprintln!("stored as run {run_id} in {}", store.path().display());
    }
    Ok(match status {
        RunStatus::Complete => ExitStatus::Success,
        RunStatus::Partial => {
            eprintln!("interrupted: the finished cases are stored; the run is marked partial");
            ExitStatus::Interrupted
        }
        RunStatus::Failed | RunStatus::Running => ExitStatus::Failure,
    })
}

/// The current time, RFC 3339 in UTC with seconds.
fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// The first Ctrl-C (or SIGTERM) asks the run to stop after cleaning up;
/// a second one exits at once.
fn install_interrupt_handler(cancel: &engine::CancelToken) {
    let cancel = cancel.clone();
    let result = ctrlc::set_handler(move || {
        if cancel.is_cancelled() {
            eprintln!("\nsecond interrupt: exiting without cleanup");
            std::process::exit(130);
        }
        eprintln!("\ninterrupted: cleaning up; press Ctrl-C again to exit at once");
        cancel.cancel();
    });
    if let Err(err) = result {
        eprintln!(
            "warning: cannot catch Ctrl-C ({err}); an interrupt will not store a partial run"
        );
    }
}

//! `sledge run`: plan, probe, idle check, run, store, print.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::output::{ExitStatus, UsageError, open_store, print};
use super::progress_bar::ProgressBars;
use crate::engine::{self, Methodology, Progress, Silent};
use crate::results::RunStatus;
use crate::suite::RunOptions;
use crate::{report, suite};

/// The longest case budget accepted: a week.
const MAX_BUDGET_SECS: u64 = 7 * 24 * 3600;

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
            m.case_budget = Duration::try_from_secs_f64(v)
                .ok()
                .filter(|d| !d.is_zero() && d.as_secs() <= MAX_BUDGET_SECS)
                .ok_or_else(|| {
                    UsageError(format!(
                        "--budget {v}: expected a number of seconds above 0 and at most {MAX_BUDGET_SECS}"
                    ))
                })?;
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
    let mut store = open_store(store_path)?;

    let cancel = engine::CancelToken::new();
    install_interrupt_handler(&cancel);
    let bars = std::io::stderr()
        .is_terminal()
        .then(|| ProgressBars::new(plan.cases.len()));
    let progress: &dyn Progress = match &bars {
        Some(bars) => bars,
        None => &Silent,
    };
    let options = RunOptions {
        cpus,
        methodology,
        idle_check: !args.no_idle_check,
        command_line: crate::secrets::redact_args(&std::env::args().collect::<Vec<_>>()),
    };
    let run = suite::execute(&plan, options, &mut store, &cancel, progress)?;
    // Clear the bars before the table is printed.
    drop(bars);

    if args.json {
        print(&report::export::json(&run)?)?;
    } else {
        print(&report::run_table::render(&run))?;
        eprintln!("stored as run {} in {}", run.id, store.path().display());
    }
    Ok(match run.status {
        RunStatus::Complete => ExitStatus::Success,
        RunStatus::Partial => {
            eprintln!("interrupted: the finished cases are stored; the run is marked partial");
            ExitStatus::Interrupted
        }
        RunStatus::Failed | RunStatus::Running => ExitStatus::Failure,
    })
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

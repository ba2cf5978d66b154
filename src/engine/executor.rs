//! One round of one case: build a fresh case, prepare it, warm it up, run
//! its counted trials, clean up.
//!
//! A round is the unit of independence (see `runner.rs`): each round starts
//! from nothing, so that what one process or one set of files happens to
//! get (memory placement, thread placement, file layout) varies between
//! rounds as it varies between runs. The [`RoundExecutor`] trait lets the
//! CLI run every round in a fresh process of its own (the suite's
//! subprocess executor) while tests run them in this process with
//! [`InProcess`] and a scripted monitor.

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use super::context::{Cancelled, TrialContext};
use super::energy_metric;
use super::progress::Progress;
use super::round::{Round, RoundRequest};
use super::trial_monitor::TrialMonitor;
use super::workload::{Case, Metric, TrialOutput};
use crate::monitor::TrialHealth;
use crate::stats;

/// One counted trial (or a replaced one) as a round reports it.
#[derive(Debug, Clone)]
pub struct TrialResult {
    /// The metrics, primary first.
    pub metrics: Vec<Metric>,
    /// The latency histogram, where the workload has operations.
    pub histogram: Option<Histogram<u64>>,
    /// Wall time of the trial, seconds.
    pub seconds: f64,
    /// What the monitor saw.
    pub health: TrialHealth,
    /// Disturbed and replaced by another trial of the round: kept for the
    /// record, left out of the statistics.
    pub replaced: bool,
}

/// How a round ended.
#[derive(Debug, Clone, Default)]
pub struct RoundOutcome {
    /// The counted trials (and replaced ones), in order.
    pub trials: Vec<TrialResult>,
    /// The case's warnings, taken after its trials.
    pub warnings: Vec<String>,
    /// Why the round failed (build, prepare, a trial or cleanup), if it did.
    /// The trials that finished before the failure are kept.
    pub error: Option<String>,
    /// The user cancelled during the round; its trials are not to be used.
    pub cancelled: bool,
    /// Wall time of the whole round (build, prepare, warm-up, trials,
    /// cleanup), seconds.
    pub seconds: f64,
}

/// Runs rounds of cases.
pub trait RoundExecutor: Sync {
    /// Runs one round of `round.planned` as `round.request` says. Never
    /// panics on a workload's failure: it comes back in
    /// [`RoundOutcome::error`].
    fn run_round(&self, round: &Round<'_>) -> RoundOutcome;
}

/// Runs rounds in this process, watching trials with `monitor`.
pub struct InProcess<'a> {
    /// What watches the host during each counted trial.
    pub monitor: &'a dyn TrialMonitor,
}

impl RoundExecutor for InProcess<'_> {
    fn run_round(&self, round: &Round<'_>) -> RoundOutcome {
        let Round {
            planned,
            request,
            env,
            ctx,
            progress,
        } = *round;
        let started = Instant::now();
        let ctx = TrialContext {
            round: request.round,
            shared: request.shared.clone(),
            ..ctx.clone()
        };
        let mut outcome = RoundOutcome::default();
        if ctx.cancel.is_cancelled() {
            outcome.cancelled = true;
            return outcome;
        }
        let mut case = match guarded(|| planned.workload.build(&planned.params, env)) {
            Ok(case) => case,
            Err(err) => {
                outcome.error = Some(format!("{err:#}"));
                outcome.seconds = started.elapsed().as_secs_f64();
                return outcome;
            }
        };
        let result = guarded(|| case.prepare(&ctx)).and_then(|()| {
            let result = run_trials(
                case.as_mut(),
                request,
                &ctx,
                self.monitor,
                progress,
                &mut outcome.trials,
            );
            // Taken after the trials: a case may warn about what they showed.
            outcome.warnings.extend(case.warnings());
            result
        });
        // Cleanup runs whatever happened above; its own failure is
        // reported, never silently dropped.
        let cleaned = guarded(|| case.cleanup(&ctx));
        match result {
            Err(err) if err.is::<Cancelled>() || ctx.cancel.is_cancelled() => {
                outcome.cancelled = true;
                if let Err(err) = cleaned {
                    crate::say!("warning: cleanup after the interrupt failed: {err:#}");
                }
            }
            Err(err) => {
                outcome.error = Some(format!("{err:#}"));
                if let Err(err) = cleaned {
                    outcome
                        .warnings
                        .push(format!("cleanup after the failure also failed: {err:#}"));
                }
            }
            Ok(()) => {
                if let Err(err) = cleaned {
                    outcome.error = Some(format!("{:#}", err.context("cleanup failed")));
                }
            }
        }
        outcome.seconds = started.elapsed().as_secs_f64();
        outcome
    }
}

/// Runs a workload call, turning a panic into an error so that cleanup
/// still runs and the run is still stored.
pub(crate) fn guarded<T>(call: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(call)) {
        Ok(result) => result,
        Err(panic) => Err(anyhow::anyhow!(
            "the workload panicked: {}",
            crate::sys::workers::panic_message(&*panic)
        )),
    }
}

/// The warm-up and counted trials of one round, appended to `trials` as
/// they finish (so a failure keeps the ones before it).
fn run_trials(
    case: &mut dyn Case,
    request: &RoundRequest,
    ctx: &TrialContext,
    monitor: &dyn TrialMonitor,
    progress: &dyn Progress,
    trials: &mut Vec<TrialResult>,
) -> anyhow::Result<()> {
    let warmups = if case.warms_up_itself() {
        0
    } else {
        request.warmup_trials
    };
    for _ in 0..warmups {
        ctx.check_cancelled()?;
        let output = guarded(|| case.trial(ctx))?;
        check_output(&output)?;
        let primary = &output.metrics[0];
        progress.trial_finished(0, true, primary.value, primary.unit.as_str());
    }

    let started = Instant::now();
    let mut replacements = 0;
    loop {
        ctx.check_cancelled()?;
        let watch = monitor.start(&ctx.cpus);
        let trial_start = Instant::now();
        let output = guarded(|| case.trial(ctx)).and_then(|o| check_output(&o).map(|_| o));
        let seconds = trial_start.elapsed().as_secs_f64();
        let health = watch.finish();
        let TrialOutput {
            mut metrics,
            latency_ns,
        } = output?;
        energy_metric::add_energy_metric(&mut metrics, &health);
        // A flagged trial is replaced, but not one right after another
        // flagged trial: then the host is busy for longer than a trial, a
        // replacement would only be flagged again, and the round keeps it.
        let after_flagged = trials.last().is_some_and(|t| t.replaced);
        let replaced =
            !health.flags.is_empty() && replacements < request.max_replacements && !after_flagged;
        replacements += u32::from(replaced);
        let counted = trials.iter().filter(|t| !t.replaced).count() as u32 + u32::from(!replaced);
        progress.trial_finished(counted, false, metrics[0].value, metrics[0].unit.as_str());
        trials.push(TrialResult {
            metrics,
            histogram: latency_ns,
            seconds,
            health,
            replaced,
        });
        if enough_trials(trials, request, started.elapsed()) {
            return Ok(());
        }
    }
}

/// A trial must report at least one metric, and every metric must be a
/// finite number: a NaN would poison every statistic after it.
fn check_output(output: &TrialOutput) -> anyhow::Result<()> {
    if output.metrics.is_empty() {
        anyhow::bail!("the workload reported no metric");
    }
    if let Some(bad) = output.metrics.iter().find(|m| !m.value.is_finite()) {
        anyhow::bail!(
            "metric `{}` is {} (not a finite number)",
            bad.name,
            bad.value
        );
    }
    Ok(())
}

/// The stopping rule inside a round: at least `min_trials` counted; then
/// stop at `max_trials`, when the primary metric's CI is tight, or when
/// another trial of the mean length would overrun the budget.
fn enough_trials(trials: &[TrialResult], request: &RoundRequest, elapsed: Duration) -> bool {
    let counted: Vec<f64> = trials
        .iter()
        .filter(|t| !t.replaced)
        .map(|t| t.metrics[0].value)
        .collect();
    let n = counted.len() as u32;
    if n >= request.max_trials {
        return true;
    }
    if n < request.min_trials {
        // A round that keeps getting replaced trials still ends: at most
        // min + max_replacements trials are ever started.
        return false;
    }
    let tight = stats::summarize(&counted)
        .map(|s| s.relative_ci_half_width() <= request.ci_target)
        .unwrap_or(false);
    let mean_trial = elapsed / trials.len().max(1) as u32;
    tight || elapsed + mean_trial > request.budget
}

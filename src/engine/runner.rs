//! Runs one case (prepare, warm-up, counted trials, cleanup) and a plan of
//! cases, handing each finished case to the caller at once so that it can
//! be stored before the next one starts.

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};

use super::context::{Cancelled, TrialContext};
use super::methodology::Methodology;
use super::params::ParamSet;
use super::progress::Progress;
use super::workload::{Case, CaseEnv, Metric, TrialOutput, Workload};
use crate::monitor::Monitor;
use crate::results::{CaseRecord, MetricRecord, RunStatus, TrialRecord};
use crate::stats;

/// How often the monitor samples /proc during a trial.
const MONITOR_INTERVAL: Duration = Duration::from_millis(200);

/// A case waiting to run: the workload and its validated parameters.
pub struct PlannedCase {
    /// The workload.
    pub workload: &'static dyn Workload,
    /// Its parameters.
    pub params: ParamSet,
}

impl PlannedCase {
    /// The case as a user would type it.
    pub fn label(&self) -> String {
        let params: Vec<String> = self
            .params
            .to_strings()
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        format!("{} {}", self.workload.id(), params.join(" "))
    }
}

/// How a case ended.
#[derive(Debug)]
pub enum CaseOutcome {
    /// All planned trials ran.
    Finished(CaseRecord),
    /// The case failed; the record carries the error and the trials that
    /// finished before it.
    Failed(CaseRecord),
    /// The user cancelled during the case; its partial trials are dropped.
    Cancelled,
}

/// Runs one case under `method`. Cleanup runs whenever prepare was
/// attempted, whatever happens after.
pub fn run_case(
    planned: &PlannedCase,
    env: &CaseEnv,
    method: &Methodology,
    ctx: &TrialContext,
    progress: &dyn Progress,
) -> CaseOutcome {
    let mut record = CaseRecord {
        workload: planned.workload.id().to_string(),
        workload_version: planned.workload.version(),
        params: planned.params.to_strings(),
        warnings: Vec::new(),
        error: None,
        trials: Vec::new(),
        metrics: Vec::new(),
        latency_histogram: None,
    };
    if ctx.cancel.is_cancelled() {
        return CaseOutcome::Cancelled;
    }
    let mut case = match planned.workload.build(&planned.params, env) {
        Ok(case) => case,
        Err(err) => return fail(record, err),
    };

    let prepared = case.prepare(ctx);
    let result = match prepared {
        Ok(()) => {
            record.warnings.extend(case.warnings());
            run_trials(case.as_mut(), method, ctx, progress)
        }
        Err(err) => Err(err.into()),
    };
    let cleaned = case.cleanup(ctx);

    match result {
        Ok(trials) => {
            finish_record(&mut record, trials);
            if let Err(err) = cleaned {
                return fail(record, err.context("cleanup failed"));
            }
            CaseOutcome::Finished(record)
        }
        Err(failure) if failure.error.is::<Cancelled>() || ctx.cancel.is_cancelled() => {
            CaseOutcome::Cancelled
        }
        Err(failure) => {
            finish_record(&mut record, failure.finished);
            fail(record, failure.error)
        }
    }
}

fn fail(mut record: CaseRecord, err: anyhow::Error) -> CaseOutcome {
    record.error = Some(format!("{err:#}"));
    CaseOutcome::Failed(record)
}

/// The counted trials of a case: their outputs and health.
#[derive(Default)]
struct Trials {
    outputs: Vec<TrialOutput>,
    records: Vec<TrialRecord>,
}

/// A failure midway, with the trials that finished before it.
struct TrialFailure {
    error: anyhow::Error,
    finished: Trials,
}

impl From<anyhow::Error> for TrialFailure {
    fn from(error: anyhow::Error) -> Self {
        TrialFailure {
            error,
            finished: Trials::default(),
        }
    }
}

fn run_trials(
    case: &mut dyn Case,
    method: &Methodology,
    ctx: &TrialContext,
    progress: &dyn Progress,
) -> Result<Trials, TrialFailure> {
    for _ in 0..method.warmup_trials {
        ctx.check_cancelled().map_err(anyhow::Error::from)?;
        let output = case.trial(ctx)?;
        check_output(&output)?;
        let primary = &output.metrics[0];
        progress.trial_finished(0, true, primary.value, primary.unit);
    }

    let started = Instant::now();
    let mut trials = Trials::default();
    loop {
        if let Err(err) = ctx.check_cancelled() {
            return Err(TrialFailure {
                error: err.into(),
                finished: trials,
            });
        }
        let monitor = Monitor::start(MONITOR_INTERVAL);
        let trial_start = Instant::now();
        let output = case.trial(ctx).and_then(|o| check_output(&o).map(|_| o));
        let seconds = trial_start.elapsed().as_secs_f64();
        let health = monitor.finish();
        let output = match output {
            Ok(output) => output,
            Err(error) => {
                return Err(TrialFailure {
                    error,
                    finished: trials,
                });
            }
        };
        let primary = &output.metrics[0];
        progress.trial_finished(
            trials.outputs.len() as u32 + 1,
            false,
            primary.value,
            primary.unit,
        );
        trials.records.push(TrialRecord {
            index: trials.records.len() as u32,
            seconds,
            health,
        });
        trials.outputs.push(output);
        if enough_trials(&trials.outputs, method, started.elapsed()) {
            return Ok(trials);
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

/// The stopping rule: at least `min_trials`; then stop when the primary
/// metric's CI is tight, at `max_trials`, or when another trial of the mean
/// length would overrun the case budget.
fn enough_trials(outputs: &[TrialOutput], method: &Methodology, elapsed: Duration) -> bool {
    let n = outputs.len() as u32;
    if n >= method.max_trials {
        return true;
    }
    if n < method.min_trials {
        return false;
    }
    let primary: Vec<f64> = outputs.iter().map(|o| o.metrics[0].value).collect();
    let tight = stats::summarize(&primary)
        .map(|s| s.relative_ci_half_width() <= method.ci_target)
        .unwrap_or(false);
    let mean_trial = elapsed / n;
    tight || elapsed + mean_trial > method.case_budget
}

/// Summarises the trials into metric records, merges the histograms and
/// writes warnings for disturbed trials.
fn finish_record(record: &mut CaseRecord, trials: Trials) {
    record.metrics = summarize_metrics(&trials.outputs);
    record.latency_histogram = merge_histograms(&trials.outputs);
    if let Some(warning) = disturbance_warning(&trials.records) {
        record.warnings.push(warning);
    }
    record.trials = trials.records;
}

fn summarize_metrics(outputs: &[TrialOutput]) -> Vec<MetricRecord> {
    let Some(first) = outputs.first() else {
        return Vec::new();
    };
    first
        .metrics
        .iter()
        .filter_map(|template: &Metric| {
            let samples: Vec<f64> = outputs
                .iter()
                .filter_map(|o| o.metrics.iter().find(|m| m.name == template.name))
                .map(|m| m.value)
                .collect();
            let summary = stats::summarize(&samples)?;
            Some(MetricRecord {
                name: template.name.clone(),
                unit: template.unit.to_string(),
                direction: template.direction,
                outliers: stats::tukey_outliers(&samples),
                summary,
                samples,
            })
        })
        .collect()
}

fn merge_histograms(outputs: &[TrialOutput]) -> Option<Vec<u8>> {
    let mut merged: Option<Histogram<u64>> = None;
    for histogram in outputs.iter().filter_map(|o| o.latency_ns.as_ref()) {
        match merged.as_mut() {
            None => merged = Some(histogram.clone()),
            Some(m) => {
                // Histograms made by one workload share their bounds, so
                // adding cannot fail; if it did, the merged one is partial
                // and the latency metrics still come from each trial.
                let _ = m.add(histogram);
            }
        }
    }
    let merged = merged?;
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(&merged, &mut bytes)
        .ok()?;
    Some(bytes)
}

fn disturbance_warning(records: &[TrialRecord]) -> Option<String> {
    let disturbed: Vec<&TrialRecord> = records
        .iter()
        .filter(|r| !r.health.flags.is_empty())
        .collect();
    if disturbed.is_empty() {
        return None;
    }
    let mut kinds: Vec<&str> = disturbed
        .iter()
        .flat_map(|r| r.health.flags.iter().map(|f| f.label()))
        .collect();
    kinds.sort_unstable();
    kinds.dedup();
    Some(format!(
        "{} of {} trials disturbed ({}): treat this case's numbers with care",
        disturbed.len(),
        records.len(),
        kinds.join(", ")
    ))
}

/// What a whole plan produced.
#[derive(Debug)]
pub struct PlanOutcome {
    /// Complete, partial (cancelled) or failed (a case failed).
    pub status: RunStatus,
    /// The cases that finished or failed, in order.
    pub records: Vec<CaseRecord>,
}

/// Runs every case in turn and passes each finished (or failed) case to
/// `on_case` before the next one starts. A failing case does not stop the
/// plan; a cancellation does. An error from `on_case` (the store) stops the
/// plan and is returned.
pub fn run_plan(
    plan: &[PlannedCase],
    env: &CaseEnv,
    method: &Methodology,
    ctx: &TrialContext,
    progress: &dyn Progress,
    on_case: &mut dyn FnMut(&CaseRecord) -> anyhow::Result<()>,
) -> anyhow::Result<PlanOutcome> {
    let mut records = Vec::new();
    let mut status = RunStatus::Complete;
    for (index, planned) in plan.iter().enumerate() {
        progress.case_started(index, plan.len(), &planned.label());
        match run_case(planned, env, method, ctx, progress) {
            CaseOutcome::Finished(record) => {
                progress.case_finished(&record);
                on_case(&record)?;
                records.push(record);
            }
            CaseOutcome::Failed(record) => {
                progress.case_finished(&record);
                on_case(&record)?;
                records.push(record);
                status = RunStatus::Failed;
            }
            CaseOutcome::Cancelled => {
                return Ok(PlanOutcome {
                    status: RunStatus::Partial,
                    records,
                });
            }
        }
    }
    Ok(PlanOutcome { status, records })
}

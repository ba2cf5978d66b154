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
        crate::results::case_label(self.workload.id(), &self.params.to_strings())
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
    let mut case = match guarded(|| planned.workload.build(&planned.params, env)) {
        Ok(case) => case,
        Err(err) => return fail(record, err),
    };

    let result = match guarded(|| case.prepare(ctx)) {
        Ok(()) => {
            let result = run_trials(case.as_mut(), method, ctx, progress);
            // Taken after the trials: a case may warn about what they showed.
            record.warnings.extend(case.warnings());
            result
        }
        Err(err) => Err(err.into()),
    };
    // Cleanup runs whatever happened above; its own failure is reported,
    // never silently dropped.
    let cleaned = guarded(|| case.cleanup(ctx));

    match result {
        Ok(trials) => {
            finish_record(&mut record, trials);
            if let Err(err) = cleaned {
                return fail(record, err.context("cleanup failed"));
            }
            CaseOutcome::Finished(record)
        }
        Err(failure) if failure.error.is::<Cancelled>() || ctx.cancel.is_cancelled() => {
            if let Err(err) = cleaned {
                eprintln!("warning: cleanup after the interrupt failed: {err:#}");
            }
            CaseOutcome::Cancelled
        }
        Err(failure) => {
            finish_record(&mut record, failure.finished);
            if let Err(err) = cleaned {
                record
                    .warnings
                    .push(format!("cleanup after the failure also failed: {err:#}"));
            }
            fail(record, failure.error)
        }
    }
}

/// Runs a workload call, turning a panic into an error so that cleanup
/// still runs and the run is still stored.
fn guarded<T>(call: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(call)) {
        Ok(result) => result,
        Err(panic) => Err(anyhow::anyhow!(
            "the workload panicked: {}",
            crate::workloads::common::workers::panic_message(&*panic)
        )),
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
        let output = guarded(|| case.trial(ctx))?;
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
        let monitor = Monitor::start_on(Some(&ctx.cpus), MONITOR_INTERVAL);
        let trial_start = Instant::now();
        let output = guarded(|| case.trial(ctx)).and_then(|o| check_output(&o).map(|_| o));
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
    record.trials = trials.records;
    if let Some(warning) = disturbance_warning(record) {
        record.warnings.push(warning);
    }
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

fn disturbance_warning(record: &CaseRecord) -> Option<String> {
    let kinds = record.disturbances();
    if kinds.is_empty() {
        return None;
    }
    let disturbed = record
        .trials
        .iter()
        .filter(|t| !t.health.flags.is_empty())
        .count();
    let names: Vec<&str> = kinds.iter().map(|(kind, _)| *kind).collect();
    Some(format!(
        "{disturbed} of {} trials disturbed ({}): treat this case's numbers with care",
        record.trials.len(),
        names.join(", ")
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

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::engine::context::CancelToken;
    use crate::engine::params::{ParamKind, ParamSpec};
    use crate::engine::progress::Silent;

    /// What the fake case does on each trial call (warm-up included).
    #[derive(Clone)]
    enum Script {
        /// Return these values in turn, repeating the last.
        Values(Vec<f64>),
        /// Fail on this call (0-based).
        FailAt(u32),
        /// Cancel the token on this call and report it.
        CancelAt(u32, CancelToken),
        /// Panic on this call.
        PanicAt(u32),
        /// Sleep this long on every call, returning 100.
        Sleep(Duration, Vec<f64>),
    }

    #[derive(Default)]
    struct Calls {
        prepare: AtomicU32,
        trial: AtomicU32,
        cleanup: AtomicU32,
    }

    struct Fake {
        script: Mutex<Script>,
        calls: Arc<Calls>,
        fail_prepare: bool,
    }

    impl Workload for Fake {
        fn id(&self) -> &'static str {
            "test.fake"
        }
        fn version(&self) -> u32 {
            1
        }
        fn summary(&self) -> &'static str {
            "a scripted workload for engine tests"
        }
        fn params(&self) -> Vec<ParamSpec> {
            vec![ParamSpec {
                name: "n",
                help: "",
                kind: ParamKind::Int { min: 0, max: 9 },
                default: "1",
            }]
        }
        fn build(&self, _p: &ParamSet, _env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
            Ok(Box::new(FakeCase {
                script: self.script.lock().unwrap().clone(),
                calls: self.calls.clone(),
                fail_prepare: self.fail_prepare,
            }))
        }
    }

    struct FakeCase {
        script: Script,
        calls: Arc<Calls>,
        fail_prepare: bool,
    }

    impl Case for FakeCase {
        fn prepare(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
            self.calls.prepare.fetch_add(1, Ordering::SeqCst);
            if self.fail_prepare {
                anyhow::bail!("prepare exploded");
            }
            Ok(())
        }
        fn trial(&mut self, _ctx: &TrialContext) -> anyhow::Result<TrialOutput> {
            let call = self.calls.trial.fetch_add(1, Ordering::SeqCst);
            let value = match &self.script {
                Script::Values(v) => v[(call as usize).min(v.len() - 1)],
                Script::FailAt(at) if call == *at => anyhow::bail!("trial {call} exploded"),
                Script::FailAt(_) => 100.0,
                Script::CancelAt(at, token) if call == *at => {
                    token.cancel();
                    return Err(Cancelled.into());
                }
                Script::CancelAt(..) => 100.0,
                Script::PanicAt(at) if call == *at => panic!("trial {call} panicked"),
                Script::PanicAt(_) => 100.0,
                Script::Sleep(d, v) => {
                    std::thread::sleep(*d);
                    v[(call as usize).min(v.len() - 1)]
                }
            };
            Ok(TrialOutput {
                metrics: vec![Metric::higher("value", "u", value)],
                latency_ns: None,
            })
        }
        fn cleanup(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
            self.calls.cleanup.fetch_add(1, Ordering::SeqCst);
            Ok(())
        }
        fn warnings(&self) -> Vec<String> {
            // What the trials showed: how many ran when the runner asked.
            vec![format!(
                "{} trials ran",
                self.calls.trial.load(Ordering::SeqCst)
            )]
        }
    }

    fn leak(script: Script, fail_prepare: bool) -> (&'static Fake, Arc<Calls>) {
        let calls = Arc::new(Calls::default());
        let fake = Box::leak(Box::new(Fake {
            script: Mutex::new(script),
            calls: calls.clone(),
            fail_prepare,
        }));
        (fake, calls)
    }

    fn planned(w: &'static Fake) -> PlannedCase {
        let params =
            crate::engine::params::resolve_cases(w.id(), &w.params(), &Default::default(), 1)
                .unwrap()
                .remove(0);
        PlannedCase {
            workload: w,
            params,
        }
    }

    fn env() -> CaseEnv {
        CaseEnv {
            cpus: vec![0],
            total_cache_bytes: 0,
            memory_bytes: 0,
        }
    }

    fn ctx(cancel: CancelToken) -> TrialContext {
        TrialContext {
            cpus: vec![0],
            cancel,
        }
    }

    /// Runs the fake's one case with the default methodology, no progress
    /// and nobody cancelling.
    fn run_plain(w: &'static Fake) -> CaseOutcome {
        run_case(
            &planned(w),
            &env(),
            &Methodology::default(),
            &ctx(CancelToken::new()),
            &Silent,
        )
    }

    fn finished(outcome: CaseOutcome) -> CaseRecord {
        match outcome {
            CaseOutcome::Finished(r) => r,
            other => panic!("expected a finished case, got {other:?}"),
        }
    }

    #[test]
    fn case_warnings_are_taken_after_the_trials() {
        let (w, _calls) = leak(Script::Values(vec![100.0]), false);
        let record = finished(run_plain(w));
        // One warm-up and three counted trials had run. (A busy host may
        // add a warning of the engine's own.)
        assert!(
            record.warnings.contains(&"4 trials ran".to_string()),
            "{:?}",
            record.warnings
        );
    }

    #[test]
    fn stops_at_the_minimum_when_the_ci_is_already_tight() {
        let (w, calls) = leak(Script::Values(vec![1.0, 100.0, 100.1, 99.9, 100.0]), false);
        let record = finished(run_plain(w));
        // One warm-up (value 1.0, not counted) and three counted trials.
        assert_eq!(calls.trial.load(Ordering::SeqCst), 4);
        assert_eq!(record.metrics[0].samples, vec![100.0, 100.1, 99.9]);
        assert_eq!(record.trials.len(), 3);
        assert!(record.metrics[0].summary.relative_ci_half_width() <= 0.02);
    }

    #[test]
    fn keeps_going_while_noisy_and_stops_at_the_cap() {
        let noisy: Vec<f64> = (0..20)
            .map(|i| if i % 2 == 0 { 50.0 } else { 150.0 })
            .collect();
        let (w, calls) = leak(Script::Values(noisy), false);
        let method = Methodology {
            max_trials: 7,
            ..Methodology::default()
        };
        let record = finished(run_case(
            &planned(w),
            &env(),
            &method,
            &ctx(CancelToken::new()),
            &Silent,
        ));
        assert_eq!(record.metrics[0].summary.n, 7);
        assert_eq!(calls.trial.load(Ordering::SeqCst), 8);
    }

    #[test]
    fn continues_until_the_ci_is_tight() {
        // Noisy at first, then steady: the CI tightens after some trials.
        // After 3 counted trials the CI half-width is 5% of the mean, after
        // 4 it is 2.6%, after 5 it is 1.75%: the rule must stop at 5.
        let mut values = vec![0.0, 98.0, 102.0, 100.0];
        values.extend(std::iter::repeat_n(100.0, 20));
        let (w, _) = leak(Script::Values(values), false);
        let record = finished(run_plain(w));
        assert_eq!(record.metrics[0].summary.n, 5);
        assert!(record.metrics[0].summary.relative_ci_half_width() <= 0.02);
    }

    #[test]
    fn cleanup_runs_after_a_failing_trial_and_finished_trials_are_kept() {
        let (w, calls) = leak(Script::FailAt(2), false);
        let outcome = run_plain(w);
        let CaseOutcome::Failed(record) = outcome else {
            panic!("expected a failed case");
        };
        assert_eq!(calls.cleanup.load(Ordering::SeqCst), 1);
        assert!(
            record
                .error
                .as_deref()
                .unwrap()
                .contains("trial 2 exploded")
        );
        // The warm-up (call 0) and one counted trial (call 1) finished.
        assert_eq!(record.metrics[0].samples, vec![100.0]);
    }

    #[test]
    fn cleanup_runs_after_a_failing_prepare() {
        let (w, calls) = leak(Script::Values(vec![1.0]), true);
        let outcome = run_plain(w);
        assert!(
            matches!(outcome, CaseOutcome::Failed(ref r) if r.error.as_deref().unwrap().contains("prepare exploded"))
        );
        assert_eq!(calls.trial.load(Ordering::SeqCst), 0);
        assert_eq!(calls.cleanup.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_cancelled_plan_keeps_its_finished_cases_and_is_partial() {
        let cancel = CancelToken::new();
        let (done, _) = leak(Script::Values(vec![100.0]), false);
        // The second case cancels on its second call (its first counted trial).
        let (cancelling, calls) = leak(Script::CancelAt(1, cancel.clone()), false);
        let (never, never_calls) = leak(Script::Values(vec![100.0]), false);
        let plan = vec![planned(done), planned(cancelling), planned(never)];
        let mut stored = Vec::new();
        let outcome = run_plan(
            &plan,
            &env(),
            &Methodology::default(),
            &ctx(cancel),
            &Silent,
            &mut |case| {
                stored.push(case.workload.clone());
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(outcome.status, RunStatus::Partial);
        assert_eq!(outcome.records.len(), 1);
        assert_eq!(stored.len(), 1);
        assert_eq!(calls.cleanup.load(Ordering::SeqCst), 1);
        assert_eq!(never_calls.prepare.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn a_failed_case_does_not_stop_the_plan() {
        let (bad, _) = leak(Script::FailAt(0), false);
        let (good, _) = leak(Script::Values(vec![100.0]), false);
        let plan = vec![planned(bad), planned(good)];
        let outcome = run_plan(
            &plan,
            &env(),
            &Methodology::default(),
            &ctx(CancelToken::new()),
            &Silent,
            &mut |_| Ok(()),
        )
        .unwrap();
        assert_eq!(outcome.status, RunStatus::Failed);
        assert_eq!(outcome.records.len(), 2);
        assert!(outcome.records[0].error.is_some());
        assert!(outcome.records[1].error.is_none());
    }

    #[test]
    fn non_finite_metrics_fail_the_case() {
        let (w, calls) = leak(Script::Values(vec![f64::NAN]), false);
        let outcome = run_plain(w);
        assert!(
            matches!(outcome, CaseOutcome::Failed(ref r) if r.error.as_deref().unwrap().contains("not a finite number"))
        );
        assert_eq!(calls.cleanup.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_panicking_trial_still_gets_cleanup_and_a_clear_error() {
        let (w, calls) = leak(Script::PanicAt(1), false);
        let outcome = run_plain(w);
        let CaseOutcome::Failed(record) = outcome else {
            panic!("expected a failed case");
        };
        assert!(
            record
                .error
                .as_deref()
                .unwrap()
                .contains("the workload panicked: trial 1 panicked")
        );
        assert_eq!(calls.cleanup.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn the_budget_stops_a_noisy_case_after_the_minimum() {
        // 30 ms per trial, too noisy to converge, budget 50 ms: after the
        // third counted trial (90 ms used) no further trial may start.
        let noisy: Vec<f64> = (0..20)
            .map(|i| if i % 2 == 0 { 50.0 } else { 150.0 })
            .collect();
        let (w, _) = leak(Script::Sleep(Duration::from_millis(30), noisy), false);
        let method = Methodology {
            warmup_trials: 0,
            case_budget: Duration::from_millis(50),
            ..Methodology::default()
        };
        let record = finished(run_case(
            &planned(w),
            &env(),
            &method,
            &ctx(CancelToken::new()),
            &Silent,
        ));
        assert_eq!(record.metrics[0].summary.n, 3);
    }
}

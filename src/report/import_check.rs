//! What an imported run must be: the invariants the engine keeps for every
//! run it stores (`engine/record.rs` builds each metric from its trials
//! with `stats::summarize_rounds`), checked before `sledge import` adds
//! anything, so that a damaged or made-up document cannot put nonsense
//! into comparisons and reports.
//!
//! A stored run has: RFC 3339 times; trials whose indexes increase and
//! whose wall times are finite and not negative; per metric one sample per
//! trial, each finite, at most one outlier flag per sample, and a summary
//! of the samples of the trials not replaced: `n` of them, every number
//! finite, `min ≤ median ≤ max`, `min ≤ mean ≤ max`,
//! `ci_low ≤ mean ≤ ci_high`, a standard deviation that is not negative,
//! and every used sample within `[min, max]`; every sample and the mean,
//! median, min and max 0 or more (no unit's values are negative) and 0
//! or between 1e-12 and 1e15 in magnitude (`report::magnitude` says
//! why). Every number in the document has a magnitude
//! `report::magnitude` allows.
//!
//! Each check says which field is wrong, what it holds and what is
//! allowed; the caller says where (which run, which case).

use serde_json::Value;

use super::{format, magnitude};
use crate::results::{CaseRecord, MetricRecord, RunRecord};

/// The run's own fields (its cases are checked one by one with
/// [`check_case`]).
pub fn check_run(run: &RunRecord) -> Result<(), String> {
    check_time("started", &run.started)?;
    if let Some(finished) = &run.finished {
        check_time("finished", finished)?;
    }
    Ok(())
}

/// A time as the engine writes it: RFC 3339.
fn check_time(field: &str, text: &str) -> Result<(), String> {
    chrono::DateTime::parse_from_rfc3339(text)
        .map(|_| ())
        .map_err(|_| {
            format!(
                "{field} `{text}` is not an RFC 3339 time; allowed is a time such as 2026-03-01T10:00:00Z"
            )
        })
}

/// A case's trials and metrics.
pub fn check_case(case: &CaseRecord) -> Result<(), String> {
    for (pos, trial) in case.trials.iter().enumerate() {
        if pos > 0 && trial.index <= case.trials[pos - 1].index {
            return Err(format!(
                "trial indexes must increase, found {} after {}",
                trial.index,
                case.trials[pos - 1].index
            ));
        }
        if !(trial.seconds.is_finite() && trial.seconds >= 0.0) {
            return Err(format!(
                "trials[{pos}].seconds is {}; allowed is a finite number of seconds, not negative",
                shown(trial.seconds)
            ));
        }
    }
    let used: Vec<bool> = case.trials.iter().map(|t| !t.replaced).collect();
    for metric in &case.metrics {
        check_metric(metric, &used)
            .map_err(|reason| format!("metric {}: {reason}", metric.name))?;
    }
    Ok(())
}

/// One metric against its case's trials (`used[i]`: trial `i` is not
/// replaced, so its sample is in the summary).
fn check_metric(metric: &MetricRecord, used: &[bool]) -> Result<(), String> {
    if metric.samples.len() != used.len() {
        return Err(format!(
            "it has {} for {}; allowed is one sample per trial",
            format::count(metric.samples.len(), "sample", "samples"),
            format::count(used.len(), "trial", "trials")
        ));
    }
    if metric.outliers.len() > metric.samples.len() {
        return Err(format!(
            "it has {} for {}; allowed is at most one flag per sample",
            format::count(metric.outliers.len(), "outlier flag", "outlier flags"),
            format::count(metric.samples.len(), "sample", "samples")
        ));
    }
    for (i, &value) in metric.samples.iter().enumerate() {
        if !value.is_finite() {
            return Err(format!(
                "samples[{i}] is {}; allowed is a finite number",
                shown(value)
            ));
        }
    }
    let s = &metric.summary;
    for (field, value) in [
        ("mean", s.mean),
        ("median", s.median),
        ("stddev", s.stddev),
        ("ci_low", s.ci_low),
        ("ci_high", s.ci_high),
        ("min", s.min),
        ("max", s.max),
    ] {
        if !value.is_finite() {
            return Err(format!(
                "summary.{field} is {}; allowed is a finite number",
                shown(value)
            ));
        }
    }
    check_metric_range(metric)?;
    let samples_used: Vec<f64> = metric
        .samples
        .iter()
        .zip(used)
        .filter(|(_, used)| **used)
        .map(|(v, _)| *v)
        .collect();
    if s.n != samples_used.len() || s.n == 0 {
        return Err(format!(
            "summary.n is {} but {} used (not replaced); allowed is their number, at least 1",
            s.n,
            match samples_used.len() {
                1 => "1 trial is".to_string(),
                n => format!("{n} trials are"),
            }
        ));
    }
    let ordered = |low: (&str, f64), high: (&str, f64)| {
        if at_most(low.1, high.1) {
            Ok(())
        } else {
            Err(format!(
                "summary.{} {} is above summary.{} {}; allowed is {} ≤ {}",
                low.0, low.1, high.0, high.1, low.0, high.0
            ))
        }
    };
    ordered(("ci_low", s.ci_low), ("mean", s.mean))?;
    ordered(("mean", s.mean), ("ci_high", s.ci_high))?;
    ordered(("min", s.min), ("median", s.median))?;
    ordered(("median", s.median), ("max", s.max))?;
    ordered(("min", s.min), ("mean", s.mean))?;
    ordered(("mean", s.mean), ("max", s.max))?;
    if s.stddev < 0.0 {
        return Err(format!(
            "summary.stddev is {}; allowed is 0 or more",
            s.stddev
        ));
    }
    if let Some(outside) = samples_used
        .iter()
        .find(|&&v| !(at_most(s.min, v) && at_most(v, s.max)))
    {
        return Err(format!(
            "a used sample, {outside}, is outside summary.min {} to summary.max {}; allowed are a min and max of the used samples",
            s.min, s.max
        ));
    }
    Ok(())
}

/// A metric's values against what sledge can measure: every sample and
/// the mean, median, min and max 0 or more (no unit's values are
/// negative: `results/unit.rs` says why) and of a magnitude
/// [`magnitude::is_metric_value`] allows; the standard deviation and
/// the interval's bounds no larger. The interval's low end may be below
/// 0 (a mean near 0 with a wide interval), and a standard deviation of
/// equal samples may be a rounding error's few 1e-17, so only their
/// largest magnitude is checked.
fn check_metric_range(metric: &MetricRecord) -> Result<(), String> {
    let s = &metric.summary;
    let values = metric
        .samples
        .iter()
        .enumerate()
        .map(|(i, &v)| (format!("samples[{i}]"), v))
        .chain(
            [
                ("mean", s.mean),
                ("median", s.median),
                ("min", s.min),
                ("max", s.max),
            ]
            .map(|(field, v)| (format!("summary.{field}"), v)),
        );
    for (field, value) in values {
        if value < 0.0 {
            return Err(format!(
                "{field} is {value}; allowed is 0 or more ({} is {}, never negative)",
                metric.unit,
                metric.unit.measures()
            ));
        }
        if !magnitude::is_metric_value(value) {
            return Err(format!(
                "{field} is {value:e}; allowed is {}",
                magnitude::METRIC_ALLOWED
            ));
        }
    }
    for (field, value) in [
        ("stddev", s.stddev),
        ("ci_low", s.ci_low),
        ("ci_high", s.ci_high),
    ] {
        if value.abs() > magnitude::MAX_METRIC_VALUE {
            return Err(format!(
                "summary.{field} is {value:e}; allowed is a magnitude up to 1e15 (what sledge measures is far inside that)"
            ));
        }
    }
    Ok(())
}

/// `a ≤ b`, give or take the rounding of a mean: the mean of round means
/// of equal samples can land an ulp or so beyond them.
fn at_most(a: f64, b: f64) -> bool {
    let slack = 1e-9 * a.abs().max(b.abs());
    a <= b + slack
}

/// A number as a message shows it; a non-finite one came from `null` in
/// the document (JSON has no NaN).
fn shown(value: f64) -> String {
    if value.is_nan() {
        "null (not a number)".to_string()
    } else {
        value.to_string()
    }
}

/// The first number in `value` whose magnitude
/// [`magnitude::is_plausible`] refuses, with its path under `path`
/// (`metrics[0].summary.mean`), as the reason to refuse it.
pub fn check_magnitudes(value: &Value, path: &str) -> Result<(), String> {
    match value {
        Value::Number(n) => match n.as_f64() {
            Some(x) if magnitude::is_plausible(x) => Ok(()),
            _ => Err(format!("{path} is {n}; allowed is {}", magnitude::ALLOWED)),
        },
        Value::Array(items) => items
            .iter()
            .enumerate()
            .try_for_each(|(i, item)| check_magnitudes(item, &format!("{path}[{i}]"))),
        Value::Object(map) => map.iter().try_for_each(|(key, item)| {
            let path = if path.is_empty() {
                key.clone()
            } else {
                format!("{path}.{key}")
            };
            check_magnitudes(item, &path)
        }),
        Value::Null | Value::Bool(_) | Value::String(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::demo_run;

    /// The first case of a demo run (cpu.primes threads=1, three trials),
    /// changed by `edit`, checked.
    fn checked(edit: impl FnOnce(&mut CaseRecord)) -> Result<(), String> {
        let mut case = demo_run(1, "a", 1.0).cases.remove(0);
        edit(&mut case);
        check_case(&case)
    }

    #[test]
    fn a_run_as_the_engine_stores_it_passes() {
        let run = demo_run(1, "a", 1.0);
        check_run(&run).unwrap();
        for case in &run.cases {
            check_case(case).unwrap();
        }
        // Equal samples whose mean rounds an ulp beyond them pass too.
        let mut case = run.cases[0].clone();
        let s = &mut case.metrics[0].summary;
        (s.min, s.max, s.median) = (0.1, 0.1, 0.1);
        (s.mean, s.ci_low, s.ci_high) = ((0.1 + 0.1 + 0.1) / 3.0, 0.1, 0.1 + 1e-17);
        case.metrics[0].samples = vec![0.1; 3];
        check_case(&case).unwrap();
    }

    #[test]
    fn inconsistent_summaries_are_refused_with_the_field_and_what_is_allowed() {
        let e = checked(|c| c.metrics[0].samples = vec![800.0; 1000]).unwrap_err();
        assert_eq!(
            e,
            "metric events_per_sec: it has 1000 samples for 3 trials; allowed is one sample per trial"
        );
        let e = checked(|c| {
            let s = &mut c.metrics[0].summary;
            std::mem::swap(&mut s.ci_low, &mut s.ci_high);
        })
        .unwrap_err();
        assert!(
            e.starts_with("metric events_per_sec: summary.ci_low ")
                && e.ends_with("allowed is ci_low ≤ mean"),
            "{e}"
        );
        let e = checked(|c| c.metrics[0].summary.mean = f64::NAN).unwrap_err();
        assert_eq!(
            e,
            "metric events_per_sec: summary.mean is null (not a number); allowed is a finite number"
        );
        let e = checked(|c| c.metrics[0].samples[2] = f64::NAN).unwrap_err();
        assert!(e.contains("samples[2] is null (not a number)"), "{e}");
        let e = checked(|c| c.metrics[0].summary.n = 4).unwrap_err();
        assert!(
            e.contains("summary.n is 4 but 3 trials are used (not replaced)"),
            "{e}"
        );
        let e = checked(|c| c.metrics[0].summary.max = 1.0).unwrap_err();
        assert!(e.contains("allowed is median ≤ max"), "{e}");
        let e = checked(|c| c.metrics[0].summary.stddev = -1.0).unwrap_err();
        assert!(
            e.contains("summary.stddev is -1; allowed is 0 or more"),
            "{e}"
        );
        let e = checked(|c| c.metrics[0].samples[0] = 1e6).unwrap_err();
        assert!(e.contains("a used sample, 1000000, is outside"), "{e}");
        let e = checked(|c| c.trials[1].seconds = -0.5).unwrap_err();
        assert!(e.starts_with("trials[1].seconds is -0.5"), "{e}");
    }

    #[test]
    fn negative_and_absurd_values_are_refused_with_the_unit_and_what_is_allowed() {
        // The hostile document: every sample and the summary negated.
        let e = checked(|c| {
            let m = &mut c.metrics[0];
            for v in &mut m.samples {
                *v = -*v;
            }
            let s = &mut m.summary;
            (s.mean, s.median, s.ci_low, s.ci_high) = (-s.mean, -s.median, -s.ci_high, -s.ci_low);
            (s.min, s.max) = (-s.max, -s.min);
        })
        .unwrap_err();
        assert!(
            e.starts_with("metric events_per_sec: samples[0] is -")
                && e.ends_with("; allowed is 0 or more (events/s is a rate, never negative)"),
            "{e}"
        );
        // A value at 1e290 and one at 1e-290, everywhere at once.
        for value in [1e290, 1e-290] {
            let e = checked(|c| {
                let m = &mut c.metrics[0];
                m.samples = vec![value; 3];
                let s = &mut m.summary;
                (
                    s.mean, s.median, s.min, s.max, s.ci_low, s.ci_high, s.stddev,
                ) = (value, value, value, value, value, value, 0.0);
            })
            .unwrap_err();
            assert_eq!(
                e,
                format!(
                    "metric events_per_sec: samples[0] is {value:e}; allowed is 0 or a magnitude between 1e-12 and 1e15 (what sledge measures is far inside that)"
                )
            );
        }
        let e = checked(|c| c.metrics[0].summary.ci_high = 2e15).unwrap_err();
        assert!(
            e.contains("summary.ci_high is 2e15; allowed is a magnitude up to 1e15"),
            "{e}"
        );
        // A low end of the interval below 0, a mean of 0 and a rounding
        // error's standard deviation are what real runs hold.
        checked(|c| c.metrics[0].summary.ci_low = -3.0).unwrap();
        checked(|c| {
            let m = &mut c.metrics[0];
            m.samples = vec![0.0; 3];
            let s = &mut m.summary;
            (
                s.mean, s.median, s.min, s.max, s.ci_low, s.ci_high, s.stddev,
            ) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1e-17);
        })
        .unwrap();
    }

    #[test]
    fn a_replaced_trial_is_left_out_of_n_but_keeps_its_sample() {
        checked(|c| {
            c.trials[0].replaced = true;
            // Far away, but replaced: not in the summary.
            c.metrics[0].samples[0] = 1e6;
            c.metrics[0].summary.n = 2;
        })
        .unwrap();
    }

    #[test]
    fn times_are_rfc_3339() {
        let mut run = demo_run(1, "a", 1.0);
        run.started = "yesterday".into();
        assert_eq!(
            check_run(&run).unwrap_err(),
            "started `yesterday` is not an RFC 3339 time; allowed is a time such as 2026-03-01T10:00:00Z"
        );
        run.started = "2026-03-01T10:00:00+01:00".into();
        run.finished = Some("soon".into());
        assert!(check_run(&run).unwrap_err().starts_with("finished `soon`"));
    }

    #[test]
    fn absurd_magnitudes_are_found_with_their_path() {
        let value = serde_json::json!({
            "metrics": [{"summary": {"mean": 1e308, "n": 3}, "samples": [1.0, 0.0]}]
        });
        let e = check_magnitudes(&value, "").unwrap_err();
        assert!(
            e.starts_with("metrics[0].summary.mean is 1e+308; allowed is a finite number"),
            "{e}"
        );
        let tiny = serde_json::json!({"trials": [{"seconds": 0.5}, {"seconds": 1e-307}]});
        let e = check_magnitudes(&tiny, "").unwrap_err();
        assert!(e.starts_with("trials[1].seconds is 1e-307"), "{e}");
        check_magnitudes(&serde_json::json!({"a": [0, -2.5, 1e12, null, "x"]}), "").unwrap();
    }
}

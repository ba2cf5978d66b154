//! Turns a case's rounds into its record: per metric the two-level summary,
//! the merged latency histogram, the `throttled` flags that need all of
//! the case's trials (see `clock_drop.rs`), and a warning about disturbed
//! trials.

use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};

use super::clock_drop::flag_clock_drops;
use super::executor::TrialResult;
use crate::results::{CaseRecord, MetricRecord, TrialRecord};
use crate::stats;

/// Rebuilds `record.trials`, `record.metrics` and the histogram from every
/// trial so far (`trials[i]` belongs to round `rounds[i]`), flags trials
/// whose clock fell below the case's best, and refreshes the disturbance
/// warning. Replaced trials stay in the record and out of the statistics;
/// a trial flagged here stays in the statistics, flagged, as any trial the
/// monitor flagged but could not replace.
pub(crate) fn rebuild(record: &mut CaseRecord, trials: &[(u32, TrialResult)]) {
    record.trials = trials
        .iter()
        .enumerate()
        .map(|(index, (round, t))| TrialRecord {
            index: index as u32,
            round: *round,
            replaced: t.replaced,
            seconds: t.seconds,
            health: t.health.clone(),
        })
        .collect();
    flag_clock_drops(&mut record.trials);
    record.metrics = summarize_metrics(&record.trials, trials);
    record.latency_histogram = merge_histograms(trials);
    record
        .warnings
        .retain(|w| !w.ends_with(DISTURBANCE_WARNING_TAIL));
    if let Some(warning) = disturbance_warning(record) {
        record.warnings.push(warning);
    }
}

/// Every metric the first trial reported and every trial has, with values
/// aligned to the trial list.
fn summarize_metrics(records: &[TrialRecord], trials: &[(u32, TrialResult)]) -> Vec<MetricRecord> {
    let Some((_, first)) = trials.first() else {
        return Vec::new();
    };
    first
        .metrics
        .iter()
        .filter_map(|template| {
            let samples: Vec<f64> = trials
                .iter()
                .map(|(_, t)| {
                    t.metrics
                        .iter()
                        .find(|m| m.name == template.name)
                        .map(|m| m.value)
                })
                .collect::<Option<Vec<f64>>>()?;
            let rounds = crate::results::group_by_round(records, &samples);
            let (summary, levels) = stats::summarize_rounds(&rounds)?;
            Some(MetricRecord {
                name: template.name.clone(),
                unit: template.unit.clone(),
                direction: template.direction,
                summary,
                levels: Some(levels),
                outliers: stats::tukey_outliers(&samples),
                samples,
            })
        })
        .collect()
}

fn merge_histograms(trials: &[(u32, TrialResult)]) -> Option<Vec<u8>> {
    let mut merged: Option<Histogram<u64>> = None;
    for histogram in trials
        .iter()
        .filter(|(_, t)| !t.replaced)
        .filter_map(|(_, t)| t.histogram.as_ref())
    {
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

/// How every disturbance warning ends, so that a rebuild replaces it.
const DISTURBANCE_WARNING_TAIL: &str = "treat this case's numbers with care";

fn disturbance_warning(record: &CaseRecord) -> Option<String> {
    let kinds = record.disturbances();
    if kinds.is_empty() {
        return None;
    }
    let disturbed = record
        .trials
        .iter()
        .filter(|t| !t.replaced && !t.health.flags.is_empty())
        .count();
    let names: Vec<&str> = kinds.iter().map(|(kind, _)| *kind).collect();
    Some(format!(
        "{disturbed} of {} trials disturbed ({}): {DISTURBANCE_WARNING_TAIL}",
        record.used_trials(),
        names.join(", ")
    ))
}

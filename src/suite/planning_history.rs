//! What the store knows about earlier runs of a case on the same host:
//! variance components and costs for planning a run. (The run-to-run noise
//! that judges a comparison comes from the same history: see
//! `analysis::noise_history`.)

use std::collections::HashMap;

use crate::engine::{History, PlannedCase, VarianceHint};
use crate::store::{CaseHistoryEntry, Store};

/// How many of the latest earlier runs a plan learns from: enough to
/// average the variance components, few enough to follow a host that
/// changed.
const PLANNING_RUNS: usize = 10;

/// Planning hints for the cases of one plan, read from the store before
/// the run starts (the engine must not wait on the store between rounds).
pub struct StoreHistory {
    hints: HashMap<String, VarianceHint>,
}

impl StoreHistory {
    /// Reads the history of every case of `plan` on the host `host_key`.
    /// A store error leaves the case without a hint: planning is an
    /// optimisation, never a reason to refuse a run.
    pub fn load(store: &Store, host_key: &str, plan: &[PlannedCase]) -> Self {
        let mut hints = HashMap::new();
        for planned in plan {
            let entries = store
                .case_history(
                    host_key,
                    planned.workload.id(),
                    planned.workload.version(),
                    &planned.params.to_strings(),
                    planned.workload.later_params(),
                    &[],
                )
                .unwrap_or_default();
            if let Some(hint) = hint_from(&entries) {
                hints.insert(planned.label(), hint);
            }
        }
        StoreHistory { hints }
    }
}

impl History for StoreHistory {
    fn hint(&self, case: &PlannedCase) -> Option<VarianceHint> {
        self.hints.get(&case.label()).cloned()
    }
}

/// Pools the latest runs' variance components of the primary metric
/// (relative to each run's mean, so runs at different levels pool) and
/// their costs. `None` until some run measured the between-round variance.
fn hint_from(entries: &[CaseHistoryEntry]) -> Option<VarianceHint> {
    // Flagged results measured the host while something else ran on it.
    let clean: Vec<&CaseHistoryEntry> = entries.iter().filter(|e| !e.disturbed).collect();
    let recent = &clean[clean.len().saturating_sub(PLANNING_RUNS)..];
    let (mut between, mut within, mut n_between, mut n_within) = (0.0, 0.0, 0usize, 0usize);
    let (mut trial_seconds, mut overhead, mut n_cost) = (0.0, 0.0, 0usize);
    for entry in recent {
        let Some(primary) = entry.metrics.first() else {
            continue;
        };
        let (Some(levels), mean) = (&primary.levels, primary.mean) else {
            continue;
        };
        if !(mean.is_finite() && mean != 0.0) {
            continue;
        }
        if let Some(sd) = levels.between_round_sd {
            between += (sd / mean).powi(2);
            n_between += 1;
        }
        if let Some(sd) = levels.within_round_sd {
            within += (sd / mean).powi(2);
            n_within += 1;
        }
        let rounds = entry.rounds.len();
        if rounds > 0 && entry.mean_trial_seconds.is_finite() {
            let round_seconds: f64 =
                entry.rounds.iter().map(|r| r.seconds).sum::<f64>() / rounds as f64;
            let trials_per_round = entry.used_trials as f64 / rounds as f64;
            trial_seconds += entry.mean_trial_seconds;
            overhead += (round_seconds - trials_per_round * entry.mean_trial_seconds).max(0.0);
            n_cost += 1;
        }
    }
    if n_between == 0 || n_cost == 0 {
        return None;
    }
    Some(VarianceHint {
        between_round_sd: (between / n_between as f64).sqrt(),
        // Runs of one trial a round (the quick profile's) cannot measure
        // the trials' scatter; their round means hold all of it.
        within_round_sd: if n_within == 0 {
            0.0
        } else {
            (within / n_within as f64).sqrt()
        },
        trial_seconds: trial_seconds / n_cost as f64,
        round_overhead_seconds: overhead / n_cost as f64,
        run_sd: run_level_sd(recent),
        runs: recent.len(),
    })
}

/// How much the runs' means differ beyond what their own rounds explain:
/// the run-to-run noise of the primary metric (`stats::run_noise`, on the
/// log scale, in the order the runs were made) less the mean squared
/// standard error of a run's mean from its rounds. `None` with too few
/// runs.
fn run_level_sd(entries: &[&CaseHistoryEntry]) -> Option<f64> {
    let mut means = Vec::new();
    let mut squared_errors = Vec::new();
    for entry in entries {
        let Some(primary) = entry.metrics.first() else {
            continue;
        };
        means.push(primary.mean.abs());
        let rounds = primary.levels.as_ref().map(|l| l.round_means.as_slice());
        if let Some(se) = rounds.and_then(relative_standard_error) {
            squared_errors.push(se * se);
        }
    }
    let noise = crate::stats::run_noise(&means)?;
    let within_run = if squared_errors.is_empty() {
        0.0
    } else {
        squared_errors.iter().sum::<f64>() / squared_errors.len() as f64
    };
    Some((noise.sd_log.powi(2) - within_run).max(0.0).sqrt())
}

/// The relative standard error of the mean of `round_means`.
fn relative_standard_error(round_means: &[f64]) -> Option<f64> {
    let n = round_means.len();
    if n < 2 {
        return None;
    }
    let mean = round_means.iter().sum::<f64>() / n as f64;
    if mean == 0.0 || !mean.is_finite() {
        return None;
    }
    let var = round_means.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    Some((var / n as f64).sqrt() / mean.abs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::RoundRecord;
    use crate::stats::{CiBasis, Levels};
    use crate::store::HistoryMetric;

    fn entry(mean: f64, between: Option<f64>, within: Option<f64>) -> CaseHistoryEntry {
        CaseHistoryEntry {
            run_id: 1,
            started: String::new(),
            metrics: vec![HistoryMetric {
                name: "m".into(),
                mean,
                levels: Some(Levels {
                    ci_basis: CiBasis::Rounds,
                    round_means: vec![],
                    between_round_sd: between,
                    within_round_sd: within,
                }),
            }],
            // Three rounds of 1.5 s with two trials of 0.5 s each: 0.5 s
            // of overhead per round.
            rounds: (0..3)
                .map(|round| RoundRecord {
                    round,
                    order: 0,
                    seconds: 1.5,
                })
                .collect(),
            mean_trial_seconds: 0.5,
            used_trials: 6,
            disturbed: false,
        }
    }

    #[test]
    fn flagged_results_do_not_steer_the_plan() {
        let clean = vec![entry(100.0, Some(2.0), Some(1.0))];
        let mut busy = entry(100.0, Some(40.0), Some(30.0));
        busy.disturbed = true;
        let with_busy = vec![clean[0].clone(), busy];
        assert_eq!(hint_from(&with_busy), hint_from(&clean));
        assert!(hint_from(&clean).is_some());
    }

    #[test]
    fn hints_pool_relative_components_and_costs() {
        // Relative between sds 2% and 4% pool to √((4 + 16)/2)% = 3.162%.
        let entries = vec![
            entry(100.0, Some(2.0), Some(1.0)),
            entry(200.0, Some(8.0), Some(2.0)),
        ];
        let hint = hint_from(&entries).unwrap();
        assert!((hint.between_round_sd - 0.031_623).abs() < 1e-5, "{hint:?}");
        assert!((hint.within_round_sd - 0.01).abs() < 1e-12);
        assert!((hint.trial_seconds - 0.5).abs() < 1e-12);
        assert!((hint.round_overhead_seconds - 0.5).abs() < 1e-12);
    }

    #[test]
    fn runs_of_one_trial_a_round_hint_with_their_rounds_alone() {
        let hint = hint_from(&[entry(100.0, Some(2.0), None)]).unwrap();
        assert!((hint.between_round_sd - 0.02).abs() < 1e-12);
        assert_eq!(hint.within_round_sd, 0.0);
        assert!(hint_from(&[entry(100.0, None, Some(1.0))]).is_none());
        assert!(hint_from(&[]).is_none());
    }
}

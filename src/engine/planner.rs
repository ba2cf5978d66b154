//! How a case spends its time: how many trials per round, from what
//! earlier runs of the same case on this host measured.
//!
//! The classic two-stage sampling result (Cochran, *Sampling Techniques*,
//! 10.6; applied to benchmarks by Kalibera and Jones, 2013): with a cost
//! `c_round` to start a round (a fresh process, prepare, warm-up, cleanup)
//! and `c_trial` per trial, and variance components `sigma_b^2` between
//! rounds and `sigma_e^2` within, the variance of the case's mean for a
//! given time is smallest with
//!
//! `K = sqrt( (c_round / c_trial) · (sigma_e^2 / sigma_b^2) )`
//!
//! trials per round. When rounds differ a lot (the usual case here: round
//! means scatter 2-5 times more than trials predict), K is 1 or 2 and the
//! time goes into more rounds; when they agree, K grows and fewer costly
//! round starts are paid for.

use super::workload::PlannedCase;

/// What earlier runs of a case on this host say about its variance and
/// cost, for its primary metric.
#[derive(Debug, Clone, PartialEq)]
pub struct VarianceHint {
    /// Standard deviation between rounds (beyond the trial noise).
    pub between_round_sd: f64,
    /// Standard deviation of trials within a round.
    pub within_round_sd: f64,
    /// Mean wall time of one counted trial, seconds.
    pub trial_seconds: f64,
    /// Mean wall time of a round beyond its counted trials (process start,
    /// prepare, warm-up, cleanup), seconds.
    pub round_overhead_seconds: f64,
    /// How much runs differ beyond their rounds' own scatter (relative
    /// standard deviation of a run's mean): what no number of rounds in
    /// one run averages away; `None` without enough earlier runs.
    pub run_sd: Option<f64>,
    /// The earlier runs the hint rests on.
    pub runs: usize,
}

impl VarianceHint {
    /// Relative standard deviation of a round's mean with `trials` counted
    /// trials per round: `√(sigma_b² + sigma_e² / K)`.
    pub fn round_sd(&self, trials: u32) -> f64 {
        let k = f64::from(trials.max(1));
        (self.between_round_sd.powi(2) + self.within_round_sd.powi(2) / k).sqrt()
    }
}

/// Where the engine looks up earlier runs of a case (the store, through
/// the suite); the engine itself knows nothing about storage.
pub trait History: Sync {
    /// What earlier runs of `case` on this host measured, if any.
    fn hint(&self, case: &PlannedCase) -> Option<VarianceHint>;
}

/// No history: every case gets the default plan.
pub struct NoHistory;

impl History for NoHistory {
    fn hint(&self, _case: &PlannedCase) -> Option<VarianceHint> {
        None
    }
}

/// Trials per round with no history: two, so that the first run measures
/// the within-round variance too (one trial per round cannot).
pub const DEFAULT_TRIALS_PER_ROUND: u32 = 2;

/// Trials per round for a case, within `[min, max]`.
pub fn trials_per_round(hint: Option<&VarianceHint>, min: u32, max: u32) -> u32 {
    let chosen = match hint {
        None => DEFAULT_TRIALS_PER_ROUND,
        Some(h) => {
            let between = h.between_round_sd * h.between_round_sd;
            let within = h.within_round_sd * h.within_round_sd;
            let cost_ratio = (h.round_overhead_seconds / h.trial_seconds.max(1e-6)).max(0.0);
            if between <= 0.0 {
                // All the variance is within rounds: round starts buy
                // nothing, trials are the cheaper way to more precision.
                max
            } else {
                let k = (cost_ratio * within / between).sqrt();
                if k.is_finite() {
                    k.round().max(1.0) as u32
                } else {
                    max
                }
            }
        }
    };
    chosen.clamp(min.max(1), max.max(min.max(1)))
}

/// A small deterministic generator for shuffling the case order between
/// rounds (SplitMix64): the order must vary between rounds so that a drift
/// in the host does not line up with one case. (Each case's position in
/// each round is stored with the run, so the order is on record.)
#[derive(Debug, Clone)]
pub struct Shuffler(u64);

impl Shuffler {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> Self {
        Shuffler(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Shuffles `items` in place (Fisher–Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = (self.next() % (i as u64 + 1)) as usize;
            items.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hint(between: f64, within: f64, trial: f64, overhead: f64) -> VarianceHint {
        VarianceHint {
            between_round_sd: between,
            within_round_sd: within,
            trial_seconds: trial,
            round_overhead_seconds: overhead,
            run_sd: None,
            runs: 1,
        }
    }

    #[test]
    fn no_history_gives_the_default_within_bounds() {
        assert_eq!(trials_per_round(None, 1, 5), 2);
        assert_eq!(trials_per_round(None, 3, 5), 3);
        assert_eq!(trials_per_round(None, 1, 1), 1);
    }

    #[test]
    fn rounds_that_differ_get_one_trial_each() {
        // sigma_b 8%, sigma_e 4%, a round start costs one trial:
        // K = √(1 · 16/64) = 0.5 → 1.
        assert_eq!(trials_per_round(Some(&hint(8.0, 4.0, 0.5, 0.5)), 1, 5), 1);
    }

    #[test]
    fn costly_rounds_with_quiet_rounds_get_more_trials() {
        // sigma_b 1, sigma_e 3, a round costs 4 trials: K = √(4 · 9) = 6 → 5.
        assert_eq!(trials_per_round(Some(&hint(1.0, 3.0, 0.2, 0.8)), 1, 5), 5);
        // K = √(2 · 4) = 2.83 → 3.
        assert_eq!(trials_per_round(Some(&hint(1.0, 2.0, 0.5, 1.0)), 1, 5), 3);
        // No variance between rounds at all: as many as allowed.
        assert_eq!(trials_per_round(Some(&hint(0.0, 2.0, 0.5, 1.0)), 1, 4), 4);
    }

    #[test]
    fn the_shuffle_is_a_permutation_and_depends_on_the_seed() {
        let mut a: Vec<u32> = (0..20).collect();
        Shuffler::new(1).shuffle(&mut a);
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..20).collect::<Vec<_>>());
        let mut b: Vec<u32> = (0..20).collect();
        Shuffler::new(2).shuffle(&mut b);
        assert_ne!(a, b);
        let mut c: Vec<u32> = (0..20).collect();
        Shuffler::new(1).shuffle(&mut c);
        assert_eq!(a, c);
    }
}

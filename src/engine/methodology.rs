//! How much measuring a case gets. Each case is measured in several
//! **rounds** (a fresh process, or fresh files, each; the cases' order
//! shuffled from round to round) of a few **trials** each, because on
//! shared and virtual machines most of the variance lives between
//! processes and moments, not between the trials of one process (see
//! `stats::hierarchical`).
//!
//! Defaults: one warm-up trial per round; at least 3 rounds, more while
//! the 95% CI of the mean of the round means is wider than 2% of it, at
//! most 10 or the case's time budget; trials per round chosen from the
//! variance components earlier runs measured (2 without history, 1 to 5).
//! With a single round (`--rounds 1`) the older rule applies: 3 to 10
//! trials until the CI of the trials is tight. (The Phoronix Test Suite
//! uses a similar adaptive rule over whole runs: 3, more while the relative
//! standard deviation is high.)

use std::time::Duration;

use anyhow::bail;

/// The repetition rule for every case of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Methodology {
    /// Trials run first in every round and not counted.
    pub warmup_trials: u32,
    /// Rounds every case gets (unless cancelled or failed).
    pub min_rounds: u32,
    /// Rounds never exceeded; between the two, a case gets more rounds
    /// while its CI is wider than `ci_target` and the budgets allow.
    pub max_rounds: u32,
    /// Counted trials per round at least.
    pub min_trials: u32,
    /// Counted trials per round at most. With several rounds the number in
    /// between is planned from earlier runs' variance components; with one
    /// round, trials go on until the CI is tight.
    pub max_trials: u32,
    /// A case is measured enough once its primary metric's 95% CI
    /// half-width is at most this share of its mean.
    pub ci_target: f64,
    /// No new round (past `min_rounds`) or trial (past `min_trials`)
    /// starts once the case has used this much time.
    pub case_budget: Duration,
    /// No extra round of any case (past `min_rounds`) starts once the run
    /// has used this much time; `None` for no run-wide limit.
    pub run_budget: Option<Duration>,
}

/// The most rounds a case may be given, by `--rounds` and `--max-rounds`
/// or a battery's `rounds` and `max_rounds`: ten times the default's most,
/// each a fresh process.
pub const MAX_ROUNDS: u32 = 100;

impl Default for Methodology {
    fn default() -> Self {
        Methodology {
            warmup_trials: 1,
            min_rounds: 3,
            max_rounds: 10,
            min_trials: 1,
            max_trials: 5,
            ci_target: 0.02,
            case_budget: Duration::from_secs(120),
            run_budget: None,
        }
    }
}

/// Trials per round with a single round, as before rounds existed.
pub const SINGLE_ROUND_MIN_TRIALS: u32 = 3;
/// See [`SINGLE_ROUND_MIN_TRIALS`].
pub const SINGLE_ROUND_MAX_TRIALS: u32 = 10;

impl Methodology {
    /// Checks that the numbers make sense together.
    pub fn validate(&self) -> anyhow::Result<()> {
        if self.min_rounds == 0 {
            bail!("--rounds must be at least 1");
        }
        if self.max_rounds < self.min_rounds {
            bail!(
                "--max-rounds ({}) must be at least the minimum number of rounds ({})",
                self.max_rounds,
                self.min_rounds
            );
        }
        if self.min_trials == 0 {
            bail!("--min-trials must be at least 1");
        }
        if self.max_trials < self.min_trials {
            bail!(
                "--max-trials ({}) must be at least --min-trials ({})",
                self.max_trials,
                self.min_trials
            );
        }
        if !(self.ci_target > 0.0 && self.ci_target < 1.0) {
            bail!("--ci-target must be a share between 0 and 1 (for example 0.02 for 2%)");
        }
        Ok(())
    }

    /// Whether the run is in single-round mode (the trials-only rule).
    pub fn single_round(&self) -> bool {
        self.max_rounds == 1
    }
}

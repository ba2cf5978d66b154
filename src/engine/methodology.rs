//! How many trials a case gets. The defaults follow the design: one
//! warm-up, then at least 3 counted trials, more until the 95% CI
//! half-width is within 2% of the mean, at most 10, within a time budget.
//! (The Phoronix Test Suite uses a similar rule: 3 runs, more while the
//! relative standard deviation is high.)

use std::time::Duration;

use anyhow::bail;

/// The repetition rule for every case of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Methodology {
    /// Trials run first and not counted.
    pub warmup_trials: u32,
    /// Counted trials always run (unless cancelled or out of budget before
    /// the first one).
    pub min_trials: u32,
    /// Counted trials never exceeded.
    pub max_trials: u32,
    /// Stop once the primary metric's 95% CI half-width is at most this
    /// share of its mean.
    pub ci_target: f64,
    /// No new counted trial starts once the case has used this much time
    /// and the minimum is reached.
    pub case_budget: Duration,
}

impl Default for Methodology {
    fn default() -> Self {
        Methodology {
            warmup_trials: 1,
            min_trials: 3,
            max_trials: 10,
            ci_target: 0.02,
            case_budget: Duration::from_secs(120),
        }
    }
}

impl Methodology {
    /// Checks that the numbers make sense together.
    pub fn validate(&self) -> anyhow::Result<()> {
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
}

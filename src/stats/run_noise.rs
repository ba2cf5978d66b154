//! How much a case moves from one run to the next on one host: the noise
//! floor a comparison of two runs must clear.
//!
//! Rounds capture the variance between processes and moments inside one
//! run, but a run is also a unit of its own: the neighbours' load over
//! those minutes, the host's turbo budget, a kernel's page cache state. Two
//! runs of the same case on the same host, back to back, are what an A/A
//! comparison sees; their spread is only measurable across runs. So every
//! earlier run of the same case on the same host is evidence, and this
//! module turns those earlier results into one number: the standard
//! deviation of a run's mean, on the log scale (so 0.03 means "runs
//! scatter by about 3%").
//!
//! **Estimator.** The mean square of successive differences (von Neumann,
//! 1941), `sigma^2 = Σ (x[i+1] - x[i])² / (2 (n - 1))` over the run means in
//! time order, on the log scale. *Why successive differences and not the
//! plain variance:* a store holds runs made under different settings (a
//! kernel upgrade, a tuning change) one after another; the plain variance
//! counts such a level shift as noise for the whole history, while
//! successive differences see it once. *Why drop large differences:* even
//! once is too much with a short history, so a difference beyond
//! [`SHIFT_FENCE`] robust standard deviations (the median of the absolute
//! differences, scaled to a normal standard deviation) is taken as a level
//! shift and left out, as a robust scale estimate would. With identically
//! distributed runs this drops about one difference in 3,000.
//!
//! **Degrees of freedom.** For `m` successive differences of independent
//! normal values the estimate's variance is about `sigma^4 (3m - 1) / m²`,
//! which is that of a chi-square estimate with `df = 2 m² / (3m - 1)`
//! degrees of freedom (2 differences: 1.6; 9 differences: 6.2). The
//! comparison uses Student's t with these degrees of freedom, so a short
//! history gives a wide band rather than false confidence.

use serde::{Deserialize, Serialize};

/// Successive differences further than this many robust standard
/// deviations from 0 are taken as level shifts (a changed setting between
/// two runs), not noise. With a median of few differences the robust scale
/// is itself noisy, so the fence sits wider than the usual 3: in
/// simulations of 4 to 20 identically distributed runs, 4 drops 0.2-1% of
/// the differences and biases the variance down by 1-3% (3 would drop
/// 1-2% and bias it by 5-6%).
pub const SHIFT_FENCE: f64 = 4.0;

/// Fewest earlier runs needed to estimate the run-to-run noise: two
/// successive differences.
pub const MIN_HISTORY_RUNS: usize = 3;

/// The most run-to-run noise a history is taken at: a standard deviation
/// of `ln(1.25)` on the log scale, runs scattering by 25%. A history that
/// claims more is **suspect**: it is used at this figure, and the
/// comparison says so.
///
/// *Why a cap:* the band a comparison must clear grows with the history's
/// noise without bound, so a history that mixes things that are not one
/// case on one host (runs that only share its name, a setting changed
/// back and forth more often than the level-shift fence can see) could
/// widen any interval to nothing and hide any regression: five such runs
/// turned a 30% loss with a round CI of [0.664, 0.738] into "no
/// difference" with a CI of [0.020, 24.6]. *Why 25%:* it is above the
/// noise of any honest history measured here. The worst case of two quick
/// runs back to back on a shared 2-vCPU guest differed by 1.8x, the
/// largest of 71 cases' differences; as about 2.5 standard deviations of
/// a difference of two runs, that is a run-to-run standard deviation of
/// `ln 1.8 / (2.5 · √2) ≈ 0.17`, below the cap, while the quietest cases
/// move 2-4%. A case that truly moves more than 25% between runs has no
/// level that a comparison of two runs could judge.
pub const MAX_RUN_NOISE_SD_LOG: f64 = 0.223_143_551_314_209_76; // ln(1.25)

/// `Φ⁻¹(0.75)`: the median of `|Z|` for a standard normal `Z`; the median of
/// `|x[i+1] - x[i]|` is `√2 · 0.6745 · sigma`.
const NORMAL_MEDIAN_ABS: f64 = 0.674_489_750_196_081_7;

/// The run-to-run noise of one metric of one case on one host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunNoise {
    /// Earlier runs the estimate rests on.
    pub runs: usize,
    /// Standard deviation of a run's mean, on the natural-log scale
    /// (0.03: runs scatter by about 3%).
    pub sd_log: f64,
    /// Degrees of freedom of the estimate (see the module documentation).
    pub df: f64,
    /// Successive differences left out as level shifts.
    pub shifts: usize,
}

impl RunNoise {
    /// Whether the history claims more noise than
    /// [`MAX_RUN_NOISE_SD_LOG`], which no honest history of one case on
    /// one host shows.
    pub fn is_suspect(&self) -> bool {
        self.sd_log > MAX_RUN_NOISE_SD_LOG
    }

    /// The standard deviation a comparison uses: the estimate, capped at
    /// [`MAX_RUN_NOISE_SD_LOG`].
    pub fn capped_sd_log(&self) -> f64 {
        self.sd_log.min(MAX_RUN_NOISE_SD_LOG)
    }
}

/// Estimates the run-to-run noise from the means of earlier runs of the
/// same case on the same host, **in the order the runs were made**.
/// Returns `None` with fewer than [`MIN_HISTORY_RUNS`] runs, or when a mean
/// is not a positive finite number (the log scale needs positive values).
pub fn run_noise(means_in_time_order: &[f64]) -> Option<RunNoise> {
    if means_in_time_order.len() < MIN_HISTORY_RUNS
        || means_in_time_order
            .iter()
            .any(|m| !m.is_finite() || *m <= 0.0)
    {
        return None;
    }
    let logs: Vec<f64> = means_in_time_order.iter().map(|m| m.ln()).collect();
    let diffs: Vec<f64> = logs.windows(2).map(|w| w[1] - w[0]).collect();

    let mut abs: Vec<f64> = diffs.iter().map(|d| d.abs()).collect();
    abs.sort_by(f64::total_cmp);
    let median_abs = if abs.len() % 2 == 1 {
        abs[abs.len() / 2]
    } else {
        (abs[abs.len() / 2 - 1] + abs[abs.len() / 2]) / 2.0
    };
    let robust_sd = median_abs / (std::f64::consts::SQRT_2 * NORMAL_MEDIAN_ABS);
    let fence = SHIFT_FENCE * std::f64::consts::SQRT_2 * robust_sd;
    let kept: Vec<f64> = diffs
        .iter()
        .copied()
        .filter(|d| robust_sd == 0.0 || d.abs() <= fence)
        .collect();
    // With a zero robust scale (most differences exactly 0) nothing is
    // fenced: the few non-zero differences are then the only noise there is.
    let m = kept.len() as f64;
    let sd_log = (kept.iter().map(|d| d * d).sum::<f64>() / (2.0 * m)).sqrt();
    Some(RunNoise {
        runs: means_in_time_order.len(),
        sd_log,
        df: 2.0 * m * m / (3.0 * m - 1.0),
        shifts: diffs.len() - kept.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::hierarchical::TestNormal;

    #[test]
    fn worked_example() {
        // Logs 0, 0.02, 0.00, 0.03 (means e^x): differences 0.02, -0.02,
        // 0.03, none fenced (median |d| 0.02, fence 4·√2·0.02/0.9539 = 0.119).
        // sigma² = (4 + 4 + 9)e-4 / 6 = 2.8333e-4, sd 0.016833;
        // df = 2·9 / 8 = 2.25.
        let means: Vec<f64> = [0.0, 0.02, 0.0, 0.03]
            .iter()
            .map(|x: &f64| x.exp())
            .collect();
        let noise = run_noise(&means).unwrap();
        assert_eq!(noise.runs, 4);
        assert!((noise.sd_log - 0.016_833).abs() < 1e-5, "{}", noise.sd_log);
        assert!((noise.df - 2.25).abs() < 1e-12);
        assert_eq!(noise.shifts, 0);
    }

    #[test]
    fn a_level_shift_is_not_counted_as_noise() {
        // Five runs at about 100, then five at about 89 (a setting changed):
        // the jump between them is left out, and the noise is that of the
        // runs within each block (about 1%), not 5%.
        let before = [100.0, 101.0, 99.5, 100.5, 99.0];
        let after = [89.0, 89.8, 88.6, 89.3, 88.9];
        let means: Vec<f64> = before.iter().chain(&after).copied().collect();
        let noise = run_noise(&means).unwrap();
        assert_eq!(noise.shifts, 1);
        assert!(noise.sd_log < 0.01, "{}", noise.sd_log);
    }

    #[test]
    fn too_little_history_or_bad_values_give_nothing() {
        assert!(run_noise(&[]).is_none());
        assert!(run_noise(&[1.0, 1.1]).is_none());
        assert!(run_noise(&[1.0, 0.0, 1.1]).is_none());
        assert!(run_noise(&[1.0, -1.0, 1.1]).is_none());
        assert!(run_noise(&[1.0, f64::NAN, 1.1]).is_none());
    }

    #[test]
    fn a_history_noisier_than_the_cap_is_suspect_and_capped() {
        assert!((MAX_RUN_NOISE_SD_LOG - 1.25f64.ln()).abs() < 1e-15);
        // Runs alternating between half and twice a level: no honest
        // history of one case on one host.
        let wild = run_noise(&[1.0, 0.5, 2.0, 0.5, 2.0]).unwrap();
        assert!(wild.sd_log > 0.8, "{wild:?}");
        assert!(wild.is_suspect());
        assert_eq!(wild.capped_sd_log(), MAX_RUN_NOISE_SD_LOG);
        let calm = run_noise(&[100.0, 103.0, 98.0, 101.0]).unwrap();
        assert!(!calm.is_suspect());
        assert_eq!(calm.capped_sd_log(), calm.sd_log);
    }

    #[test]
    fn identical_runs_have_no_noise() {
        let noise = run_noise(&[5.0, 5.0, 5.0, 5.0]).unwrap();
        assert_eq!(noise.sd_log, 0.0);
        assert_eq!(noise.shifts, 0);
    }

    #[test]
    fn the_estimate_is_unbiased_for_identically_distributed_runs() {
        // 2,000 histories of 10 runs with a 3% log-scale spread: the mean
        // of the variance estimates is within 4% of 0.0009 (the fence drops
        // a sliver of the tails, which biases it down by about 2%).
        let mut normal = TestNormal::new(11);
        let mut sum = 0.0;
        for _ in 0..2000 {
            let means: Vec<f64> = (0..10).map(|_| (0.03 * normal.next()).exp()).collect();
            let noise = run_noise(&means).unwrap();
            sum += noise.sd_log * noise.sd_log;
        }
        let mean_var = sum / 2000.0;
        assert!((mean_var - 0.0009).abs() < 0.04 * 0.0009, "{mean_var}");
    }
}

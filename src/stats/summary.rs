//! Descriptive statistics of one benchmark's repeated measurements.
//!
//! Why these statistics:
//!
//! * **Mean** is what the comparison tests (Welch's t-test) are about, so it
//!   is the headline number.
//! * **Median** is reported next to it because it is robust: when mean and
//!   median disagree, a run was disturbed, and the reader should look at the
//!   outlier flags.
//! * **Sample standard deviation** (divisor `n - 1`, Bessel's correction),
//!   because the runs are a sample of what the machine could do, and the
//!   uncorrected estimate is biased low for the 3 to 10 runs we take.
//! * **95% confidence interval of the mean from Student's t**, not from the
//!   normal distribution: with so few runs the standard deviation is itself
//!   uncertain, and the t quantile accounts for that (see
//!   `student_t.rs`).
//! * **Min and max** so that a reader can see the full spread at a glance.
//!
//! The variance is computed with the two-pass algorithm (mean first, then
//! the sum of squared deviations), which avoids the catastrophic
//! cancellation of the one-pass `Σx² - n·mean²` formula when values are
//! large and close together (e.g. timings in nanoseconds).

use serde::{Deserialize, Serialize};

use super::student_t::t_quantile_95;

/// Summary of a set of samples: location, spread and a 95% confidence
/// interval for the mean.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of samples.
    pub n: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Median (mean of the two middle values when `n` is even).
    pub median: f64,
    /// Sample standard deviation (divisor `n - 1`); 0 when `n == 1`.
    pub stddev: f64,
    /// Lower end of the 95% confidence interval of the mean; equals `mean`
    /// when `n == 1`.
    pub ci_low: f64,
    /// Upper end of the 95% confidence interval of the mean; equals `mean`
    /// when `n == 1`.
    pub ci_high: f64,
    /// Smallest sample.
    pub min: f64,
    /// Largest sample.
    pub max: f64,
}

impl Summary {
    /// Half the width of the confidence interval, `(ci_high - ci_low) / 2`.
    ///
    /// `f64::INFINITY` when `n < 2`: a single sample says nothing about the
    /// spread, so the stored degenerate interval must not be read as "exact".
    pub fn ci_half_width(&self) -> f64 {
        if self.n < 2 {
            f64::INFINITY
        } else {
            (self.ci_high - self.ci_low) / 2.0
        }
    }

    /// Confidence half-width relative to the mean, `ci_half_width / |mean|`
    /// (0.05 means "mean known to ±5%").
    ///
    /// `f64::INFINITY` when `n < 2` or `mean == 0`.
    pub fn relative_ci_half_width(&self) -> f64 {
        if self.n < 2 || self.mean == 0.0 {
            f64::INFINITY
        } else {
            self.ci_half_width() / self.mean.abs()
        }
    }
}

/// Summarizes `samples`.
///
/// `stddev` is the sample standard deviation (divisor `n - 1`). The
/// confidence interval is `mean ± t(0.975, n - 1) · s / √n` (Student's t,
/// because `n` is 3 to 10 here). For `n == 1`: `stddev` is 0 and
/// `ci_low == ci_high == mean`.
///
/// Returns `None` for an empty slice, when any sample is NaN or infinite,
/// and when the statistics overflow `f64` (a summary full of infinities
/// would only propagate into reports).
pub fn summarize(samples: &[f64]) -> Option<Summary> {
    if samples.is_empty() || samples.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let n = samples.len();
    let count = n as f64;
    let mean = samples.iter().sum::<f64>() / count;

    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = n / 2;
    let median = if n % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    };

    let (stddev, half_width) = if n < 2 {
        (0.0, 0.0)
    } else {
        let sum_sq: f64 = samples.iter().map(|x| (x - mean) * (x - mean)).sum();
        let stddev = (sum_sq / (count - 1.0)).sqrt();
        let half_width = t_quantile_95(count - 1.0) * stddev / count.sqrt();
        (stddev, half_width)
    };
    if !mean.is_finite() || !stddev.is_finite() || !half_width.is_finite() {
        return None;
    }

    Some(Summary {
        n,
        mean,
        median,
        stddev,
        ci_low: mean - half_width,
        ci_high: mean + half_width,
        min: sorted[0],
        max: sorted[n - 1],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOL: f64 = 1e-3;

    fn close(actual: f64, expected: f64) -> bool {
        (actual - expected).abs() < TOL
    }

    #[test]
    fn odd_length_worked_example() {
        // mean 14, deviations ±2, ±4 → Σd² = 40, s = √(40/4) = 3.16228,
        // s/√5 = √2 = 1.41421, t(0.975, 4) = 2.77645 → half width 3.92649.
        let s = summarize(&[10.0, 12.0, 14.0, 16.0, 18.0]).unwrap();
        assert_eq!(s.n, 5);
        assert!(close(s.mean, 14.0));
        assert!(close(s.median, 14.0));
        assert!(close(s.stddev, 3.16228), "{}", s.stddev);
        assert!(close(s.ci_half_width(), 3.92649), "{}", s.ci_half_width());
        assert!(close(s.ci_low, 14.0 - 3.92649));
        assert!(close(s.ci_high, 14.0 + 3.92649));
        assert!(close(s.relative_ci_half_width(), 3.92649 / 14.0));
        assert_eq!(s.min, 10.0);
        assert_eq!(s.max, 18.0);
    }

    #[test]
    fn order_does_not_matter() {
        let a = summarize(&[18.0, 10.0, 16.0, 12.0, 14.0]).unwrap();
        let b = summarize(&[10.0, 12.0, 14.0, 16.0, 18.0]).unwrap();
        assert!(close(a.mean, b.mean) && close(a.stddev, b.stddev));
        assert_eq!((a.median, a.min, a.max), (b.median, b.min, b.max));
    }

    #[test]
    fn even_length_median_is_mean_of_middle_pair() {
        // Sorted: 1, 2, 4, 10 → median (2 + 4) / 2 = 3; mean 17/4 = 4.25.
        let s = summarize(&[4.0, 1.0, 10.0, 2.0]).unwrap();
        assert!(close(s.median, 3.0));
        assert!(close(s.mean, 4.25));
        // Σd² = 10.5625 + 5.0625 + 0.0625 + 33.0625 = 48.75; s = √16.25.
        assert!(close(s.stddev, 4.03113), "{}", s.stddev);
    }

    #[test]
    fn two_samples_use_t_with_one_df() {
        // mean 11, s = √2, s/√2 = 1, t(0.975, 1) = 12.7062.
        let s = summarize(&[10.0, 12.0]).unwrap();
        assert!(close(s.median, 11.0));
        assert!(close(s.ci_half_width(), 12.70620), "{}", s.ci_half_width());
    }

    #[test]
    fn single_sample() {
        let s = summarize(&[42.0]).unwrap();
        assert_eq!(s.n, 1);
        assert_eq!(s.mean, 42.0);
        assert_eq!(s.median, 42.0);
        assert_eq!(s.stddev, 0.0);
        assert_eq!(s.ci_low, 42.0);
        assert_eq!(s.ci_high, 42.0);
        assert_eq!(s.min, 42.0);
        assert_eq!(s.max, 42.0);
        assert_eq!(s.ci_half_width(), f64::INFINITY);
        assert_eq!(s.relative_ci_half_width(), f64::INFINITY);
    }

    #[test]
    fn identical_samples_have_zero_width() {
        let s = summarize(&[7.0, 7.0, 7.0]).unwrap();
        assert_eq!(s.stddev, 0.0);
        assert_eq!(s.ci_half_width(), 0.0);
        assert_eq!(s.relative_ci_half_width(), 0.0);
    }

    #[test]
    fn zero_mean_has_infinite_relative_width() {
        let s = summarize(&[-1.0, 1.0]).unwrap();
        assert_eq!(s.mean, 0.0);
        assert!(s.ci_half_width().is_finite());
        assert_eq!(s.relative_ci_half_width(), f64::INFINITY);
    }

    #[test]
    fn empty_is_none() {
        assert_eq!(summarize(&[]), None);
    }

    #[test]
    fn nan_and_infinity_are_none() {
        assert_eq!(summarize(&[1.0, f64::NAN, 3.0]), None);
        assert_eq!(summarize(&[f64::NAN]), None);
        assert_eq!(summarize(&[1.0, f64::INFINITY]), None);
        assert_eq!(summarize(&[f64::NEG_INFINITY, 1.0]), None);
    }

    #[test]
    fn overflow_is_none() {
        assert_eq!(summarize(&[f64::MAX, f64::MAX]), None);
    }

    #[test]
    fn large_close_values_keep_precision() {
        // One-pass Σx² - n·mean² would lose all digits here.
        let base = 1e9;
        let s = summarize(&[
            base + 10.0,
            base + 12.0,
            base + 14.0,
            base + 16.0,
            base + 18.0,
        ])
        .unwrap();
        assert!(close(s.stddev, 3.16228), "{}", s.stddev);
    }

    #[test]
    fn serde_round_trip() {
        let s = summarize(&[1.0, 2.0, 4.0]).unwrap();
        let json = serde_json::to_string(&s).unwrap();
        assert!(
            json.contains("\"ci_low\"") && json.contains("\"n\":3"),
            "{json}"
        );
        let back: Summary = serde_json::from_str(&json).unwrap();
        // The crate's serde_json is built without `float_roundtrip`, so
        // floats may come back off by one ulp.
        let fields = |s: &Summary| {
            [
                s.mean, s.median, s.stddev, s.ci_low, s.ci_high, s.min, s.max,
            ]
        };
        assert_eq!(back.n, s.n);
        for (a, b) in fields(&back).into_iter().zip(fields(&s)) {
            assert!((a - b).abs() <= 1e-15 * a.abs().max(b.abs()), "{a} vs {b}");
        }
    }
}
